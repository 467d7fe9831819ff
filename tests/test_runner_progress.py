"""Long runs show their pace as answers come, keep every finished trial, and sync in groups."""

import io
import json
import os
import sys

import pytest
from rich.console import Console

from baselines.agents import AgentFactory
from baselines.evaluate.runner import evaluate, plan_trials
from baselines.progress import RunProgress
from baselines.results import ResultsFile
from baselines.run import main
from mage_agents.base import Reply
from mage_agents.rollout import TranscriptFile
from mage_agents.scripted import RandomLegalAgent


def _specs(tasks=6):
    return plan_trials("random-legal", ["mage/KuhnPoker-v0"], ["random"], tasks=tasks, repeats=2)


def _quiet():
    return Console(file=io.StringIO(), width=200)


def test_the_progress_counts_each_answer_of_a_batch_before_any_trial_ends():
    seen = []
    with RunProgress(_quiet(), "random-legal", 12, lines=_quiet()) as progress:

        def answered(replies):
            progress.answered(replies)
            seen.append((progress.pace.trials, progress.pace.answers))

        records = evaluate(
            "random", _specs(), ResultsFile(None), batch_size=4, on_answers=answered,
            on_record=progress.trial_ended,
        )  # fmt: skip
    assert seen[:2] == [(0, 4), (0, 8)]  # one step of the batch of four, then the next
    assert progress.pace.trials == len(records) == 12
    assert progress.pace.answers == sum(r["steps"] for r in records)
    assert "12/12 trials" in str(progress.pace) and "ETA 0:00:00" in str(progress.pace)


def test_off_a_terminal_a_line_now_and_then_on_a_terminal_a_bar():
    ticks = iter(range(0, 10_000, 25))  # 25 s between the clock's readings
    lines = _quiet()
    with RunProgress(_quiet(), "m", 3, lines=lines, clock=lambda: next(ticks)) as progress:
        for _ in range(4):
            progress.answered([Reply("<action>bet</action>", completion_tokens=5)] * 2)
        progress.trial_ended({"steps": 8})
    said = lines.file.getvalue().splitlines()
    assert len(said) == 2 and said[0].startswith("m: 0/3 trials, 6 answers") and "ETA ?" in said[0]
    assert said[1].startswith("m: 1/3 trials, 8 answers (0.05/s, 0.2 tokens/s), 0:02:55")
    assert said[1].endswith("ETA 0:05:50")  # 16 answers more at 8 in 175 s
    terminal = Console(file=io.StringIO(), force_terminal=True, width=200)
    with RunProgress(terminal, "m", 3, lines=lines) as progress:
        progress.trial_ended({"steps": 2})
        assert progress.bar.tasks[0].completed == 1
    assert len(lines.file.getvalue().splitlines()) == 2  # the bar, no lines


class _Interrupted(RandomLegalAgent):
    """Random play, until Ctrl-C comes (in the middle of a batch) once ``ENDED`` trials ended."""

    ended = [0]
    stop_after = 5

    def act(self, observation, info):
        if self.ended[0] >= self.stop_after:
            raise KeyboardInterrupt
        return super().act(observation, info)


def _strip(records, timing="wall_s"):
    return sorted(json.dumps({k: v for k, v in r.items() if k != timing}) for r in records)


def test_ctrl_c_in_a_batch_keeps_the_ended_trials_and_the_rerun_matches_an_uninterrupted_one(
    tmp_path,
):
    specs = _specs()
    whole = TranscriptFile(tmp_path / "whole.jsonl.gz")
    clean = evaluate("random", specs, ResultsFile(None), batch_size=4, transcripts=whole)
    results = ResultsFile(tmp_path / "results.jsonl")
    store = TranscriptFile(tmp_path / "transcripts.jsonl.gz", keep=results.finished())
    ended = []

    def count(record):
        ended.append(record["trial_id"])
        _Interrupted.ended[0] += 1

    _Interrupted.ended[0] = 0
    stopper = AgentFactory("random-legal", _Interrupted)
    with pytest.raises(KeyboardInterrupt):
        evaluate(stopper, specs, results, batch_size=4, on_record=count, transcripts=store)
    assert 5 <= len(ended) < len(specs)  # stopped mid-run, after five trials ended
    kept = ResultsFile(tmp_path / "results.jsonl")
    assert [r["trial_id"] for r in kept.records()] == ended
    reopened = TranscriptFile(tmp_path / "transcripts.jsonl.gz", keep=kept.finished())
    assert reopened.ids() == ended
    resumed = evaluate("random", specs, kept, batch_size=4, transcripts=reopened)
    assert _strip(resumed) == _strip(clean)
    assert _strip(reopened, "timing") == _strip(whole, "timing")


@pytest.mark.parametrize(("every_s", "syncs"), [(3600.0, 2), (0.0, 2 * 12 + 2)])
def test_finished_trials_are_synced_in_groups_not_one_fsync_a_line(
    tmp_path, monkeypatch, every_s, syncs
):
    calls = []
    # where evaluate reads it (a doctest run may import the module a second time)
    monkeypatch.setitem(evaluate.__globals__, "COMMIT_EVERY_S", every_s)
    monkeypatch.setattr("os.fsync", lambda fd: calls.append(fd))
    results = ResultsFile(tmp_path / "results.jsonl")
    store = TranscriptFile(tmp_path / "transcripts.jsonl.gz")
    evaluate("random", _specs(), results, batch_size=4, transcripts=store)
    assert len(calls) == syncs  # a group: one for each file; and once more at the end
    assert len(ResultsFile(tmp_path / "results.jsonl")) == len(store) == 12


def test_threads_set_torch_threads_for_the_run_and_its_workers(monkeypatch, capsys):
    monkeypatch.setenv("OMP_NUM_THREADS", "7")  # restored after the test
    torch = sys.modules.get("torch")  # loaded by an earlier test: its threads are restored too
    before = torch.get_num_threads() if torch else None
    base = ["--env", "mage/KuhnPoker-v0", "--tasks", "1", "--episodes", "1", "--no-plots"]
    try:
        assert main([*base, "--threads", "2"]) == 0
        assert os.environ["OMP_NUM_THREADS"] == "2"  # read by torch here and in workers
        assert torch is None or torch.get_num_threads() == 2
    finally:
        if torch is not None:
            torch.set_num_threads(before)
    assert main([*base, "--threads", "0"]) == 2
    assert "threads must be a positive integer" in capsys.readouterr().err
