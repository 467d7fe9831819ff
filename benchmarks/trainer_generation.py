"""Benchmark: the trainer's generation against ``model.generate`` alone, on the same prompts.

The trainer generates through :class:`~mage_agents.training.generation.TrainerBackend`: it renders
each chat with the chat template, tokenises, left-pads, runs ``generate`` on the unwrapped model
with the answer stop strings, then cuts every completion at its first stop string and decodes
it. The reference is ``model.generate`` alone on the same token ids with the same generation
config (stop strings included, greedy), so both generate the same tokens. The prompts are every
generation call of one training step's trials (Kuhn poker, 3 episodes with reflections between,
against the aggressive style), recorded once and replayed, the two paths taking turns.

Printed: seconds per step's calls of each (median of the repeats), their ratio (target at most
1.15), and where the trainer's extra time goes: rendering and tokenising the chats, cutting and
decoding the completions; and ``generate`` without stop strings for as many decode steps, which
prices the stop-string check both paths make.

Run: ``python -m benchmarks trainer_generation [--trials 16] [--repeats 5] [--tokens 24]``.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

import torch

from mage_agents.local_model import render_chat
from mage_agents.tiny_model import build_tiny_model
from mage_agents.training import MetaRLConfig, MetaRLTrainer
from mage_agents.training.generation import cut_completion

__all__ = ["main", "measure", "recorded_calls"]


def _trainer(out: str, trials: int, tokens: int, episodes: int) -> Any:
    torch.manual_seed(0)
    model, tokenizer = build_tiny_model(seed=0)
    config = MetaRLConfig(
        output_dir=out,
        estimator="grpo",
        env_kwargs={"seat": "first"},
        opponent="aggressive",
        trial={"num_episodes": episodes, "reflection": True, "stop_on_success": False},
        num_generations=4,
        per_device_train_batch_size=trials,
        max_completion_length=tokens,
        use_cpu=True,
        gradient_checkpointing=False,
        report_to=[],
        save_strategy="no",
        generation_kwargs={"do_sample": False},  # greedy: both paths write the same tokens
    )
    return MetaRLTrainer(model, config, processing_class=tokenizer)


def recorded_calls(trainer: Any, trials: int) -> list[list[Any]]:
    """Play one step's trials with the trainer's backend; return the chats of each call."""
    calls: list[list[Any]] = []
    generate = trainer.backend.generate

    def record(chats: list[Any]) -> list[Any]:
        calls.append(list(chats))
        return generate(chats)

    trainer.backend.generate = record
    try:
        seeds = [seed for seed in range(trials // 4) for _ in range(4)]
        trainer.model.train()  # as in a training step
        trainer.play(trainer.plan(seeds, 4, "bench"))
    finally:
        trainer.backend.generate = generate
    return calls


def _prompt_ids(backend: Any, chats: list[Any]) -> list[list[int]]:
    tokenizer = backend.tokenizer
    texts = [render_chat(tokenizer, c, template_kwargs=backend.template_kwargs) for c in chats]
    return tokenizer(texts, add_special_tokens=not tokenizer.chat_template)["input_ids"]


def _bare_generate(
    backend: Any, prompt_ids: list[list[int]], steps: int | None = None
) -> list[list[int]]:
    """``model.generate`` alone: padded ids in, new token ids out.

    With ``steps``, without stop strings or an end token: exactly ``steps`` decode steps.
    """
    model, tokenizer = backend.trainer.model, backend.tokenizer
    config = backend._config()
    if steps is not None:
        config = copy.deepcopy(config)
        config.stop_strings, config.eos_token_id = None, None
        config.max_new_tokens = config.min_new_tokens = steps
    width = max(len(p) for p in prompt_ids)
    pad = tokenizer.pad_token_id
    ids = torch.tensor([[pad] * (width - len(p)) + list(p) for p in prompt_ids])
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompt_ids])
    with torch.no_grad():
        output = model.generate(
            input_ids=ids,
            attention_mask=mask,
            generation_config=config,
            tokenizer=tokenizer,
        )
    return output[:, width:].tolist()


def _seconds(work: Callable[[], Any]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def measure(
    trials: int = 16, repeats: int = 5, tokens: int = 24, episodes: int = 3
) -> dict[str, float]:
    """Time one step's generation calls through the trainer and through ``generate`` alone.

    Returns:
        Median seconds over ``repeats`` of all the step's calls: ``trainer``, ``generate``,
        ``unstopped`` (``generate`` without stop strings, as many decode steps);
        the trainer's parts outside ``generate``: ``render`` (chat template and tokeniser) and
        ``cut`` (stop-string cut and decoding); ``calls`` and ``prompts``.
    """
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as out:
        trainer = _trainer(out, trials, tokens, episodes)
        backend = trainer.backend
        calls = recorded_calls(trainer, trials)
        prompts = [_prompt_ids(backend, chats) for chats in calls]
        outputs = [_bare_generate(backend, ids) for ids in prompts]
        for chats, raw in zip(calls, outputs, strict=True):  # both wrote the same tokens
            ours = [reply.completion_ids for reply in backend.generate(chats)]
            cut = [tuple(_cut(backend, r)) for r in raw]
            if ours != cut:
                raise RuntimeError("The two paths generated different tokens: not comparable.")
        steps = [len(raw[0]) for raw in outputs]  # decode steps of each call
        names = ("trainer", "generate", "unstopped", "render", "cut")
        figures: dict[str, list[float]] = {name: [] for name in names}
        for _ in range(repeats):
            figures["trainer"].append(_seconds(lambda: [backend.generate(c) for c in calls]))
            figures["generate"].append(
                _seconds(lambda: [_bare_generate(backend, p) for p in prompts])
            )
            figures["unstopped"].append(
                _seconds(
                    lambda: [
                        _bare_generate(backend, p, n) for p, n in zip(prompts, steps, strict=True)
                    ]
                )
            )
            figures["render"].append(_seconds(lambda: [_prompt_ids(backend, c) for c in calls]))
            figures["cut"].append(
                _seconds(lambda: [[_cut(backend, r) for r in raws] for raws in outputs])
            )
    medians = {name: statistics.median(values) for name, values in figures.items()}
    return medians | {"calls": len(calls), "prompts": sum(len(c) for c in calls)}


def _cut(backend: Any, raw: list[int]) -> list[int]:
    ids = cut_completion(raw, backend.tokenizer, backend.stop_strings, backend._ends)
    backend.tokenizer.decode(ids, skip_special_tokens=True)
    return ids


def main(argv: list[str] | None = None) -> None:
    """Print the trainer's generation time against ``generate`` alone, and the split."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks trainer_generation")
    parser.add_argument("--trials", type=int, default=16, help="Trials in the step (groups of 4).")
    parser.add_argument("--repeats", type=int, default=5, help="Timed replays of the step's calls.")
    parser.add_argument("--tokens", type=int, default=24, help="max_completion_length.")
    args = parser.parse_args(argv)
    m = measure(args.trials, args.repeats, args.tokens)
    rest = m["trainer"] - m["generate"]
    print(f"{m['calls']} generation calls, {m['prompts']} prompts (one step, {args.trials} trials)")
    print("| path | s per step's calls | ratio |")
    print("|---|---:|---:|")
    print(f"| `model.generate` alone | {m['generate']:.3f} | 1.00 |")
    print(f"| the trainer's generation | {m['trainer']:.3f} | {m['trainer'] / m['generate']:.2f} |")
    print(
        f"| `model.generate` without stop strings, as many steps | {m['unstopped']:.3f} | "
        f"{m['unstopped'] / m['generate']:.2f} |"
    )
    print(
        f"the trainer's extra {rest:.3f} s: rendering and tokenising {m['render']:.3f} s, "
        f"cutting and decoding {m['cut']:.3f} s, the rest {rest - m['render'] - m['cut']:.3f} s"
    )
