"""Cached decision views give byte for byte what rendering every view anew gives."""

import random

import gymnasium as gym
import pytest
from gymnasium.error import Error
from gymnasium.utils import seeding

import mage_envs  # noqa: F401
from mage_envs.games.seeding import SeededGenerator
from mage_envs.games.views import ViewCache, render_view

HIDDEN = ["leduc_poker", "liars_dice", "phantom_ttt", "dark_hex"]
"""Generic OpenSpiel games with hidden information, keyed by their information state string."""

CASES = [
    ("mage/KuhnPoker-v0", {"seat": "random"}),
    ("mage/KuhnPoker-v0", {"seat": "second", "opponent": "mage-kuhn-train"}),
    ("mage/TicTacToe-v0", {"seat": "random"}),
    ("mage/TicTacToe-v0", {"opponent": "mage-ttt-train"}),
    ("mage/OpenSpiel-v0", {"game": "connect_four"}),
    *[("mage/OpenSpiel-v0", {"game": game, "seat": "random"}) for game in HIDDEN],
]


def answer(rng: random.Random, info: dict) -> str:
    """A move name as agents write it (bare, tagged, shouted, in a sentence) or an invalid one."""
    name = rng.choice(info["legal_actions"])
    return rng.choice(
        [name, f"<action>{name}</action>", name.upper(), f"I play {name}.", "pass", "???", ""]
    )


def play(env: gym.Env, seeds: range, max_steps: int = 60) -> list:
    """Every reset and step result of seeded games, with the full history at each end."""
    rng, record = random.Random(0), []
    for seed in seeds:
        obs, info = env.reset(seed=seed)
        record.append((obs, info))
        for _ in range(max_steps):
            result = env.step(answer(rng, info))
            record.append(result)
            info = result[-1]
            if result[2] or result[3]:
                break
        record.append(env.unwrapped.state.history())
    return record


def uncached(env_id: str, kwargs: dict) -> gym.Env:
    env = gym.make(env_id, **kwargs)
    env.unwrapped.views = ViewCache(env.unwrapped.text_game, maxsize=0)
    return env


@pytest.mark.parametrize(("env_id", "kwargs"), CASES, ids=[str(c) for c in CASES])
def test_cached_play_is_byte_identical_to_uncached_play(env_id, kwargs):
    seeds = range(60) if env_id != "mage/OpenSpiel-v0" else range(8)
    reference = play(uncached(env_id, kwargs), seeds)
    cached = gym.make(env_id, **kwargs)
    assert play(cached, seeds) == reference
    assert play(cached, seeds) == reference  # again, every view now from the cache
    assert len(cached.unwrapped.views) > 0


def test_a_small_cache_stays_bounded_and_identical():
    kwargs = {"seat": "random"}
    reference = play(uncached("mage/TicTacToe-v0", kwargs), range(80))
    env = gym.make("mage/TicTacToe-v0", **kwargs)
    env.unwrapped.views = ViewCache(env.unwrapped.text_game, maxsize=8)
    assert play(env, range(80)) == reference
    assert len(env.unwrapped.views) == 8


def seen_states(game, games: int, seed: int = 0):
    """(state, player, terminal) at every decision of random play and, for both seats, the end."""
    rng = random.Random(seed)
    for _ in range(games):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(rng.choices(actions, probs)[0])
                continue
            yield state.clone(), state.current_player(), False
            state.apply_action(rng.choice(state.legal_actions()))
        yield from ((state, player, True) for player in (0, 1))


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("mage/KuhnPoker-v0", {}),
        ("mage/TicTacToe-v0", {}),
        *[("mage/OpenSpiel-v0", {"game": game}) for game in HIDDEN],
    ],
)
def test_states_that_a_seat_cannot_tell_apart_share_one_view(env_id, kwargs):
    # The key of a view is what the seat knows: every state with that key, whatever the hidden
    # part (the opponent's card, dice or stones), renders the same view, so one may stand for all.
    text_game = gym.make(env_id, **kwargs).unwrapped.text_game
    views: dict = {}
    hidden_differs = 0
    for state, player, terminal in seen_states(text_game.game, 300):
        game = text_game
        key = game.outcome_key(state, player) if terminal else game.view_key(state, player)
        if key is None:
            continue
        key, view = (player, terminal, key), render_view(text_game, state, player)
        if key in views:
            first_state, first_view = views[key]
            assert view == first_view, key
            hidden_differs += first_state.history() != state.history()
        else:
            views[key] = (state, view)
    # States that differ where the view does not look were met (hidden cards, dice, stones; in
    # tic-tac-toe, the order in which the same board was reached).
    assert hidden_differs > 0


def test_kuhn_views_hide_the_opponent_card_until_a_showdown():
    text_game = gym.make("mage/KuhnPoker-v0").unwrapped.text_game
    game = text_game.game
    for mine, theirs, other in [(0, 1, 2), (1, 2, 0), (2, 0, 1)]:
        a, b = game.new_initial_state(), game.new_initial_state()
        for state, deal in ((a, theirs), (b, other)):
            state.apply_action(mine)
            state.apply_action(deal)
        cache = ViewCache(text_game)
        assert cache.view(a, 0, False) is cache.view(b, 0, False)
        assert cache.view(b, 0, False) == render_view(text_game, b, 0)
        for state in (a, b):  # check, check: a showdown, where the cards are shown
            state.apply_action(0)
            state.apply_action(0)
        assert cache.view(a, 0, True) != cache.view(b, 0, True)
        assert cache.view(b, 0, True) == render_view(text_game, b, 0)
        assert len(cache) == 3


def test_negative_size_is_refused():
    with pytest.raises(ValueError, match="maxsize"):
        ViewCache(gym.make("mage/KuhnPoker-v0").unwrapped.text_game, maxsize=-1)


SEEDS = [0, 1, 7, 7, 12345, 2**31 - 1, 2**63 - 1, 2**64 + 3, 2**130 + 5, 7, 0]


def test_a_seeded_reset_draws_from_gymnasiums_generator_byte_for_byte():
    env = gym.make("mage/KuhnPoker-v0").unwrapped  # one seat, one opponent: 3 draws per reset
    for seed in SEEDS:  # new seeds, repeated seeds, wide seeds
        env.reset(seed=seed)
        reference = seeding.np_random(seed)[0]
        reference.bit_generator.random_raw(), reference.random(), reference.random()
        assert env.np_random.bit_generator.state == reference.bit_generator.state
        assert env.np_random.random() == reference.random()
        assert env.np_random_seed == seed


@pytest.mark.parametrize(("env_id", "kwargs"), CASES[:4], ids=[str(c) for c in CASES[:4]])
def test_seeded_play_is_what_gymnasiums_own_seeding_plays(env_id, kwargs, monkeypatch):
    seeds = [*range(40), 5, 5, 2**64 + 1]
    ours = play(gym.make(env_id, **kwargs), seeds)
    monkeypatch.setattr(SeededGenerator, "at", lambda self, seed: seeding.np_random(seed)[0])
    assert play(gym.make(env_id, **kwargs), seeds) == ours


def test_a_seed_plays_the_same_game_whatever_was_played_before():
    played = gym.make("mage/TicTacToe-v0", seat="random", opponent="mage-ttt-train")
    play(played, range(30))
    for seed in (3, 3, 40):
        again = play(played, [seed])
        fresh = gym.make("mage/TicTacToe-v0", seat="random", opponent="mage-ttt-train")
        assert again == play(fresh, [seed])


def test_seeds_gymnasium_refuses_are_refused_as_gymnasium_does():
    env = gym.make("mage/KuhnPoker-v0")
    for seed in (-1, 1.5, "3"):
        with pytest.raises(Error):
            env.reset(seed=seed)


def test_an_env_with_cached_views_deep_copies_and_pickles():
    import copy
    import pickle

    for env_id in ("mage/KuhnPoker-v0", "mage/TicTacToe-v0"):
        env = gym.make(env_id)
        reference = play(env, range(20))
        assert len(env.unwrapped.views) > 0
        for clone in (copy.deepcopy(env), pickle.loads(pickle.dumps(env))):
            assert play(clone, range(20)) == reference


def test_what_the_env_hands_out_does_not_change_its_cache():
    env = gym.make("mage/KuhnPoker-v0")
    _, info = env.reset(seed=0)
    info["legal_actions"].append("raise")
    info["legal_action_ids"].clear()
    _, again = env.reset(seed=0)
    assert again["legal_actions"] == ["check", "bet"] and again["legal_action_ids"] == [0, 1]
