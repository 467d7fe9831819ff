"""Summary statistics against hand-computed values."""

import math

from hypothesis import given
from hypothesis import strategies as st

from baselines.evaluate.runner import evaluate, plan_trials
from baselines.report.summary import (
    diversity,
    entropy_bits,
    mean_interval,
    summarize,
    t_quantile,
    wilson_interval,
)
from baselines.results import ResultsFile
from mage_envs.meta import TrialConfig


def test_t_quantile_matches_tables():
    assert t_quantile(1) == 12.706
    assert t_quantile(29) == 2.045
    # Beyond the table: published t(0.975) values 2.021 (40), 2.000 (60), 1.980 (120).
    assert round(t_quantile(40), 3) == 2.021
    assert round(t_quantile(60), 3) == 2.000
    assert round(t_quantile(120), 3) == 1.980


def test_wilson_interval_hand_computed():
    # 5 of 10: centre 0.5, half-width 1.96*sqrt(0.025+0.0096)/1.384 = 0.2634.
    iv = wilson_interval(5, 10)
    assert iv.value == 0.5
    assert math.isclose(iv.low, 0.2366, abs_tol=1e-4)
    assert math.isclose(iv.high, 0.7634, abs_tol=1e-4)
    # All successes: the upper bound is 1 and the lower bound n / (n + z^2).
    iv = wilson_interval(20, 20)
    assert iv.high == 1.0
    assert math.isclose(iv.low, 20 / (20 + 1.959963984540054**2), rel_tol=1e-9)


@given(st.integers(1, 500), st.data())
def test_wilson_interval_contains_rate_and_stays_in_unit_interval(n, data):
    k = data.draw(st.integers(0, n))
    iv = wilson_interval(k, n)
    assert 0.0 <= iv.low <= iv.value <= iv.high <= 1.0


def test_wilson_width_shrinks_like_one_over_root_n():
    small, large = wilson_interval(50, 100), wilson_interval(5000, 10000)
    assert math.isclose(small.half_width / large.half_width, 10, rel_tol=0.02)


def test_mean_interval_hand_computed():
    iv = mean_interval([2.0, 4.0, 6.0, 8.0])
    # sd = sqrt(20/3), se = sd/2, t(3) = 3.182
    assert iv.value == 5.0
    assert math.isclose(iv.half_width, 3.182 * math.sqrt(20 / 3) / 2, rel_tol=1e-12)
    assert math.isnan(mean_interval([1.0]).low)
    assert mean_interval([]).n == 0


def test_entropy_bits():
    assert entropy_bits("aabb") == 1.0
    assert math.isclose(entropy_bits("abcd"), 2.0)
    assert entropy_bits("aaaa") == 0.0


def _record(agent, successes, returns, n=3, opponent="o", seat="first", task="t", actions=None):
    solved = [any(successes[: k + 1]) or (k >= len(successes) and any(successes)) for k in range(n)]
    return {
        "agent": agent,
        "env_id": "env",
        "opponent": opponent,
        "task": task,
        "trial": {
            "num_episodes": n,
            "returns": returns,
            "successes": successes,
            "pass_at_k": [float(s) for s in solved],
            "final_return": returns[-1],
            "opponents": [opponent] * len(returns),
            "seats": [seat] * len(returns),
        },
        "final_payoff": None,
        "actions": actions or [["a"]] * len(returns),
        "steps": 3 * len(returns) - 1,  # two moves per attempt and a reflection in between
        "play_steps": 2 * len(returns),
        "invalid_steps": 1,
        "failed_steps": 0,
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "wall_s": 0.5,
    }


def test_pass_at_k_and_success_per_attempt_by_hand():
    records = [
        _record("a", [True], [1.0]),  # stopped early on a first-attempt success
        _record("a", [False, True], [-1.0, 1.0]),
        _record("a", [False, False, True], [-1.0, -1.0, 1.0]),
        _record("a", [False, False, False], [-1.0, -1.0, -1.0]),
    ]
    (s,) = summarize(records)
    assert [iv.value for iv in s.pass_at_k] == [0.25, 0.5, 0.75]
    # success per attempt: among the trials that played the attempt
    assert [(iv.value, iv.n) for iv in s.success_at] == [(0.25, 4), (1 / 3, 3), (0.5, 2)]
    assert s.final_return.value == 0.5
    assert math.isclose(s.mean_return.value, (1 + 0 - 1 / 3 - 1) / 4)
    assert (s.win.value, s.loss.value, s.draw.value) == (0.75, 0.25, 0.0)
    assert s.invalid_rate.value == 4 / 18
    assert s.tokens_per_trial == 15
    assert s.wall_s == 2.0


def test_groups_are_split_by_agent_and_opponent():
    records = [_record("a", [True], [1.0]), _record("b", [False] * 3, [0.0] * 3, opponent="x")]
    groups = summarize(records)
    assert [(g.key["agent"], g.key["opponent"], g.trials) for g in groups] == [
        ("a", "o", 1),
        ("b", "x", 1),
    ]
    assert groups[1].draw.value == 1.0


def test_diversity_by_hand():
    same = [_record("a", [False], [0.0], actions=[["x", "y"]], task="t1") for _ in range(3)]
    mixed = [
        _record("a", [False], [0.0], actions=[["x", "y"]], task="t2"),
        _record("a", [False], [0.0], actions=[["x", "z"]], task="t2"),
    ]
    assert diversity(same) == {
        "tasks": 1,
        "distinct_share": 1 / 3,
        "sequence_entropy": 0.0,
        "action_entropy": 1.0,
    }
    d = diversity(same + mixed)
    assert d["tasks"] == 2
    assert math.isclose(d["distinct_share"], (1 / 3 + 1) / 2)
    assert math.isclose(d["sequence_entropy"], 0.5)
    assert diversity(mixed[:1]) == {}


def test_invalid_rate_counts_play_steps_only():
    # an agent that never names a move: every play step is invalid, reflections are not actions
    def nonsense(observation, info):
        return "my reflection" if info.get("phase") == "reflect" else "xyzzy"

    specs = plan_trials("nonsense", ["mage/KuhnPoker-v0"], ["random"], tasks=4)
    records = evaluate(nonsense, specs, ResultsFile(None))
    assert all(r["steps"] == r["play_steps"] + 2 for r in records)  # two reflection steps
    (s,) = summarize(records)
    assert s.invalid_rate.value == 1.0
    assert s.invalid_rate.n == sum(r["play_steps"] for r in records)


def test_percent_of_achievable_only_where_the_bound_bounds_pass_at_n():
    from baselines.report.achievable import achievable_interval

    def plan(opponent, episodes, **trial):
        specs = plan_trials(
            "r",
            ["mage/KuhnPoker-v0"],
            [opponent],
            tasks=6,
            trial=TrialConfig(num_episodes=episodes, **trial),
        )
        return evaluate("random", specs, ResultsFile(None))

    # same_task replays the deal and the opponent's random draws: every attempt faces one game,
    # so the clairvoyant share bounds pass@N for deterministic and stochastic opponents alike
    for opponent in ("cfr-argmax", "random"):
        (s,) = summarize(plan(opponent, 3), achievable=achievable_interval)
        assert s.achievable is not None
    # fresh deals: three attempts can beat the one-attempt share, so no figure
    (s,) = summarize(plan("random", 3, same_task=False), achievable=achievable_interval)
    assert s.achievable is None
    (s,) = summarize(plan("random", 1, same_task=False), achievable=achievable_interval)
    assert s.achievable is not None


def test_the_kuhn_bound_holds_for_pass_at_3_of_same_task_trials():
    # Always betting and calling wins every deal that any line wins, and replayed attempts
    # cannot do better: its pass@3 meets the bound, and random play stays below it.
    from baselines.report.achievable import trial_bound

    def pass_at_3(agent):
        specs = plan_trials(agent, ["mage/KuhnPoker-v0"], ["random"], tasks=400)
        records = evaluate(agent, specs, ResultsFile(None))
        return trial_bound(records[0]), sum(r["trial"]["pass_at_k"][-1] for r in records) / 400

    bound, best = pass_at_3("policy:always-bet")
    _, random_play = pass_at_3("random")
    margin = 1.96 * (bound * (1 - bound) / 400) ** 0.5
    assert abs(best - bound) <= margin
    assert random_play <= bound + margin and random_play < best
