"""One agent of a PettingZoo game, as a single-agent Gymnasium text env; opponents play the rest.

The learner's observation is text: ``infos[agent]["text"]`` where the env provides it (the suite's
own AEC envs), else the :class:`~mage_envs.meta.text_adapter.TextAdapter` rendering of the numeric
observation. Legal moves come from ``infos[agent]["legal_actions"]`` / ``"legal_action_ids"``, else
from the action mask (``info["action_mask"]`` or ``observation["action_mask"]``), else the whole
``Discrete`` space. Parallel envs are converted with PettingZoo's ``parallel_to_aec``.

Opponents may be:

- :class:`AgentPolicy` objects (``name``, ``reset(seed, agent)``, ``choose(observation, info,
  action_space)``), or plain functions ``f(observation, info, action_space) -> action``;
- the suite's OpenSpiel :class:`~mage_envs.opponents.Opponent` objects, for envs whose
  ``unwrapped.openspiel_state`` is a ``pyspiel.State`` (they see ``SeatView.from_state``, never
  hidden cards);
- an opponent or preset name, or a :class:`~mage_envs.opponents.Population` (one member per
  trial), for envs with an OpenSpiel state;
- ``None``: :class:`RandomLegalPolicy` for every other agent.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import pyspiel
from gymnasium import spaces
from pettingzoo.utils.conversions import parallel_to_aec
from pettingzoo.utils.env import ParallelEnv

from mage_envs.invalid import InvalidAnswerRule, InvalidStreak, did_not_name
from mage_envs.meta.policies import as_policy
from mage_envs.meta.text_adapter import (
    TextAdapter,
    fit_text,
    known_action_names,
    legal_mask,
    text_space,
)
from mage_envs.opponents import OpponentForfeit, Population, as_population, make_opponent
from mage_envs.parsing import parse_action
from mage_envs.seeds import draw_seed

__all__ = ["PettingZooTextEnv"]


class PettingZooTextEnv(gym.Env[str, str]):
    """The ``learner`` agent of a PettingZoo AEC or parallel env, against policies for the others.

    Args:
        env: A PettingZoo ``AECEnv`` or ``ParallelEnv``.
        learner: The learner's agent id (default: the first of ``possible_agents``).
        opponents: ``None``, one policy for every other agent, a dict agent id -> policy, or a
            :class:`~mage_envs.opponents.Population` (one member drawn per reset from the seed,
            kept by ``reset(options={"keep_opponent": True})``). An opponent or preset name
            (``"cfr"``, ``"mage-kuhn-train"``) works as in ``gym.make``; names need an env
            with an OpenSpiel state (the suite's ``kuhn_poker_v0``, ``tic_tac_toe_v0``).
        adapter: Text conversion for envs without ``infos[agent]["text"]`` (default: built from
            the learner's spaces, with known action names).
        invalid_action_penalty: Subtracted from the reward of an invalid answer.
        max_invalid_actions: Consecutive invalid answers that end the episode as truncated: a
            forfeit (``info["forfeit"] = True``), whose step adds ``forfeit_payoff`` to the reward.
        forfeit_payoff: What a forfeit scores; ``None``: the game's worst payoff for envs with an
            OpenSpiel state (``min_utility``), else 0 (give it for other games).

    ``reset(options={"seat": "first" | "second" | agent_id})`` changes the learner's agent for one
    episode. ``info`` carries ``legal_actions``, ``legal_action_ids``, ``invalid_action``, ``seat``,
    ``player`` (the agent id) and ``opponent``; at the end ``payoff`` and ``success`` (payoff > 0).

    Example:
        >>> from pettingzoo.classic import rps_v2
        >>> env = PettingZooTextEnv(rps_v2.parallel_env(max_cycles=2), learner="player_0")
        >>> obs, info = env.reset(seed=0)
        >>> info["legal_actions"], info["opponent"]
        (['rock', 'paper', 'scissors'], 'random')
    """

    metadata = {"render_modes": [], "reset_options": ("seat", "keep_opponent")}

    def __init__(
        self,
        env: Any,
        learner: str | None = None,
        opponents: Any = None,
        adapter: TextAdapter | None = None,
        invalid_action_penalty: float = 0.0,
        max_invalid_actions: int = 5,
        forfeit_payoff: float | None = None,
    ) -> None:
        self.aec = parallel_to_aec(env) if isinstance(env, ParallelEnv) else env
        self.forfeit_payoff = forfeit_payoff
        agents = list(self.aec.possible_agents)
        self.learner = learner if learner is not None else agents[0]
        if self.learner not in agents:
            raise ValueError(f"learner {self.learner!r} is not one of the env's agents {agents}.")
        self.invalid_rule = InvalidAnswerRule(invalid_action_penalty, max_invalid_actions)
        # A name ("cfr", "mage-kuhn-train") is a population of one, or the preset of that name.
        self._opponent_specs = as_population(opponents) if isinstance(opponents, str) else opponents
        self._adapter = adapter
        self.observation_space = text_space()
        self.action_space = text_space()
        self._agent = self.learner
        self._member: int | None = None
        self._built: dict[int, Any] = {}
        self._policies: dict[str, Any] = {}
        self._adapters: dict[str, TextAdapter] = {}
        self._streak = InvalidStreak(self.invalid_rule)
        self._return = 0.0
        self._done = True
        self._truncated = False
        self._opponent_forfeit = False  # a text opponent named no legal move: it lost
        self._last: tuple[Any, dict] = (None, {})

    @property
    def state(self) -> pyspiel.State | None:
        """The OpenSpiel state of the inner env, if it has one (for the suite's opponents)."""
        state = getattr(self.aec.unwrapped, "openspiel_state", None)
        return state if isinstance(state, pyspiel.State) else None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start a new game and play the other agents until the learner must act.

        Args:
            seed: Seeds the game and the opponents (0 is a seed like any other).
            options: ``{"seat": ...}`` picks the learner's agent for this episode.
        """
        super().reset(seed=seed)
        options = options or {}
        self._agent = self._seat_agent(options.get("seat"))
        self.aec.reset(seed=draw_seed(self.np_random))
        specs = self._opponent_specs
        if isinstance(specs, Population):
            if self._member is None or not options.get("keep_opponent", False):
                self._member = specs.draw(self.np_random)
            specs = self._population_member(specs)
        self._policies = self._build_policies(specs)
        for agent, policy in sorted(self._policies.items()):
            policy.reset(draw_seed(self.np_random), agent)
        self._streak.clear()
        self._return, self._done, self._truncated = 0.0, False, False
        self._opponent_forfeit = False
        self._advance()
        return self._observe(invalid=False)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Apply the learner's text move, then the other agents' moves."""
        if self._done:
            raise RuntimeError("The episode is over (or never started): call reset().")
        chosen = self._parse(action)
        if chosen is None:
            return self._invalid()
        self._streak.clear()
        before = self._return
        self.aec.step(chosen)
        self._advance()
        text, info = self._observe(invalid=False)
        terminated = self._done and not self._truncated
        return text, self._return - before, terminated, self._truncated, info

    def close(self) -> None:
        """Close the PettingZoo env."""
        self.aec.close()

    # -- internals -----------------------------------------------------------------------------

    def _seat_agent(self, seat: str | None) -> str:
        agents = list(self.aec.possible_agents)
        if seat is None:
            return self.learner
        if seat in agents:
            return seat
        if seat in ("first", "second"):
            return agents[("first", "second").index(seat)]
        raise ValueError(
            f"seat must be 'first', 'second' or an agent id of {agents}, not {seat!r}."
        )

    def _population_member(self, population: Population) -> Any:
        """Build the drawn member (names need the env's OpenSpiel game)."""
        spec = population.specs[self._member]
        if not isinstance(spec, str):
            return spec
        state = self.state
        if state is None:
            raise TypeError(
                f"Population member {spec!r} is an opponent name, which needs an env with an "
                f"OpenSpiel state; give opponent objects or AgentPolicy objects instead."
            )
        if self._member not in self._built:
            self._built[self._member] = make_opponent(spec, state.get_game())
        return self._built[self._member]

    def _build_policies(self, specs: Any) -> dict[str, Any]:
        others = [a for a in self.aec.possible_agents if a != self._agent]
        if isinstance(specs, Mapping):
            missing = [a for a in others if a not in specs]
            if missing:
                raise ValueError(f"opponents has no policy for agents {missing}.")
            return {a: as_policy(specs[a], self) for a in others}
        return dict.fromkeys(others, as_policy(specs, self))

    def _advance(self) -> None:
        """Let the other agents act until the learner must act or is done."""
        aec = self.aec
        while aec.agents:
            agent = aec.agent_selection
            observation, reward, terminated, truncated, info = aec.last()
            if agent == self._agent:
                self._return += float(reward)
                self._last = (observation, info)
                if terminated or truncated:
                    self._done, self._truncated = True, bool(truncated and not terminated)
                return
            if terminated or truncated:
                aec.step(None)
                continue
            try:
                action = self._opponent_action(agent, observation, info)
            except OpponentForfeit:  # a text opponent named no legal move: the learner wins
                self._return -= self._forfeit_payoff()
                self._done, self._truncated, self._opponent_forfeit = True, False, True
                return
            aec.step(action)
        self._done, self._truncated = True, False

    def _opponent_action(self, agent: str, observation: Any, info: dict) -> Any:
        return self._policies[agent].choose(observation, info, self.aec.action_space(agent))

    def _adapter_for(self, agent: str) -> TextAdapter:
        if self._adapter is not None:
            return self._adapter
        if agent not in self._adapters:
            names = known_action_names(self.aec)
            space = self.aec.action_space(agent)
            fits = isinstance(space, spaces.Discrete) and names and len(names) == int(space.n)
            self._adapters[agent] = TextAdapter(
                self.aec.observation_space(agent), space, action_names=names if fits else None
            )
        return self._adapters[agent]

    def _legal(self) -> tuple[list[str], list[Any]]:
        observation, info = self._last
        if self._done:
            return [], []
        if "legal_actions" in info and "legal_action_ids" in info:
            return list(info["legal_actions"]), list(info["legal_action_ids"])
        adapter = self._adapter_for(self._agent)
        names = adapter.legal_actions(legal_mask(observation, info))
        return names, [adapter.action_id(n) for n in names] if adapter.names else []

    def _parse(self, text: object) -> Any | None:
        names, ids = self._legal()
        if "text" in self._last[1] and hasattr(self.aec.unwrapped, "action_from_text"):
            if not isinstance(text, str):
                return None
            return self.aec.unwrapped.action_from_text(self._agent, text)
        if ids:
            index = parse_action(text, names)
            return None if index is None else ids[index]
        return self._adapter_for(self._agent).parse(text, names)

    def _invalid(self) -> tuple[str, float, bool, bool, dict[str, Any]]:
        truncated = self._streak.invalid()
        names, _ = self._legal()
        answer_format = "" if names else self._adapter_for(self._agent).answer_format()
        reason = did_not_name(names, answer_format)
        feedback = self.invalid_rule.feedback(reason, truncated)
        reward = self.invalid_rule.reward
        if truncated:  # a forfeit: the game is lost, never better than playing it out
            self._done, self._truncated = True, True
            reward += self._forfeit_payoff()
            self._return += self._forfeit_payoff()
        text, info = self._observe(invalid=True, prefix=feedback + "\n\n")
        if truncated:
            info["forfeit"] = True
        return text, reward, False, truncated, info

    def _forfeit_payoff(self) -> float:
        if self.forfeit_payoff is not None:
            return float(self.forfeit_payoff)
        state = self.state
        return float(state.get_game().min_utility()) if state is not None else 0.0

    def _observe(self, invalid: bool, prefix: str = "") -> tuple[str, dict[str, Any]]:
        observation, inner = self._last
        names, ids = self._legal()
        if "text" in inner:
            body = str(inner["text"])
        else:
            name = (getattr(self.aec, "metadata", None) or {}).get("name", "game")
            body = f"Game: {name}. You are {self._agent}.\n"
            body += "Observation: " + self._adapter_for(self._agent).observation_text(observation)
            if names:
                body += f"\nLegal moves: {', '.join(names)}."
            elif not self._done:
                body += "\n" + self._adapter_for(self._agent).answer_format()
        info = {k: v for k, v in inner.items() if k != "text"}
        if invalid:  # the unchanged state's info again: a copy, as callers may keep and mutate it
            info = copy.deepcopy(info)
        index = self.aec.possible_agents.index(self._agent)
        info.update(
            legal_actions=names,
            legal_action_ids=ids,
            invalid_action=invalid,
            seat=("first", "second")[index] if index < 2 else f"seat {index + 1}",
            player=self._agent,
            opponent="+".join(sorted({p.name for p in self._policies.values()})),
        )
        if self._done:
            info.update(payoff=self._return, success=self._return > 0)
            if self._opponent_forfeit:
                info["opponent_forfeit"] = True
                body += "\nYour opponent named no legal move and forfeits."
            body += f"\nThe game is over. Your total reward: {self._return:+g}."
        return fit_text(prefix + body), info
