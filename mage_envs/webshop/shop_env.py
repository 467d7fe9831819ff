"""The Gymnasium text env of a shop: WebShop's protocol over any catalogue and goal list.

``mage/WebShop-v0`` (the real files) and ``mage/ShopSim-v0`` (a generated shop) are this env with
their own catalogue and goals. The observation is the page in WebShop's text mode, with the
feedback of the last move above it and, below it, the selected options, the moves one can make
and the step count. ``info["legal_actions"]`` lists ``click[x]`` for every clickable of the page
(on the search page, where only a search is possible, one search written from the instruction).

``answer_rules="lamer"`` (or ``"mage"``: the same code) plays an answer as LaMer's and MAGE's code
did: LaMer's projection (:func:`~mage_envs.projections.lamer_webshop`) sends the first
``<action>`` tag's content, lower-cased, to WebShop's own step (:mod:`mage_envs.webshop.published`),
where a move the page does not offer does nothing (no penalty); only an answer without the tag is
invalid (``invalid_action_penalty``; LaMer's trainer charged 0.5).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mage_envs.projections import action_tag, lamer_webshop
from mage_envs.puzzles.puzzle_env import TextPuzzleEnv
from mage_envs.webshop.catalogue import Catalogue
from mage_envs.webshop.pages import WEBSHOP_PAGE
from mage_envs.webshop.published import available_actions, play_webshop_move
from mage_envs.webshop.reward import REWARD_RULES, Goal
from mage_envs.webshop.session import ShopSession, shown_name

__all__ = ["ShopEnv", "REWARD_MODES", "ANSWER_RULES"]

ANSWER_RULES = ("ours", "lamer", "mage")
"""``answer_rules=``: our reading, or the published projection (LaMer's and MAGE's are one)."""

REWARD_MODES = ("score", "success")
"""``score``: the purchase's reward in [0, 1] (WebShop); ``success``: 1 only for a perfect one."""


class ShopEnv(TextPuzzleEnv):
    """Shop in a catalogue for the product an instruction describes; buy it to end the episode.

    Args:
        catalogue: The products, prices and search index.
        goals: The goals a reset draws from (``reset(seed=s)`` plays goal ``s % len(goals)``).
        shop_name: The name on the search page.
        max_steps: Moves before the episode is truncated with reward 0 (default 15, as ReAct,
            Reflexion and GiGPO; WebShop itself has no limit).
        reward_mode: ``"score"`` (default) or ``"success"`` (see :data:`REWARD_MODES`).
        reward: ``"original"`` (default: WebShop's option rule, comparable with published
            numbers) or ``"fixed"`` (a synthetic goal's option values compared alone); see
            :data:`~mage_envs.webshop.reward.REWARD_RULES`. The purchase's
            ``info["reward_terms"]["rule"]`` says which one scored it.
        reward_scale: Multiplies the purchase reward and the invalid-action penalty (LaMer: 10).
        invalid_action_penalty: Subtracted for a move that is not valid on the page (default 0:
            WebShop's reward for it).
        render_mode: ``None``, ``"ansi"`` or ``"human"``.
        answer_rules: ``"ours"`` (default), or ``"lamer"`` / ``"mage"`` (module docstring).
    """

    page_presets = {"lamer": WEBSHOP_PAGE, "mage": WEBSHOP_PAGE}  # the papers share the page

    def __init__(
        self,
        catalogue: Catalogue,
        goals: Sequence[Goal],
        shop_name: str,
        max_steps: int = 15,
        reward_mode: str = "score",
        reward: str = "original",
        reward_scale: float = 1.0,
        invalid_action_penalty: float = 0.0,
        render_mode: str | None = None,
        answer_rules: str = "ours",
    ) -> None:
        super().__init__(max_steps, invalid_action_penalty * reward_scale, render_mode)
        if answer_rules not in ANSWER_RULES:
            raise ValueError(f"answer_rules must be one of {ANSWER_RULES}, not {answer_rules!r}.")
        self.answer_rules = answer_rules
        if reward_mode not in REWARD_MODES:
            raise ValueError(f"reward_mode must be one of {REWARD_MODES}, not {reward_mode!r}.")
        if reward not in REWARD_RULES:
            raise ValueError(f"reward must be one of {REWARD_RULES}, not {reward!r}.")
        if not goals:
            raise ValueError("A shop needs at least one goal to play.")
        self.catalogue = catalogue
        self.goals = tuple(goals)
        self.shop_name = shop_name
        self.reward_mode = reward_mode
        self.reward_rule = reward
        self.reward_scale = float(reward_scale)
        self.goal_index: int | None = None
        self.session: ShopSession | None = None

    @property
    def goal(self) -> Goal:
        """The goal of the current episode."""
        if self.session is None:
            raise RuntimeError("Call reset() first.")
        return self.session.goal

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start on the search page with the goal of ``seed`` (or ``options["goal_index"]``).

        Args:
            seed: The task seed: goal ``seed % len(goals)``; the same seed, the same goal.
            options: ``{"goal_index": i}`` plays goal ``i`` of :attr:`goals` instead.
        """
        level = self._start(seed)
        index = (options or {}).get("goal_index")
        if index is None:
            index = level % len(self.goals)
        elif not 0 <= int(index) < len(self.goals):
            raise ValueError(f"goal_index must be in [0, {len(self.goals)}), not {index}.")
        self.goal_index = int(index)
        self.session = ShopSession(
            self.catalogue, self.goals[self.goal_index], self.shop_name, self.reward_rule
        )
        return self._show(self._observation("")), self._info(False)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Play one move, ``search[keywords]`` or ``click[x]``."""
        if self.session is None:
            raise RuntimeError("Call reset() before step().")
        self._begin_step()
        if self.answer_rules == "ours":
            problem, note = self.session.act(action), ""
        else:
            problem, note = self._published_move(action)
        terminated = self.session.done
        truncated = self._out_of_turns(terminated)
        if problem:
            feedback = self.invalid_rule.feedback(f"{problem} Nothing changed.")
            reward = self.invalid_rule.reward
        else:
            feedback, reward = note, self._purchase_reward()
        if truncated:
            feedback += f" Out of steps ({self.max_steps}): the episode is over without a purchase."
        return (
            self._show(self._observation(feedback.strip())),
            reward,
            terminated,
            truncated,
            self._info(bool(problem)),
        )

    def _published_move(self, action: object) -> tuple[str, str]:
        """Play an answer under the published rules: (why it is invalid, a note on its effect)."""
        command, valid = lamer_webshop(action) if isinstance(action, str) else ("", False)
        if not valid:
            return "write the action inside <action></action>.", ""
        if play_webshop_move(self.session, command):
            return "", ""
        return "", f"Nothing happened: {command!r} is not a move this page offers."

    def webshop_available_actions(self) -> dict[str, Any]:
        """What WebShop's ``get_available_actions`` lists on the current page (published pages).

        See :func:`mage_envs.webshop.published.available_actions`.
        """
        return available_actions(self.session)

    def _purchase_reward(self) -> float:
        result = self.session.reward
        if result is None:
            return 0.0
        if self.reward_mode == "success":
            return self.reward_scale * float(result.reward == 1.0)
        return self.reward_scale * result.reward

    def _observation(self, feedback: str) -> str:
        session = self.session
        lines = [feedback] if feedback else []
        lines.append(session.page_text())
        selection = session.selection_text()
        if selection:
            lines.append(selection)
        if not self._over:
            clicks = ", ".join(f"click[{shown_name(c)}]" for c in session.clickables())
            lines.append(f"Available actions: search[<keywords>]{', ' + clicks if clicks else ''}")
            lines.append(f"Step {self._turn + 1} of {self.max_steps}.")
        return "\n".join(lines)

    def _info(self, invalid: bool) -> dict[str, Any]:
        session = self.session
        clickables = [] if self._over else session.clickables()
        if self._over:
            legal = []
        elif session.page == "search":
            legal = [f"search[{shown_name(session.goal.instruction)}]"]
        elif self.answer_rules != "ours":
            offered = available_actions(session)["clickables"]  # as WebShop lists them
            legal = [f"click[{c}]" for c in offered if c == c.lower() and c != "search"]
        else:
            legal = list(dict.fromkeys(f"click[{shown_name(c)}]" for c in clickables))
        if self.answer_rules != "ours":
            legal = list(map(action_tag, legal))  # an answer must be tagged, and so is each
        result = session.reward
        info = {
            "legal_actions": legal,
            "available_actions": {"has_search_bar": not self._over, "clickables": clickables},
            "invalid_action": invalid,
            "success": bool(result is not None and result.reward == 1.0),
            "page": session.page,
            "instruction": session.goal.instruction,
            "goal_index": self.goal_index,
            "asin": session.asin,
            "selected_options": dict(session.selected),
            **self._turn_info(),
        }
        if result is not None:
            info["score"] = result.reward
            info["reward_terms"] = result.as_dict()
            info["target_asin"] = session.goal.asin
        return info
