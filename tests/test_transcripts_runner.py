"""The runner keeps a transcript of every finished trial beside results.jsonl, crash-safe."""

import json
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict

from baselines.evaluate.runner import evaluate, plan_trials
from baselines.results import ResultsFile
from baselines.run import main
from mage_agents.rollout import TranscriptFile, agent_view, read_transcripts
from mage_agents.rollout.transcript_file import gzip_member

SLOW_AGENT = """
import time
from mage_agents.scripted import RandomLegalAgent

class SlowRandom(RandomLegalAgent):
    name = "slow-random"

    def act(self, observation, info):
        time.sleep(0.004)
        return super().act(observation, info)
"""


def _ids(path):
    return [json.loads(line)["trial_id"] for line in path.read_text().splitlines()]


def test_every_finished_trial_has_one_transcript_with_the_same_id(tmp_path):
    specs = plan_trials("random-legal", ["mage/KuhnPoker-v0", "mage/Sokoban-v0"], tasks=3)
    results = ResultsFile(tmp_path / "results.jsonl")
    store = TranscriptFile(tmp_path / "transcripts.jsonl.gz", keep=results.finished())
    records = evaluate("random", specs, results, transcripts=store)
    assert store.ids() == [r["trial_id"] for r in records] == [s.trial_id for s in specs]
    for record in records:
        kept = store.read(record["trial_id"])
        assert kept["agent"] == record["agent"] and kept["env_id"] == record["env_id"]
        assert kept["result"] == record["trial"]
        moves = [[t["move"] for t in kept["turns"] if t["phase"] == "play" and t["episode"] == k]
                 for k in range(len(record["actions"]))]  # fmt: skip
        assert moves == record["actions"]


def _strip(records):
    return sorted(json.dumps({k: v for k, v in r.items() if k != "timing"}) for r in records)


def test_transcripts_do_not_depend_on_workers_or_batch_size(tmp_path):
    specs = plan_trials("random-legal", ["mage/KuhnPoker-v0"], ["random"], tasks=6, repeats=2)
    kept = []
    for name, options in [("one", {}), ("batched", {"batch_size": 5}), ("two", {"workers": 2})]:
        store = TranscriptFile(tmp_path / f"{name}.jsonl.gz")
        evaluate("random", specs, ResultsFile(None), transcripts=store, **options)
        kept.append(_strip(store))
    assert kept[0] == kept[1] == kept[2] and len(kept[0]) == 12


def test_the_command_writes_transcripts_unless_told_not_to(tmp_path, capsys):
    out = tmp_path / "run"
    common = ["--env", "mage/KuhnPoker-v0", "--tasks", "3", "--no-plots", "--out"]
    assert main([*common, str(out)]) == 0
    assert len(read_transcripts(out / "transcripts.jsonl.gz")) == 3
    text = (out / "summary.md").read_text()
    assert "Transcripts: 3 of 3 trials in transcripts.jsonl.gz (" in text
    assert "per trial)" in capsys.readouterr().out
    assert main([*common, str(tmp_path / "bare"), "--no-transcripts"]) == 0
    assert not (tmp_path / "bare" / "transcripts.jsonl.gz").exists()
    assert "Transcripts: none" in (tmp_path / "bare" / "summary.md").read_text()


def test_kill_9_then_rerun_leaves_one_transcript_per_finished_trial(tmp_path):
    (tmp_path / "slow_agent.py").write_text(SLOW_AGENT)
    out = tmp_path / "out"
    command = [
        sys.executable, "-m", "baselines.run", "--agent", "python:slow_agent:SlowRandom",
        "--env", "mage/KuhnPoker-v0", "--opponent", "random", "--tasks", "60", "--out", str(out),
        "--no-plots",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.getcwd()])}
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    results, transcripts = out / "results.jsonl", out / "transcripts.jsonl.gz"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        if results.exists() and results.read_text().count("\n") >= 15:
            break
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait()
    finished = _ids(results)
    assert 15 <= len(finished) < 60, "the run should have been cut in the middle"
    # what a kill can leave: a transcript whose results line was never written, then a torn one
    prefix = finished[0].rsplit("|", 2)[0]
    unfinished = next(i for k in range(59, 0, -1) if (i := f"{prefix}|task{k}|r0") not in finished)
    with open(transcripts, "ab") as handle:
        handle.write(gzip_member({"trial_id": unfinished, "turns": ["stale"]}))
        handle.write(gzip_member({"trial_id": "torn"})[:-5])
    rerun = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    ids = _ids(results)
    kept = read_transcripts(transcripts)
    assert len(ids) == len(set(ids)) == 60
    assert sorted(r["trial_id"] for r in kept) == sorted(ids)  # once each, no stale one
    assert next(r for r in kept if r["trial_id"] == unfinished)["turns"] != ["stale"]


def first_legal(observation, info):
    """Check or fold: never calls a bet, so a bet by the opponent ends the hand in a fold."""
    return (
        info["legal_actions"][0] if info.get("phase") == "play" else "<reflection>ok</reflection>"
    )


def _shared_view(record):
    return json.dumps(agent_view(record), sort_keys=True)


def test_no_hidden_card_reaches_the_agents_view_kuhn_leak_test(tmp_path):
    # Against always-bet the agent folds every hand: the opponent's card is never shown. Two
    # deals that differ only in that card must then give the same view, byte for byte.
    specs = plan_trials(f"python:{__name__}:first_legal", ["mage/KuhnPoker-v0"], ["always-bet"],
                        tasks=30)  # fmt: skip
    store = TranscriptFile(tmp_path / "t.jsonl.gz")
    evaluate(f"python:{__name__}:first_legal", specs, ResultsFile(None), transcripts=store)
    by_own_card = defaultdict(dict)
    for record in store:
        truth = record["ground_truth"]
        assert len(truth) == 3 and len({json.dumps(t) for t in truth}) == 1  # same deal, 3 times
        seen = json.dumps(agent_view(record))
        assert truth[0]["opponent_card"] and "opponent_card" not in seen
        assert "showdown" not in seen.lower() and "folded" in seen
        by_own_card[truth[0]["your_card"]].setdefault(truth[0]["opponent_card"], record)
    pairs = [list(by.values()) for by in by_own_card.values() if len(by) == 2]
    assert len(pairs) == 3, "each own card should have been dealt with both other cards"
    for one, other in pairs:
        assert one["ground_truth"] != other["ground_truth"]
        assert _shared_view(one) == _shared_view(other)
