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


@pytest.fixture
def scripted():
    """Return the ScriptedOpponent class."""
    return ScriptedOpponent
