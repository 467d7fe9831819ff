"""summary.html: the run's tables, plots and every trial's transcript, in one static page."""

import base64
import gzip
import json

import pytest

from baselines.report.command import config_labelled
from baselines.report.html_page import embedded_data, render_page
from baselines.report.train_index import write_training_index
from baselines.run import main
from mage_agents.rollout import Trajectory, transcript, write_transcripts

RUN = ["--env", "mage/KuhnPoker-v0", "--env", "mage/Sokoban-v0", "--tasks", "3", "--no-plots"]


def _results_ids(folder):
    return [json.loads(line)["trial_id"] for line in (folder / "results.jsonl").open()]


def _page(folder, name="summary.html"):
    return embedded_data((folder / name).read_text(encoding="utf-8"))


def test_the_report_of_a_tiny_run_holds_every_trial_and_its_transcript(tmp_path):
    out = tmp_path / "run"
    assert main([*RUN, "--out", str(out)]) == 0
    data, ids = _page(out), _results_ids(out)
    assert [row["id"] for row in data["trials"]["rows"]] == ids and len(ids) == 6
    assert sorted(data["transcripts"]) == sorted(ids)
    packed = data["transcripts"][ids[0]]
    record = json.loads(gzip.decompress(base64.b64decode(packed)))
    assert record["trial_id"] == ids[0] and record["turns"]
    titles = [t["title"] for t in data["tables"]]
    assert titles[:3] == ["Results", "Per opponent played", "Per seat (final attempt)"]
    assert data["tables"][0]["rows"][0][:3] == ["random-legal", "mage/KuhnPoker-v0", "default"]
    filters = data["trials"]["filters"]
    assert {"env", "opponent", "solved", "solved at"} <= set(filters)
    row = data["trials"]["rows"][0]
    assert (
        row["filters"]["solved"] in ("yes", "no") and row["filters"]["env"] == ids[0].split("|")[1]
    )


def test_report_rebuilds_the_page_and_an_old_run_gets_its_tables_alone(tmp_path, capsys):
    out = tmp_path / "run"
    assert main([*RUN, "--out", str(out)]) == 0
    (out / "summary.html").unlink()
    assert main(["report", str(out)]) == 0
    assert "summary.html" in capsys.readouterr().out
    assert len(_page(out)["transcripts"]) == 6
    (out / "transcripts.jsonl.gz").unlink()  # as a run made before transcripts existed
    assert main(["report", str(out), "--title", "Old run"]) == 0
    data = _page(out)
    assert data["title"] == "Old run" and not data["transcripts"]
    assert len(data["trials"]["rows"]) == 6 and data["tables"][0]["rows"]
    assert any("Transcripts: none" in note for note in data["notes"])


def test_report_refuses_a_folder_that_is_no_run(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    assert "neither a run folder" in capsys.readouterr().err


def test_configs_that_would_share_a_row_are_told_apart():
    records = [
        {
            "trial_id": f"a|e|None|n{n}|h{n}|task{k}|r0",
            "agent": "a",
            "env_id": "e",
            "opponent": None,
        }
        for n in (2, 3)
        for k in range(2)
    ]
    assert [r["agent"] for r in config_labelled(records)] == ["a (n2|h2)"] * 2 + ["a (n3|h3)"] * 2
    alone = records[:2]
    assert [r["agent"] for r in config_labelled(alone)] == ["a", "a"]


def test_report_of_two_configs_in_one_folder_keeps_them_apart(tmp_path):
    out = tmp_path / "run"
    base = ["--env", "mage/KuhnPoker-v0", "--tasks", "2", "--no-plots", "--out", str(out)]
    assert main(base) == 0 and main([*base, "--episodes", "2"]) == 0
    assert (out / "summary.html").exists() and list(out.glob("summary-*.html"))
    assert main(["report", str(out)]) == 0
    agents = [row[0] for row in _page(out)["tables"][0]["rows"]]
    assert len(agents) == 2 and agents[0] != agents[1]


@pytest.mark.parametrize("text", ["</script><script>alert(1)</script>", "<!--", "\u2028&amp;"])
def test_hostile_text_stays_data(text):
    html = render_page({"title": text, "notes": [text], "tables": [], "trials": None})
    assert html.count("</script>") == 2  # the page's own two script elements
    assert embedded_data(html)["notes"] == [text]


def test_a_training_folder_gets_an_index_of_its_evaluations_and_sampled_trials(tmp_path):
    history = [{"step": 5, "loss": 0.1}, {"step": 10, "eval/trial/final_return": -0.5}]
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(e) + "\n" for e in history))
    trials = [Trajectory.from_rewards([[0.0], [1.0]], trial_id=f"eval10|row{i}") for i in (0, 1)]
    records = [transcript(t, step=10, env_id="mage/KuhnPoker-v0", opponent=None) for t in trials]
    write_transcripts(tmp_path / "transcripts" / "eval-step-000010.jsonl.gz", records)
    data = embedded_data(write_training_index(tmp_path).read_text())
    assert data["tables"][0]["columns"] == ["step", "trial/final_return"]
    assert data["tables"][0]["rows"] == [["10", "-0.5"]]
    assert [r["id"] for r in data["trials"]["rows"]] == ["eval10|row0", "eval10|row1"]
    assert {r["filters"]["step"] for r in data["trials"]["rows"]} == {"10"}
    assert sorted(data["transcripts"]) == ["eval10|row0", "eval10|row1"]
    links = [link["href"] for link in data["links"]]
    assert links == ["metrics.jsonl", "transcripts/eval-step-000010.jsonl.gz"]
    assert main(["report", str(tmp_path)]) == 0  # a training folder: index.html again


def test_the_evaluation_table_leads_with_the_figures_a_reader_looks_for():
    from baselines.report.train_index import evaluation_table

    entry = {"step": 5, "eval/exact/aggressive/first/bet/J": 0.1, "eval/a": 3.0}
    entry |= {"eval/trial/final_return": -1.0, "eval/exact/mean_value": 0.2}
    table = evaluation_table([entry])
    assert table["columns"] == [
        "step",
        "exact/mean_value",
        "trial/final_return",
        "a",
        "exact/aggressive/first/bet/J",
    ]
    assert table["rows"] == [["5", "0.2", "-1", "3", "0.1"]]
