"""Dispatch ``python -m baselines.bench NAME [ARGS]`` to the benchmark module ``NAME``."""

from __future__ import annotations

import importlib
import sys

BENCHMARKS = {
    "envs": "baselines.bench.envs",
    "parser": "baselines.bench.parser",
    "puzzles": "baselines.bench.puzzles",
    "generation": "baselines.bench.generation",
    "opponents": "baselines.bench.opponents",
    "arena": "baselines.bench.arena",
    "wrapper": "baselines.bench.wrapper",
    "webshop": "baselines.bench.webshop",
    "alfworld": "baselines.bench.alfworld",
    "rollout": "baselines.bench.rollout",
    "trainer": "baselines.bench.trainer",
    "trainer_generation": "baselines.bench.trainer_generation",
    "answer_routes": "baselines.bench.answer_routes",
    "learning": "baselines.bench.learning",
    "selfplay": "baselines.bench.selfplay",
    "serve": "baselines.bench.serve",
    "prompt_example": "baselines.bench.prompt_example",
    "trial_sizes": "baselines.bench.trial_sizes",
    "report": "baselines.bench.report",
    "gpu": "baselines.bench.gpu",
}
"""Benchmark name -> module with a ``main(argv: list[str]) -> None`` function."""


def main(argv: list[str]) -> int:
    """Run the benchmark named by ``argv[0]`` with the remaining arguments."""
    if not argv or argv[0] not in BENCHMARKS:
        unknown = f"error: no benchmark {argv[0]!r}; " if argv else ""
        print(
            f"{unknown}usage: python -m baselines.bench NAME [ARGS]; benchmarks: "
            + ", ".join(BENCHMARKS),
            file=sys.stderr,
        )
        return 2
    importlib.import_module(BENCHMARKS[argv[0]]).main(argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
