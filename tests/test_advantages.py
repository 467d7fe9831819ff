"""Advantage estimators against values worked out by hand for small trials."""

import inspect
import re
import subprocess
import sys

import numpy as np
import pytest

from mage_agents.advantages import (
    ESTIMATORS,
    estimate,
    get_estimator,
    gigpo,
    grpo,
    lamer,
    mage,
    rloo,
)
from mage_agents.advantages.returns import cross_episode_returns
from mage_agents.rollout import Trajectory

T = Trajectory.from_rewards


def _lists(advantages):
    return [np.round(a, 4).tolist() for a in advantages]


GROUPED = sorted(name for name, entry in ESTIMATORS.items() if entry.grouped)
"""The estimators that say they compare a trial with its group (not rae: its role's history)."""


@pytest.mark.parametrize("name", GROUPED)
def test_a_group_of_one_gets_zero(name):
    alone = T([[1.0, 2.0], [3.0]], anchors=[["a", "b"], ["c"]], opponent="x")
    assert _lists(ESTIMATORS[name]([alone])) == [[0.0, 0.0, 0.0, 0.0]]


def _equal_trials(name, rewards, mode):
    """The advantages of three equal trials (``mode`` given where the estimator takes one)."""
    anchors = [[anchor] for anchor in "ab"[: len(rewards)]]
    group = [T(rewards, trial_id=str(k), opponent="x", anchors=anchors) for k in range(3)]
    takes_mode = "mode" in inspect.signature(ESTIMATORS[name].fn).parameters
    return ESTIMATORS[name](group, **({"mode": mode} if takes_mode else {}))


@pytest.mark.parametrize("name", GROUPED)
@pytest.mark.parametrize("mode", ["mean_norm", "mean_std_norm"])
@pytest.mark.parametrize("rewards", [[[0.1]], [[0.1], [0.1]], [[0.1], [0.2]]])
def test_equal_trials_get_equal_advantages_never_nan(name, mode, rewards):
    advantages = _equal_trials(name, rewards, mode)
    assert all(np.array_equal(a, advantages[0]) and np.isfinite(a).all() for a in advantages)
    if len(rewards) == 1:  # one row a trial, all equal: nothing to tell apart
        assert all(np.all(a == 0.0) for a in advantages)


@pytest.mark.parametrize("mode", ["mean_norm", "mean_std_norm"])
@pytest.mark.parametrize(
    ("name", "rewards"),
    [(name, [[0.1], [0.1]]) for name in ("grpo", "rloo", "gigpo", "lamer")]
    + [("mage", [[0.1], [0.2]])],  # MAGE's meta-rewards R_n - R_{n-1} are equal when R rises by R_0
)
def test_a_zero_variance_group_gets_zero_never_nan(name, rewards, mode):
    assert all(np.all(a == 0.0) for a in _equal_trials(name, rewards, mode))


def test_grpo_per_trajectory_and_per_turn_statistics():
    long, short = T([[0.0, 2.0]], trial_id="long"), T([[0.0]], trial_id="short")
    # per trajectory: scores 2, 0; mean 1, unbiased std sqrt(2)
    assert _lists(grpo([long, short], stats="trajectory")) == [[0.7071, 0.7071], [-0.7071]]
    assert _lists(grpo([long, short], stats="trajectory", scale_std=False)) == [[1, 1], [-1]]
    # per turn: rows 2, 2, 0; mean 4/3, unbiased std sqrt(4/3)
    assert _lists(grpo([long, short], scale_std=False)) == [[0.6667, 0.6667], [-1.3333]]
    per_turn = grpo([long, short])
    assert per_turn[0].tolist() == pytest.approx([0.5774, 0.5774], abs=1e-4)
    assert per_turn[1].tolist() == pytest.approx([-1.1547], abs=1e-4)


def test_grpo_final_episode_target_and_an_early_stopped_trial():
    stopped = T([[1.0]], trial_id="a", num_episodes=3)  # solved at once, trial stopped
    full = T([[0.0], [0.0], [1.0]], trial_id="b")
    assert _lists(grpo([stopped, full], target="final")) == [[0.0], [0.0, 0.0, 0.0, 0.0, 0.0]]
    trial = grpo([stopped, full], target="trial", stats="trajectory")
    assert _lists(trial) == [[0.0], [0.0] * 5]  # both trials returned 1 in total


def test_rloo_leaves_each_trajectory_out():
    group = [T([[r]], trial_id=str(r)) for r in (4.0, 1.0, 1.0)]
    # the others' means: 1, 2.5, 2.5
    assert _lists(rloo(group)) == [[3.0], [-1.5], [-1.5]]
    long, short = T([[0.0, 2.0]], trial_id="l"), T([[0.0]], trial_id="s")
    assert _lists(rloo([long, short], stats="trajectory")) == [[2.0, 2.0], [-2.0]]
    # per turn: N = 3 rows, mean 4/3: 3/2 * (2 - 4/3) = 1, 3/2 * (0 - 4/3) = -2
    assert _lists(rloo([long, short])) == [[1.0, 1.0], [-2.0]]


def test_groups_are_kept_apart():
    batch = [T([[r]], trial_id=f"{g}{r}", group_id=g) for g in "xy" for r in (1.0, 0.0)]
    assert _lists(rloo(batch)) == [[1.0], [-1.0], [1.0], [-1.0]]


def test_gigpo_anchor_groups_span_time_steps():
    # a reaches state s1 at its step 1; b starts in s1: they share the step group
    a = T([[0.0, 1.0]], trial_id="a", anchors=[["s0", "s1"]])
    b = T([[0.0]], trial_id="b", anchors=[["s1"]])
    # step returns (gamma 0.5): a 0.5, 1; b 0. Group s1: 1 and 0 -> +-0.5; s0 alone -> 0.
    # episode term per turn: rows 1, 1, 0 (mean 2/3): a 1/3, b -2/3
    assert _lists(gigpo([a, b], gamma=0.5)) == [[0.3333, 0.8333], [-1.1667]]
    # per trajectory: episode mean 1/2
    assert _lists(gigpo([a, b], gamma=0.5, stats="trajectory")) == [[0.5, 1.0], [-1.0]]
    assert _lists(gigpo([a, b], gamma=0.5, omega=0.0, stats="trajectory")) == [[0.5, 0.5], [-0.5]]


def test_gigpo_std_mode_scales_both_terms():
    group = [T([[r]], trial_id=str(r)) for r in (3.0, 1.0, 2.0)]
    assert _lists(gigpo(group, mode="mean_std_norm")) == [[2.0], [-2.0], [0.0]]
    with pytest.raises(ValueError, match="mean_norm"):
        gigpo(group, mode="std")


def test_lamer_cross_episode_returns_and_the_reflection_turn():
    trial = T([[0.0, 1.0], [2.0], [4.0]])
    rewards = [t.reward for t in trial.turns]
    returns = cross_episode_returns(trial, rewards, step_gamma=0.5, traj_gamma=0.5)
    # g: ep0 0.5, 1; ep1 2; ep2 4. G^(1) = 2 + 0.5*4 = 4; G^(0) = g + 0.5*2 + 0.25*4 = g + 2
    phases = [t.phase for t in trial.turns]
    assert phases == ["play", "play", "reflect", "play", "reflect", "play"]
    assert returns.tolist() == [2.5, 3.0, 4.0, 4.0, 4.0, 4.0]
    code = cross_episode_returns(trial, rewards, 0.5, 0.5, across="code")
    # recursion: ep1 2 + 0.5*4 = 4; ep0 last 1 + 0.5*4 = 3, first 0 + 0.5*3 = 1.5
    assert code.tolist() == [1.5, 3.0, 4.0, 4.0, 4.0, 4.0]


def test_lamer_reflections_are_compared_with_reflections_on_the_same_attempt():
    # same first attempt (same reflection prompt), different second attempts
    a = T([[0.0], [2.0]], trial_id="a", anchors=[["s0"], ["s0"]])
    b = T([[0.0], [0.0]], trial_id="b", anchors=[["s0"], ["s0"]])
    step_only = lamer([a, b], step_gamma=0.5, traj_gamma=0.5, omega=1.0)
    episode_only = lamer([a, b], step_gamma=0.5, traj_gamma=0.5, omega=0.0)
    step = [x - e for x, e in zip(step_only, episode_only, strict=True)]
    # reflections: returns 2 and 0 in one group -> +-1
    assert step[0][1] == pytest.approx(1.0) and step[1][1] == pytest.approx(-1.0)
    # episode term: R per play row, the next R on reflections: rows 0, 2, 2, 0, 0, 0 (mean 2/3)
    assert _lists(episode_only) == [[-0.6667, 1.3333, 1.3333], [-0.6667, -0.6667, -0.6667]]
    # LaMer's code scores reflections 0: rows 0, 0, 2, 0, 0, 0 (mean 1/3)
    zero = lamer([a, b], step_gamma=0.5, traj_gamma=0.5, omega=0.0, reflection_score="zero")
    assert _lists(zero) == [[-0.3333, -0.3333, 1.6667], [-0.3333, -0.3333, -0.3333]]


def test_mage_differential_and_an_early_stopped_trial():
    stopped = T([[1.0]], trial_id="a", num_episodes=2, opponent="x")
    full = T([[0.0], [1.0]], trial_id="b", opponent="x")
    # meta-rewards: a 1; b 0, 1. Episode rows: 1 | 0, 1 (reflection: the next d), 1 -> mean 3/4
    assert _lists(mage([stopped, full], omega=0.0)) == [[0.25], [-0.75, 0.25, 0.25]]
    up = T([[1.0], [3.0]], trial_id="c", opponent="x")
    diff = mage([up, full], omega=0.0)  # d: 1, 2, 2 | 0, 1, 1 -> mean 7/6
    raw = mage([up, full], omega=0.0, differential=False)  # R: 1, 3, 3 | 0, 1, 1 -> mean 3/2
    assert _lists(diff) == [[-0.1667, 0.8333, 0.8333], [-1.1667, -0.1667, -0.1667]]
    assert _lists(raw) == [[-0.5, 1.5, 1.5], [-1.5, -0.5, -0.5]]


def test_mage_normalises_per_opponent_across_groups():
    batch = [
        T([[1.0]], trial_id="a", group_id="g1", opponent="x", anchors=[["a"]]),
        T([[0.0]], trial_id="b", group_id="g2", opponent="x", anchors=[["b"]]),
        T([[3.0]], trial_id="c", group_id="g1", opponent="y", anchors=[["c"]]),
        T([[5.0]], trial_id="d", group_id="g2", opponent="y", anchors=[["d"]]),
    ]
    assert _lists(mage(batch)) == [[0.5], [-0.5], [-1.0], [1.0]]
    assert _lists(mage(batch, opponent_norm=False)) == [[-1.0], [-2.5], [1.0], [2.5]]


def test_the_invalid_penalty_is_applied_once():
    a = T([[0.0, 1.0]], trial_id="a", invalid={(0, 0)})
    b = T([[0.0, 0.0]], trial_id="b")
    for name in ESTIMATORS:
        plain = ESTIMATORS[name]([a, b])
        charged = estimate(name, [a, b], invalid_penalty=0.5)
        assert (charged[0] - plain[0]).tolist() == [-0.5, 0.0]
        assert (charged[1] - plain[1]).tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="non-negative"):
        estimate("grpo", [a, b], invalid_penalty=-1)


def test_registry_names_and_functions():
    assert {"grpo", "rloo", "gigpo", "lamer", "mage", "rae"} <= set(ESTIMATORS)  # the published
    with pytest.raises(ValueError, match=re.escape(", ".join(ESTIMATORS))):
        get_estimator("ppo")
    with pytest.raises(TypeError, match="name"):
        get_estimator(3)

    def ones(trajectories, scale=1.0):
        return [np.full(len(t.turns), scale) for t in trajectories]

    a = T([[1.0], [2.0]])
    assert estimate(ones, [a], scale=2.0)[0].tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(ValueError, match="shape"):
        estimate(lambda ts: [np.zeros(1) for _ in ts], [a])
    with pytest.raises(TypeError):
        estimate("lamer", [a], gamma=0.9)  # lamer's discounts are step_gamma and traj_gamma
    with pytest.raises(ValueError, match="stats"):
        grpo([a], stats="episode")


def test_estimators_on_a_real_rollout():
    from mage_agents import RandomLegalAgent
    from mage_agents.rollout import collect, plan_groups

    plans = plan_groups("mage/KuhnPoker-v0", [0, 1], 4, opponent="mage-kuhn-train")
    trajectories = collect(plans, RandomLegalAgent, batch_size=8)
    for name in ESTIMATORS:
        advantages = estimate(name, trajectories)
        assert [len(a) for a in advantages] == [len(t.turns) for t in trajectories]
        assert all(np.isfinite(a).all() for a in advantages)
        assert any(np.abs(a).sum() > 0 for a in advantages)


def test_the_estimators_need_no_torch():
    code = "import sys, mage_agents.advantages; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_lamer_per_trajectory_statistics_count_each_trial_once():
    a = T([[0.0], [4.0]], trial_id="a")  # rows: R 0, 4 (reflection: the next R), 4
    b = T([[0.0]], trial_id="b", num_episodes=2)  # one row: 0
    # per turn: mean of 0, 4, 4, 0 is 2
    assert _lists(lamer([a, b], omega=0.0)) == [[-2.0, 2.0, 2.0], [-2.0]]
    # per trajectory: a's rows weigh 1/3 each: mean (8/3 + 0) / 2 = 4/3
    per_trial = lamer([a, b], omega=0.0, stats="trajectory")
    assert _lists(per_trial) == [[-1.3333, 2.6667, 2.6667], [-1.3333]]


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_a_non_finite_reward_is_a_clear_error(name, bad):
    # a NaN made every advantage of its group NaN; an inf made its group silently 0
    group = [T([[0.0, r]], trial_id=str(k)) for k, r in enumerate((bad, 1.0, 0.0))]
    with pytest.raises(ValueError, match=r"trial '0'.*not finite"):
        estimate(name, group)


def test_mage_turns_without_an_opponent_are_normalised_in_their_trial_group():
    # single-agent envs (Sokoban, WebShop, ALFWorld) name no opponent: comparing every trial
    # of the batch would rank an easy task's trials above a hard one's
    batch = [
        T([[r]], trial_id=f"{g}{r}", group_id=g, anchors=[[g]])
        for g, returns in (("easy", (11.0, 10.0)), ("hard", (1.0, 0.0)))
        for r in returns
    ]
    # each group: returns r, r - 1 (mean_norm): episode term +-0.5, step term +-0.5
    expected = [[1.0], [-1.0], [1.0], [-1.0]]
    assert _lists(mage(batch)) == expected == _lists(mage(batch, opponent_norm=False))
    # with an opponent named, turns still compare across groups against the same opponent
    named = [T([[r]], trial_id=str(r), group_id=str(r), opponent="x") for r in (1.0, 0.0)]
    assert _lists(mage(named, omega=0.0)) == [[0.5], [-0.5]]


@pytest.mark.parametrize("name", GROUPED)
def test_groups_are_read_from_the_trajectory_group_id(name):
    # as documented: regrouping a batch (renaming Trajectory.group_id) regroups its turns
    batch = [
        T([[r]], trial_id=f"{g}{r}")
        for g, returns in (("x", (1, 0)), ("y", (5, 2)))
        for r in returns
    ]
    together = _lists(ESTIMATORS[name](batch))  # one group, as from_rewards makes them
    for trajectory in batch:
        trajectory.group_id = trajectory.trial_id[0]
    # x: returns 1, 0; y: 5, 2: each group's advantages are its own, as if played alone
    apart = _lists(ESTIMATORS[name](batch))
    assert apart == _lists(ESTIMATORS[name](batch[:2]) + ESTIMATORS[name](batch[2:]))
    assert apart != together and all(a != [0.0] for a in apart)


def test_an_anchor_group_of_one_trajectory_has_no_std_to_scale_by():
    # a is in s0 twice, alone: per trajectory that group weighs 1, and the unbiased std over
    # N - 1 = 0 is undefined; it gave +-1e-6 (a std of 1e-12 counted as 1), not a clean value
    a = T([[0.0, 1.0]], trial_id="a", anchors=[["s0", "s0"]])
    b = T([[0.0]], trial_id="b", anchors=[["s1"]])
    settings = {"gamma": 0.5, "mode": "mean_std_norm", "stats": "trajectory"}
    both, episode = gigpo([a, b], **settings), gigpo([a, b], omega=0.0, **settings)
    assert [(x - e).tolist() for x, e in zip(both, episode, strict=True)] == [[0.0, 0.0], [0.0]]
    # mean_norm needs no std: the two visits are still told apart (returns 0.5, 1; mean 0.75)
    steps = gigpo([a, b], gamma=0.5, stats="trajectory")
    assert _lists(steps) == [[0.25, 0.75], [-0.5]]
