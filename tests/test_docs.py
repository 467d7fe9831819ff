"""The user's path through the docs: snippets run, links resolve, commands match the CLI."""

import argparse
import pathlib
import re
import sys

import pytest

from baselines import run
from benchmarks.__main__ import BENCHMARKS

ROOT = pathlib.Path(__file__).parent.parent
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [ROOT / "README.md", *DOCS]
# Sketches that name a class the reader supplies (or a protocol) are not meant to run alone.
SKETCHES = ("YourGymnasiumEnv", "(Protocol)")
# A snippet that starts with "# examples/NAME.py" shows that example whole; test_examples runs it.
EXAMPLE = re.compile(r"# (examples/\w+\.py)\n")
BLOCKS = [
    (page.name, i, code)
    for page in DOCS
    for i, code in enumerate(re.findall(r"```python\n(.*?)```", page.read_text(), re.DOTALL))
]
SNIPPETS = [
    (name, i, code)
    for name, i, code in BLOCKS
    if not any(mark in code for mark in SKETCHES) and not EXAMPLE.match(code)
]
SHOWN_EXAMPLES = [(name, code) for name, _, code in BLOCKS if EXAMPLE.match(code)]


@pytest.mark.parametrize(("page", "code"), SHOWN_EXAMPLES, ids=[p for p, _ in SHOWN_EXAMPLES])
def test_an_example_shown_in_the_docs_is_the_file_itself(page, code):
    path = EXAMPLE.match(code).group(1)
    assert code.removeprefix(f"# {path}\n") == (ROOT / path).read_text(), f"{page} shows {path}"


@pytest.mark.parametrize("code", [s[2] for s in SNIPPETS], ids=[f"{p}-{i}" for p, i, _ in SNIPPETS])
def test_docs_python_snippet_runs(code, capsys, tmp_path, monkeypatch):
    if "mage_agents.interop" in code:  # the openenv extra (in dev)
        pytest.importorskip("openenv.core")
    monkeypatch.chdir(tmp_path)  # what a snippet writes (runs/...) stays out of the repository
    exec(compile(code, "docs", "exec"), {})


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_links_resolve_inside_the_repository(page):
    for target in re.findall(r"\]\(([^)#]+)[^)]*\)", page.read_text()):
        if not target.startswith(("http://", "https://")):
            path = (page.parent / target).resolve()
            assert path.exists(), f"{page.name} links to {target}, which does not exist"
            assert path.is_relative_to(ROOT), f"{page.name} links outside the repository"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_run_flags_in_docs_exist(page):
    from baselines.arena import command as arena_command
    from baselines.serve import command as serve_env
    from baselines.train import command as train

    options = {o for a in run.build_parser()._actions for o in a.option_strings}
    train_options = {o for a in train.build_parser()._actions for o in a.option_strings}
    arena = argparse.ArgumentParser()
    arena_command.add_arguments(arena)
    arena_options = {o for a in arena._actions for o in a.option_strings}
    serve = argparse.ArgumentParser()
    serve_env.add_arguments(serve)
    serve_options = {o for a in serve._actions for o in a.option_strings}
    for command in re.findall(r"python -m baselines\.run\b[^`\n]*", page.read_text()):
        known = train_options if " baselines.run train" in command else options
        known = arena_options if " baselines.run arena" in command else known
        known = serve_options if " baselines.run serve-env" in command else known
        for flag in re.findall(r"(?<![\w-])--[a-z][\w-]*", command):
            assert flag in known, f"{page.name}: {command!r} uses unknown {flag}"


def test_readme_names_every_benchmark():
    readme = (ROOT / "README.md").read_text()
    listed = re.search(r"python -m benchmarks NAME` for (.*?);", readme, re.DOTALL)
    assert set(re.findall(r"`(\w+)`", listed.group(1))) == set(BENCHMARKS)
    bench_doc = (ROOT / "docs" / "benchmarks.md").read_text()
    for name in BENCHMARKS:
        assert f"python -m benchmarks {name}" in bench_doc


def test_missing_matplotlib_skips_plots_with_a_note(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    argv = ["--env", "mage/KuhnPoker-v0", "--tasks", "2", "--out", str(tmp_path)]
    assert run.main(argv) == 0
    assert "matplotlib" in capsys.readouterr().out
    written = {p.name for p in tmp_path.iterdir()}
    assert written == {"results.jsonl", "transcripts.jsonl.gz", "summary.md", "summary.csv"} | {
        "summary.html",
        ".mage-lock",  # the folder's lock, naming its writer (baselines/folder_lock.py)
    }


def test_a_final_game_forfeited_by_invalid_answers_is_a_loss_not_a_draw(tmp_path, monkeypatch):
    # runner.md: W/D/L is the sign of the final game; a game cut off by invalid answers was not
    # drawn (with the default penalty 0 its return is 0, which used to read as a draw).
    (tmp_path / "gibberish.py").write_text("def act(observation, info):\n    return 'hmm'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    argv = ["--agent", "python:gibberish:act", "--env", "mage/TicTacToe-v0", "--tasks", "3"]
    argv += ["--out", str(tmp_path / "out"), "--no-plots"]
    assert run.main(argv) == 0
    row = (tmp_path / "out" / "summary.md").read_text().splitlines()[4]
    assert "| 0%/0%/100% |" in row
