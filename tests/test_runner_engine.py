"""The runner is a thin user of the rollout engine: its records are read off trajectories."""

from baselines.evaluate.runner import plan_trials, play_trials
from mage_agents import RandomLegalAgent
from mage_agents.rollout import collect
from mage_envs.meta import TrialConfig


def _specs():
    return plan_trials(
        "random",
        ["mage/KuhnPoker-v0", "mage/Sokoban-v0"],
        tasks=2,
        repeats=2,
        trial=TrialConfig(num_episodes=2),
    )


def test_records_match_the_engine_trajectories():
    specs = _specs()
    records = {r["trial_id"]: r for r in play_trials(specs, RandomLegalAgent, batch_size=3)}
    trajectories = collect(specs, RandomLegalAgent, batch_size=3)
    assert len(records) == len(trajectories) == len(specs)
    for trajectory in trajectories:
        record = records[trajectory.trial_id]
        plays = trajectory.play_turns
        moves = [[t.move for t in plays if t.episode == n] for n in range(2)]
        assert record["actions"] == [m for m in moves if m]
        assert record["trial"]["returns"] == trajectory.result.returns
        assert record["trial"]["pass_at_k"] == trajectory.result.pass_at_k
        assert record["steps"] == len(trajectory.turns)
        assert record["play_steps"] == len(plays)
        spec = specs[specs.position(trajectory.trial_id)]
        assert record["task"] == spec.task and trajectory.group_id == spec.group_id
        assert spec.group_id.startswith(f"{spec.env_id}|None|task{spec.task_seed}|")


def test_env_workers_give_the_same_records():
    specs = _specs()
    here = [dict(r, wall_s=0) for r in play_trials(specs, RandomLegalAgent, batch_size=4)]
    there = play_trials(specs, RandomLegalAgent, batch_size=4, env_workers=2)
    assert here == [dict(r, wall_s=0) for r in there]
