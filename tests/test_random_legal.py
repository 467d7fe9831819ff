"""The one random-legal policy: every side plays it, only legal moves, the same per seed."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pyspiel
import pytest
from gymnasium import spaces
from pettingzoo.classic import connect_four_v3

import mage_envs  # noqa: F401  (registers the ids)
from mage_agents import RandomLegalAgent
from mage_envs.meta import PettingZooTextEnv, RandomLegalPolicy
from mage_envs.meta.policies import AgentPolicy, as_policy
from mage_envs.opponents import Opponent, RandomLegal, RandomOpponent, SeatView, make_opponent


def _openspiel_game(name: str, seed: int) -> list[int]:
    """Play ``name`` to the end with RandomLegal in both seats; return the actions."""
    game = pyspiel.load_game(name)
    bots = [RandomLegal(), RandomLegal()]
    for player, bot in enumerate(bots):
        bot.reset(seed + player, player)
    state, chance, actions = game.new_initial_state(), np.random.default_rng(seed), []
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(chance.choice(outcomes, p=probs)))
            continue
        player = state.current_player()
        view = SeatView.from_state(state, player)
        action = bots[player].act(view)
        assert action in view.legal_actions
        state.apply_action(action)
        actions.append(action)
    return actions


@pytest.mark.parametrize("name", ["tic_tac_toe", "kuhn_poker", "connect_four", "leduc_poker"])
def test_as_an_opponent_it_plays_only_legal_moves_the_same_per_seed(name):
    games = [_openspiel_game(name, seed) for seed in range(20)]
    assert games == [_openspiel_game(name, seed) for seed in range(20)]
    assert len({tuple(g) for g in games}) > 1  # the seed matters


def test_every_side_uses_the_one_class():
    assert RandomOpponent is RandomLegal and RandomLegalPolicy is RandomLegal
    assert isinstance(make_opponent("random", pyspiel.load_game("tic_tac_toe")), RandomLegal)
    assert isinstance(as_policy(None), RandomLegal)
    assert isinstance(RandomLegalAgent().policy, RandomLegal)
    bot = RandomLegal()
    assert isinstance(bot, Opponent) and isinstance(bot, AgentPolicy)


def test_its_explicit_policy_is_uniform_over_the_legal_moves():
    state = pyspiel.load_game("tic_tac_toe").new_initial_state()
    state.apply_action(4)
    probs = RandomLegal().action_probabilities(SeatView.from_state(state, 1))
    assert sorted(probs) == [0, 1, 2, 3, 5, 6, 7, 8]
    assert probs == pytest.approx(dict.fromkeys(probs, 1 / 8))


def test_draws_cover_every_legal_move():
    bot = RandomLegal()
    bot.reset(0)
    assert {bot.pick(("a", "b", "c")) for _ in range(200)} == {"a", "b", "c"}


def test_as_a_seat_policy_it_follows_the_mask_and_the_legal_ids():
    policy, space = RandomLegalPolicy(), spaces.Discrete(5, start=10)
    policy.reset(seed=1, agent="player_1")
    mask = np.array([0, 1, 0, 1, 0], dtype=np.int8)
    picks = {policy.choose({"action_mask": mask}, {}, space) for _ in range(100)}
    assert picks == {11, 13}
    assert {policy.choose(None, {"legal_action_ids": [7, 9]}, space) for _ in range(100)} == {7, 9}
    assert {policy.choose(None, {}, space) for _ in range(200)} == set(range(10, 15))
    box = spaces.Box(0.0, 1.0, shape=(2,))
    assert box.contains(policy.choose(None, {}, box))


def test_as_a_seat_policy_the_same_seed_gives_the_same_moves():
    def picks(seed: int) -> list:
        policy = RandomLegalPolicy()
        policy.reset(seed, "player_0")
        box = spaces.Box(0.0, 1.0, shape=(3,))
        return [policy.choose(None, {}, spaces.Discrete(7)) for _ in range(20)] + [
            policy.choose(None, {}, box).tolist()
        ]

    assert picks(5) == picks(5) and picks(5) != picks(6)


def test_pettingzoo_seats_play_it_legally_and_reproducibly():
    def trial(seed: int) -> list[str]:
        env = PettingZooTextEnv(connect_four_v3.env())  # no opponents given: RandomLegal
        moves, (obs, info) = [], env.reset(seed=seed)
        done = False
        while not done:
            move = info["legal_actions"][0]
            obs, _, terminated, truncated, info = env.step(move)
            moves.append(obs)
            done = terminated or truncated
        return moves

    assert trial(4) == trial(4)
    assert trial(4) != trial(5)


def test_the_learner_side_adapter_plays_legal_moves_per_seed():
    def trial(seed: int) -> list[str]:
        env, agent, moves = gym.make("mage/TicTacToe-v0"), RandomLegalAgent(), []
        agent.reset(seed=seed)
        obs, info = env.reset(seed=0)
        done = False
        while not done:
            move = agent.act(obs, info)
            assert move in info["legal_actions"]
            obs, _, terminated, truncated, info = env.step(move)
            moves.append(move)
            done = terminated or truncated
        return moves

    runs = [trial(seed) for seed in range(10)]
    assert runs == [trial(seed) for seed in range(10)]
    assert len({tuple(r) for r in runs}) > 1
    assert RandomLegalAgent().act("", {"legal_actions": []}) == ""
