"""Incomplete records (the backend failed) in the results file: kept, never counted as finished."""

import json

from baselines.results import ResultsFile


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def test_an_incomplete_record_is_not_finished_and_a_complete_one_replaces_it(tmp_path):
    path = tmp_path / "results.jsonl"
    store = ResultsFile(path)
    store.append({"trial_id": "a", "incomplete": True, "errors": ["timeout"]})
    assert "a" not in store and len(store) == 0
    assert [r["errors"] for r in store.failed()] == [["timeout"]]
    store.append({"trial_id": "a", "incomplete": False, "x": 1})
    assert "a" in store and store.failed() == []
    store.append({"trial_id": "a", "incomplete": True})  # after a complete one: ignored
    again = ResultsFile(path)  # what a rerun reads back
    assert again.records() == [{"trial_id": "a", "incomplete": False, "x": 1}]
    assert again.failed() == []


def test_the_latest_failure_of_a_trial_is_the_one_reported(tmp_path):
    path = tmp_path / "results.jsonl"
    _write(
        path,
        [
            {"trial_id": "a", "incomplete": True, "errors": ["refused"]},
            {"trial_id": "b", "incomplete": False},
            {"trial_id": "a", "incomplete": True, "errors": ["HTTP 500"]},
        ],
    )
    store = ResultsFile(path)
    assert store.finished() == {"b"}
    assert [r["errors"] for r in store.failed(["a", "b"])] == [["HTTP 500"]]
    assert store.failed(["b"]) == []
