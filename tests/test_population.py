"""Populations: presets, weighted seeded draws, and how the Gymnasium envs use them."""

import gymnasium as gym
import numpy as np
import pyspiel
import pytest

import mage_envs  # noqa: F401
from mage_envs.opponents import PRESETS, Population, RandomOpponent, as_population

KUHN = pyspiel.load_game("kuhn_poker")
TTT = pyspiel.load_game("tic_tac_toe")


def test_presets_match_the_papers():
    assert {"mage-kuhn-train", "mage-kuhn-eval", "kuhn-nash"} <= set(PRESETS)
    assert {"mage-ttt-train", "mage-ttt-eval", "mcts-1000"} <= set(PRESETS)
    train = PRESETS["mage-kuhn-train"]
    assert dict(zip(train.member_names(), train.weights, strict=True)) == {
        "conservative": 0.3,
        "aggressive": 0.3,
        "balanced": 0.4,
    }
    assert PRESETS["mage-kuhn-eval"].member_names() == ["cfr-argmax"]
    assert PRESETS["kuhn-nash"].member_names() == ["cfr"]
    assert PRESETS["mage-ttt-eval"].member_names() == ["mcts-100"]
    ttt = PRESETS["mage-ttt-train"].member_names()
    assert "mcts-100" in ttt and "random" in ttt and any(n.startswith("order-") for n in ttt)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_builds_for_a_game(name):
    population = PRESETS[name]
    for game in ("kuhn_poker", "tic_tac_toe", "nim", "connect_four", "leduc_poker"):
        try:
            members = population.build(pyspiel.load_game(game))
        except ValueError:  # a member that cannot play this game
            continue
        assert [m.name for m in members] == population.member_names()
        assert sum(population.weights) == pytest.approx(1)
        return
    pytest.fail(f"{name} builds for none of the games tried")


def test_draws_follow_the_weights_and_replay_with_the_seed():
    population = PRESETS["mage-kuhn-train"]
    draws = [population.draw(np.random.default_rng(seed)) for seed in range(3000)]
    shares = np.bincount(draws, minlength=3) / len(draws)
    assert np.allclose(shares, population.weights, atol=0.03)
    again = [population.draw(np.random.default_rng(seed)) for seed in range(3000)]
    assert draws == again


def test_bad_populations_are_refused():
    with pytest.raises(ValueError, match="at least one member"):
        Population({})
    with pytest.raises(ValueError, match="positive and finite"):
        Population({"random": 0.0})
    with pytest.raises(ValueError, match="positive and finite"):
        Population([("random", float("nan"))])
    with pytest.raises(ValueError, match="Unknown opponent"):
        Population({"random": 1, "mystery": 1}).build(KUHN)


def test_as_population_accepts_every_opponent_form():
    assert as_population("mage-kuhn-train") is PRESETS["mage-kuhn-train"]
    assert as_population(None).member_names() == ["random"]
    assert as_population("balanced").member_names() == ["balanced"]
    bot = RandomOpponent()
    assert as_population(bot).specs == (bot,)
    pop = Population({"random": 1})
    assert as_population(pop) is pop


def trial_record(env, seeds):
    """Opponent names and the whole observation text of one greedy game per seed."""
    record = []
    for seed in seeds:
        obs, info = env.reset(seed=seed)
        texts, done = [obs], False
        while not done:
            obs, _, terminated, truncated, info = env.step(info["legal_actions"][-1])
            texts.append(obs)
            done = terminated or truncated
        record.append((info["opponent"], texts))
    return record


def test_env_draws_members_from_the_seed():
    env = gym.make("mage/KuhnPoker-v0", opponent="mage-kuhn-train", seat="random")
    first = trial_record(env, range(40))
    names = {name for name, _ in first}
    assert names == {"conservative", "aggressive", "balanced"}
    other = gym.make("mage/KuhnPoker-v0", opponent="mage-kuhn-train", seat="random")
    assert trial_record(other, range(40)) == first  # same opponents, same moves, same text


def test_env_keeps_the_member_when_asked():
    env = gym.make("mage/TicTacToe-v0", opponent="mage-ttt-train")
    _, info = env.reset(seed=0)
    kept = info["opponent"]
    for _ in range(15):
        _, info = env.reset(options={"keep_opponent": True})
        assert info["opponent"] == kept
    drawn = {env.reset(seed=s)[1]["opponent"] for s in range(60)}
    assert len(drawn) >= 4


def test_env_accepts_population_objects_and_opponents():
    pop = Population({"always-bet": 1, "always-pass": 1}, name="two")
    env = gym.make("mage/KuhnPoker-v0", opponent=pop)
    assert {env.reset(seed=s)[1]["opponent"] for s in range(20)} == {"always-bet", "always-pass"}
    env = gym.make("mage/KuhnPoker-v0", opponent="cfr-argmax")
    assert env.reset(seed=0)[1]["opponent"] == "cfr-argmax"


def test_env_refuses_unknown_or_unfit_names_at_make():
    with pytest.raises(ValueError, match="Unknown opponent 'mcts'"):
        gym.make("mage/TicTacToe-v0", opponent="mcts")
    with pytest.raises(ValueError, match="cannot play"):
        gym.make("mage/TicTacToe-v0", opponent="mage-kuhn-train")


def test_tic_tac_toe_population_replays_opponents_and_moves():
    def record():
        env = gym.make("mage/TicTacToe-v0", opponent="mage-ttt-train", seat="random")
        return trial_record(env, range(12))

    first = record()
    assert first == record()
    assert len({name for name, _ in first}) >= 3


def test_members_without_weights_are_a_clear_error():
    with pytest.raises(ValueError, match=r"\(spec, weight\) pairs"):
        Population(["conservative", "aggressive"])
    with pytest.raises(ValueError, match=r"\(spec, weight\) pairs"):
        Population([("random", 1.0, 2.0)])
