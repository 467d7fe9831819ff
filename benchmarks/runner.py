"""A 1,000-task random run: this checkout against a reference checkout, taking turns.

Each run is the whole command a user types, ``python -m baselines.run --env mage/KuhnPoker-v0
--tasks N --out DIR --no-plots`` (3-episode trials, the random-legal agent, transcripts on), in
a fresh temporary folder, started with the reference tree or this one first on ``PYTHONPATH``.
The two trees take turns (reference first in odd rounds, this one first in even rounds), so a
change of load on a shared machine falls on both. Printed per run: wall seconds and the CPU
seconds of the process (user + system); then the medians and the ratio of medians (this /
reference).

The reference is any older checkout of the repository with the same command, for instance the
commit before a change: ``git archive COMMIT | tar -x -C /tmp/ref``.

Run: ``python -m benchmarks runner --reference /tmp/ref [--repeats 5] [--tasks 1000]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import positive_int

__all__ = ["main", "timed_run"]

HERE = Path(__file__).resolve().parents[1]
"""The root of this checkout."""


def timed_run(tree: Path, tasks: int) -> tuple[float, float]:
    """Run the random-agent command with ``tree``'s code; return (wall s, CPU s) of the process."""
    env = dict(os.environ, PYTHONPATH=str(tree), OMP_NUM_THREADS="1")
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, "-m", "baselines.run", "--env", "mage/KuhnPoker-v0"]
        command += ["--tasks", str(tasks), "--out", out, "--no-plots"]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, cwd=tree, env=env, check=True, capture_output=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def main(argv: list[str]) -> None:
    """Print the wall and CPU time of each run, the medians and this / reference."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks runner")
    parser.add_argument("--reference", type=Path, required=True, help="an older checkout")
    parser.add_argument("--repeats", type=positive_int, default=5, help="runs of each tree")
    parser.add_argument("--tasks", type=positive_int, default=1000, help="tasks a run")
    args = parser.parse_args(argv)
    if not (args.reference / "baselines" / "run.py").is_file():
        parser.error(f"{args.reference} is not a checkout of this repository (no baselines/run.py)")
    trees = {"reference": args.reference.resolve(), "this": HERE}
    figures: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
    print(f"{'round':>5} {'tree':10} {'wall s':>7} {'CPU s':>7} {'load':>5}")
    for round_ in range(1, args.repeats + 1):
        order = ["reference", "this"] if round_ % 2 else ["this", "reference"]
        for name in order:
            wall, cpu = timed_run(trees[name], args.tasks)
            figures[name].append((wall, cpu))
            load = os.getloadavg()[0]
            print(f"{round_:5} {name:10} {wall:7.2f} {cpu:7.2f} {load:5.1f}", flush=True)
    medians = {
        name: (statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs))
        for name, runs in figures.items()
    }
    for name, (wall, cpu) in medians.items():
        print(f"median {name:10} wall {wall:.2f} s, CPU {cpu:.2f} s")
    (wall_ref, cpu_ref), (wall, cpu) = medians["reference"], medians["this"]
    print(f"this / reference: wall {wall / wall_ref:.2f}, CPU {cpu / cpu_ref:.2f}")
