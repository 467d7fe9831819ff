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


@pytest.fixture
def scripted():
    """Return the ScriptedOpponent class."""
    return ScriptedOpponent
