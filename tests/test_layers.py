"""Dependencies point one way: baselines -> mage_agents -> mage_envs, seen or not by the imports.

A lower layer names no module above it, not even as a string imported later (Gymnasium's
``"module:attr"`` entry points): the opponent schemes a layer builds (``agent:``, ``league:``)
are registered by that layer when it is imported, and using one before says what to import.
"""

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.module_imports import imported_modules

ROOT = Path(__file__).resolve().parents[1]
ABOVE = {
    "mage_envs": ("mage_agents", "baselines", "benchmarks"),
    "mage_agents": ("baselines", "benchmarks"),
}


def _upward_names(package: str) -> list[str]:
    """``FILE:LINE name`` of every import, or module-path string, of a layer above ``package``."""
    above = ABOVE[package]
    module_path = re.compile(rf"({'|'.join(above)})(\.\w+)*(:\w+)?")
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        strings = [
            (node.lineno, node.value)
            for node in ast.walk(ast.parse(path.read_text(), str(path)))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            if module_path.fullmatch(node.value)
        ]
        for line, name in sorted([*imported_modules(path), *strings]):
            if name.split(".")[0].split(":")[0] in above:
                found.append(f"{path.relative_to(ROOT)}:{line} {name}")
    return found


@pytest.mark.parametrize("package", sorted(ABOVE))
def test_a_lower_layer_names_no_module_above_it(package):
    assert _upward_names(package) == []


def test_the_scan_sees_a_string_entry_point(tmp_path, monkeypatch):
    # The scan itself can fail: a "module:attr" string of the layer above is found.
    (tmp_path / "mage_agents").mkdir()
    (tmp_path / "mage_agents" / "x.py").write_text('SCHEME = "baselines.agent_opponents:build"\n')
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert _upward_names("mage_agents") == ["mage_agents/x.py:1 baselines.agent_opponents:build"]


WITHOUT_BASELINES = """
import sys
import gymnasium as gym
import mage_envs
for name in ("agent:random", "agent-memory:random", "league:runs/a/league/step-2"):
    try:
        gym.make("mage/KuhnPoker-v0", opponent=name)
    except ValueError as error:
        print(error)
assert "baselines" not in sys.modules
import baselines
print(gym.make("mage/KuhnPoker-v0", opponent="agent:random").reset(seed=0)[1]["opponent"])
"""


def test_agent_and_league_opponents_come_with_baselines_and_say_so():
    run = subprocess.run(
        [sys.executable, "-c", WITHOUT_BASELINES], capture_output=True, text=True, cwd=ROOT
    )
    assert run.returncode == 0, run.stderr
    *errors, played = run.stdout.splitlines()
    assert len(errors) == 3 and played == "agent:random"
    for error, scheme in zip(errors, ("agent", "agent-memory", "league"), strict=True):
        assert f"the scheme '{scheme}:' is registered by `import baselines`" in error


def test_every_scheme_registered_by_baselines_resolves():
    # The builders are named by "module:attr" inside baselines: one that moved would only fail
    # at its first use, so each is resolved here.
    import baselines  # noqa: F401
    from mage_envs.opponents import OPPONENT_SCHEMES

    assert {"agent", "agent-memory", "league", "script"} <= set(OPPONENT_SCHEMES)
    for prefix, builder in OPPONENT_SCHEMES.items():
        if isinstance(builder, str):
            module, _, attr = builder.partition(":")
            builder = getattr(importlib.import_module(module), attr)
        assert callable(builder), prefix


def test_a_league_without_its_scheme_is_refused_before_training(scratch_registries):
    from mage_agents.training.league import check_league_scheme
    from mage_envs.opponents import OPPONENT_SCHEMES

    OPPONENT_SCHEMES.pop("league", None)
    with pytest.raises(ValueError, match="`import baselines` registers"):
        check_league_scheme()
