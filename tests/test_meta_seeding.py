"""How a trial's seed maps to its episodes' tasks."""

import gymnasium as gym

import mage_envs
from mage_envs import MetaEpisodeWrapper


def test_same_task_trial_replays_the_env_game_of_its_seed():
    for seed in (0, 3, 41):
        bare_obs, _ = gym.make("mage/KuhnPoker-v0").reset(seed=seed)
        trial_obs, _ = mage_envs.make_trial("mage/KuhnPoker-v0", num_episodes=3).reset(seed=seed)
        assert trial_obs.endswith(bare_obs)


def test_fresh_tasks_differ_within_a_trial_and_repeat_across_runs():
    def first_observations(seed):
        env = MetaEpisodeWrapper(gym.make("mage/Sokoban-v0"), num_episodes=3, same_task=False)
        obs, info = env.reset(seed=seed)
        seen = [obs.split("Now:")[-1]]
        while len(seen) < 3:
            action = "x" if info["phase"] == "play" else "<reflection>ok</reflection>"
            obs, _, terminated, truncated, info = env.step(action)
            if info["phase"] == "play" and info["step_in_episode"] == 0:
                seen.append(obs.split("Now:")[-1])
        return seen

    seen = first_observations(5)
    assert len(set(seen)) == 3
    assert first_observations(5) == seen
