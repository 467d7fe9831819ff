"""Tic-tac-toe as text, on OpenSpiel's ``tic_tac_toe`` rules.

The first player is X, the second O. Moves are written ``(row, col)``, 1-indexed, as in MAGE; the
parser also accepts ``2,3``, ``[2 3]`` and ``<action>(2, 3)</action>``.
"""

from __future__ import annotations

import pyspiel

from mage_envs.games.mage_pages import MAGE_TICTACTOE
from mage_envs.games.openspiel_env import OpenSpielTextEnv
from mage_envs.games.text_game import Move, TextGame
from mage_envs.projections import action_tag, mage_tictactoe

__all__ = ["TicTacToeText", "TicTacToeEnv", "cell_name", "draw_board"]

MARKS = ("X", "O")


def cell_name(action: int) -> str:
    """Return the ``(row, col)`` name, 1-indexed, of an OpenSpiel cell id.

    Example:
        >>> cell_name(5)
        '(2, 3)'
    """
    return f"({action // 3 + 1}, {action % 3 + 1})"


def draw_board(cells: list[str]) -> str:
    """Draw nine cells (``"X"``, ``"O"`` or ``"."``) with row and column numbers.

    Example:
        >>> print(draw_board(list("X...O....")))
             1   2   3
        1    X | . | .
            ---+---+---
        2    . | O | .
            ---+---+---
        3    . | . | .
    """
    rows = [f"{r + 1}    " + " | ".join(cells[3 * r : 3 * r + 3]) for r in range(3)]
    return "     1   2   3\n" + "\n    ---+---+---\n".join(rows)


def board_cells(state: pyspiel.State) -> list[str]:
    """Return the nine cells of ``state`` as ``"X"``, ``"O"`` or ``"."``."""
    cells = ["."] * 9
    for i, action in enumerate(state.history()):
        cells[action] = MARKS[i % 2]
    return cells


class TicTacToeText(TextGame):
    """Text rendering of tic-tac-toe for one player."""

    published_rules = ("mage",)

    def __init__(self) -> None:
        super().__init__(pyspiel.load_game("tic_tac_toe"), "Tic-tac-toe")

    def published_move(self, answer: str, rules: str, state: pyspiel.State, player: int) -> int:
        """MAGE's projection: the first ``(row, col)`` in the tag (-1 if none or off the board)."""
        row, col = mage_tictactoe(answer)
        if not (1 <= row <= 3 and 1 <= col <= 3):
            return -1
        return (row - 1) * 3 + col - 1

    def published_answer(self, action: int, rules: str) -> str:
        """The cell inside the tag, ``<action>(2, 3)</action>``."""
        return action_tag(cell_name(action))

    def published_hint(self, rules: str) -> str:
        """MAGE's format: an empty cell as (row, col) inside the tag."""
        return "write an empty cell as (row, col) inside <action></action>, e.g. (2, 2)."

    def view_key(self, state: pyspiel.State, player: int) -> tuple[str, int | None]:
        """Return the board and the last move: all a view shows (the order of moves is not).

        Many move orders reach one board, so this key is reused far more often than the
        information state (the move history) would be.
        """
        history = state.history()
        return state.observation_string(player), history[-1] if history else None

    def outcome_key(self, state: pyspiel.State, player: int) -> tuple[str, int | None]:
        """The end shows the board, the last move and who won, which the board tells."""
        return self.view_key(state, player)

    def moves(self, state: pyspiel.State, player: int) -> list[Move]:
        """Return the empty cells as ``(row, col)`` moves."""
        return [Move(a, cell_name(a)) for a in state.legal_actions(player)]

    def move_name(self, state: pyspiel.State, player: int, action: int) -> str:
        """The cell, as ``(row, col)``."""
        return cell_name(action)

    def observation_text(self, state: pyspiel.State, player: int) -> str:
        """Return the board with coordinates and the player's mark."""
        history = state.history()
        last = ""
        if history and (len(history) - 1) % 2 != player:
            last = f"The opponent played {cell_name(history[-1])}.\n"
        return (
            f"Tic-tac-toe: three in a row wins. You play {MARKS[player]} and move "
            f"{self.seat_name(player)}; the opponent plays {MARKS[1 - player]}.\n"
            f"{last}{draw_board(board_cells(state))}"
        )

    def outcome_text(self, state: pyspiel.State, player: int) -> str:
        """Say who won."""
        payoff = state.returns()[player]
        result = "You won." if payoff > 0 else "You lost." if payoff < 0 else "It is a draw."
        return f"The game is over. {result}"


class TicTacToeEnv(OpenSpielTextEnv):
    """``mage/TicTacToe-v0``: tic-tac-toe against an opponent, as text.

    Rewards are +1 for a win, 0 for a draw and -1 for a loss, times ``reward_scale`` (MAGE used 10).

    Arguments: as :class:`~mage_envs.games.openspiel_env.OpenSpielTextEnv`.

    Example:
        >>> import gymnasium as gym, mage_envs
        >>> env = gym.make("mage/TicTacToe-v0")
        >>> obs, info = env.reset(seed=0)
        >>> obs, reward, terminated, truncated, info = env.step("(2, 2)")
        >>> info["invalid_action"]
        False
    """

    text_game_class = TicTacToeText
    page_presets = {"mage": MAGE_TICTACTOE}  # MAGE's pages (mage_envs/page_presets.py)
