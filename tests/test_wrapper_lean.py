"""The trial wrapper's shortcuts keep its documented streams and its text."""

import random

import gymnasium as gym

import mage_envs  # noqa: F401
from mage_envs.meta import MetaEpisodeWrapper

SEATS = ("first", "second")


def test_trial_draws_follow_random_random_of_the_trial_seed():
    # docs/architecture.md: the trial's random.Random(seed) draws the task seeds, then the seats,
    # and an unseeded trial goes on drawing from the previous trial's stream.
    env = MetaEpisodeWrapper(gym.make("mage/TicTacToe-v0"), seat_rotation="trial")
    stream = random.Random(5)
    _, info = env.reset(seed=5)
    assert info["seat"] == SEATS[stream.getrandbits(1)]
    for _ in range(3):
        obs, info = env.reset()
        task, seat = stream.getrandbits(31), SEATS[stream.getrandbits(1)]
        bare, _ = gym.make("mage/TicTacToe-v0").reset(seed=task, options={"seat": seat})
        assert info["seat"] == seat and obs.endswith(bare)


def test_fresh_task_seeds_are_the_trial_streams_draws():
    env = MetaEpisodeWrapper(gym.make("mage/KuhnPoker-v0"), same_task=False, reflection=False)
    stream = random.Random(11)
    seeds = [stream.getrandbits(31) for _ in range(3)]
    obs, info = env.reset(seed=11)
    for episode, seed in enumerate(seeds):
        bare, _ = gym.make("mage/KuhnPoker-v0").reset(seed=seed)
        assert info["episode_index"] == episode and obs.endswith(bare)
        done = False
        while not done and info["episode_index"] == episode:
            obs, _, done, _, info = env.step(info["legal_actions"][0])


def test_a_same_task_trial_without_seat_draws_never_builds_its_generator():
    env = MetaEpisodeWrapper(gym.make("mage/KuhnPoker-v0"))
    env.reset(seed=3)
    assert env._rng._rng is None  # the shortcut: nothing drew from it
