"""Several processes against one: the same rows give the same update, and what a trial costs.

**The update.** ``capture`` runs under ``accelerate launch`` (N processes, gloo on a CPU): one
step of a training config, each process playing its share of the trials, and saves each
process's sample rows, trajectories and legal-move samples, the initial weights and the
gradient DDP averaged (clipping off, before the optimizer step). :func:`compare` then computes,
in one process, the advantages of all the trajectories together and the gradient of all the
rows together, as a one-process run of the same global batch would, and returns how far they
are from the N-process ones (relative). Equal to float tolerance: the N-process path (gathered
batch statistics, ``num_items_in_batch`` over the processes, DDP's average, the forwards and
metrics kept in step) computes the one-process update of the same trials.

**The cost.** :func:`timed_runs` trains the same config for a few steps with 1 and with N
processes at the same global batch (``train``, one torch thread a process) and reports CPU
seconds per trial (every process's CPU time, from ``/usr/bin/time``-free ``resource`` figures
of the launch's children).

Run: ``python -m benchmarks trainer --processes [--config tiny_kuhn_robust]``.
"""

from __future__ import annotations

import json
import os
import pickle
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import torch

from benchmarks import positive_int

__all__ = ["capture", "capture_command", "compare", "launch", "timed_runs", "main"]

FIXED = {
    "max_steps": 1,
    "save_strategy": "no",
    "evaluation_steps": 0,
    "logging_steps": 1,
    "max_grad_norm": 0.0,  # the gradient as computed, not clipped
    "report_to": [],
}


def _settings(name: str, out: Path, trials: int) -> dict[str, Any]:
    from baselines.train.command import _read_config

    return (
        _read_config(Path(name))
        | FIXED
        | {
            "out": str(out / "run"),
            "per_device_train_batch_size": trials,
        }
    )


def capture(name: str, out: Path, trials: int) -> None:
    """One step of config ``name`` in this launch's processes; save what :func:`compare` reads."""
    from transformers import TrainerCallback

    from baselines.train.command import build_config, load_model
    from mage_agents.training import MetaRLTrainer

    torch.set_num_threads(1)
    settings = _settings(name, out, trials)
    config = build_config(settings)
    model, tokenizer = load_model(settings)
    process = config.process_index
    if process == 0:
        out.mkdir(parents=True, exist_ok=True)
        torch.save(model.state_dict(), out / "initial.pt")
    gradient: dict[str, torch.Tensor] = {}

    class Gradient(TrainerCallback):
        def on_pre_optimizer_step(self, args, state, control, **kwargs):
            for key, p in trainer.model.named_parameters():
                gradient[key] = p.grad.detach().clone()

    trainer = MetaRLTrainer(model, config, processing_class=tokenizer, callbacks=[Gradient()])
    rows, played, planned = [], [], []
    make_row, play = trainer._row, trainer.play
    trainer._row = lambda turn, value: rows.append(make_row(turn, value)) or rows[-1]
    trainer.play = lambda plans: (
        planned.extend(plans) or played.extend(play(plans)) or played[-len(plans) :]
    )
    trainer.train()
    samples = dict(getattr(trainer.backend, "samples", {}))
    trials = [(p.env_id, p.task_seed, p.seed, p.opponent) for p in planned]
    with open(out / f"process-{process}.pkl", "wb") as file:
        pickle.dump(
            {"rows": rows, "trajectories": played, "samples": samples, "trials": trials}, file
        )
    if process == 0:
        torch.save(gradient, out / "gradient.pt")
        (out / "launch.json").write_text(json.dumps({"processes": config.world_size}))


def capture_command(name: str, out: Path, trials: int) -> list[str]:
    """The module arguments of :func:`capture` (``launch`` them in N processes)."""
    return ["benchmarks.trainer_processes", "capture", name, str(out), str(trials)]


def compare(name: str, out: Path, trials: int) -> dict[str, float]:
    """The one-process advantages and gradient of the captured rows, against the captured ones."""
    from baselines.train.command import build_config, load_model
    from mage_agents.training import MetaRLTrainer
    from mage_agents.training.batch import turn_batch

    torch.set_num_threads(1)
    processes = json.loads((out / "launch.json").read_text())["processes"]
    parts = [pickle.loads((out / f"process-{p}.pkl").read_bytes()) for p in range(processes)]
    settings = _settings(name, out, trials * processes)
    config = build_config(settings | {"out": str(out / "reference")})
    model, tokenizer = load_model(settings)
    model.load_state_dict(torch.load(out / "initial.pt"))
    trainer = MetaRLTrainer(model, config, processing_class=tokenizer)
    trajectories = [t for part in parts for t in part["trajectories"]]
    rows = [r for part in parts for r in part["rows"]]
    advantages = trainer.advantages(trajectories)
    if hasattr(trainer.backend, "samples"):
        for part in parts:
            trainer.backend.samples.update(part["samples"])
        advantages = trainer.backend.adjust(trajectories, advantages)
    one = trainer.plan(
        [t[1] for part in parts for t in part["trials"]], config.num_generations, "train0|p0"
    )
    same = [(p.env_id, p.task_seed, p.seed, p.opponent) for p in one] == [
        t for part in parts for t in part["trials"]
    ]
    mine = torch.tensor([float(a) for values in advantages for a in values])
    theirs = torch.tensor([r.advantage for r in rows])
    batch = turn_batch(rows, tokenizer.pad_token_id, 1)
    trainer.model.train()
    trainer.current_gradient_accumulation_steps = 1
    trainer.accelerator.backward(trainer.compute_loss(trainer.model, batch))
    captured = torch.load(out / "gradient.pt")
    difference = sum(float((p.grad - captured[k]).norm()) ** 2 for k, p in model.named_parameters())
    size = sum(float(p.grad.norm()) ** 2 for p in model.parameters())
    return {
        "processes": float(processes),
        "same_trials": float(same),
        "trials": float(len(trajectories)),
        "rows": float(len(rows)),
        "advantage_difference": float((mine - theirs).abs().max() / theirs.abs().max()),
        "gradient_difference": (difference / size) ** 0.5,
        "gradient_norm": size**0.5,
    }


def launch(module_args: list[str], processes: int, timeout: float = 900) -> tuple[float, float]:
    """Run ``python -m MODULE ARGS`` in ``processes`` processes (gloo on a CPU).

    Returns:
        (wall seconds, CPU seconds of all the launched processes).
    """
    command = [sys.executable, "-m", *module_args]
    if processes > 1:  # `accelerate launch --cpu` starts one process: torchrun's launcher
        command = [
            sys.executable,
            "-m",
            "accelerate.commands.launch",
            "--multi_gpu",
            f"--num_processes={processes}",
            "--num_machines=1",
            "--mixed_precision=no",
            "--dynamo_backend=no",
            "-m",
            *module_args,
        ]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(command)} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def timed_runs(name: str, out: Path, trials: int, steps: int, processes: int) -> dict[str, Any]:
    """Train ``steps`` steps with 1 and ``processes`` processes at the same global batch."""
    figures = {}
    for count in (1, processes):
        folder = out / f"time-{count}"
        args = ["baselines.run", "train", "--config", name, "--out", str(folder), "--restart"]
        args += ["--max-steps", str(steps), "--no-plots"]
        args += ["--set", f"per_device_train_batch_size={trials // count}"]
        args += ["--set", "evaluation_steps=0", "--set", f"save_steps={steps}"]
        wall, cpu = launch(args, count)
        figures[count] = {"wall": wall, "cpu": cpu, "per_trial": cpu / (steps * trials)}
    return figures


def _train_args(name: str, folder: Path, trials: int, steps: int) -> list[str]:
    args = ["baselines.run", "train", "--config", name, "--out", str(folder), "--no-plots"]
    args += ["--max-steps", str(steps), "--set", f"per_device_train_batch_size={trials}"]
    return args + [
        "--set",
        "save_steps=1",
        "--set",
        "evaluation_steps=2",
        "--set",
        "logging_steps=1",
    ]


def resume_check(name: str, out: Path, trials: int, steps: int, processes: int) -> dict[str, Any]:
    """Train ``steps`` steps in ``processes`` processes; kill-and-resume a copy from the one before.

    Returns what was written once (checkpoints with one model and every process's random
    state, one metrics row a step, ``best/``) and whether the resumed run's final weights are
    the uninterrupted run's, bit for bit.
    """
    import shutil

    from safetensors.torch import load_file

    whole, resumed = out / "whole", out / "resumed"
    launch(_train_args(name, whole, trials, steps), processes)
    shutil.copytree(whole, resumed)
    for path in (resumed / f"checkpoint-{steps}", resumed / "final"):
        shutil.rmtree(path)  # killed during the last step: no last checkpoint, no final model
    launch(_train_args(name, resumed, trials, steps), processes)
    a = load_file(whole / "final" / "model.safetensors")
    b = load_file(resumed / "final" / "model.safetensors")
    rows = [json.loads(line) for line in (whole / "metrics.jsonl").read_text().splitlines()]
    states = sorted(p.name for p in (whole / f"checkpoint-{steps}").glob("rng_state*.pth"))
    return {
        "same_weights": all(torch.equal(a[k], b[k]) for k in a) and a.keys() == b.keys(),
        "train_rows": sum(1 for r in rows if "loss" in r),
        "rng_states": states,
        "best": (whole / "best" / "best.json").is_file(),
        "checkpoints": sorted(p.name for p in whole.glob("checkpoint-*")),
    }


def main(argv: list[str]) -> None:
    """``capture NAME OUT TRIALS`` (inside a launch), or the whole comparison (see the module)."""
    if argv and argv[0] == "capture":
        capture(argv[1], Path(argv[2]), int(argv[3]))
        return
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(prog="python -m benchmarks trainer --processes")
    parser.add_argument("--config", default="tiny_kuhn_robust")
    parser.add_argument("--trials", type=positive_int, default=64, help="global trials a step")
    parser.add_argument("--processes", type=positive_int, default=2)
    parser.add_argument("--steps", type=positive_int, default=10, help="steps of each timed run")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder)
        per = args.trials // args.processes
        launch(capture_command(args.config, out, per), args.processes)
        result = compare(args.config, out, per)
        print(
            f"{args.config}: one step, {int(result['trials'])} trials, {int(result['rows'])} "
            f"rows, on {args.processes} processes vs one process on the same rows:"
        )
        print(f"  trials planned: {'the same' if result['same_trials'] else 'DIFFERENT'}")
        print(f"  advantages: largest difference {result['advantage_difference']:.2e} (relative)")
        print(
            f"  gradient: |g_N - g_1| / |g_1| = {result['gradient_difference']:.2e} "
            f"(|g_1| = {result['gradient_norm']:.3g})"
        )
        resume = resume_check(args.config, out, per, 3, args.processes)
        print(
            f"{args.processes} processes, train 3 steps ({per} trials each): checkpoints "
            f"{', '.join(resume['checkpoints'])}, each with {', '.join(resume['rng_states'])}; "
            f"{resume['train_rows']} training rows in metrics.jsonl; best/ "
            f"{'written' if resume['best'] else 'missing'}; killed in step 3 and resumed: final "
            f"weights {'equal, bit for bit' if resume['same_weights'] else 'DIFFER'}"
        )
        timed = timed_runs(args.config, out, args.trials, args.steps, args.processes)
    print(f"train --max-steps {args.steps}, {args.trials} trials a step:")
    for count, f in timed.items():
        print(
            f"  {count} process{'es' if count > 1 else ''}: {f['wall']:.1f} s wall, "
            f"{f['cpu']:.1f} CPU s, {1000 * f['per_trial']:.2f} CPU ms per trial"
        )


if __name__ == "__main__":  # the processes of a launch run this module itself
    main(sys.argv[1:])
