"""Bad input of every command: one line on stderr naming the setting or file, exit 2; and the
reports a failed rewrite leaves whole, with names that no table or spreadsheet reads as markup."""

import csv

import pytest
import yaml

from baselines import models as models_cli
from baselines import run
from baselines.evaluate import run_report
from baselines.report.tables import markdown_cell
from benchmarks.__main__ import main as bench_main
from mage_agents.atomic_file import write_atomic

KUHN = ["--env", "mage/KuhnPoker-v0", "--tasks", "2", "--no-plots"]


def _one_error_line(capsys, argv, code=2):
    assert run.main(argv) == code
    printed = capsys.readouterr()
    lines = printed.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), printed.err
    return lines[0]


def test_a_title_that_is_not_text_is_refused(tmp_path, capsys):
    config = tmp_path / "c.yaml"
    config.write_text("title: [1, 2]\nenvs: [mage/KuhnPoker-v0]\ntasks: 1\n")
    assert _one_error_line(capsys, ["--config", str(config)]) == (
        "error: title must be text, not [1, 2]."
    )


def test_a_failed_report_rewrite_leaves_the_reports_of_the_good_run(tmp_path, capsys):
    out = tmp_path / "run"
    assert run.main([*KUHN, "--out", str(out)]) == 0
    before = {name: (out / name).read_bytes() for name in ("summary.md", "summary.csv")}
    bad = b"bad\xff".decode(errors="surrogateescape")  # what the shell gives for $'bad\xff'
    line = _one_error_line(capsys, [*KUHN, "--out", str(out), "--title", bad])
    assert "title must be UTF-8 text" in line and "byte 0xff" in line
    assert {name: (out / name).read_bytes() for name in before} == before
    assert run.main(["report", str(out), "--title", bad]) == 2
    assert "title must be UTF-8 text" in capsys.readouterr().err
    assert not list(out.glob("*.partial")) and not list(out.glob(".*partial"))


def test_a_report_that_fails_while_written_leaves_the_old_one(tmp_path, capsys, monkeypatch):
    out = tmp_path / "run"
    assert run.main([*KUHN, "--out", str(out)]) == 0
    before = (out / "summary.md").read_bytes()
    # text that cannot be written, as a title with bytes that are no UTF-8 was before its check
    monkeypatch.setattr(run_report, "markdown_report", lambda *args: "# cut \udcff\n")
    assert run.main([*KUHN, "--out", str(out)]) == 2
    assert "surrogates not allowed" in capsys.readouterr().err
    assert (out / "summary.md").read_bytes() == before  # not emptied: the old report stays


def test_a_write_that_fails_halfway_leaves_the_old_file(tmp_path):
    path = tmp_path / "summary.md"
    path.write_text("the good run\n")
    with pytest.raises(UnicodeEncodeError):
        write_atomic(path, "half written \udcff")
    assert path.read_text() == "the good run\n"
    assert [p.name for p in tmp_path.iterdir()] == ["summary.md"]  # no partial file left
    write_atomic(path, b"new")
    assert path.read_bytes() == b"new"


def test_an_agent_name_that_is_not_text_is_refused(tmp_path, capsys):
    config = tmp_path / "c.yaml"
    config.write_text("agents: [{kind: random, name: [x]}]\nenvs: [mage/KuhnPoker-v0]\ntasks: 1\n")
    line = _one_error_line(capsys, ["--config", str(config)])
    assert "An agent's name is text" in line and "['x']" in line


NAME = '=HYPERLINK("http://x")|a\nb'


def test_agent_names_reach_csv_and_markdown_inert(tmp_path, capsys):
    config = tmp_path / "c.yaml"
    settings = {"agents": [{"kind": "random", "name": NAME}], "envs": ["mage/KuhnPoker-v0"]}
    config.write_text(yaml.safe_dump({**settings, "tasks": 2, "plots": False}))
    out = tmp_path / "run"
    assert run.main(["--config", str(config), "--out", str(out)]) == 0
    with open(out / "summary.csv", newline="") as handle:
        (row,) = list(csv.DictReader(handle))
    assert row["agent"] == '\'=HYPERLINK("http://x")|a\nb'  # text, not a formula
    table = [line for line in (out / "summary.md").read_text().splitlines() if "HYPERLINK" in line]
    assert table and all(line.count(" | ") == table[0].count(" | ") for line in table)
    assert '=HYPERLINK("http://x")\\|a b |' in table[0]  # the pipe escaped, the break a space


def test_markdown_cells_escape_pipes_backslashes_and_line_breaks():
    assert markdown_cell("a|b") == "a\\|b"
    assert markdown_cell("a\\|b") == "a\\\\\\|b"  # a backslash cannot unescape the pipe
    assert markdown_cell("a\r\nb\nc") == "a b c"


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("raise RuntimeError('boom')\n", "RuntimeError: boom"),
        ("x = (\n", "SyntaxError: '(' was never closed"),
    ],
)
def test_a_plug_in_that_fails_to_import_is_named_with_where_and_why(
    source, words, tmp_path, monkeypatch, capsys
):
    (tmp_path / "broken_plugin.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    line = _one_error_line(capsys, ["--import", "broken_plugin", *KUHN])
    assert line.startswith("error: --import broken_plugin: importing it failed at ")
    assert "broken_plugin.py:1" in line and words in line


def test_the_arena_refuses_an_unknown_env_and_too_few_resamples(capsys):
    line = _one_error_line(capsys, ["arena", "--env", "mage/Bogus-v0", "--agents", "random", "cfr"])
    assert "--env mage/Bogus-v0:" in line and "mage/KuhnPoker-v0" in line
    line = _one_error_line(capsys, ["arena", "--agents", "random", "cfr", "--bootstrap", "0"])
    assert "--bootstrap" in line and ">= 20" in line


def test_an_unknown_benchmark_is_said_on_stderr(capsys):
    assert bench_main(["bogus"]) == 2
    printed = capsys.readouterr()
    assert not printed.out and "error: no benchmark 'bogus'" in printed.err


@pytest.mark.parametrize(
    "argv",
    [["parser", "--repeats", "-1"], ["arena", "--seconds", "-1"], ["envs", "--seconds", "0"]],
)
def test_a_benchmark_refuses_a_count_or_time_below_one_on_stderr(argv, capsys):
    with pytest.raises(SystemExit) as stopped:
        bench_main(argv)
    printed = capsys.readouterr()
    assert stopped.value.code == 2 and not printed.out
    assert f"argument {argv[1]}: give a" in printed.err


def test_models_path_names_only_a_folder_that_holds_the_model(tmp_path, capsys):
    cache = tmp_path / "models"
    folder = cache / "smollm2-135m"
    folder.mkdir(parents=True)
    argv = ["path", "smollm2-135m", "--cache-dir", str(cache)]
    assert models_cli.main(argv) == 2
    assert "not fetched" in capsys.readouterr().err
    (folder / models_cli.MARKER).write_text("{}")  # fetched once, its files since removed
    assert models_cli.main(argv) == 2
    printed = capsys.readouterr()
    assert not printed.out and "lost its model files" in printed.err and "--force" in printed.err
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"")
    assert models_cli.main(argv) == 0
    assert capsys.readouterr().out.strip() == str(folder.absolute())


def test_names_and_titles_are_printed_as_text_not_console_markup(tmp_path, capsys):
    config = tmp_path / "c.yaml"
    settings = {"agents": [{"kind": "random", "name": "a[/]b"}], "envs": ["mage/KuhnPoker-v0"]}
    config.write_text(yaml.safe_dump({**settings, "tasks": 1, "plots": False}))
    argv = ["--config", str(config), "--out", str(tmp_path / "run"), "--title", "[bold]t[/]"]
    assert run.main(argv) == 0
    assert run.main(argv) == 0  # the resume line names the agent too
    printed = capsys.readouterr().out
    assert "[bold]t[/]" in printed and "a[/]b: 1 of 1 trials resumed" in printed


def test_env_kwargs_nested_past_reading_is_a_usage_error(tmp_path, capsys):
    deep = "[" * 50_000 + "]" * 50_000
    with pytest.raises(SystemExit) as stop:
        run.main(["--env-kwargs", deep, "--out", str(tmp_path / "out")])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "--env-kwargs" in err and "nested too deeply" in err and "Traceback" not in err


def test_a_results_line_nested_past_reading_is_no_record(tmp_path):
    from baselines.results import ResultsFile

    path = tmp_path / "results.jsonl"
    path.write_bytes(b"[" * 50_000 + b"]" * 50_000 + b"\n")
    assert list(ResultsFile(path).records()) == []
