"""README's set-up commands and Python snippets stay true."""

import pathlib
import re

import pytest

README = (pathlib.Path(__file__).parent.parent / "README.md").read_text()
SNIPPETS = [s for s in re.findall(r"```python\n(.*?)```", README, re.DOTALL) if "Your" not in s]


def test_two_setup_commands():
    blocks = re.findall(r"```bash\n(.*?)```", README, re.DOTALL)
    assert (
        blocks[0].strip() == 'pip install -c constraints.txt -e ".[dev]" && python -m baselines.run'
    )
    assert blocks[1].strip() == "pytest"


@pytest.mark.parametrize("snippet", SNIPPETS, ids=range(len(SNIPPETS)))
def test_python_snippet_runs(snippet, capsys):
    exec(compile(snippet, "README.md", "exec"), {})
