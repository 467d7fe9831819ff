"""``mage/Minesweeper-v0`` and its variants: Minesweeper as a Gymnasium text env, LaMer's settings.

At reset a layout is drawn from the seed and the first click, never a mine, is made for the agent
(LaMer). Each turn the agent opens one cell, written ``(row, col)`` 1-indexed, or, when flags are
on, toggles a flag with ``flag (row, col)``.

Rewards (LaMer's table, each a parameter, all multiplied by ``reward_scale``):

============================================  =========================
an invalid or no-effect answer                ``-invalid_action_penalty`` (1)
opening exactly one cell                      ``reveal_reward`` (0.5)
opening several cells at once (a cascade)     ``cascade_reward`` (2)
the move that opens the last safe cell        ``win_reward`` (10), instead of the above
opening a mine (the episode ends)             ``mine_reward`` (0)
toggling a flag                               0
============================================  =========================

LaMer gave -0.1 for a mine and 7 turns (``game/env.py``; ``max_turns=7`` in its script); the
``lamer_minesweeper`` config sets both (``mine_reward=-0.1, max_steps=7``). Our defaults: 0 for a
mine (losing is already the end of the episode) and enough turns to open every safe cell.

``answer_rules="lamer"`` reads an answer as LaMer's projection did
(:func:`~mage_envs.projections.lamer_minesweeper`: the first ``(row, col)`` inside the first
``<action>`` tag, which is required). Only an answer it cannot read is invalid there; a cell that
changes nothing (already open, off the board) costs the same but is a valid answer, as LaMer's
trainer counted it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mage_envs.projections import action_tag, lamer_minesweeper, projected_number
from mage_envs.puzzles.grid_text import cell_name
from mage_envs.puzzles.lamer_pages import LAMER_MINESWEEPER
from mage_envs.puzzles.minesweeper import UNOPENED, MinesweeperBoard, Reveal, check_settings
from mage_envs.puzzles.minesweeper_text import CellMove, board_text, parse_cell_move
from mage_envs.puzzles.puzzle_env import TextPuzzleEnv

__all__ = ["MinesweeperEnv", "MinesweeperMoreMinesEnv", "MinesweeperLargeEnv", "ANSWER_RULES"]

ANSWER_RULES = ("ours", "lamer")
"""``answer_rules=``: our tolerant reading, or LaMer's projection (see the module docstring)."""


class MinesweeperEnv(TextPuzzleEnv):
    """Minesweeper through text, with the first click made at reset.

    Args:
        height: Rows (LaMer: 6).
        width: Columns (LaMer: 6).
        num_mines: Mines (LaMer: 3).
        max_steps: Turns before truncation; default ``height * width - num_mines``, enough to
            open every safe cell one by one.
        allow_flags: Accept ``flag (row, col)`` moves (off by default, as in LaMer).
        safe_opening: Keep the first click's neighbours free of mines too (off: only the clicked
            cell is guaranteed safe).
        reveal_reward: Reward for opening exactly one cell.
        cascade_reward: Reward for a move that opens several cells.
        win_reward: Reward for the move that wins (replaces the reveal or cascade reward).
        mine_reward: Reward for opening a mine (the episode ends either way).
        invalid_action_penalty: Cost of an invalid or no-effect answer.
        reward_scale: Multiplies every reward and penalty above.
        render_mode: ``None``, ``"ansi"`` or ``"human"``.
        answer_rules: ``"ours"`` (default) or ``"lamer"``: how an answer is read (module
            docstring).

    Example:
        >>> import gymnasium as gym, mage_envs
        >>> env = gym.make("mage/Minesweeper-v0")
        >>> obs, info = env.reset(seed=0)
        >>> obs, reward, terminated, truncated, info = env.step("(9, 9)")
        >>> info["invalid_action"], reward
        (True, -1.0)
    """

    page_presets = {"lamer": LAMER_MINESWEEPER}  # LaMer's pages (mage_envs/page_presets.py)

    def __init__(
        self,
        height: int = 6,
        width: int = 6,
        num_mines: int = 3,
        max_steps: int | None = None,
        allow_flags: bool = False,
        safe_opening: bool = False,
        reveal_reward: float = 0.5,
        cascade_reward: float = 2.0,
        win_reward: float = 10.0,
        mine_reward: float = 0.0,
        invalid_action_penalty: float = 1.0,
        reward_scale: float = 1.0,
        render_mode: str | None = None,
        answer_rules: str = "ours",
    ) -> None:
        check_settings(int(height), int(width), int(num_mines), bool(safe_opening))
        if answer_rules not in ANSWER_RULES:
            raise ValueError(f"answer_rules must be one of {ANSWER_RULES}, not {answer_rules!r}.")
        self.answer_rules = answer_rules
        steps = height * width - num_mines if max_steps is None else max_steps
        super().__init__(steps, invalid_action_penalty * reward_scale, render_mode)
        self.height, self.width, self.num_mines = int(height), int(width), int(num_mines)
        self.allow_flags = bool(allow_flags)
        self.safe_opening = bool(safe_opening)
        self.rewards = {
            "reveal": reveal_reward * reward_scale,
            "cascade": cascade_reward * reward_scale,
            "win": win_reward * reward_scale,
            "mine": mine_reward * reward_scale,
        }
        self.board: MinesweeperBoard | None = None
        self.first_click: tuple[int, int] | None = None
        self._level_seed: int | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Draw the layout from the seed and make the first click; the same seed, the same board.

        Args:
            seed: The board seed: the same seed gives the same layout and first click.
            options: ``{"mines": grid, "first_click": (row, col)}`` plays a given layout instead:
                a ``height x width`` grid of booleans (True: mine) and a 1-indexed first click
                that is not a mine and does not win the game on its own.
        """
        self._level_seed = self._start(seed)
        if options and options.get("mines") is not None:
            self.board, self.first_click = self._custom_board(options)
            self._level_seed = None
        else:
            self.board, self.first_click = MinesweeperBoard.generate(
                self._level_seed, self.height, self.width, self.num_mines, self.safe_opening
            )
        opened = self.board.reveal(*self.first_click).opened
        note = f"The first cell, {cell_name(*self.first_click)}, was opened for you."
        return self._show(self._page(note)), self._info(False, opened)

    def _custom_board(self, options: dict[str, Any]) -> tuple[MinesweeperBoard, tuple[int, int]]:
        board = MinesweeperBoard(np.asarray(options["mines"], dtype=bool))
        if board.shape != (self.height, self.width) or not board.num_mines:
            raise ValueError(
                f"options['mines'] must be a {self.height}x{self.width} grid with at least one "
                f"mine, not shape {board.shape} with {board.num_mines} mines."
            )
        click = options.get("first_click")
        if click is None or len(click) != 2:
            raise ValueError("options['first_click'] must be a 1-indexed (row, col) pair.")
        row, col = int(click[0]) - 1, int(click[1]) - 1
        if not (0 <= row < self.height and 0 <= col < self.width) or board.mines[row, col]:
            raise ValueError(f"The first click {tuple(click)} must be on the board and not a mine.")
        trial = board.copy()
        trial.reveal(row, col)
        if trial.won:
            raise ValueError(
                f"The first click {tuple(click)} alone wins this layout: the episode would start "
                "won. Give a layout with safe cells that the first click does not open."
            )
        return board, (row, col)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Open (or flag) the cell the text names."""
        if self.board is None:
            raise RuntimeError("Call reset() before step().")
        self._begin_step()
        move = self._read(action)
        problem = self._problem(move)
        if problem:
            truncated = self._out_of_turns(terminated=False)
            # LaMer's trainer counts only an unreadable answer as invalid; no effect costs alike.
            invalid = move is None or self.answer_rules == "ours"
            text = f"{problem} Nothing changed."
            text = self.invalid_rule.feedback(text) if invalid else f"No effect: {text}"
            obs = self._show(self._page(text + self._ending(truncated)))
            return obs, self.invalid_rule.reward, False, truncated, self._info(invalid, ())
        if move.flag:
            self.board.toggle_flag(move.row, move.col)
            state = "flagged" if self.board.flagged[move.row, move.col] else "unflagged"
            result, reward, text = Reveal((), False), 0.0, f"You {state} {_name(move)}."
        else:
            result = self.board.reveal(move.row, move.col)
            reward, text = self._outcome(move, result)
        terminated = self.board.won or self.board.lost
        truncated = self._out_of_turns(terminated)
        obs = self._show(self._page(text + self._ending(truncated)))
        return obs, reward, terminated, truncated, self._info(False, result.opened)

    def _read(self, action: object) -> CellMove | None:
        """The move an answer names, under the env's answer rules."""
        if self.answer_rules == "ours":
            return parse_cell_move(action)
        cell = lamer_minesweeper(action) if isinstance(action, str) else None
        if cell is None:
            return None
        return CellMove(projected_number(cell[0]) - 1, projected_number(cell[1]) - 1)

    def ground_truth(self) -> dict[str, Any]:
        """Where the mines are, for analysis only: the agent never sees them (nor after a loss).

        Example:
            >>> import gymnasium as gym, mage_envs
            >>> env = gym.make("mage/Minesweeper-v0")
            >>> _ = env.reset(seed=0)
            >>> len(env.unwrapped.ground_truth()["mines"])
            3
        """
        if self.board is None:
            return {}
        rows, cols = np.nonzero(self.board.mines)
        return {"mines": [cell_name(int(r), int(c)) for r, c in zip(rows, cols, strict=True)]}

    def _problem(self, move: CellMove | None) -> str:
        """Why the move is invalid or would have no effect, or '' when it is fine."""
        if move is None and self.answer_rules == "lamer":
            return "write one cell as (row, col), 1-indexed, inside <action></action>."
        if move is None:
            return 'write one cell as (row, col), 1-indexed, e.g. "(2, 3)".'
        if not (0 <= move.row < self.height and 0 <= move.col < self.width):
            return f"{_name(move)} is not on the {self.height}x{self.width} board."
        if move.flag and not self.allow_flags:
            return "flags are off in this game; open a cell with (row, col)."
        if self.board.opened[move.row, move.col]:
            return f"{_name(move)} is already open."
        if not move.flag and self.board.flagged[move.row, move.col]:
            return f"{_name(move)} is flagged; unflag it first with flag {_name(move)}."
        return ""

    def _outcome(self, move: CellMove, result: Reveal) -> tuple[float, str]:
        if result.mine:
            return self.rewards["mine"], f"{_name(move)} was a mine. You lost."
        if self.board.won:
            return self.rewards[
                "win"
            ], f"You opened {_name(move)}: every safe cell is open. You won!"
        if len(result.opened) > 1:
            return self.rewards["cascade"], f"You opened {_name(move)}: {len(result.opened)} cells."
        return self.rewards["reveal"], f"You opened {_name(move)}."

    def _ending(self, truncated: bool) -> str:
        return f" Out of turns ({self.max_steps}): the game is over." if truncated else ""

    def _page(self, feedback: str) -> str:
        flags = (
            ' To flag a cell you think holds a mine, write "flag (row, col)" (again to unflag).'
            if self.allow_flags
            else ""
        )
        rules = (
            "Minesweeper: open every cell that has no mine; opening a mine ends the game. "
            f"{self.board.num_mines} mines are hidden on this {self.height}x{self.width} board. "
            "A number tells how many of the up to 8 cells around it hold a mine.\n"
            f'Write one cell per turn as (row, col), 1-indexed, e.g. "(2, 3)".{flags}'
        )
        turns = "Game over." if self._over else f"Turn {self._turn + 1} of {self.max_steps}."
        hidden = int(self.board.mines.size - self.board.opened.sum())
        return f"{feedback}\n\n{rules}\n{board_text(self.board)}\n{turns} Unopened cells: {hidden}."

    def _info(self, invalid: bool, opened: tuple[tuple[int, int], ...]) -> dict[str, Any]:
        board = self.board
        view = board.view().tolist()
        return {
            "legal_actions": [] if board.won or board.lost else self._legal(view),
            "invalid_action": invalid,
            "success": board.won,
            "mine_hit": board.lost,
            "opened": [(r + 1, c + 1) for r, c in opened],
            "first_click": (self.first_click[0] + 1, self.first_click[1] + 1),
            "num_mines": board.num_mines,
            "level_seed": self._level_seed,
            "view": tuple(map(tuple, view)),
            **self._turn_info(),
        }

    def _legal(self, view: list[list[int]]) -> list[str]:
        """The moves on unopened cells: open the unflagged ones, and flag or unflag any."""
        closed = [(r, c) for r, row in enumerate(view) for c, v in enumerate(row) if v < 0]
        moves = [cell_name(r, c) for r, c in closed if view[r][c] == UNOPENED]
        if self.allow_flags:
            moves += [f"flag {cell_name(r, c)}" for r, c in closed]
        # under LaMer's rules an answer must be tagged, and so is each legal action
        return moves if self.answer_rules == "ours" else list(map(action_tag, moves))


def _name(move: CellMove) -> str:
    return cell_name(move.row, move.col)


class MinesweeperMoreMinesEnv(MinesweeperEnv):
    """``mage/MinesweeperMoreMines-v0``: LaMer's 6x6 board with 5 mines instead of 3.

    Any :class:`MinesweeperEnv` argument overrides the defaults.
    """

    DEFAULTS: dict[str, Any] = {"num_mines": 5}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**{**self.DEFAULTS, **kwargs})


class MinesweeperLargeEnv(MinesweeperEnv):
    """``mage/MinesweeperLarge-v0``: an 8x8 board with 10 mines (about the classic beginner level).

    Any :class:`MinesweeperEnv` argument overrides the defaults.
    """

    DEFAULTS: dict[str, Any] = {"height": 8, "width": 8, "num_mines": 10}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**{**self.DEFAULTS, **kwargs})
