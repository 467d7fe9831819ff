"""Any two-player OpenSpiel game as a text env: connect four against a random opponent."""

import gymnasium as gym

import mage_envs  # noqa: F401
from mage_envs.games import supported_games

print(f"{len(supported_games())} OpenSpiel games work as text envs, e.g. {supported_games()[:8]}")
env = gym.make("mage/OpenSpiel-v0", game="connect_four")
obs, info = env.reset(seed=0)
done = False
while not done:
    move = info["legal_actions"][len(info["legal_actions"]) // 2]  # prefer the centre column
    obs, reward, terminated, truncated, info = env.step(move)
    done = terminated or truncated
print(obs)
