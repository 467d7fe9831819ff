"""How fast every legal answer is scored after its prompt: packed, from the cache, or one by one.

``python -m benchmarks answer_routes`` times the three routes of
:mod:`mage_agents.training.answer_logps` on the tiny model, one torch thread, a forward and a
backward each (what the loss does with legal-move choice), on batches shaped like a Minesweeper
step (32 prompts of 325 tokens, 15 answers of 8 tokens) and a Kuhn one (2 answers), and prints
the CPU seconds and the ratios to one forward per answer (the loss's route before the packing),
with the largest difference between the routes' values.
"""

from __future__ import annotations

import argparse
import resource
import time
from typing import Any

__all__ = ["main", "time_routes"]

SHAPES = {"minesweeper": (32, 325, 15, 8), "kuhn": (32, 120, 2, 6)}
"""Batch name -> (prompts, prompt tokens, answers, answer tokens)."""


def _batch(prompts: int, length: int, moves: int, width: int) -> tuple:
    import torch

    g = torch.Generator().manual_seed(0)
    prompt_ids = torch.randint(5, 600, (prompts, length), generator=g)
    prompt_mask = torch.ones(prompts, length, dtype=torch.long)
    for d in range(prompts):
        prompt_mask[d, : (d * 7) % (length // 2)] = 0  # left padding of varied lengths
    answer_ids = torch.randint(5, 600, (prompts, moves, width), generator=g)
    answer_mask = torch.ones(prompts, moves, width, dtype=torch.long)
    answer_mask[:, :, width - 2 :] = 0
    return prompt_ids, prompt_mask, answer_ids, answer_mask


def time_routes(shape: tuple[int, int, int, int], temperature: float = 1.0) -> dict[str, Any]:
    """Return each route's CPU seconds (forward and backward) and its largest difference."""
    import torch

    from mage_agents.tiny_model import build_tiny_model
    from mage_agents.training import answer_logps as routes
    from mage_agents.training.legal_logps import full_answer_logps

    model, _ = build_tiny_model(seed=0, init_std=0.125)
    model.train()
    inputs = _batch(*shape)

    def score(ids: Any, mask: Any, width: int) -> Any:
        logits = model(input_ids=ids, attention_mask=mask).logits[:, -width - 1 : -1]
        logps = torch.log_softmax(logits.float() / temperature, dim=-1)
        return logps.gather(2, ids[:, -width:, None])[:, :, 0]

    route_functions = {
        "packed": lambda: routes.packed_answer_logps(model, *inputs, temperature),
        "cache": lambda: routes.cached_answer_logps(model, *inputs, temperature),
        "one forward per answer": lambda: full_answer_logps(score, *inputs),
    }
    figures: dict[str, Any] = {}
    values = {}
    for name, route in route_functions.items():
        model.zero_grad()
        before = time.process_time()
        logps = route()
        (logps * inputs[3]).sum().backward()
        figures[name] = time.process_time() - before
        values[name] = logps.detach()
    mask = inputs[3].bool()
    reference = values["one forward per answer"]
    figures["largest difference"] = max(
        float((v - reference)[mask].abs().max()) for v in values.values()
    )
    return figures


def main(argv: list[str]) -> None:
    """Print the routes' CPU seconds and ratios for each batch shape."""
    import torch

    parser = argparse.ArgumentParser(prog="python -m benchmarks answer_routes")
    parser.add_argument("--shape", choices=sorted(SHAPES), action="append")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    print("| batch | route | CPU s (forward + backward) | vs one forward per answer |")
    print("|---|---|---|---|")
    for name in args.shape or list(SHAPES):
        figures = time_routes(SHAPES[name])
        reference = figures["one forward per answer"]
        for route in ("packed", "cache", "one forward per answer"):
            ratio = reference / figures[route]
            print(f"| {name} {SHAPES[name]} | {route} | {figures[route]:.2f} | {ratio:.1f}x |")
        print(f"| {name} | largest difference | {figures['largest difference']:.1e} | |")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    print(f"\npeak resident memory of the process: {peak:.2f} GB")
