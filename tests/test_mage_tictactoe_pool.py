"""MAGE's tic-tac-toe training pool, MCTS settings and evaluation seat, as its code builds them.

From MAGE's ``verl/trainer/config/ppo_trainer.yaml`` (``tictactoe.opponent_policy_pool``: a
list-form ``["mcts"]``, six ``["preferred", [[r, c], ...]]`` orders, ``random`` twice) and
``TicTacToeMultiProcessEnv._build_opponent_policies``: each entry fills ``group_n`` (8) of the
16 x 8 = 128 rollout slots and real ``"mcts"`` the remaining 56; the list-form entry falls back to
random play. ``TicTacToeWorker`` builds MCTS with ``uct_c=1.4``, one random rollout, ``solve=True``.
"""

import inspect
import math

import numpy as np
import pyspiel

from baselines import run
from mage_envs.opponents import PRESETS, MCTSOpponent, SeatView, make_opponent

TTT = pyspiel.load_game("tic_tac_toe")
MAGE_PREFERRED = [  # the six orders of MAGE's pool, 0-indexed (row, col)
    [[1, 1], [0, 0], [0, 2], [2, 0], [2, 2], [0, 1], [1, 0], [1, 2], [2, 1]],
    [[0, 0], [0, 2], [2, 0], [2, 2], [1, 1], [0, 1], [1, 0], [1, 2], [2, 1]],
    [[0, 1], [1, 0], [1, 2], [2, 1], [1, 1], [0, 0], [0, 2], [2, 0], [2, 2]],
    [[0, 0], [1, 1], [2, 2], [0, 2], [2, 0], [0, 1], [1, 0], [1, 2], [2, 1]],
    [[0, 2], [1, 1], [2, 0], [0, 0], [2, 2], [0, 1], [1, 0], [1, 2], [2, 1]],
    [[2, 2], [2, 0], [0, 2], [0, 0], [1, 1], [2, 1], [1, 2], [1, 0], [0, 1]],
]
ORDERS = ["order-center", "order-corners", "order-edges"]
ORDERS += ["order-diagonal", "order-anti-diagonal", "order-reversed"]


def mage_slot_shares():
    """MAGE's group fill: 9 pool entries x 8 slots, the rest real MCTS, over 128 slots."""
    pool = ["mcts-list"] + [f"preferred-{i}" for i in range(6)] + ["random", "random"]
    slots = [entry for entry in pool for _ in range(8)]
    slots += ["mcts"] * (128 - len(slots))
    plays = {"mcts": "mcts-100", "mcts-list": "random", "random": "random"}
    plays |= {f"preferred-{i}": ORDERS[i] for i in range(6)}
    shares: dict[str, float] = {}
    for slot in slots:
        shares[plays[slot]] = shares.get(plays[slot], 0) + 1 / 128
    return shares


def test_the_pool_weights_are_what_mages_group_fill_amounts_to():
    pool = PRESETS["mage-ttt-train"]
    weights = dict(zip(pool.member_names(), pool.weights, strict=True))
    expected = mage_slot_shares()
    assert expected == {"mcts-100": 7 / 16, "random": 3 / 16, **dict.fromkeys(ORDERS, 1 / 16)}
    assert weights.keys() == expected.keys()
    assert all(math.isclose(weights[name], expected[name]) for name in expected)


def test_the_pool_draws_within_binomial_bounds_over_10000_trials():
    pool, rng, n = PRESETS["mage-ttt-train"], np.random.default_rng(0), 10_000
    counts = np.bincount([pool.draw(rng) for _ in range(n)], minlength=len(pool.specs))
    for count, weight in zip(counts, pool.weights, strict=True):
        sd = math.sqrt(n * weight * (1 - weight))
        assert abs(count - n * weight) < 4 * sd


def test_the_six_preferred_orders_are_mages():
    for name, order in zip(ORDERS, MAGE_PREFERRED, strict=True):
        bot = make_opponent(name, TTT)
        cells = [3 * r + c for r, c in order]
        assert bot.order == tuple(cells)
        state = TTT.new_initial_state()
        while not state.is_terminal():  # X plays its highest free cell; O its order's first free
            if state.current_player() == 0:
                state.apply_action(state.legal_actions()[-1])
                continue
            action = bot.act(SeatView.from_state(state, 1))
            assert action == next(c for c in cells if c in state.legal_actions())
            state.apply_action(action)


def test_mcts_settings_are_mages_and_the_eval_seat_is_first():
    defaults = inspect.signature(MCTSOpponent).parameters
    assert (defaults["uct_c"].default, defaults["rollouts"].default) == (1.4, 1)
    assert defaults["solve"].default is True
    assert PRESETS["mage-ttt-eval"].member_names() == ["mcts-100"]
    paper = run.load_settings(["--config", "mage_tictactoe"])
    assert paper.env_kwargs["mage/TicTacToe-v0"]["seat"] == "first"
    assert paper.trial.seat_rotation is None
    mixed = run.load_settings(["--config", "mage_tictactoe_mixed"])
    assert mixed.trial.seat_rotation == "trial"
