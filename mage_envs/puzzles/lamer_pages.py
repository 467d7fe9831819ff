"""LaMer's Sokoban and Minesweeper pages: the boards in its symbols, its memory's action lines.

The page presets of :class:`~mage_envs.puzzles.sokoban_env.SokobanEnv` and
:class:`~mage_envs.puzzles.minesweeper_env.MinesweeperEnv` (and so of their variants), with the
wording in ``prompts/`` beside this module.

Sources (LaMer @9a4756c, ``agent_system/environments/``): ``sokoban/sokoban/env.py``
(``GRID_LOOKUP``, ``render(mode="text_with_row_numbers")``), ``sokoban/env_manager.py`` (the
memory stores the projected moves by name; the prompt is built with ``num_actions_per_turn=3``),
``minesweeper/game/core.py`` (``to_board_str_repr``), ``minesweeper/env_manager.py`` (the memory
writes ``(row, col)`` as projected, or ``no operation``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mage_envs.page_presets import LAMER_STEPS, PagePreset
from mage_envs.projections import lamer_minesweeper, lamer_sokoban
from mage_envs.puzzles.minesweeper_text import parse_cell_move
from mage_envs.puzzles.sokoban_text import parse_moves

__all__ = ["LAMER_SOKOBAN", "LAMER_MINESWEEPER", "sokoban_observation", "minesweeper_observation"]

PROMPTS = Path(__file__).parent / "prompts"
"""LaMer's wording of both puzzles, one TOML file each."""

BOX_ON_TARGET = "\u221a"
"""LaMer's box on a target (``√``)."""

_SOKOBAN_SYMBOLS = {"#": "#", "_": "_", " ": "_", ".": "O", "$": "X", "*": BOX_ON_TARGET}
_SOKOBAN_SYMBOLS |= {"@": "P", "+": "S"}


def sokoban_observation(text: str, info: dict[str, Any], env: Any) -> str:
    r"""LaMer's Sokoban board (``text_with_row_numbers``): ``0: # # #``, rows numbered from 0.

    Example:
        >>> print(sokoban_observation("", {"board": "####\n#@*.#\n####"}, None))
        0: # # # #
        1: # P √ O #
        2: # # # #
    """
    rows = info["board"].split("\n")
    cells = [" ".join(_SOKOBAN_SYMBOLS.get(c, c) for c in row) for row in rows]
    return "\n".join(f"{i}: {row}" for i, row in enumerate(cells))


def sokoban_action(answer: object, info: dict[str, Any], env: Any) -> str:
    """The moves as LaMer's memory lists them: ``['up', 'left']``, ``['still']`` if none.

    Under LaMer's turn rules, LaMer's projection of the answer (``still`` included); under ours,
    the moves our parser read.
    """
    if getattr(env, "turn_rules", "ours") != "ours":
        moves = lamer_sokoban(answer, env.moves_per_turn)[0] if isinstance(answer, str) else None
        return repr(moves or ["still"])
    moves = [] if info.get("invalid_action") else parse_moves(answer)[: env.moves_per_turn]
    return repr(moves or ["still"])


def sokoban_facts(env: Any, info: dict[str, Any]) -> dict[str, Any]:
    """The moves a turn asks for: ``THREE``, as LaMer's prompt always says.

    LaMer's ``build_text_obs`` passes ``num_actions_per_turn=3`` to the prompt whatever the
    setting (its projection does cut to the setting).
    """
    return {"num_actions_per_turn": "THREE"}


def minesweeper_observation(text: str, info: dict[str, Any], env: Any) -> str:
    """LaMer's Minesweeper board: ``Row 1: ? ? 1 .``; an opened mine is ``*``."""
    exploded = env.board.exploded
    symbols = {-2: "F", -1: "?", 0: "."}
    lines = []
    for r, row in enumerate(info["view"]):
        cells = ["*" if (r, c) == exploded else symbols.get(v, str(v)) for c, v in enumerate(row)]
        lines.append(f"Row {r + 1}: " + " ".join(cells))
    return "\n".join(lines)


def minesweeper_action(answer: object, info: dict[str, Any], env: Any) -> str:
    """The cell as LaMer's memory writes it, ``(2, 3)``, or ``no operation`` if none was read.

    Under LaMer's answer rules, the row and column as its projection read them (``( 2, 3)``);
    under ours, the cell our parser read. A cell that changes nothing (already open, off the
    board) is still written as the cell.
    """
    if getattr(env, "answer_rules", "ours") == "lamer":
        cell = lamer_minesweeper(answer) if isinstance(answer, str) else None
        return "no operation" if cell is None else f"({cell[0]}, {cell[1]})"
    move = parse_cell_move(answer)
    return "no operation" if move is None else f"({move.row + 1}, {move.col + 1})"


def minesweeper_facts(env: Any, info: dict[str, Any]) -> dict[str, Any]:
    """Board size and mine count.

    Raises:
        ValueError: If the board is not square: LaMer's page describes an N by N board.
    """
    if env.height != env.width:
        raise ValueError(
            "LaMer's Minesweeper page describes a square board ('a two dimensional N by N "
            f"board'); this one is {env.height}x{env.width}. Use a square board, or "
            "templates='default'."
        )
    return {"board_size": env.height, "n_mines": env.num_mines}


LAMER_SOKOBAN = PagePreset(
    PROMPTS / "lamer_sokoban.toml",
    {
        **LAMER_STEPS,
        "observation": sokoban_observation,
        "action": sokoban_action,
        "facts": sokoban_facts,
        "reflection_from": "first",
    },
)
"""LaMer's Sokoban page (``sokoban/projection.py`` reads the first ``<remark>``)."""

LAMER_MINESWEEPER = PagePreset(
    PROMPTS / "lamer_minesweeper.toml",
    {
        **LAMER_STEPS,
        "observation": minesweeper_observation,
        "action": minesweeper_action,
        "facts": minesweeper_facts,
        "reflection_from": "last",
    },
)
"""LaMer's Minesweeper page (``minesweeper/projection.py`` reads the last ``<remark>``)."""
