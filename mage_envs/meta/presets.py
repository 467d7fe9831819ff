"""Template presets: the published prompts of LaMer and MAGE, per env, by name.

``MetaEpisodeWrapper(env, templates="lamer")`` (or ``"mage"``) shows the agent the pages the
paper's code built, word for word (the wording lives in ``mage_envs/meta/prompts/*.toml``): the
rules and symbols legend, "The initial state of the game is:" with the first board in the paper's
symbols, the memory line "On trial #k, the task is NOT successfully completed. Your reflection
is: ...", the last steps of the current attempt, and the reflection prompt that asks for the
answer inside ``<remark></remark>``; a reflection without that tag is stored as empty, as the
papers' code did. ``"default"`` gives our own templates.

Presets: ``lamer`` for Sokoban and Minesweeper; ``mage`` for Kuhn poker and tic-tac-toe. Where we
differ from the published code, on purpose, the docstring of each renderer says so.
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Any

from mage_envs.meta.memory import shown_action
from mage_envs.meta.page import PageTemplates
from mage_envs.meta.templates import DEFAULT_TEMPLATES, Templates
from mage_envs.puzzles.minesweeper_text import parse_cell_move
from mage_envs.puzzles.sokoban_text import parse_moves

__all__ = ["PRESET_NAMES", "PAPER_TRIAL_SETTINGS", "template_preset", "preset_templates"]

PROMPT_DIR = Path(__file__).parent / "prompts"
"""The published wording, one TOML file per paper and env."""

PRESET_NAMES = ("default", "lamer", "mage")
"""Names ``templates=`` accepts."""

_PAPER_TRIAL = {
    "num_episodes": 3,
    "same_task": True,
    "stop_on_success": True,
    "reflection": True,
    "memory": "reflection_only",
    "max_reflection_chars": 2000,
}
PAPER_TRIAL_SETTINGS: dict[str, dict[str, Any]] = {
    "lamer": {**_PAPER_TRIAL, "templates": "lamer"},
    "mage": {**_PAPER_TRIAL, "templates": "mage"},
}
"""The trial settings of LaMer's and MAGE's rollouts, in training and evaluation alike.

``mage_envs.make_trial(env_id, **PAPER_TRIAL_SETTINGS["lamer"])``: 3 attempts at the same task,
a reflection between them (cut at 2000 characters, reflections only in memory), the papers'
prompts, and the trial stops at the first win: both papers' rollout loops mark a won trial done
before the next reflection and restart, when they train as when they evaluate.
"""

BOX_ON_TARGET = "*"
"""LaMer draws a box on a target as ``√``; observations are ASCII, so we write ``*`` instead."""

_NUMBER_WORDS = {1: "ONE", 2: "TWO", 3: "THREE", 4: "FOUR", 5: "FIVE"}
_SOKOBAN_SYMBOLS = {"#": "#", "_": "_", " ": "_", ".": "O", "$": "X", "*": BOX_ON_TARGET}
_SOKOBAN_SYMBOLS |= {"@": "P", "+": "S"}


def sokoban_observation(text: str, info: dict[str, Any], env: Any) -> str:
    r"""LaMer's Sokoban board (``text_with_row_numbers``): ``0: # # #``, rows numbered from 0.

    Example:
        >>> print(sokoban_observation("", {"board": "####\n#@$.#\n####"}, None))
        0: # # # #
        1: # P X O #
        2: # # # #
    """
    rows = info["board"].split("\n")
    cells = [" ".join(_SOKOBAN_SYMBOLS.get(c, c) for c in row) for row in rows]
    return "\n".join(f"{i}: {row}" for i, row in enumerate(cells))


def sokoban_action(answer: object, info: dict[str, Any], env: Any) -> str:
    """The moves as LaMer's memory lists them: ``['up', 'left']``, ``['still']`` if none."""
    moves = [] if info.get("invalid_action") else parse_moves(answer)[: env.moves_per_turn]
    return repr(moves or ["still"])


def sokoban_facts(env: Any, info: dict[str, Any]) -> dict[str, Any]:
    """The number of moves a turn asks for, as a word (LaMer: ``THREE``)."""
    return {"num_actions_per_turn": _NUMBER_WORDS.get(env.moves_per_turn, str(env.moves_per_turn))}


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
    """The cell as LaMer's memory writes it, ``(2, 3)``, or ``no operation`` if unreadable."""
    move = None if info.get("invalid_action") else parse_cell_move(answer)
    return "no operation" if move is None else f"({move.row + 1}, {move.col + 1})"


def minesweeper_facts(env: Any, info: dict[str, Any]) -> dict[str, Any]:
    """Board size and mine count (LaMer's boards are square: the row count is the size)."""
    return {"board_size": env.height, "n_mines": env.num_mines}


def kuhn_observation(text: str, info: dict[str, Any], env: Any) -> str:
    """MAGE's Kuhn line: ``Your Card: King | Actions: Player 0: Pass -> Player 1: Bet``."""
    state, player = env.state, info.get("player", 0)
    raw = state.information_state_string(player)
    card = {"0": "Jack", "1": "Queen", "2": "King"}.get(raw[0], raw[0])
    actions = [f"Player {i % 2}: {'Pass' if c == 'p' else 'Bet'}" for i, c in enumerate(raw[1:])]
    return f"Your Card: {card} | Actions: {' -> '.join(actions) or 'No actions yet'}"


def kuhn_action(answer: object, info: dict[str, Any], env: Any) -> str:
    """The move by name, ``PASS`` or ``BET``.

    MAGE's memory wrote the action id (``0`` or ``1``), a defect we do not copy; an invalid answer
    reads ``..., but it is invalid`` as in MAGE.
    """
    if info.get("invalid_action"):
        return f"{shown_action(answer)}, but it is invalid"
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
    """The cell as MAGE's memory writes it, ``(2, 2)``; invalid: ``..., but it is invalid``."""
    move = parse_cell_move(answer)
    shown = "(-1, -1)" if move is None else f"({move.row + 1}, {move.col + 1})"
    return f"{shown}, but it is invalid" if info.get("invalid_action") else shown


def tictactoe_facts(env: Any, info: dict[str, Any]) -> dict[str, Any]:
    """Board size and symbols (MAGE's agent is always ``X``)."""
    return {"board_size": 3, "player_symbol": "X", "opponent_symbol": "O"}


_LAMER_STEPS = {
    "step": "Action {step}: {action}\nObservation {step}:\n{observation}",
    "step_elided": "Action {step}: {action}\nObservation {step}: ...",
}
_MAGE_STEPS = {
    "step": "Step {step} - Action: {action}\nObservation:\n{observation}",
    "step_elided": "Step {step} - Action: {action}",
}
_ENVS = {
    # env class name -> (paper, prompt file, step formats, (observation, action, facts))
    "SokobanEnv": (
        "lamer",
        "lamer_sokoban",
        _LAMER_STEPS,
        (sokoban_observation, sokoban_action, sokoban_facts),
    ),
    "MinesweeperEnv": (
        "lamer",
        "lamer_minesweeper",
        _LAMER_STEPS,
        (minesweeper_observation, minesweeper_action, minesweeper_facts),
    ),
    "KuhnPokerEnv": ("mage", "mage_kuhn", _MAGE_STEPS, (kuhn_observation, kuhn_action, kuhn_facts)),
    "TicTacToeEnv": (
        "mage",
        "mage_tictactoe",
        _MAGE_STEPS,
        (tictactoe_observation, tictactoe_action, tictactoe_facts),
    ),
}


@cache
def _wording(file: str) -> dict[str, str]:
    text = (PROMPT_DIR / f"{file}.toml").read_text(encoding="utf-8")
    return {k: v.replace("\u221a", BOX_ON_TARGET) for k, v in tomllib.loads(text).items()}


def preset_templates(file: str, steps: dict[str, str], renderers: tuple) -> Templates:
    """Build the templates of one published prompt file (see :func:`template_preset`)."""
    words = dict(_wording(file))
    reflect = words.pop("reflect")
    # LaMer wrote no reflection prompt for a solved attempt: it never reflects after a win.
    solved = words.pop("reflect_solved", None) or reflect.replace(
        "The task is NOT successfully completed.", "The task is successfully completed."
    )
    observation, action, facts = renderers
    page = PageTemplates(
        reflect=reflect,
        reflect_solved=solved,
        observation=observation,
        action=action,
        facts=facts,
        **steps,
        **words,
    )
    page.check()
    return Templates(reflection_tag="remark", reflection_without_tag="empty", page=page)


def template_preset(name: str, env: Any) -> Templates:
    """Return the templates a preset name stands for on ``env``.

    Args:
        name: ``"default"`` (our templates), ``"lamer"`` or ``"mage"``.
        env: The env the wrapper wraps (its unwrapped class picks the prompt file).

    Raises:
        ValueError: If the name is unknown, or the paper published no prompt for this env.
    """
    if name not in PRESET_NAMES:
        raise ValueError(f"templates must be a Templates or one of {PRESET_NAMES}, not {name!r}.")
    if name == "default":
        return DEFAULT_TEMPLATES
    kind = type(getattr(env, "unwrapped", env)).__name__
    known = {cls: paper for cls, (paper, *_) in _ENVS.items()}
    if known.get(kind) != name:
        offered = ", ".join(f"{paper} for {cls}" for cls, paper in known.items())
        raise ValueError(
            f"No {name!r} template preset for {kind}: the presets are {offered}. Use "
            "templates='default' or pass your own Templates."
        )
    _, file, steps, renderers = _ENVS[kind]
    return preset_templates(file, steps, renderers)
