"""Wrap your own Gymnasium env into reflection-carrying trials, in one line.

The env below is any Gymnasium env with numeric spaces: a hidden number in 0..9, one guess per
episode, reward 1 for a hit. The wrapper turns it into text (observations and actions), replays the
same hidden number in every episode of a trial (same_task=True), asks for a reflection between
episodes, and reports pass@k at the end. The "agent" is a scripted stand-in for an LLM that reads
its memory to avoid repeating a wrong guess.

Run: python examples/wrap_your_env.py
"""

import re

import gymnasium as gym
from gymnasium import spaces

from mage_envs import MetaEpisodeWrapper


class GuessTheNumber(gym.Env):
    """Guess a hidden digit; the observation says whether the last guess was low (0) or high (1)."""

    observation_space = spaces.Discrete(3)  # 0: too low, 1: too high, 2: no guess yet
    action_space = spaces.Discrete(10)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.secret = int(self.np_random.integers(10))
        return 2, {}

    def step(self, action):
        hit = int(action) == self.secret
        return int(int(action) > self.secret), float(hit), True, False, {}


env = MetaEpisodeWrapper(GuessTheNumber(), num_episodes=4)  # <- the one line


def scripted_agent(observation: str, info: dict) -> str:
    """Guess numbers that earlier reflections did not rule out."""
    if info["phase"] == "reflect":
        guess = int(re.findall(r"You answered: (\d)", observation)[-1])
        return f"<reflection>{guess} was wrong; try a number after {guess}.</reflection>"
    tried = [int(n) for n in re.findall(r"after (\d)", observation)]
    return str(max(tried, default=-1) + 1)


obs, info = env.reset(seed=0)
print(obs, end="\n\n")
done = False
while not done:
    obs, reward, terminated, truncated, info = env.step(scripted_agent(obs, info))
    done = terminated or truncated
print(obs, end="\n\n")
trial = info["trial"]
print("returns per episode:", trial["returns"])
print("pass@k for k = 1..4:", trial["pass_at_k"])
print("reflections:", trial["reflections"])
