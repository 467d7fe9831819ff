"""``mage/Sokoban-v0`` and its variants: generated Sokoban levels as a Gymnasium text env.

Rewards (gym-sokoban's scheme, which LaMer kept), summed over the moves of a turn:
``-step_penalty`` per move, ``+box_on_target_reward`` when a box is pushed onto a target and the
same amount taken away when one is pushed off, ``+success_reward`` when the last box lands. An
invalid turn (unreadable text, too many moves, or a first move that is blocked) changes nothing and
costs ``invalid_action_penalty``. A deadlock (a box that can provably never reach a target) ends
the episode at once, as in LaMer, and the feedback says which box.

``turn_rules="lamer"`` plays a turn exactly as LaMer's code does (:mod:`.sokoban_lamer`): the
answer is read by LaMer's projection (:func:`~mage_envs.projections.lamer_sokoban`: the
``<action>`` tag is required, moves past ``moves_per_turn`` are cut, ``still`` is a -0.1 no-op
and an unreadable answer plays ``still``), a blocked move is a no-op that still costs
``step_penalty``, every move of the turn runs, even after a deadlock or the solve (where each
later move scores the solve bonus again), the turn's reward is its *last* move's
(``turn_reward="sum"`` keeps the sum), the episode ends when no solution within 100 moves is left,
the win counts if any move solved the level, and the first move after a reset gains +1 on a level
that starts with a box on a target (LaMer's reset counts none). ``turn_rules="lamer-fixed"`` is the
same without the two reward defects: the boxes already on targets are counted at reset, and the
turn ends at the move that solves the level.
"""

from __future__ import annotations

from typing import Any

from mage_envs.projections import action_tag, lamer_sokoban
from mage_envs.puzzles.grid_text import cell_name
from mage_envs.puzzles.lamer_pages import LAMER_SOKOBAN
from mage_envs.puzzles.puzzle_env import TextPuzzleEnv
from mage_envs.puzzles.sokoban import SokobanLevel, dead_cells, deadlocked_boxes
from mage_envs.puzzles.sokoban_generator import GeneratedLevel, SokobanSettings, generate_level
from mage_envs.puzzles.sokoban_lamer import LAMER_RULES, LamerTurn, Rewards, play_lamer_turn
from mage_envs.puzzles.sokoban_solver import SearchLimitError, solve
from mage_envs.puzzles.sokoban_text import RULES, board_text, parse_moves

__all__ = ["SokobanEnv", "SokobanMoreBoxesEnv", "SokobanLargeEnv", "TURN_RULES"]

TURN_RULES = ("ours", *LAMER_RULES)
"""``turn_rules=``: ours (a bad turn is rejected whole), LaMer's exactly, or LaMer's without its
two reward defects (see the module docstring)."""


class SokobanEnv(TextPuzzleEnv):
    """Sokoban through text: a generated level per seed, up to ``moves_per_turn`` moves per turn.

    Defaults are LaMer's: a 6x6 room with 2 boxes, levels whose optimal solution takes 5 to 21
    moves, 3 moves per turn and 7 turns.

    Args:
        height: Rows of the room, outer walls included.
        width: Columns of the room, outer walls included.
        num_boxes: Boxes (and targets).
        min_solution_length: Shortest optimal solution of a generated level, in moves.
        max_solution_length: Longest optimal solution of a generated level, in moves.
        boxes_start_off_targets: Generate only levels where no box starts on a target.
        moves_per_turn: Most moves one answer may hold ("up, left, left").
        max_steps: Turns before truncation (each call to ``step`` is a turn).
        step_penalty: Cost of each move.
        box_on_target_reward: Reward for pushing a box onto a target (and cost of pushing it off).
        success_reward: Bonus when every box is on a target.
        invalid_action_penalty: Cost of an invalid turn (under LaMer's rules an unreadable answer
            plays ``still`` and costs ``step_penalty``, as in LaMer).
        end_on_deadlock: End the episode (terminated) as soon as a deadlock is detected
            (``info["deadlock"]`` reports it either way).
        turn_rules: ``"ours"`` (default), ``"lamer"`` or ``"lamer-fixed"`` (module docstring).
        turn_reward: ``"sum"`` or ``"last"`` (the last move's reward, LaMer's); default: the
            rule set's (``"sum"`` for ours, ``"last"`` for LaMer's).
        render_mode: ``None``, ``"ansi"`` or ``"human"``.

    Example:
        >>> import gymnasium as gym, mage_envs
        >>> env = gym.make("mage/Sokoban-v0")
        >>> obs, info = env.reset(seed=3)
        >>> 5 <= info["optimal_length"] <= 21
        True
        >>> obs, reward, terminated, truncated, info = env.step("<action>up</action>")
        >>> info["moves_applied"]
        ['up']
    """

    answer_unit = "answer"  # an answer holds several moves
    page_presets = {"lamer": LAMER_SOKOBAN}  # LaMer's pages (mage_envs/page_presets.py)

    def __init__(
        self,
        height: int = 6,
        width: int = 6,
        num_boxes: int = 2,
        min_solution_length: int = 5,
        max_solution_length: int = 21,
        boxes_start_off_targets: bool = False,
        moves_per_turn: int = 3,
        max_steps: int = 7,
        step_penalty: float = 0.1,
        box_on_target_reward: float = 1.0,
        success_reward: float = 10.0,
        invalid_action_penalty: float = 0.1,
        end_on_deadlock: bool = True,
        turn_rules: str = "ours",
        turn_reward: str | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__(max_steps, invalid_action_penalty, render_mode)
        self.settings = SokobanSettings(
            height,
            width,
            num_boxes,
            min_solution_length,
            max_solution_length,
            boxes_start_off_targets=boxes_start_off_targets,
        )
        if int(moves_per_turn) < 1:
            raise ValueError(f"moves_per_turn must be >= 1, not {moves_per_turn}.")
        self.moves_per_turn = int(moves_per_turn)
        self.step_penalty = float(step_penalty)
        self.box_on_target_reward = float(box_on_target_reward)
        self.success_reward = float(success_reward)
        self.end_on_deadlock = bool(end_on_deadlock)
        if turn_rules not in TURN_RULES or turn_reward not in (None, "sum", "last"):
            raise ValueError(
                f"turn_rules must be one of {TURN_RULES} and turn_reward None, 'sum' or 'last'; "
                f"not {turn_rules!r} and {turn_reward!r}."
            )
        self.turn_rules = turn_rules
        self.turn_reward = turn_reward or ("sum" if turn_rules == "ours" else "last")
        self.initial_level: SokobanLevel | None = None
        self.level: SokobanLevel | None = None
        self.optimal_length: int | None = None
        self._level_seed: int | None = None
        self._generated: GeneratedLevel | None = None
        self._generated_seed: int | None = None
        self._dead: frozenset[int] = frozenset()
        self._moves = 0
        self._finished = False
        self._counted = 0  # LaMer's rules: boxes on targets the next move compares with
        self._won = False  # LaMer's rules: a move of this episode solved the level

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start a level: the one generated from the seed, or ``options["level"]`` if given.

        Args:
            seed: The level seed: the same seed gives the same level, byte for byte.
            options: ``{"level": text_or_level}`` plays a given level instead (XSB text as read by
                :meth:`SokobanLevel.from_text`); it must be solvable.
        """
        level_seed = self._start(seed)
        custom = (options or {}).get("level")
        if custom is None:
            # A level is a pure function of its seed: a same-task trial replays the seed, so the
            # last level is kept rather than generated again (about 1 ms each).
            if self._generated is None or self._generated_seed != level_seed:
                self._generated, self._generated_seed = (
                    generate_level(level_seed, self.settings),
                    level_seed,
                )
            made = self._generated
            level, self.optimal_length, self._level_seed = (
                made.level,
                len(made.solution),
                level_seed,
            )
        else:
            level = custom if isinstance(custom, SokobanLevel) else SokobanLevel.from_text(custom)
            self.optimal_length, self._level_seed = _optimal_length(level), None
        self.initial_level = self.level = level
        self._dead = dead_cells(level)
        self._moves = 0
        self._finished = False
        self._counted = 0 if self.turn_rules == "lamer" else level.boxes_on_targets
        self._won = False
        return self._reply("", invalid=False, applied=[], stuck=[])

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Apply the moves the text asks for (up to ``moves_per_turn``); stop at a blocked one."""
        if self.level is None:
            raise RuntimeError("Call reset() before step().")
        self._begin_step()
        if self.turn_rules in LAMER_RULES:
            return self._lamer_step(action)
        moves = parse_moves(action)
        problem = self._problem(moves)
        if problem:
            truncated = self._out_of_turns(terminated=False)
            text = self.invalid_rule.feedback(f"{problem} Nothing moved.")
            text += self._ending(False, truncated, [])
            stuck = deadlocked_boxes(self.level, self._dead)  # [] unless end_on_deadlock=False
            obs, info = self._reply(text, invalid=True, applied=[], stuck=stuck)
            return obs, self.invalid_rule.reward, False, truncated, info
        reward, applied, note, stuck = self._play(moves)
        terminated = self.level.solved or (self.end_on_deadlock and bool(stuck))
        self._finished = terminated
        truncated = self._out_of_turns(terminated)
        if self.level.solved:
            reward += self.success_reward
        moved = f"You moved {', '.join(applied)}." if applied else "Nothing moved."
        text = moved + note + self._ending(terminated, truncated, stuck)
        obs, info = self._reply(text, invalid=False, applied=applied, stuck=stuck)
        return obs, reward, terminated, truncated, info

    def _how_to_answer(self) -> str:
        if self.moves_per_turn == 1:
            return "Write one move per turn: up, down, left or right."
        return (
            f"Write up to {self.moves_per_turn} moves per turn among up, down, left, right, "
            'separated by commas (e.g. "up, left").'
        )

    def _lamer_step(self, action: object) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """A turn under LaMer's rules (:mod:`.sokoban_lamer`)."""
        moves, valid = ["still"], False
        if isinstance(action, str):  # every move read, so the turn can say it cut them
            moves, valid = lamer_sokoban(action, moves_per_turn=None)
        rewards = Rewards(self.step_penalty, self.box_on_target_reward, self.success_reward)
        fixed = self.turn_rules == "lamer-fixed"
        played = moves[: self.moves_per_turn]
        turn = play_lamer_turn(self.level, played, self._counted, rewards, self._dead, fixed)
        self.level, self._counted = turn.level, turn.counted
        self._moves += turn.moves_made
        self._won |= turn.won
        terminated = turn.done and (self.end_on_deadlock or not turn.deadlock)
        self._finished = terminated
        truncated = self._out_of_turns(terminated)
        level = self.level
        stuck = [b for b in level.boxes if b not in level.targets] if turn.deadlock else []
        text = self._lamer_feedback(turn, valid, len(moves) > len(played))
        text += self._ending(terminated, truncated, stuck)
        obs, info = self._reply(text, invalid=not valid, applied=turn.applied, stuck=stuck)
        info["success"] = self._won
        reward = turn.rewards[-1] if self.turn_reward == "last" else sum(turn.rewards)
        return obs, reward, terminated, truncated, info

    def _lamer_feedback(self, turn: LamerTurn, valid: bool, cut: bool) -> str:
        """What a LaMer turn did, in words."""
        if not valid:
            return self.invalid_rule.feedback(
                f"{self._how_to_answer()} Write the moves inside <action></action>; "
                "nothing was read, so you stood still."
            )
        moved = f"You moved {', '.join(turn.applied)}." if turn.applied else "Nothing moved."
        notes = [f" Move {i + 1} ({move}) was blocked ({why})." for i, move, why in turn.blocked]
        if cut:
            notes.append(f" Only the first {self.moves_per_turn} moves were played.")
        return moved + "".join(notes)

    def _problem(self, moves: list[str]) -> str:
        """Why the answer cannot be played as a turn, or '' when it can."""
        if not moves:
            return self._how_to_answer()
        if len(moves) > self.moves_per_turn:
            return f"{len(moves)} moves given, at most {self.moves_per_turn} per turn."
        blocked = self.level.step(moves[0]).blocked
        if blocked:
            return f"{moves[0]} is blocked ({blocked})."
        return ""

    def _play(self, moves: list[str]) -> tuple[float, list[str], str, list[int]]:
        """Apply moves until one is blocked or the level is solved or deadlocked.

        Returns the reward, the moves applied, a note on a blocked move, and the deadlocked boxes.
        """
        rewards, applied, notes, stuck = [], [], [], []
        for i, move in enumerate(moves):
            result = self.level.step(move)
            if result.blocked:
                skipped = len(moves) - i
                note = f" Move {i + 1} ({move}) was blocked ({result.blocked}); {skipped} skipped."
                notes.append(note)
                break
            on_before = self.level.boxes_on_targets
            self.level = result.level
            applied.append(move)
            self._moves += 1
            change = self.level.boxes_on_targets - on_before
            rewards.append(change * self.box_on_target_reward - self.step_penalty)
            stuck = deadlocked_boxes(self.level, self._dead)
            if self.level.solved or (self.end_on_deadlock and stuck):
                break
        reward = rewards[-1] if self.turn_reward == "last" else sum(rewards)
        return reward, applied, "".join(notes), stuck

    def _reply(
        self, feedback: str, invalid: bool, applied: list[str], stuck: list[int]
    ) -> tuple[str, dict[str, Any]]:
        """The observation and info after a reset or a turn (legal moves listed once)."""
        legal = [] if self._finished else self.level.legal_moves()
        obs = self._show(self._page(feedback, legal))
        return obs, self._info(invalid, applied, stuck, legal)

    def _page(self, feedback: str, legal: list[str]) -> str:
        head = f"{feedback}\n\n" if feedback else ""
        rules = f"{RULES}\n{self._how_to_answer()}"
        turns = f"Turn {self._turn + 1} of {self.max_steps}." if not self._over else "Game over."
        moves = ", ".join(legal) if not self._over else "none"
        return f"{head}{rules}\n{board_text(self.level)}\n{turns} Legal first moves now: {moves}."

    def _ending(self, terminated: bool, truncated: bool, stuck: list[int]) -> str:
        """The sentence that says why the episode ended, if it did."""
        level = self.level
        if terminated and level.solved:
            return f" Every box is on a target: solved in {self._moves} moves."
        if terminated and stuck:
            *others, last = [cell_name(*level.position(box)) for box in stuck]
            which = (
                f"the boxes at {', '.join(others)} and {last}" if others else f"the box at {last}"
            )
            return (
                f" Deadlock: {which} can never reach a target, so the level cannot be "
                "solved any more. The episode is over."
            )
        if truncated:
            return f" Out of turns ({self.max_steps}): the episode is over."
        return ""

    def _info(
        self, invalid: bool, applied: list[str], deadlock: list[int], legal: list[str]
    ) -> dict[str, Any]:
        level = self.level
        # under LaMer's rules an answer must be tagged, and so is each legal action
        answers = legal if self.turn_rules == "ours" else map(action_tag, legal)
        return {
            "legal_actions": list(answers),
            "invalid_action": invalid,
            "success": level.solved,
            "moves_applied": list(applied),
            "moves_made": self._moves,
            "optimal_length": self.optimal_length,
            "level_seed": self._level_seed,
            "boxes_on_target": level.boxes_on_targets,
            "num_boxes": len(level.boxes),
            "deadlock": bool(deadlock),
            "board": level.to_text(),
            **self._turn_info(),
        }


def _optimal_length(level: SokobanLevel) -> int | None:
    """The optimal length of a given level (None when the search is too big); unsolvable: error."""
    if level.solved:
        raise ValueError("options['level'] is already solved; give a level with a box off target.")
    try:
        solution = solve(level)
    except SearchLimitError:
        return None
    if solution is None:
        raise ValueError("options['level'] cannot be solved; give a solvable level.")
    return len(solution)


class SokobanMoreBoxesEnv(SokobanEnv):
    """``mage/SokobanMoreBoxes-v0``: LaMer's room and turn budget with 3 boxes, none on a target.

    Defaults: 6x6, 3 boxes, boxes start off targets, optimal length 5 to 21, 3 moves x 7 turns.
    Any :class:`SokobanEnv` argument overrides them.
    """

    DEFAULTS: dict[str, Any] = {"num_boxes": 3, "boxes_start_off_targets": True}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**{**self.DEFAULTS, **kwargs})


class SokobanLargeEnv(SokobanEnv):
    """``mage/SokobanLarge-v0``: a bigger room, 3 boxes, longer levels and more turns.

    Defaults: 7x7, 3 boxes, boxes start off targets, optimal length 10 to 30, 3 moves x 10 turns.
    Any :class:`SokobanEnv` argument overrides them.
    """

    DEFAULTS: dict[str, Any] = {
        "height": 7,
        "width": 7,
        "num_boxes": 3,
        "boxes_start_off_targets": True,
        "min_solution_length": 10,
        "max_solution_length": 30,
        "max_steps": 10,
    }

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**{**self.DEFAULTS, **kwargs})
