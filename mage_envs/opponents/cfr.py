"""CFR opponents: an approximate Nash equilibrium from OpenSpiel's C++ solvers.

Counterfactual regret minimisation plays the game against itself, and its *average* policy converges
to a Nash equilibrium in two-player zero-sum games. We run ``pyspiel.CFRSolver`` (or
``pyspiel.CFRPlusSolver``) once per (game, algorithm, iterations) and keep the average policy as a
table ``{information state: [(action, probability), ...]}``, in memory for the process and on disk
(see :func:`cache_dir`) so that later processes do not pay for it again.

Two modes: ``sample`` draws from the average policy (close to unexploitable), ``argmax`` plays its
most likely action (MAGE's evaluation opponent: CFR with 1000 iterations, argmax; deterministic and
exploitable).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import threading
import warnings
from pathlib import Path

import pyspiel

from mage_envs.opponents.base import PolicyOpponent, SeatView, is_perfect_information
from mage_envs.opponents.registry import register_opponent

__all__ = [
    "CFROpponent",
    "PolicyTable",
    "cache_dir",
    "check_solvable",
    "clear_memory_cache",
    "equilibrium_policy",
    "solvability_problems",
]

PolicyTable = dict[str, list[tuple[int, float]]]
"""Information state string -> ``[(action id, probability), ...]``, OpenSpiel's tabular format."""

_SOLVERS = {"cfr": pyspiel.CFRSolver, "cfr+": pyspiel.CFRPlusSolver}
MAX_HISTORIES = 200_000
"""Largest game tree (in histories) CFR is run on: leduc_poker has about 10k, tic-tac-toe 550k."""
_MEMORY: dict[tuple[str, str, int], PolicyTable] = {}
_LOCK = threading.Lock()


def cache_dir() -> Path | None:
    """Return the folder of the on-disk CFR cache, or ``None`` when disabled.

    ``$MAGE_CACHE_DIR`` chooses it (``off`` disables the disk cache); otherwise
    ``$XDG_CACHE_HOME/mage_envs`` or ``~/.cache/mage_envs``.
    """
    chosen = os.environ.get("MAGE_CACHE_DIR")
    if chosen is not None:
        return None if chosen.strip().lower() in ("", "off") else Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "mage_envs"


def solvability_problems(game: pyspiel.Game) -> list[str]:
    """Return why CFR cannot solve ``game`` (empty when it can)."""
    game_type = game.get_type()
    utility = game_type.utility
    problems = []
    if game.num_players() != 2:
        problems.append(f"{game.num_players()} players")
    if utility not in (pyspiel.GameType.Utility.ZERO_SUM, pyspiel.GameType.Utility.CONSTANT_SUM):
        problems.append(f"utility {utility.name.lower()}")
    if game_type.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
        problems.append("simultaneous moves")
    if not game_type.provides_information_state_string:
        problems.append("no information state string")
    return problems


def check_solvable(game: pyspiel.Game) -> None:
    """Raise ``ValueError`` unless ``game`` is a two-player zero-sum sequential game."""
    problems = solvability_problems(game)
    if problems:
        raise ValueError(
            f"CFR needs a two-player zero-sum sequential game with information states; "
            f"{game} has {', '.join(problems)}."
        )


def equilibrium_policy(
    game: pyspiel.Game | str, iterations: int = 1000, algorithm: str = "cfr"
) -> PolicyTable:
    """Return the average policy of ``iterations`` iterations of CFR on ``game``, cached.

    Args:
        game: A two-player zero-sum OpenSpiel game, loaded or by name (``"kuhn_poker"``,
            ``"leduc_poker"``, ...).
        iterations: Solver iterations (MAGE used 1000 for Kuhn poker).
        algorithm: ``"cfr"`` (vanilla, as MAGE) or ``"cfr+"`` (faster convergence).

    Raises:
        ValueError: If the game cannot be solved this way or the settings are invalid.

    Example:
        >>> import pyspiel
        >>> table = equilibrium_policy(pyspiel.load_game("kuhn_poker"))
        >>> round(dict(table["2b"])[1], 2)  # facing a bet with a King: call
        1.0
    """
    if algorithm not in _SOLVERS:
        raise ValueError(f"algorithm must be one of {sorted(_SOLVERS)}, not {algorithm!r}.")
    if isinstance(game, str):
        game = pyspiel.load_game(game)
    if int(iterations) < 1:
        raise ValueError(f"iterations must be >= 1, not {iterations}.")
    check_solvable(game)
    key = (str(game), algorithm, int(iterations))
    with _LOCK:
        if key not in _MEMORY:
            table = _load(key, game)
            if table is None:
                _check_tree_size(game)
                table = _solve(game, algorithm, int(iterations))
                _save(key, table)
            _MEMORY[key] = table
        return _MEMORY[key]


def _check_tree_size(game: pyspiel.Game) -> None:
    """Refuse games whose tree is too large for tabular CFR to finish in reasonable time."""
    count, stack = 0, [game.new_initial_state()]
    while stack:
        state = stack.pop()
        count += 1
        if count > MAX_HISTORIES:
            raise ValueError(
                f"{game} has more than {MAX_HISTORIES:,} histories: too large for tabular CFR "
                "here. Use a smaller game, or MCTS for perfect-information games."
            )
        if not state.is_terminal():
            stack.extend(state.child(a) for a in state.legal_actions())


def clear_memory_cache() -> None:
    """Forget the policies solved in this process (the disk cache is left alone)."""
    with _LOCK:
        _MEMORY.clear()


def _solve(game: pyspiel.Game, algorithm: str, iterations: int) -> PolicyTable:
    solver = _SOLVERS[algorithm](game)
    for _ in range(iterations):
        solver.evaluate_and_update_policy()
    table = solver.tabular_average_policy().policy_table()
    return {info: [(int(a), float(p)) for a, p in row] for info, row in sorted(table.items())}


def _cache_file(key: tuple[str, str, int]) -> Path | None:
    folder = cache_dir()
    if folder is None:
        return None
    digest = hashlib.sha256(repr((key, pyspiel.__version__)).encode()).hexdigest()[:20]
    return folder / f"cfr-{digest}.json"


def _load(key: tuple[str, str, int], game: pyspiel.Game | None = None) -> PolicyTable | None:
    """The cached table of ``key``, or ``None`` if missing or damaged (then it is recomputed)."""
    path = _cache_file(key)
    if path is None or not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != [*key, pyspiel.__version__]:
        return None
    table = _table_from_json(data.get("policy"))
    if table is None or (game is not None and set(table) != _info_states(game)):
        return None  # valid JSON, wrong contents: solve again, as for a truncated file
    return table


def _table_from_json(policy: object) -> PolicyTable | None:
    """Read ``{info state: [[action, probability], ...]}``, or ``None`` if it is not one.

    Every row must be a distribution over distinct integer actions.
    """
    if not isinstance(policy, dict) or not policy:
        return None
    table: PolicyTable = {}
    for info, row in policy.items():
        try:
            pairs = [(int(a), float(p)) for a, p in row]
        except (TypeError, ValueError):
            return None
        probabilities = [p for _, p in pairs]
        if (
            not pairs
            or len({a for a, _ in pairs}) != len(pairs)
            or not all(0.0 <= p <= 1.0 for p in probabilities)
            or abs(math.fsum(probabilities) - 1.0) > 1e-6
        ):
            return None
        table[info] = pairs
    return table


def _info_states(game: pyspiel.Game) -> set[str]:
    """The information states of the players' decision nodes (the keys of a full table)."""
    found, stack = set(), [game.new_initial_state()]
    while stack:
        state = stack.pop()
        if state.is_terminal():
            continue
        if not state.is_chance_node():
            found.add(state.information_state_string())
        stack.extend(state.child(a) for a in state.legal_actions())
    return found


def _save(key: tuple[str, str, int], table: PolicyTable) -> None:
    path = _cache_file(key)
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"key": [*key, pyspiel.__version__], "policy": table}))
        os.replace(tmp, path)
    except OSError as error:
        # The cache only saves time; an unwritable folder must not stop play.
        warnings.warn(f"Could not write the CFR cache {path}: {error}", stacklevel=3)


class CFROpponent(PolicyOpponent):
    """Plays CFR's average policy: sampled (``mode="sample"``) or its argmax (``mode="argmax"``).

    Args:
        game: A two-player zero-sum OpenSpiel game.
        mode: ``"sample"`` (name ``cfr``) or ``"argmax"`` (name ``cfr-argmax``; ties go to the
            lowest action id).
        iterations: CFR iterations (default 1000, as MAGE).
        algorithm: ``"cfr"`` or ``"cfr+"``.
    """

    def __init__(
        self,
        game: pyspiel.Game,
        mode: str = "sample",
        iterations: int = 1000,
        algorithm: str = "cfr",
    ) -> None:
        super().__init__()
        if mode not in ("sample", "argmax"):
            raise ValueError(f"mode must be 'sample' or 'argmax', not {mode!r}.")
        self.name = "cfr" if mode == "sample" else "cfr-argmax"
        self.mode = mode
        self.table = equilibrium_policy(game, iterations, algorithm)

    def action_probabilities(self, view: SeatView) -> dict[int, float]:
        """Return the average policy (or its argmax, one-hot) at the seat's information state.

        Raises:
            ValueError: If the information state is not one the solver met (wrong game).
        """
        row = self.table.get(view.information_state)
        if row is None:
            raise ValueError(
                f"CFR policy has no information state {view.information_state!r}: "
                "was the opponent built for another game?"
            )
        probs = {a: p for a, p in row if a in view.legal_actions}
        if self.mode == "argmax":
            best = max(probs, key=lambda a: (probs[a], -a))
            return {a: float(a == best) for a in probs}
        total = sum(probs.values())
        return {a: p / total for a, p in probs.items()}


def _is_solvable(game: pyspiel.Game) -> bool:
    # Perfect-information games are left to MCTS and perfect play: their trees are usually too
    # large for tabular CFR, and they need no mixed strategies.
    return not solvability_problems(game) and not is_perfect_information(game)


_ZERO_SUM = "two-player zero-sum imperfect-information (Kuhn, Leduc, ...)"
register_opponent(
    "cfr",
    lambda game: CFROpponent(game, "sample"),
    _is_solvable,
    games=_ZERO_SUM,
    description="samples CFR's average policy",
)
register_opponent(
    "cfr-argmax",
    lambda game: CFROpponent(game, "argmax"),
    _is_solvable,
    games=_ZERO_SUM,
    description="plays the argmax of that policy (ties to the lowest action id): MAGE's "
    "evaluation opponent",
)
