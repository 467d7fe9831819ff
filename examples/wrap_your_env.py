"""Wrap your own Gymnasium env into reflection-carrying trials, in one line.

The env below is any Gymnasium env with numeric spaces: a hidden number in 0..9, one guess per
episode, reward 1 for a hit; the last observation says whether the guess was too high (1) or not
(0). The wrapper turns it into text (observations and actions), replays the same hidden number in
every episode of a trial (same_task=True), asks for a reflection between episodes, and reports
pass@k at the end. The "agent" is a scripted stand-in for an LLM: a binary search that keeps the
range it has narrowed down in its reflections, and reads it back from its memory.

Run: python examples/wrap_your_env.py
"""

import re

import gymnasium as gym
from gymnasium import spaces

from mage_envs import MetaEpisodeWrapper


class GuessTheNumber(gym.Env):
    """Guess a hidden digit; the observation says whether the last guess was too high (1) or not."""

    observation_space = spaces.Discrete(3)  # 0: not too high (low or a hit), 1: too high, 2: start
    action_space = spaces.Discrete(10)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.secret = int(self.np_random.integers(10))
        return 2, {}

    def step(self, action):
        hit = int(action) == self.secret
        return int(int(action) > self.secret), float(hit), True, False, {}


env = MetaEpisodeWrapper(GuessTheNumber(), num_episodes=4)  # <- the one line


class BinarySearchAgent:
    """Guesses the middle of the range its memory leaves; reflects by narrowing that range."""

    def __init__(self) -> None:
        self.low, self.high = 0, 9

    def act(self, observation: str, info: dict) -> str:
        """Answer a play step or a reflection step."""
        if info["phase"] == "reflect":
            return self.reflect(observation)
        ranges = re.findall(r"between (\d) and (\d)", observation)  # from the last reflection
        self.low, self.high = (int(n) for n in ranges[-1]) if ranges else (0, 9)
        return str((self.low + self.high) // 2)

    def reflect(self, observation: str) -> str:
        """Read the guess and how the attempt ended from the trajectory; narrow the range."""
        guess = int(re.findall(r"You answered: (\d)", observation)[-1])
        if "the task was solved" in observation:
            low, high, verdict = guess, guess, "right"
        elif "End of the attempt:\nObservation: 1" in observation:
            low, high, verdict = self.low, guess - 1, "too high"
        else:
            low, high, verdict = guess + 1, self.high, "too low"
        reflection = f"{guess} was {verdict}: the number is between {low} and {high}."
        return f"<reflection>{reflection}</reflection>"


agent = BinarySearchAgent()
obs, info = env.reset(seed=0)
print(obs, end="\n\n")
done = False
while not done:
    obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
    done = terminated or truncated
print(obs, end="\n\n")
trial = info["trial"]
print("returns per episode:", trial["returns"])
print("pass@k for k = 1..4:", trial["pass_at_k"])
print("reflections:", trial["reflections"])
