"""Results survive interruptions: resume never duplicates or loses a trial, even after kill -9."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from baselines.evaluate.runner import evaluate, plan_trials
from baselines.results import ResultsFile
from mage_envs.meta import TrialConfig

SLOW_AGENT = """
import time
from mage_agents.scripted import RandomLegalAgent

class SlowRandom(RandomLegalAgent):
    name = "slow-random"

    def act(self, observation, info):
        time.sleep(0.004)
        return super().act(observation, info)
"""


def _strip(records):
    return sorted(
        ({k: v for k, v in r.items() if k != "wall_s"} for r in records),
        key=lambda r: r["trial_id"],
    )


def _specs(tasks=12, agent="random-legal"):
    return plan_trials(agent, ["mage/KuhnPoker-v0"], ["random"], tasks=tasks, repeats=2)


def test_torn_last_line_is_dropped_and_the_file_repaired(tmp_path):
    path = tmp_path / "results.jsonl"
    good = json.dumps({"trial_id": "a", "x": 1})
    path.write_text(good + "\nnot json at all\n" + '{"trial_id": "b", "x"')
    store = ResultsFile(path)
    assert store.finished() == {"a"}
    assert store.dropped_lines == 2
    assert path.read_text() == good + "\nnot json at all\n"
    store.append({"trial_id": "b", "x": 2})
    assert ResultsFile(path).finished() == {"a", "b"}


def test_resume_plays_only_missing_trials_and_matches_a_clean_run(tmp_path):
    specs = _specs()
    clean = evaluate("random", specs, ResultsFile(None))
    store = ResultsFile(tmp_path / "r.jsonl")
    evaluate("random", specs[:7], store)
    played = []
    resumed = evaluate("random", specs, ResultsFile(tmp_path / "r.jsonl"), on_record=played.append)
    assert len(played) == len(specs) - 7
    lines = (tmp_path / "r.jsonl").read_text().splitlines()
    ids = [json.loads(line)["trial_id"] for line in lines]
    assert len(ids) == len(set(ids)) == len(specs)
    assert _strip(resumed) == _strip(clean)


def test_results_do_not_depend_on_workers_or_batch_size():
    specs = _specs(tasks=10)
    one = evaluate("random", specs, ResultsFile(None))
    batched = evaluate("random", specs, ResultsFile(None), batch_size=7)
    parallel = evaluate("random", specs, ResultsFile(None), workers=2)
    assert _strip(one) == _strip(batched) == _strip(parallel)
    assert [r["trial_id"] for r in parallel] == [s.trial_id for s in specs]


def test_kill_9_then_rerun_completes_without_duplicates(tmp_path):
    (tmp_path / "slow_agent.py").write_text(SLOW_AGENT)
    out = tmp_path / "out"
    command = [
        sys.executable, "-m", "baselines.run", "--agent", "python:slow_agent:SlowRandom",
        "--env", "mage/KuhnPoker-v0", "--opponent", "random", "--tasks", "150", "--out", str(out),
        "--no-plots",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.getcwd()])}
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    results = out / "results.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        if results.exists() and results.read_text().count("\n") >= 20:
            break
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait()
    finished_before = results.read_text().count("\n")
    assert 20 <= finished_before < 150, "the run should have been cut in the middle"
    with open(results, "a") as handle:  # a write torn by the kill
        handle.write('{"trial_id": "slow-random|mage/KuhnPoker-v0|random|n3|')
    rerun = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    ids = [json.loads(line)["trial_id"] for line in results.read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 150
    assert Path(out / "summary.md").exists()


def test_a_trial_id_always_stands_for_the_same_trial():
    # --seed 0 --tasks 10 and --seed 5 --tasks 10 share tasks 5..9: resuming one into the other's
    # results file must reuse only trials that a clean run would have played identically
    first = {s.trial_id: s for s in plan_trials("a", ["mage/KuhnPoker-v0"], tasks=10, repeats=2)}
    later = plan_trials("a", ["mage/KuhnPoker-v0"], tasks=10, repeats=2, seed=5)
    shared = [s for s in later if s.trial_id in first]
    assert len(shared) == 10
    assert all(first[s.trial_id] == s for s in shared)


def test_agent_settings_are_part_of_the_trial_id():
    def ids(**settings):
        plan = plan_trials("a", ["mage/KuhnPoker-v0"], tasks=2, agent_settings=settings)
        return [s.trial_id for s in plan]

    assert ids(temperature=0.7) != ids(temperature=0.0)
    assert ids() == [s.trial_id for s in plan_trials("a", ["mage/KuhnPoker-v0"], tasks=2)]


def always_pass(observation, info):
    """An agent that answers with Kuhn's alias for check and fold."""
    return "<action>pass</action>" if info.get("phase") != "reflect" else "no reflection"


def test_moves_accepted_through_an_alias_are_logged_by_their_legal_name_not_invalid():
    # "pass" is Kuhn's alias for check or fold: one move is never counted under two names
    specs = plan_trials("p", ["mage/KuhnPoker-v0"], tasks=3, trial=TrialConfig(num_episodes=2))
    records = evaluate(f"python:{__name__}:always_pass", specs, ResultsFile(None))
    moves = {move for r in records for episode in r["actions"] for move in episode}
    assert moves and moves <= {"check", "fold"}
    assert all(r["invalid_steps"] == 0 for r in records)
