"""Tic-tac-toe opponents: MAGE's fixed preferred-cell orders, a biased random player, perfect play.

Cells are OpenSpiel action ids, ``3 * row + col`` (0-indexed): 0 is the top-left corner, 4 the
centre. A preferred-order player takes the first free cell of its order and ignores threats, so it
can be beaten; the biased random player favours the centre and corners; the perfect player picks
uniformly among the moves that keep the game-theoretic value (it never loses).

Importing the module registers the styles and ``perfect`` by name, and tic-tac-toe's population
presets:

- ``mage-ttt-train``: ``mcts-100`` 7/16, six preferred-order players 1/16 each, ``random`` 3/16:
  what MAGE's training pool amounts to (its ``opponent_policy_pool`` of nine entries fills 8 of
  its 128 rollout slots each and real MCTS the other 56; one entry, the list-form ``["mcts"]``,
  plays random moves, a defect whose effect, not mechanism, we keep as random's third 1/16).
- ``mage-ttt-eval``: ``mcts-100``.
- ``mcts-1000``: ``mcts-1000`` (MAGE's out-of-domain opponent).
"""

from __future__ import annotations

import math

import numpy as np
import pyspiel

from mage_envs.opponents.base import PolicyOpponent, SeatView
from mage_envs.opponents.population import Population
from mage_envs.opponents.registry import register_opponent, register_population

__all__ = [
    "PreferredOrderOpponent",
    "WeightedRandomOpponent",
    "PerfectPlayOpponent",
    "TIC_TAC_TOE_STYLES",
    "minimax_value",
    "optimal_actions",
]

CENTRE, CORNERS, EDGES = (4,), (0, 2, 6, 8), (1, 3, 5, 7)


class PreferredOrderOpponent(PolicyOpponent):
    """Plays the first legal cell of a fixed order.

    Args:
        name: The name shown in ``info["opponent"]``.
        order: Every action id, most preferred first.

    Example:
        >>> import pyspiel
        >>> state = pyspiel.load_game("tic_tac_toe").new_initial_state()
        >>> state.apply_action(4)
        >>> TIC_TAC_TOE_STYLES["order-center"]().act(SeatView.from_state(state, 1))
        0
    """

    reads_state = False

    def __init__(self, name: str, order: tuple[int, ...]) -> None:
        super().__init__()
        if sorted(order) != list(range(9)):
            raise ValueError(f"order must list each cell 0..8 once, not {order!r}.")
        self.name = name
        self.order = tuple(int(a) for a in order)

    def action_probabilities(self, view: SeatView) -> dict[int, float]:
        """Put all probability on the first legal cell of the order."""
        first = next(a for a in self.order if a in view.legal_actions)
        return {a: float(a == first) for a in view.legal_actions}


class WeightedRandomOpponent(PolicyOpponent):
    """Plays a random legal cell with probability proportional to a fixed weight per cell.

    Args:
        name: The name shown in ``info["opponent"]``.
        weights: Nine positive weights, one per cell.
    """

    reads_state = False

    def __init__(self, name: str, weights: tuple[float, ...]) -> None:
        super().__init__()
        if len(weights) != 9 or not all(math.isfinite(w) and w > 0 for w in weights):
            raise ValueError(f"weights must be nine positive finite numbers, not {weights!r}.")
        self.name = name
        self.weights = tuple(float(w) for w in weights)

    def action_probabilities(self, view: SeatView) -> dict[int, float]:
        """Return the weights of the legal cells, normalised."""
        total = sum(self.weights[a] for a in view.legal_actions)
        return {a: self.weights[a] / total for a in view.legal_actions}


_VALUES: dict[str, float] = {}


def _check_tic_tac_toe(game: pyspiel.Game) -> None:
    if game.get_type().short_name != "tic_tac_toe":
        raise ValueError(f"Perfect play is solved here for tic_tac_toe only, not {game}.")


def minimax_value(state: pyspiel.State) -> float:
    """Return the game-theoretic value of a tic-tac-toe ``state`` for the first player (X).

    Values are memoised per board (the board fixes whose turn it is), so the whole game is solved
    once per process, in a fraction of a second.

    Example:
        >>> import pyspiel
        >>> minimax_value(pyspiel.load_game("tic_tac_toe").new_initial_state())
        0.0
    """
    _check_tic_tac_toe(state.get_game())
    return _value(state)


def _value(state: pyspiel.State) -> float:
    key = str(state)
    if key not in _VALUES:
        if state.is_terminal():
            _VALUES[key] = float(state.returns()[0])
        else:
            children = [_value(state.child(a)) for a in state.legal_actions()]
            _VALUES[key] = max(children) if state.current_player() == 0 else min(children)
    return _VALUES[key]


def optimal_actions(state: pyspiel.State) -> list[int]:
    """Return the legal moves of a tic-tac-toe ``state`` that keep its minimax value."""
    _check_tic_tac_toe(state.get_game())
    value = _value(state)
    return [a for a in state.legal_actions() if _value(state.child(a)) == value]


class PerfectPlayOpponent:
    """Perfect tic-tac-toe: a uniformly random (seeded) choice among the value-keeping moves.

    Args:
        game: The ``tic_tac_toe`` game.
    """

    name = "perfect"

    def __init__(self, game: pyspiel.Game) -> None:
        _check_tic_tac_toe(game)
        self._rng = np.random.default_rng()

    def reset(self, seed: int | None, player: int) -> None:
        """Reseed the tie-breaking generator."""
        # numpy's, unlike the other styles' random.Random: the bounds table's seeded records of
        # perfect play against MCTS (docs/opponents.md, tests/test_bounds.py) are its draws.
        self._rng = np.random.default_rng(seed)

    def act(self, view: SeatView) -> int:
        """Return one of the optimal moves at ``view.state``."""
        return int(self._rng.choice(optimal_actions(view.state)))


_ORDERS = {
    # The first five and order-reversed are the six preferred orders of MAGE's training pool
    # (verl/trainer/config/ppo_trainer.yaml, tictactoe.opponent_policy_pool), in action ids.
    "order-center": CENTRE + CORNERS + EDGES,
    "order-corners": CORNERS + CENTRE + EDGES,
    "order-edges": EDGES + CENTRE + CORNERS,
    "order-diagonal": (0, 4, 8, 2, 6) + EDGES,
    "order-anti-diagonal": (2, 4, 6, 0, 8) + EDGES,
    "order-reversed": (8, 6, 2, 0, 4, 7, 5, 3, 1),
    "order-rows": tuple(range(9)),
}
_BIASED = tuple(4.0 if a in CENTRE else 2.0 if a in CORNERS else 1.0 for a in range(9))

TIC_TAC_TOE_STYLES = {
    **{name: (lambda n=name: PreferredOrderOpponent(n, _ORDERS[n])) for name in _ORDERS},
    "biased-random": lambda: WeightedRandomOpponent("biased-random", _BIASED),
}
"""Style name -> factory of a fresh tic-tac-toe style opponent."""


def _is_tic_tac_toe(game: pyspiel.Game) -> bool:
    return game.get_type().short_name == "tic_tac_toe"


_DESCRIPTIONS = {
    "biased-random": "random cell, weights centre 4, corners 2, edges 1",
    "order-center": "first free cell of the order centre, corners, edges (MAGE's)",
    "order-corners": "first free cell of the order corners, centre, edges (MAGE's)",
    "order-edges": "first free cell of the order edges, centre, corners (MAGE's)",
    "order-diagonal": "first free cell of the main diagonal, the other corners, edges (MAGE's)",
    "order-anti-diagonal": "first free cell of the anti-diagonal, the other corners, edges "
    "(MAGE's)",
    "order-reversed": "first free cell of the order 9 7 3 1 5 8 6 4 2, cells numbered 1-9 by "
    "rows (MAGE's reversed order)",
    "order-rows": "first free cell, row by row (ours)",
}
for _name, _words in _DESCRIPTIONS.items():
    register_opponent(
        _name,
        lambda game, s=TIC_TAC_TOE_STYLES[_name]: s(),
        _is_tic_tac_toe,
        games="tic-tac-toe",
        description=_words,
    )
register_opponent(
    "perfect",
    PerfectPlayOpponent,
    _is_tic_tac_toe,
    games="tic-tac-toe",
    description="a seeded uniform choice among the minimax-optimal moves; never loses",
    bounds=False,  # the reference player the tic-tac-toe bounds table measures against
)
_MAGE_ORDERS = (
    "order-center",
    "order-corners",
    "order-edges",
    "order-diagonal",
    "order-anti-diagonal",
    "order-reversed",
)
register_population(
    Population(
        {"mcts-100": 7.0, **dict.fromkeys(_MAGE_ORDERS, 1.0), "random": 3.0}, "mage-ttt-train"
    )
)
register_population(Population({"mcts-100": 1.0}, "mage-ttt-eval"))
register_population(Population({"mcts-1000": 1.0}, "mcts-1000"))
