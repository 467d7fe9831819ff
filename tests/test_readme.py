"""README's set-up commands and Python snippets stay true."""

import pathlib
import re
import shlex

import pytest

README = (pathlib.Path(__file__).parent.parent / "README.md").read_text()
SNIPPETS = [s for s in re.findall(r"```python\n(.*?)```", README, re.DOTALL) if "Your" not in s]


def test_two_setup_commands():
    blocks = re.findall(r"```bash\n(.*?)```", README, re.DOTALL)
    assert (
        blocks[0].strip() == 'pip install -c constraints.txt -e ".[dev]" && python -m baselines.run'
    )
    assert blocks[1].strip() == "pytest"


SERVED_AT = "http://127.0.0.1:8000"
"""Where README's OpenEnv snippet finds the server its ``serve-env`` command starts."""


@pytest.mark.parametrize("snippet", SNIPPETS, ids=range(len(SNIPPETS)))
def test_python_snippet_runs(snippet, capsys):
    if SERVED_AT not in snippet:
        exec(compile(snippet, "README.md", "exec"), {})
        return
    pytest.importorskip("openenv.core")  # the openenv extra (in dev)
    from tests.interop_server import served

    # README's own serve-env command, on a free port instead of 8000
    (command,) = re.findall(r"python -m baselines\.run serve-env (.*)", README)
    with served(*shlex.split(command)) as url:
        exec(compile(snippet.replace(SERVED_AT, url), "README.md", "exec"), {})
    assert "returns" in capsys.readouterr().out  # the trial's record was printed
