"""Shared test helpers."""

from __future__ import annotations

import pytest


class ScriptedOpponent:
    """Plays a fixed list of OpenSpiel action ids, in order."""

    name = "scripted"

    def __init__(self, actions: list[int]) -> None:
        self.actions = list(actions)
        self._next = 0

    def reset(self, seed, player):
        self._next = 0

    def act(self, view):
        action = self.actions[self._next]
        self._next += 1
        assert action in view.legal_actions
        return action


@pytest.fixture(scope="session", autouse=True)
def private_caches(tmp_path_factory):
    """ALFWorld's data folder and our cache folder are temporary: tests never write to the home."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ALFWORLD_DATA", str(tmp_path_factory.mktemp("alfworld-data")))
        patch.setenv("MAGE_CACHE", str(tmp_path_factory.mktemp("mage-cache")))
        yield


def openspiel_tabular(table):
    """OpenSpiel's own Kuhn ``TabularPolicy`` holding ``table`` (state -> {action: prob}).

    The reference our exploitability is checked against: built by OpenSpiel, not by our code.
    """
    import pyspiel
    from open_spiel.python import policy as openspiel_policy

    policy = openspiel_policy.TabularPolicy(pyspiel.load_game("kuhn_poker"))
    for state, probs in table.items():
        row = policy.policy_for_key(state)
        row[:] = 0.0
        for action, p in probs.items():
            row[action] = p
    return policy


@pytest.fixture
def tabular():
    """Return :func:`openspiel_tabular`: a Kuhn table as OpenSpiel's own TabularPolicy."""
    return openspiel_tabular


@pytest.fixture
def scripted():
    """Return the ScriptedOpponent class."""
    return ScriptedOpponent


@pytest.fixture
def scratch_registries():
    """Every name registered during a test (opponents, memory modes, strategies, ...) is undone.

    The registries are module dicts read at call time, so they are restored in place: modules
    that hold the dict itself see the restored one.
    """
    import gymnasium as gym

    from mage_agents.prompting import STRATEGIES
    from mage_envs.meta.memory import MEMORY_MODES
    from mage_envs.meta.presets import TEMPLATE_PRESETS
    from mage_envs.opponents import registry

    tables = [registry.OPPONENTS, registry.OPPONENT_FAMILIES, registry.OPPONENT_SCHEMES]
    tables += [registry.POPULATIONS, MEMORY_MODES, STRATEGIES, TEMPLATE_PRESETS, gym.registry]
    try:
        from mage_agents.advantages import ESTIMATORS

        tables.append(ESTIMATORS)
    except ImportError:  # numpy only: always there, but the fixture must not need it
        pass
    saved = [dict(table) for table in tables]
    yield
    for table, old in zip(tables, saved, strict=True):
        table.clear()
        table.update(old)
