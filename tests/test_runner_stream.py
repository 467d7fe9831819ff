"""The runner's plan is made on demand: any --tasks starts at once, resumes without planning."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from baselines.evaluate.runner import evaluate, plan_trials
from baselines.results import ResultsFile
from mage_agents.rollout import TrialPlanner, TrialPlans

KUHN = "mage/KuhnPoker-v0"


def test_a_lazy_plan_has_a_length_an_order_and_positions_without_holding_plans():
    plans = plan_trials("a", [KUHN, "mage/TicTacToe-v0"], ["random", None], tasks=3, repeats=2)
    listed = list(plans)
    assert len(plans) == len(listed) == 2 * 2 * 3 * 2
    assert [plans[i] for i in range(len(plans))] == listed == plans[:]
    assert plans[-1] == listed[-1] and [p.task_seed for p in listed[:4]] == [0, 0, 1, 1]
    assert [plans.position(p.trial_id) for p in listed] == list(range(len(listed)))
    assert len({p.trial_id for p in listed}) == len(listed)
    later = plan_trials("a", [KUHN, "mage/TicTacToe-v0"], ["random", None], 3, 2, seed=2)
    assert plans.position(later[-1].trial_id) is None  # task 4: not in this plan
    assert later[0] == plans[plans.position(later[0].trial_id)]  # task 2 in both: the same trial
    for foreign in ("x|task1|r0", plans[0].trial_id + "0", plans[0].trial_id.replace("r0", "r9")):
        assert plans.position(foreign) is None
    huge = plan_trials("a", [KUHN], tasks=10**13)
    assert len(huge) == 10**13 and huge[10**13 - 1].task_seed == 10**13 - 1


def test_a_plan_refuses_two_planners_of_the_same_trials():
    with pytest.raises(ValueError, match="same trial ids"):
        TrialPlans([TrialPlanner(KUHN, agent="a"), TrialPlanner(KUHN, agent="a")], 0, 1)
    with pytest.raises(ValueError, match="name their agent"):
        TrialPlans([TrialPlanner(KUHN)], 0, 1)


def test_evaluate_returns_the_plans_records_in_plan_order_reading_only_the_results():
    plans = plan_trials("random", [KUHN], ["random"], tasks=4, repeats=2)
    results = ResultsFile(None)
    results.append({"trial_id": "another run's trial", "trial": None})
    records = evaluate("random", plans, results, batch_size=3)
    assert [r["trial_id"] for r in records] == [p.trial_id for p in plans]


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _lines(path: Path) -> int:
    return path.read_text().count("\n") if path.exists() else 0


def _start(command, env, results, at_least):
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None and _lines(results) < at_least:
        time.sleep(0.05)
    return process


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")
def test_ten_trillion_tasks_play_at_once_in_bounded_memory_and_resume(tmp_path):
    out = tmp_path / "out"
    results = out / "results.jsonl"
    command = [sys.executable, "-m", "baselines.run", "--env", KUHN, "--tasks", "10000000000000"]
    command += ["--out", str(out), "--no-plots", "--no-transcripts"]
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    process = _start(command, env, results, at_least=20)
    try:
        assert process.poll() is None and _lines(results) >= 20  # playing, not planning
        rss = _rss_kb(process.pid)
        assert rss < 600_000, f"{rss} kB"  # the plan is not held: the old runner grew past 2 GB
    finally:
        process.send_signal(signal.SIGINT)
        stdout, _ = process.communicate(timeout=30)
    assert process.returncode == 130 and b"Interrupted: every finished trial is saved" in stdout
    assert b"planning" not in stdout
    done = _lines(results)
    again = _start(command, env, results, at_least=done + 5)
    try:
        assert again.poll() is None and _lines(results) >= done + 5
    finally:
        again.send_signal(signal.SIGINT)
        stdout, _ = again.communicate(timeout=30)
    assert f"{done:,} of 10,000,000,000,000 trials resumed".encode() in stdout
    ids = [json.loads(line)["trial_id"] for line in results.read_text().splitlines()]
    assert len(ids) == len(set(ids)) and ids[0].endswith("|task0|r0")
