"""MAGE's Kuhn poker and tic-tac-toe pages: its observation lines and memory's action lines.

The page presets of :class:`~mage_envs.games.kuhn_poker.KuhnPokerEnv` and
:class:`~mage_envs.games.tic_tac_toe.TicTacToeEnv`, with the wording in ``prompts/`` beside this
module.

Sources (MAGE @9b2e588, ``agent_system/environments/``): ``kuhnpoker/envs.py``
(``get_readable_obs``), ``kuhnpoker/env_manager.py`` (the memory stores the projected action id,
``0``, ``1`` or ``-1``, with ``, but it is invalid`` when the env refused it),
``TicTacToe/envs_single.py`` (``render_board``: the agent is always ``X``),
``TicTacToe/env_manager_single.py`` (the memory stores ``(row, col)`` as projected).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mage_envs.page_presets import MAGE_STEPS, PagePreset
from mage_envs.projections import mage_kuhn, mage_tictactoe
from mage_envs.puzzles.minesweeper_text import parse_cell_move
from mage_envs.text import shown_action

__all__ = ["MAGE_KUHN", "MAGE_TICTACTOE"]

PROMPTS = Path(__file__).parent / "prompts"
"""MAGE's wording of both games, one TOML file each."""

_INVALID = ", but it is invalid"


def _mage_rules(env: Any) -> bool:
    return getattr(env, "answer_rules", "ours") == "mage"


def kuhn_observation(text: str, info: dict[str, Any], env: Any) -> str:
    """MAGE's Kuhn line: ``Your Card: King | Actions: Player 0: Pass -> Player 1: Bet``."""
    state, player = env.state, info.get("player", 0)
    raw = state.information_state_string(player)
    card = {"0": "Jack", "1": "Queen", "2": "King"}.get(raw[0], raw[0])
    actions = [f"Player {i % 2}: {'Pass' if c == 'p' else 'Bet'}" for i, c in enumerate(raw[1:])]
    return f"Your Card: {card} | Actions: {' -> '.join(actions) or 'No actions yet'}"


def kuhn_action(answer: object, info: dict[str, Any], env: Any) -> str:
    """The move as the memory shows it, with ``, but it is invalid`` for a refused answer.

    Under MAGE's answer rules, the action id its projection read: ``0`` (PASS), ``1`` (BET) or
    ``-1``. Under ours, the move by name, ``PASS`` or ``BET`` (the answer itself if refused).
    """
    invalid = bool(info.get("invalid_action"))
    if _mage_rules(env):
        action = mage_kuhn(answer) if isinstance(answer, str) else -1
        return f"{action}{_INVALID}" if invalid else str(action)
    if invalid:
        return f"{shown_action(answer)}{_INVALID}"
    history = env.state.information_state_string(info.get("player", 0))[1:]
    mine = history[info.get("player", 0) :: 2]
    return "BET" if mine and mine[-1] == "b" else "PASS"


def kuhn_facts(env: Any, info: dict[str, Any]) -> dict[str, Any]:
    """The agent's and the opponent's player ids (0 acts first)."""
    player = int(info.get("player", 0))
    return {"agent_player_id": player, "opponent_player_id": 1 - player}


def tictactoe_observation(text: str, info: dict[str, Any], env: Any) -> str:
    """MAGE's board, ``X . O`` rows, from the agent's side: its marks are ``X`` in either seat."""
    mine = "x" if info.get("player", 0) == 0 else "o"
    rows = str(env.state).strip().split("\n")
    mark = {mine: "X", ".": "."}
    return "\n".join(" ".join(mark.get(c, "O") for c in row) for row in rows)


def tictactoe_action(answer: object, info: dict[str, Any], env: Any) -> str:
    """The cell as MAGE's memory writes it, ``(2, 2)``; invalid: ``..., but it is invalid``.

    Under MAGE's answer rules, the cell its projection read (``(-1, -1)`` for none); under ours,
    the cell our parser read.
    """
    if _mage_rules(env):
        cell = mage_tictactoe(answer) if isinstance(answer, str) else (-1, -1)
    else:
        move = parse_cell_move(answer)
        cell = (-1, -1) if move is None else (move.row + 1, move.col + 1)
    return f"{cell}{_INVALID}" if info.get("invalid_action") else str(cell)


def tictactoe_facts(env: Any, info: dict[str, Any]) -> dict[str, Any]:
    """Board size and symbols (MAGE's agent is always ``X``)."""
    return {"board_size": 3, "player_symbol": "X", "opponent_symbol": "O"}


MAGE_KUHN = PagePreset(
    PROMPTS / "mage_kuhn.toml",
    {
        **MAGE_STEPS,
        "observation": kuhn_observation,
        "action": kuhn_action,
        "facts": kuhn_facts,
        "reflection_from": "first",
    },
)
"""MAGE's Kuhn poker page (``kuhnpoker/projection.py`` reads the first ``<remark>``)."""

MAGE_TICTACTOE = PagePreset(
    PROMPTS / "mage_tictactoe.toml",
    {
        **MAGE_STEPS,
        "observation": tictactoe_observation,
        "action": tictactoe_action,
        "facts": tictactoe_facts,
        "reflection_from": "last",
    },
)
"""MAGE's tic-tac-toe page (``TicTacToe/projection.py`` reads the last ``<remark>``)."""
