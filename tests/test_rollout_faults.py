"""The rollout engine with backend faults: a step without an answer is never played."""

import pytest

from mage_agents import RandomLegalAgent, Reply
from mage_agents.prompting import LLMAgent
from mage_agents.rollout import BackendFailure, Trajectory, collect, plan_groups, rollout

KUHN = "mage/KuhnPoker-v0"


def _plans(**trial):
    return plan_groups(KUHN, [0, 1], group_size=2, opponent="aggressive", trial=trial)


def _without_timing(trajectories):
    return [{**t.to_dict(), "wall_s": None, "latency_s": None} for t in trajectories]


class _FailsOnce(RandomLegalAgent):
    """Plays like RandomLegalAgent; the trial with seed ``bad_seed`` gets no backend answer at
    its ``bad_step``-th call."""

    def __init__(self, bad_seed, bad_step, faults=2):
        super().__init__()
        self.bad_seed, self.bad_step, self.faults = bad_seed, bad_step, faults

    def reset(self, seed=None):
        super().reset(seed)
        self.seed, self.calls = seed, 0

    def act(self, observation, info):
        self.calls += 1
        if self.seed == self.bad_seed and self.calls == self.bad_step:
            return Reply("", error="connection refused", faults=self.faults)
        return super().act(observation, info)


def test_a_step_without_a_backend_answer_stops_its_trial_unplayed_and_the_batch_plays_on():
    plans = _plans()
    clean = collect(plans, RandomLegalAgent, batch_size=4)
    bad = plans[1]
    done = list(rollout(plans, lambda: _FailsOnce(bad.seed, 3), batch_size=4))
    failed = [t for t in done if t.incomplete]
    assert [t.trial_id for t in failed] == [bad.trial_id]
    (trajectory,) = failed
    last = trajectory.turns[-1]
    assert len(trajectory.turns) == 3 and last.backend_failed and last.faults == 2
    assert last.error == "connection refused" and last.action == "" and last.move is None
    assert trajectory.failure == "connection refused"
    before = next(t for t in clean if t.trial_id == bad.trial_id).turns[:2]
    assert trajectory.turns[:2] == before  # the steps before the failure, as without it
    others = sorted((t for t in done if not t.incomplete), key=lambda t: t.trial_id)
    expected = sorted((t for t in clean if t.trial_id != bad.trial_id), key=lambda t: t.trial_id)
    assert _without_timing(others) == _without_timing(expected)


def test_collect_raises_on_a_backend_failure_unless_asked_to_keep_it():
    plans = _plans()
    with pytest.raises(BackendFailure, match=r"task0.*connection refused") as caught:
        collect(plans, lambda: _FailsOnce(plans[0].seed, 1), batch_size=2)
    assert caught.value.trajectory.incomplete
    kept = collect(plans, lambda: _FailsOnce(plans[0].seed, 1), keep_incomplete=True)
    assert [t.incomplete for t in kept] == [True, False, False, False]
    assert kept[0].result is None and len(kept[0].turns) == 1  # no episode finished
    again = Trajectory.from_json(kept[0].to_json())
    assert again == kept[0] and again.turns[0].backend_failed


def test_an_incomplete_trial_keeps_the_episodes_it_finished():
    plans = _plans(num_episodes=3)
    (trajectory,) = [
        t
        for t in collect(plans, lambda: _FailsOnce(plans[2].seed, 4), keep_incomplete=True)
        if t.incomplete
    ]
    assert trajectory.result is not None and len(trajectory.result.returns) >= 1


def test_an_agents_own_error_is_played_not_a_backend_failure():
    def agent():
        return _FailsOnce(plans[0].seed, 1, faults=0)

    plans = _plans(num_episodes=1)
    trajectories = collect(plans, agent)
    assert not any(t.incomplete for t in trajectories)
    first = trajectories[0].turns[0]
    assert first.error == "connection refused" and first.invalid and not first.backend_failed


def test_a_backend_that_raises_during_training_surfaces_as_an_error():
    class Exploding:
        name = "exploding"

        def generate(self, chats):
            raise MemoryError("out of memory")

    plans = _plans(num_episodes=1)
    with pytest.raises(BackendFailure, match="backend MemoryError: out of memory"):
        collect(plans, lambda: LLMAgent(Exploding(), "zero-shot"), batch_size=4)


def test_retried_faults_are_kept_on_the_turn_of_an_answer_that_came():
    class Retried:
        name = "retried"

        def generate(self, chats):
            return [Reply("<action>check</action>", faults=2) for _ in chats]

    plans = _plans(num_episodes=1)
    trajectories = collect(plans, lambda: LLMAgent(Retried(), "zero-shot"), batch_size=4)
    turns = [turn for t in trajectories for turn in t.turns]
    assert all(t.faults == 2 and not t.backend_failed for t in turns)
    assert not any(t.incomplete for t in trajectories)


def test_a_reset_that_raises_is_kept_and_the_trial_played():
    class BadReset(RandomLegalAgent):
        def reset(self, seed=None):
            super().reset(seed)
            raise RuntimeError("cannot reset")

    trajectories = collect(_plans(num_episodes=1), BadReset, batch_size=2)
    assert all(t.reset_error == "reset: RuntimeError: cannot reset" for t in trajectories)
    assert all(not t.incomplete and t.result.returns for t in trajectories)


def test_an_incomplete_trajectory_gets_no_advantages():
    from mage_agents.advantages import estimate

    plans = _plans(num_episodes=1)
    kept = collect(plans, lambda: _FailsOnce(plans[0].seed, 1), keep_incomplete=True)
    with pytest.raises(ValueError, match="incomplete"):
        estimate("grpo", kept)
    assert len(estimate("grpo", kept[1:])) == 3
