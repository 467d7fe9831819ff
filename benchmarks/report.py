"""Benchmark: what transcripts and summary.html cost, and the page checked in a real browser.

1. **Playing with and without transcripts.** The same trials (random-legal agent, Kuhn poker,
   Sokoban and Minesweeper) are played into a fresh results file three times each way,
   interleaved; printed: seconds per 1,000 trials of each (best of three) and their ratio
   (the reference is the run without transcripts).
2. **Size.** Bytes per trial of ``transcripts.jsonl.gz`` per env, against ``results.jsonl``'s.
3. **Resume and report.** Seconds to open the transcripts file (the scan a resumed run makes),
   to rebuild ``summary.html`` (``python -m baselines.run report``), and the page's size.
4. **In the browser** (skipped with a message without Chromium): headless Chromium loads the page
   with a trial open; printed: the seconds it took, the console messages (none expected) and
   whether every trial is listed. ``--screenshot PATH`` saves the picture (the README's:
   ``docs/summary_html.png``).

Run: ``python -m benchmarks report [--tasks 100] [--screenshot docs/summary_html.png]
[--agent SPEC] [--out DIR]``; ``--agent`` plays the pictured run with another agent (a local
model, an endpoint), one env (Kuhn poker) and a few tasks; ``--pictured-run DIR`` pictures a run
folder already played (its page rebuilt first) and measures nothing else.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import json
import os
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from baselines.evaluate.runner import evaluate, plan_trials
from baselines.report.command import rebuild_run_page
from baselines.report.html_page import embedded_data, write_page
from baselines.results import ResultsFile
from baselines.run import main as run_main
from benchmarks import positive_int
from benchmarks.browser_check import chromium, open_page, page_url
from mage_agents.rollout import TranscriptFile

__all__ = ["main"]

ENVS = ["mage/KuhnPoker-v0", "mage/Sokoban-v0", "mage/Minesweeper-v0"]


def _play(folder: Path, tasks: int, transcripts: bool) -> float:
    """Play the benchmark's trials into ``folder``; return the seconds it took."""
    specs = plan_trials("random-legal", ENVS, tasks=tasks)
    results = ResultsFile(folder / "results.jsonl")
    store = TranscriptFile(folder / "transcripts.jsonl.gz") if transcripts else None
    start = time.perf_counter()
    evaluate("random", specs, results, transcripts=store)
    return time.perf_counter() - start


def _sizes(folder: Path) -> dict[str, tuple[float, float]]:
    """Per env: mean bytes per trial of the transcripts (compressed) and of the results lines."""
    results: dict[str, list[int]] = defaultdict(list)
    for line in (folder / "results.jsonl").read_bytes().splitlines():
        results[json.loads(line)["env_id"]].append(len(line) + 1)
    store = TranscriptFile(folder / "transcripts.jsonl.gz")
    kept: dict[str, list[int]] = defaultdict(list)
    for trial_id in store.ids():
        kept[trial_id.split("|")[1]].append(len(store.member(trial_id)))
    return {env: (sum(kept[env]) / len(kept[env]), sum(b) / len(b)) for env, b in results.items()}


def _costs(root: Path, tasks: int) -> Path:
    timings: dict[bool, list[float]] = {False: [], True: []}
    for k in range(3):
        for transcripts in (False, True):
            folder = root / f"play-{int(transcripts)}-{k}"
            timings[transcripts].append(_play(folder, tasks, transcripts))
    trials = tasks * len(ENVS)
    bare, kept = min(timings[False]), min(timings[True])
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"1. {trials} trials, best of 3 (seconds per 1,000 trials; load average {load:.1f}):")
    print(f"   without transcripts {1000 * bare / trials:.2f}  with {1000 * kept / trials:.2f}")
    print(f"   ratio with / without: {kept / bare:.3f}")
    folder = root / "play-1-0"
    print("2. bytes per trial:      transcripts.jsonl.gz   results.jsonl")
    for env, (compressed, line) in sorted(_sizes(folder).items()):
        print(f"   {env:24} {compressed:12,.0f} {line:17,.0f}")
    raw = len(gzip.decompress((folder / "transcripts.jsonl.gz").read_bytes()))
    print(f"   uncompressed JSON: {raw / trials:,.0f} bytes per trial")
    start = time.perf_counter()
    opened = TranscriptFile(folder / "transcripts.jsonl.gz")
    scan = time.perf_counter() - start
    start = time.perf_counter()
    page = rebuild_run_page(folder, "Benchmark", plots=False)
    build = time.perf_counter() - start
    print(f"3. open (resume scan) {len(opened)} transcripts: {scan:.3f} s; "
          f"rebuild summary.html: {build:.2f} s, {page.stat().st_size / 2**20:.2f} MB")  # fmt: skip
    return folder


def _pictured_run(root: Path, agent: str | None, tasks: int, options: list[str]) -> Path:
    folder = root / "pictured"
    if agent is None:
        argv = ["--env", "mage/KuhnPoker-v0", "--env", "mage/Sokoban-v0", "--tasks", str(tasks)]
    else:
        argv = ["--agent", agent, "--env", "mage/KuhnPoker-v0", "--tasks", str(tasks)]
    argv += [f"--agent-option={option}" for option in options]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):  # its table is not a figure of this benchmark
        code = run_main([*argv, "--out", str(folder)])
    if code not in (0, 3):
        raise SystemExit(f"The pictured run failed:\n{printed.getvalue()}")
    return folder


def _picture_page(folder: Path) -> Path:
    """The run's page without its breakdowns and plots: the picture shows the trial browser."""
    data = embedded_data((folder / "summary.html").read_text(encoding="utf-8"))
    data["tables"], data["images"] = data["tables"][:1], []
    return write_page(folder / "picture.html", data)


def _browser(folder: Path, screenshot: Path | None) -> None:
    if chromium() is None:
        print("4. skipped: Chromium is absent (Debian: apt-get install chromium).")
        return
    records = ResultsFile(folder / "results.jsonl", repair=False).records()
    ids = [r["trial_id"] for r in records]
    # the picture shows a trial solved at a later attempt, after reflections, if any is
    later = [r["trial_id"] for r in records if ((r["trial"] or {}).get("solved_at") or 0) > 0]
    shown = (later or ids)[0]
    shot = screenshot or Path(tempfile.mkdtemp()) / "summary.png"
    start = time.perf_counter()
    page = open_page(page_url(folder / "summary.html", shown))
    seconds = time.perf_counter() - start
    listed = len(set(page.listed_trials()) & set(ids))
    print(f"4. Chromium: loaded summary.html, rendered it and opened a trial in {seconds:.1f} s")
    print(f"   trials listed {listed}/{len(ids)}; console messages: {len(page.console)}")
    pictured = open_page(page_url(_picture_page(folder), shown), shot, window=(1400, 2100))
    for line in page.console + pictured.console:
        print(f"   console: {line}")
    _shrink(shot)
    print(f"   picture of the trial browser with {shown} open: {shot}")


def _shrink(png: Path) -> None:
    """Save the picture with 128 colours (a third of the bytes; the page has few colours)."""
    try:
        from PIL import Image  # matplotlib's own dependency: present with the plots extra
    except ImportError:
        return
    with Image.open(png) as image:
        fewer = image.convert("RGB").quantize(colors=128, method=Image.Quantize.MEDIANCUT)
    fewer.save(png, optimize=True)


def main(argv: list[str]) -> None:
    """Print the figures of the four parts."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks report")
    parser.add_argument(
        "--tasks", type=positive_int, default=100, help="tasks per env (default 100)"
    )
    parser.add_argument("--screenshot", type=Path, help="save the browser's picture here")
    parser.add_argument("--agent", help="the agent of the pictured run (default: random-legal)")
    parser.add_argument(
        "--pictured-tasks", type=positive_int, default=4, help="its tasks (default 4)"
    )
    parser.add_argument(
        "--agent-option", action="append", default=[], help="its backend options, KEY=VALUE"
    )
    parser.add_argument("--out", type=Path, help="keep the runs here (default: a temp folder)")
    parser.add_argument(
        "--pictured-run",
        type=Path,
        help="picture this run folder (its page rebuilt) instead of playing one; skips part 1-3",
    )
    args = parser.parse_args(argv)
    if args.pictured_run is not None:
        rebuild_run_page(args.pictured_run)
        _browser(args.pictured_run, args.screenshot)
        return
    root = args.out or Path(tempfile.mkdtemp(prefix="mage-bench-report-"))
    _costs(root, args.tasks)
    pictured = _pictured_run(root, args.agent, args.pictured_tasks, args.agent_option)
    _browser(pictured, args.screenshot)
