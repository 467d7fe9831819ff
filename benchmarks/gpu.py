"""Benchmark: a GPU self-check, each figure against its floor, measured in the same run.

Nothing is downloaded. A model with the architecture of ``baselines/configs/models/qwen3-4b.json``
(random weights, the tiny tokenizer's vocabulary: :func:`~mage_agents.tiny_model.tiny_tokenizer`)
runs two real training steps of a paper config with fewer trials (``--trials``, default 8) and
shorter turns (``--tokens``, ``max_completion_length``, default 128): step 1 generates the trials
(transformers ``generate``; vLLM too when it is installed and the device is CUDA) and updates,
step 2 only updates (``steps_per_generation: 2``). Printed, each measured here and now:

- **memory**: the peak of the two steps (CUDA: ``max_memory_allocated`` and reserved; a CPU: the
  growth of the process's peak resident memory) against the memory model's prediction for the
  same settings (what ``train --check`` prints, :mod:`mage_agents.training.memory`);
- **decode**: the trainer's generation time per decoded token step, over its first
  ``--replay`` calls, against ``model.generate`` alone on the same prompts and the same number
  of new tokens (eval mode, no stop strings), against the weight-read floor (the weights' bytes
  over a measured device-to-device copy bandwidth: a decode step reads every weight once);
- **update**: step 2's matmul FLOP/s (:func:`~.gpu_floor.update_flops`) against a measured
  square matmul in the update's dtype.

``--tiny`` (the default without CUDA) shrinks the architecture (2 layers, hidden 64) and the
references' sizes, so the machinery runs on a CPU in seconds (``tests/test_gpu_bench.py``); its
figures say nothing of a GPU.

Run: ``python -m benchmarks gpu [--config lamer_sokoban_qwen3_4b] [--trials 8]
[--tokens 128] [--replay 4] [--tiny]``.
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.gpu_floor import copy_bandwidth, matmul_flops, synchronize, update_flops

__all__ = ["main", "measure", "bench_model", "TINY_ARCHITECTURE", "QWEN3_4B"]

QWEN3_4B = Path(__file__).parents[1] / "baselines" / "configs" / "models" / "qwen3-4b.json"
TINY_ARCHITECTURE = {
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
}
"""The architecture ``--tiny`` runs: Qwen3's, at the tiny model's size."""

REFERENCE_SIZES = {"tiny": (16, 256), "full": (1024, 8192)}
"""(copy megabytes, matmul size) of the references, tiny and full."""


def bench_model(tiny: bool, device: str, dtype: Any) -> tuple[Any, Any]:
    """A random Qwen3 model with ``qwen3-4b.json``'s architecture (or ``--tiny``'s), built there."""
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    from mage_agents.tiny_model import tiny_tokenizer

    tokenizer = tiny_tokenizer()
    values = {k: v for k, v in json.loads(QWEN3_4B.read_text()).items() if not k.startswith("_")}
    for name in ("architectures", "model_type", "torch_dtype"):
        values.pop(name, None)
    if tiny:
        values.update(TINY_ARCHITECTURE)
    values.update(vocab_size=len(tokenizer), pad_token_id=tokenizer.pad_token_id)
    values.update(eos_token_id=tokenizer.eos_token_id, bos_token_id=tokenizer.eos_token_id)
    config = Qwen3Config(**values)
    torch.manual_seed(0)
    with torch.device(device):
        model = Qwen3ForCausalLM._from_config(config, dtype=dtype)
    return model, tokenizer


def _settings(args: argparse.Namespace, out: str, device: str, bf16: bool) -> dict[str, Any]:
    from baselines.train.command import load_train_settings

    settings = load_train_settings(["--config", args.config, "--out", out])
    group = math.gcd(int(settings.get("num_generations") or 8), args.trials)
    if group < 2 or args.trials % 2:
        raise ValueError(f"--trials {args.trials}: give an even count of at least 2.")
    settings.update(
        model=str(Path(out) / "model"),
        max_steps=2,
        steps_per_generation=2,
        per_device_train_batch_size=args.trials // 2,
        num_generations=group,
        max_completion_length=args.tokens,
        evaluation_steps=0,
        save_strategy="no",
        logging_steps=1,
        report_to=[],
        use_vllm=False,
        use_cpu=device == "cpu",
        bf16=bf16,
        seed=0,
    )
    return settings


class _Recorder:
    """Times the trainer's generation calls and counts the tokens the update's forwards read."""

    def __init__(self, device: str) -> None:
        self.device = device
        self.calls: list[dict[str, Any]] = []
        self.steps: list[float] = []
        self.tokens = {"trained": 0, "scored": 0}
        self.counting = False

    def wrap_generation(self, backend: Any) -> None:
        call = backend._call

        def timed(prompt_ids: list[list[int]]) -> Any:
            synchronize(self.device)
            start = time.perf_counter()
            completions, logprobs = call(prompt_ids)
            synchronize(self.device)
            new = max((len(c) for c in completions), default=0)
            seconds = time.perf_counter() - start
            self.calls.append({"prompts": prompt_ids, "new": new, "seconds": seconds})
            return completions, logprobs

        backend._call = timed

    def count_tokens(self, module: Any, inputs: tuple, output: Any) -> None:
        import torch

        if self.counting and inputs:
            kind = "trained" if torch.is_grad_enabled() else "scored"
            self.tokens[kind] += int(inputs[0].numel())


def _train(settings: dict[str, Any], model: Any, tokenizer: Any, device: str) -> dict[str, Any]:
    """Two steps of the config: peak memory, step times, generation calls, step 2's tokens."""
    import torch
    from transformers import PrinterCallback, TrainerCallback

    from baselines.train.command import build_config, peft_config
    from benchmarks.trainer_memory import _reset_peak, _status_bytes
    from mage_agents.training import MetaRLTrainer

    record = _Recorder(device)

    class Clock(TrainerCallback):
        def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            synchronize(device)
            record.counting = state.global_step == 1  # step 2: the update alone
            self.start = time.perf_counter()

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            synchronize(device)
            record.steps.append(time.perf_counter() - self.start)
            record.counting = False

    config = build_config(settings)
    trainer = MetaRLTrainer(
        model, config, processing_class=tokenizer, peft_config=peft_config(settings)
    )
    trainer.remove_callback(PrinterCallback)
    trainer.add_callback(Clock())
    backend = trainer.backend
    record.wrap_generation(getattr(backend, "fallback", backend))  # legal-move choice wraps it
    model.get_input_embeddings().register_forward_hook(record.count_tokens)
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
        before = 0.0
    else:
        _reset_peak()
        before = _status_bytes("VmRSS")
    trainer.train()
    if device.startswith("cuda"):
        peak = {"allocated": torch.cuda.max_memory_allocated(), "reserved": None}
        peak["reserved"] = torch.cuda.max_memory_reserved()
    else:
        peak = {"allocated": _status_bytes("VmHWM") - before, "reserved": None}
    return {
        "peak": peak,
        "steps": record.steps,
        "calls": record.calls,
        "tokens": record.tokens,
        "model": trainer.accelerator.unwrap_model(trainer.model),
    }


def _replay(model: Any, tokenizer: Any, calls: list[dict[str, Any]], device: str) -> float:
    """Seconds a decode step of ``model.generate`` alone on the calls' prompts and lengths."""
    import torch

    pad = tokenizer.pad_token_id
    seconds = steps = 0.0
    model.eval()
    for call in calls:
        width = max(len(p) for p in call["prompts"])
        ids = torch.tensor([[pad] * (width - len(p)) + list(p) for p in call["prompts"]])
        mask = torch.arange(width) >= width - torch.tensor([[len(p)] for p in call["prompts"]])
        synchronize(device)
        start = time.perf_counter()
        with torch.no_grad():
            model.generate(
                input_ids=ids.to(device),
                attention_mask=mask.long().to(device),
                do_sample=True,
                max_new_tokens=call["new"],
                min_new_tokens=call["new"],
                pad_token_id=pad,
            )
        synchronize(device)
        seconds += time.perf_counter() - start
        steps += call["new"]
    return seconds / max(steps, 1)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Every figure of the benchmark, measured in this run (see the module's docstring)."""
    import torch

    from baselines.train.check import check
    from mage_agents.placement import choose_device
    from mage_agents.training.memory import Architecture

    device = choose_device("cpu" if args.tiny else "auto")
    bf16 = device.startswith("cuda") and torch.cuda.is_bf16_supported()
    dtype = torch.bfloat16 if bf16 else torch.float32
    if device == "cpu":
        torch.set_num_threads(1)  # on busy shared cores two threads made steps 40x slower
    model, tokenizer = bench_model(args.tiny, device, dtype)
    parameters = Architecture.from_config(model.config.to_dict()).parameters()
    weight_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    with tempfile.TemporaryDirectory() as out:
        settings = _settings(args, out, device, bf16)
        model.config.save_pretrained(settings["model"])  # what --check reads: no weights
        tokenizer.save_pretrained(settings["model"])
        predicted = check(settings).figures["memory"]["total"]
        run = _train(settings, model, tokenizer, device)
    calls = run["calls"][: args.replay]
    trainer_step = sum(c["seconds"] for c in calls) / max(sum(c["new"] for c in calls), 1)
    megabytes, size = REFERENCE_SIZES["tiny" if args.tiny else "full"]
    bandwidth = copy_bandwidth(device, megabytes)
    lora = settings.get("lora") is not None
    flops = update_flops(
        parameters,
        run["tokens"]["trained"],
        run["tokens"]["scored"],
        lora,
        bool(settings.get("gradient_checkpointing")),
    )
    return {
        "device": torch.cuda.get_device_name() if device.startswith("cuda") else "cpu",
        "versions": _versions(),
        "parameters": parameters,
        "weight_bytes": weight_bytes,
        "trials": args.trials,
        "steps": run["steps"],
        "peak": run["peak"],
        "predicted": predicted,
        "calls": len(run["calls"]),
        "replayed": len(calls),
        "trainer_step": trainer_step,
        "generate_step": _replay(run["model"], tokenizer, calls, device),
        "bandwidth": bandwidth,
        "floor_step": weight_bytes / bandwidth,
        "update_flops": flops / run["steps"][-1],
        "update_tokens": run["tokens"],
        "matmul_flops": matmul_flops(device, size, dtype),
        "dtype": str(dtype).removeprefix("torch."),
        "vllm": _vllm_line(),
    }


def _versions() -> str:
    import torch
    import transformers
    import trl

    return (
        f"torch {torch.__version__}, transformers {transformers.__version__}, trl {trl.__version__}"
    )


def _vllm_line() -> str:
    import importlib.util

    if importlib.util.find_spec("vllm") is None:
        return "vLLM: not installed, so not measured (transformers generate only)."
    return "vLLM: installed, not measured by this benchmark yet (transformers generate only)."


def report(figures: dict[str, Any], config: str) -> list[str]:
    """The printed lines of :func:`measure`'s figures."""
    gib = 2**30
    peak = figures["peak"]
    reserved = "" if peak["reserved"] is None else f", {peak['reserved'] / gib:.2f} GiB reserved"
    kind = "allocated" if peak["reserved"] is not None else "resident growth (CPU)"
    ms = 1e3
    step1, step2 = figures["steps"][0], figures["steps"][-1]
    tokens = figures["update_tokens"]
    return [
        f"bench gpu: {figures['device']}; {figures['versions']}",
        f"model: {_count(figures['parameters'])} parameters, random weights "
        f"({_bytes(figures['weight_bytes'])} in {figures['dtype']}); config {config}, "
        f"{figures['trials']} trials",
        f"steps: 1 (generation + update) {step1:.1f} s, 2 (update only) {step2:.1f} s",
        f"memory: peak {peak['allocated'] / gib:.2f} GiB {kind}{reserved} vs predicted "
        f"{figures['predicted'] / gib:.2f} GiB (the memory model of train --check): "
        f"{peak['allocated'] / figures['predicted']:.2f}x",
        f"decode, a step (first {figures['replayed']} of {figures['calls']} generation calls): "
        f"trainer {figures['trainer_step'] * ms:.2f} ms vs model.generate alone "
        f"{figures['generate_step'] * ms:.2f} ms "
        f"({figures['trainer_step'] / figures['generate_step']:.2f}x) vs weight-read floor "
        f"{figures['floor_step'] * ms:.4f} ms ({_bytes(figures['weight_bytes'])} at "
        f"{figures['bandwidth'] / 1e9:.0f} GB/s copy; generate is "
        f"{figures['generate_step'] / figures['floor_step']:.0f}x the floor)",
        f"update: {figures['update_flops'] / 1e12:.3f} TFLOP/s ({tokens['trained']:,} tokens "
        f"trained, {tokens['scored']:,} scored) vs {figures['dtype']} matmul "
        f"{figures['matmul_flops'] / 1e12:.3f} TFLOP/s "
        f"({figures['update_flops'] / figures['matmul_flops']:.0%})",
        figures["vllm"],
    ]


def _count(parameters: int) -> str:
    return f"{parameters / 1e9:.2f}B" if parameters >= 1e8 else f"{parameters / 1e6:.2f}M"


def _bytes(count: float) -> str:
    return f"{count / 1e9:.2f} GB" if count >= 1e8 else f"{count / 1e6:.2f} MB"


def parse(argv: list[str]) -> argparse.Namespace:
    """The benchmark's options (``--tiny`` is on by default without CUDA)."""
    import torch

    parser = argparse.ArgumentParser(prog="python -m benchmarks gpu")
    parser.add_argument("--config", default="lamer_sokoban_qwen3_4b", help="a paper config")
    parser.add_argument("--trials", type=int, default=8, help="trials of the generation")
    parser.add_argument("--tokens", type=int, default=128, help="max_completion_length")
    parser.add_argument("--replay", type=int, default=4, help="generation calls replayed")
    parser.add_argument(
        "--tiny",
        action=argparse.BooleanOptionalAction,
        default=not torch.cuda.is_available(),
        help="Qwen3 at 2 layers, hidden 64, on the CPU (default without CUDA)",
    )
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    """Run the benchmark and print its figures."""
    args = parse(argv)
    for line in report(measure(args), args.config):
        print(line, flush=True)
