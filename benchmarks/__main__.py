"""Dispatch ``python -m benchmarks NAME [ARGS]`` to the benchmark module ``NAME``."""

from __future__ import annotations

import importlib
import sys

BENCHMARKS = {
    "envs": "benchmarks.envs",
    "parser": "benchmarks.parser",
    "puzzles": "benchmarks.puzzles",
    "generation": "benchmarks.generation",
    "opponents": "benchmarks.opponents",
    "arena": "benchmarks.arena",
    "wrapper": "benchmarks.wrapper",
    "webshop": "benchmarks.webshop",
    "alfworld": "benchmarks.alfworld",
    "rollout": "benchmarks.rollout",
    "runner": "benchmarks.runner",
    "trainer": "benchmarks.trainer",
    "trainer_generation": "benchmarks.trainer_generation",
    "answer_routes": "benchmarks.answer_routes",
    "learning": "benchmarks.learning",
    "selfplay": "benchmarks.selfplay",
    "serve": "benchmarks.serve",
    "prompt_example": "benchmarks.prompt_example",
    "trial_sizes": "benchmarks.trial_sizes",
    "report": "benchmarks.report",
    "gpu": "benchmarks.gpu",
}
"""Benchmark name -> module with a ``main(argv: list[str]) -> None`` function."""


def main(argv: list[str]) -> int:
    """Run the benchmark named by ``argv[0]`` with the remaining arguments."""
    if not argv or argv[0] not in BENCHMARKS:
        unknown = f"error: no benchmark {argv[0]!r}; " if argv else ""
        print(
            f"{unknown}usage: python -m benchmarks NAME [ARGS]; benchmarks: "
            + ", ".join(BENCHMARKS),
            file=sys.stderr,
        )
        return 2
    importlib.import_module(BENCHMARKS[argv[0]]).main(argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
