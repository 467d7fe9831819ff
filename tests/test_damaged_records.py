"""Damaged records: a line of results.jsonl or a transcript that cannot be read is named, and
its trial is played again once (one transcript each), never silently, never twice."""

import gzip
import json

from baselines import run
from mage_agents.rollout import read_transcripts

KUHN = ["--env", "mage/KuhnPoker-v0", "--tasks", "4", "--no-plots"]


def _ids(out):
    return [t["trial_id"] for t in read_transcripts(out / "transcripts.jsonl.gz")]


def test_a_damaged_results_line_is_named_and_its_trial_replayed_once(tmp_path, capsys):
    out = tmp_path / "run"
    assert run.main([*KUHN, "--out", str(out)]) == 0
    lines = (out / "results.jsonl").read_bytes().split(b"\n")
    damaged_id = json.loads(lines[1])["trial_id"]
    lines[1] = lines[1][:50]  # a line in the middle, cut: no longer a record
    (out / "results.jsonl").write_bytes(b"\n".join(lines))
    capsys.readouterr()
    assert run.main([*KUHN, "--out", str(out)]) == 0
    printed = capsys.readouterr()
    assert "results.jsonl: line 2 is damaged (not a JSON trial record); it is skipped" in (
        printed.err
    )
    assert "3 of 4 trials resumed" in printed.out
    assert sorted(_ids(out)) == sorted(set(_ids(out))) and damaged_id in _ids(out)
    assert run.main([*KUHN, "--out", str(out)]) == 0  # played once: not again
    assert "4 of 4 trials resumed" in capsys.readouterr().out
    assert len(_ids(out)) == 4


def test_a_damaged_transcript_is_named_by_its_trial(tmp_path, capsys):
    out = tmp_path / "run"
    assert run.main([*KUHN, "--out", str(out)]) == 0
    path = out / "transcripts.jsonl.gz"
    data = bytearray(path.read_bytes())
    second = data.index(b"\x1f\x8b\x08", 1)  # the second member's start
    member_id = json.loads(gzip.decompress(bytes(data[second:])).split(b"\n")[0])["trial_id"]
    data[second + 200 : second + 216] = bytes(16)
    path.write_bytes(bytes(data))
    capsys.readouterr()
    assert run.main(["report", str(out)]) == 0
    err = capsys.readouterr().err
    assert "1 damaged transcript(s) cannot be read (trial " + member_id in err
    assert run.main([*KUHN, "--out", str(out)]) == 0  # a resume names it too, and keeps it
    assert f"trial {member_id}" in capsys.readouterr().err
    assert path.read_bytes() == bytes(data)
    note = (out / "summary.md").read_text()
    assert "Transcripts: 3 of 4 trials" in note and f"1 damaged: trial {member_id}" in note


def test_report_refuses_a_results_file_without_a_trial(tmp_path, capsys):
    (tmp_path / "results.jsonl").write_text('garbage\n{"no": "trial id"}\n')
    assert run.main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "holds no trial (2 lines, none a trial record)" in err
    (tmp_path / "results.jsonl").write_text("")  # a run that played nothing
    assert run.main(["report", str(tmp_path)]) == 2
    assert "holds no trial: nothing to report" in capsys.readouterr().err
