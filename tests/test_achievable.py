"""'% of achievable' is solved / winnable over the tasks played, with each task decided exactly."""

from baselines.evaluate.runner import evaluate, plan_trials
from baselines.report.achievable import achievable_interval
from baselines.report.summary import summarize
from baselines.report.tables import markdown_report
from baselines.results import ResultsFile
from mage_envs.meta import TrialConfig


def run(agent, opponent="random", tasks=40, episodes=3, env="mage/KuhnPoker-v0", **trial):
    specs = plan_trials(
        "a", [env], [opponent], tasks=tasks, trial=TrialConfig(num_episodes=episodes, **trial)
    )
    return evaluate(agent, specs, ResultsFile(None))


def test_a_task_is_winnable_exactly_when_always_betting_wins_it():
    # In Kuhn poker always betting and calling wins every deal any line wins (docs/opponents.md);
    # the replayed seed replays the opponent's random draws too, so this holds task by task.
    for opponent in ("random", "cfr", "cfr-argmax", "balanced"):
        records = run("policy:always-bet", opponent)
        assert [r["winnable"] for r in records] == [r["trial"]["pass_at_k"][-1] for r in records]
        (s,) = summarize(records, achievable=achievable_interval)
        assert s.achievable.value == 1.0 and s.achievable.n == sum(r["winnable"] for r in records)


def test_random_play_never_solves_an_unwinnable_task_and_stays_within_100_percent():
    records = run("random", "random", tasks=60)
    assert not any(r["trial"]["pass_at_k"][-1] and not r["winnable"] for r in records)
    (s,) = summarize(records, achievable=achievable_interval)
    assert 0.0 <= s.achievable.low <= s.achievable.value <= s.achievable.high <= 1.0
    winnable = [r for r in records if r["winnable"]]
    solved = sum(r["trial"]["pass_at_k"][-1] for r in winnable)
    assert (s.achievable.value, s.achievable.n) == (solved / len(winnable), len(winnable))
    text = markdown_report([s], records, "t")
    assert f"| {len(winnable)}/60 |" in text


def test_no_figure_where_a_task_cannot_be_decided():
    fresh = run("random", tasks=4, same_task=False)  # three attempts, three different deals
    assert all(r["winnable"] is None for r in fresh)
    (s,) = summarize(fresh, achievable=achievable_interval)
    assert s.achievable is None
    one = run("random", tasks=4, episodes=1, same_task=False)
    assert all(isinstance(r["winnable"], bool) for r in one)
    ttt = run("random", "order-center", tasks=2, env="mage/TicTacToe-v0")
    assert all(r["winnable"] is None for r in ttt)
    old = [{k: v for k, v in r.items() if k != "winnable"} for r in one]  # written before the field
    (s,) = summarize(old, achievable=achievable_interval)
    assert s.achievable is None
