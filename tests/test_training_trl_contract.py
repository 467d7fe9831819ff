"""TRL's private GRPOTrainer methods still have the shapes MetaRLTrainer relies on."""

import pytest

pytest.importorskip("trl")

import trl  # noqa: E402
from packaging.specifiers import SpecifierSet  # noqa: E402

from mage_agents.training.trl_contract import (  # noqa: E402
    REQUIRED_METHODS,
    TRL_RANGE,
    trl_contract_problems,
)


def test_the_installed_trl_keeps_the_contract():
    problems = trl_contract_problems()
    assert not problems, "TRL changed what MetaRLTrainer overrides:\n" + "\n".join(problems)


def test_the_installed_trl_is_in_the_pinned_range():
    assert trl.__version__ in SpecifierSet(TRL_RANGE)


def test_a_changed_method_is_named(monkeypatch):
    def moved(self, batch):
        return batch

    monkeypatch.setattr(trl.GRPOTrainer, "_prepare_inputs", moved)
    problems = trl_contract_problems()
    assert any("GRPOTrainer._prepare_inputs now takes" in p for p in problems)
    assert "_generate_and_score_completions" in REQUIRED_METHODS
