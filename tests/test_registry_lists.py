"""Every list of opponents comes from the one registry: docs, bounds, errors, presets."""

import subprocess
import sys
from pathlib import Path

import pyspiel
import pytest

from mage_envs import bounds
from mage_envs.opponents import (
    PRESETS,
    PolicyOpponent,
    Population,
    make_opponent,
    opponent_names,
    population_names,
    register_opponent,
    register_population,
    registry,
)
from tests.module_imports import imported_modules

ROOT = Path(__file__).resolve().parents[1]
KUHN = pyspiel.load_game("kuhn_poker")


@pytest.fixture
def scratch_registry(scratch_registries):
    """Registrations made in a test are undone after it."""
    return scratch_registries


def test_docs_tables_are_generated_from_the_registry(tmp_path):
    # A fresh interpreter: other tests register opponents of their own.
    page = ROOT / "docs" / "opponents.md"
    check = [sys.executable, "-m", "mage_envs.opponents", "--check"]
    assert subprocess.run([*check, str(page)], capture_output=True, cwd=ROOT).returncode == 0
    stale = tmp_path / "opponents.md"
    stale.write_text(page.read_text().replace("| `perfect` |", "| `perfekt` |"))
    run = subprocess.run([*check, str(stale)], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 1 and "--write" in run.stderr and len(run.stderr.splitlines()) == 1
    write = [sys.executable, "-m", "mage_envs.opponents", "--write", str(stale)]
    subprocess.run(write, check=True, cwd=ROOT)
    assert stale.read_text() == page.read_text()


def test_registry_does_not_import_populations():
    registry = ROOT / "mage_envs" / "opponents" / "registry.py"
    modules = {module for _, module in imported_modules(registry)}
    assert "mage_envs.opponents.population" not in modules


class Cautious(PolicyOpponent):
    name = "cautious"

    def action_probabilities(self, view):
        return {a: float(a == min(view.legal_actions)) for a in view.legal_actions}


def test_a_registered_style_appears_in_every_list(scratch_registry):
    register_opponent("cautious", lambda game: Cautious(), games="any", description="passes")
    assert "cautious" in opponent_names(KUHN)
    assert "cautious" in bounds.bounds_opponents("kuhn_poker")
    assert "| `cautious` | any | passes |" in registry.opponents_markdown()
    with pytest.raises(ValueError, match="cautious"):
        make_opponent("no-such-style", KUHN)
    assert bounds.kuhn_bounds("cautious", seat=0).best_response_value > 0


def test_a_registered_population_is_a_preset_name(scratch_registry):
    register_population(Population({"cautious": 1.0, "random": 1.0}, name="mine"))
    assert "mine" in population_names() and "mine" not in PRESETS
    with pytest.raises(ValueError, match="populations: .*mine"):
        make_opponent("no-such-style", KUHN)
