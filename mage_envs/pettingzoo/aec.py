"""A PettingZoo AEC env for a two-player OpenSpiel game, with both seats controlled from outside.

Observations are OpenSpiel's numeric observation tensors (``api_test`` cannot handle
``spaces.Text``); actions are OpenSpiel action ids (``Discrete``). Everything a language agent needs
travels in ``infos[agent]``, always in the same place:

- ``"text"``: what the agent reads (its own view only, with the legal moves when it is to act),
- ``"legal_actions"``: the legal move names, ``"legal_action_ids"``: their ids,
- ``"action_mask"``: an ``int8`` mask over the action ids (all zeros off turn).

:meth:`OpenSpielAECEnv.action_from_text` parses a language agent's answer into an action id with the
same tolerant parser as the Gymnasium envs. :meth:`OpenSpielAECEnv.step` takes integer ids only
(``int`` or a NumPy integer): ``1.5``, ``"1"`` or ``True`` raise a ``ValueError``, as an illegal id
does, rather than being read as some id.

PettingZoo's ``render_test`` does not pass for games with illegal moves (tic-tac-toe): it samples
``action_space.sample()`` without a mask unless the *observation* is a dict holding
``"action_mask"`` (its ``api_test`` reads the mask from ``infos``, where it lives here), so it soon
plays an occupied cell, which raises. The observation stays a plain ``Box`` tensor (the shape
``api_test`` and numeric learners expect), and rendering is tested with masked sampling instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel
from gymnasium import spaces
from pettingzoo import AECEnv

from mage_envs.games.openspiel_env import sample_chance
from mage_envs.games.text_game import Move, TextGame
from mage_envs.games.views import View, render_view
from mage_envs.parsing import parse_action
from mage_envs.text import render_text

__all__ = ["OpenSpielAECEnv"]


class OpenSpielAECEnv(AECEnv):
    """Both seats of an OpenSpiel game as a PettingZoo AEC env.

    Args:
        text_game: The game and its text rendering.
        name: The env name in ``metadata`` (e.g. ``"kuhn_poker_v0"``).
        bounds: The range of the observation tensor's values (unbounded if not given).
        render_mode: ``None``, ``"ansi"`` (``render()`` returns the selected agent's text) or
            ``"human"`` (prints it).
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 4, "is_parallelizable": False}

    def __init__(
        self,
        text_game: TextGame,
        name: str,
        bounds: tuple[float, float] = (-np.inf, np.inf),
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None, 'ansi' or 'human', not {render_mode!r}.")
        self.metadata = {**self.metadata, "name": name}
        self.text_game = text_game
        self.game = text_game.game
        self.render_mode = render_mode
        self.possible_agents = ["player_0", "player_1"]
        self._uses_observation = self.game.get_type().provides_observation_tensor
        shape = (
            self.game.observation_tensor_shape()
            if self._uses_observation
            else self.game.information_state_tensor_shape()
        )
        n = self.game.num_distinct_actions()
        self._observation_spaces = {
            a: spaces.Box(*bounds, shape, np.float32) for a in self.possible_agents
        }
        self._action_spaces = {a: spaces.Discrete(n) for a in self.possible_agents}
        self.openspiel_state: pyspiel.State | None = None
        """The full OpenSpiel state: privileged (it holds hidden cards), for referees and bots.

        Not named ``state``: that is PettingZoo's method for a global observation."""
        self._moves: dict[str, list[Move]] = {}
        self._rng = np.random.default_rng()

    def observation_space(self, agent: str) -> spaces.Space:
        """Return the (cached) numeric observation space of ``agent``."""
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        """Return the (cached) action space of ``agent``: OpenSpiel action ids."""
        return self._action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game; ``seed`` fixes the chance outcomes (the deal)."""
        if seed is not None or self.openspiel_state is None:
            self._rng = np.random.default_rng(seed)
        self.openspiel_state = self.game.new_initial_state()
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self._play_chance()
        self._refresh()

    def observe(self, agent: str) -> np.ndarray:
        """Return ``agent``'s numeric observation (its own view only)."""
        player = self.possible_agents.index(agent)
        if self._uses_observation:
            values = self.openspiel_state.observation_tensor(player)
        else:
            values = self.openspiel_state.information_state_tensor(player)
        return np.asarray(values, dtype=np.float32).reshape(self._observation_spaces[agent].shape)

    def step(self, action: int | None) -> None:
        """Apply the selected agent's action id (``None`` for an agent that is already done).

        Raises:
            ValueError: If the action is not an integer id legal now (``1.5``, ``"1"`` and ``True``
                are not ids); the message lists the legal ids.
        """
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        player = self.possible_agents.index(agent)
        legal = self.openspiel_state.legal_actions(player)
        if not _is_integer_id(action) or int(action) not in legal:
            raise ValueError(f"Illegal action {action!r} for {agent}; legal ids: {legal}.")
        self._cumulative_rewards[agent] = 0.0
        self.openspiel_state.apply_action(int(action))
        self._play_chance()
        self._refresh()
        self._accumulate_rewards()

    def action_from_text(self, agent: str, text: str) -> int | None:
        """Parse a language agent's answer into a legal action id, or ``None`` if it names none."""
        moves = self._moves.get(agent, [])
        aliases = {alias: m.name for m in moves for alias in m.aliases}
        index = parse_action(text, [m.name for m in moves], aliases)
        return None if index is None else moves[index].action

    def seat_page(self, player: int) -> View:
        """The page of seat ``player`` (its own view and legal moves), for a text opponent."""
        return render_view(self.text_game, self.openspiel_state, player)

    def render(self) -> str | None:
        """Return (``ansi``) or print (``human``) the selected agent's text."""
        text = self.infos[self.agent_selection]["text"] if self.agents else ""
        return render_text(text, self.render_mode)

    def close(self) -> None:
        """Nothing to release."""

    def _play_chance(self) -> None:
        state = self.openspiel_state
        while state.is_chance_node():
            state.apply_action(sample_chance(state, self._rng.random()))

    def _refresh(self) -> None:
        """Update selection, rewards, terminations and infos from the OpenSpiel state."""
        state = self.openspiel_state
        if state.is_terminal():
            returns = state.returns()
            for i, agent in enumerate(self.possible_agents):
                self.rewards[agent] = float(returns[i])
                self.terminations[agent] = True
        else:
            self.agent_selection = self.possible_agents[state.current_player()]
        self.infos = {agent: self._agent_info(i) for i, agent in enumerate(self.possible_agents)}

    def _agent_info(self, player: int) -> dict[str, Any]:
        state = self.openspiel_state
        mask = np.zeros(self.game.num_distinct_actions(), dtype=np.int8)
        text = self.text_game.observation_text(state, player)
        moves: list[Move] = []
        self._moves[self.possible_agents[player]] = moves
        if state.is_terminal():
            text += "\n" + self.text_game.outcome_text(state, player)
        elif state.current_player() == player:
            moves = self.text_game.moves(state, player)
            self._moves[self.possible_agents[player]] = moves
            mask[[m.action for m in moves]] = 1
            text += "\nLegal moves: " + ", ".join(m.name for m in moves) + "."
        info = {
            "text": text,
            "legal_actions": [m.name for m in moves],
            "legal_action_ids": [m.action for m in moves],
            "action_mask": mask,
        }
        if state.is_terminal():
            info.update(self.text_game.revealed(state, player))
        return info


def _is_integer_id(action: object) -> bool:
    """True for ``int`` and NumPy integers (as ``Discrete.sample()`` gives); bools are not ids."""
    if isinstance(action, bool | np.bool_):
        return False
    return isinstance(action, int | np.integer)
