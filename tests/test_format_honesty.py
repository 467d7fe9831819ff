"""Format honesty: moves read without the requested format are counted, strict mode rejects them,
and a game cut off by invalid answers scores as lost in every figure that shows a return."""

import csv

import gymnasium as gym
from hypothesis import given, settings
from hypothesis import strategies as st

from baselines import run
from baselines.agents import build_agent_factory
from baselines.evaluate.runner import evaluate, plan_trials
from baselines.report.summary import summarize
from baselines.report.tables import table_cells
from baselines.results import ResultsFile
from mage_agents.fake_endpoint import FakeChatServer, first_legal_move
from mage_agents.prompting import LLMAgent, read_move
from mage_agents.rollout import collect, plan_groups
from mage_agents.training.metrics import step_metrics, trial_record
from mage_envs.meta import TrialConfig

KUHN = {"legal_actions": ["check", "bet"]}
TICTACTOE = {"legal_actions": ["(1, 1)", "(2, 3)"]}


def test_a_move_is_on_format_only_alone_in_its_tag():
    on = ["<action>bet</action>", "<action> Bet. </action>", "<action>bet", "<answer>BET</answer>"]
    assert [read_move(t, KUHN) for t in on] == [("bet", False)] * 4
    assert read_move("<action>2,3</action>", TICTACTOE) == ("(2, 3)", False)  # a pair, any spelling
    off = ["I bet.", "bet", "<action>I will bet</action>", "<think>x</think> so: bet"]
    assert [read_move(t, KUHN) for t in off] == [("bet", True)] * 4
    assert read_move("<action>row 2 col 3</action>", TICTACTOE) == ("(2, 3)", True)


def test_strict_parsing_sends_off_format_answers_as_invalid_and_keeps_the_rest():
    assert read_move("I bet.", KUHN, strict=True) == ("", True)
    assert read_move("<action>I will bet</action>", KUHN, strict=True) == ("", True)
    assert read_move("<action>bet</action>", KUHN, strict=True) == ("bet", False)
    # a tagged answer naming no legal move is the env's to judge (an alias, several moves)
    assert read_move("<action>pass</action>", KUHN, strict=True) == ("pass", False)
    assert read_move("<action>up, left</action>", {"legal_actions": ["up", "left"]}) == (
        "up, left",
        False,
    )


def test_a_move_read_through_an_alias_is_on_format_only_alone_in_its_tag():
    # Kuhn poker accepts "pass" for check: the env says so in info, and the reading uses it
    env = gym.make("mage/KuhnPoker-v0")
    _, info = env.reset(seed=0)
    assert info["legal_actions"] == ["check", "bet"] and info["action_aliases"]["pass"] == "check"
    assert read_move("<action>pass</action>", info) == ("check", False)
    assert read_move("<action>I will pass</action>", info) == ("check", True)
    answer, off_format = read_move("<action>I will pass</action>", info, strict=True)
    assert (answer, off_format) == ("", True)
    assert env.step(answer)[4]["invalid_action"]  # strict: the sentence is not played


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300), st.booleans())
def test_reading_any_text_never_raises_and_strict_sends_only_what_is_on_format(text, strict):
    answer, off_format = read_move(text, KUHN, strict)
    assert isinstance(answer, str) and isinstance(off_format, bool)
    if strict and off_format:
        assert answer == ""
    if answer in KUHN["legal_actions"] and not off_format:
        assert "<" in text  # an on-format move came from a tag


def _kuhn_run(tmp_path, answer, parse="lenient"):
    with FakeChatServer(answer=answer) as server:
        config = {"kind": "openai", "model": "m", "base_url": server.base_url, "parse": parse}
        factory = build_agent_factory(config)
        specs = plan_trials(
            factory.name, ["mage/KuhnPoker-v0"], tasks=4, trial=TrialConfig(num_episodes=2)
        )
        results = ResultsFile(tmp_path / "results.jsonl")
        records = evaluate(factory, specs, results, batch_size=4)
    return factory, records, summarize(records)[0]


def test_untagged_moves_are_counted_off_format_and_strict_mode_forfeits_them(tmp_path):
    def untagged(messages):  # the first legal move, in a sentence
        return first_legal_move(messages).replace("<action>", "I will ").replace("</action>", ".")

    factory, records, lenient = _kuhn_run(tmp_path / "lenient", untagged)
    assert factory.name == "openai:m/zero-shot"
    assert lenient.invalid_rate.value == 0.0 and lenient.off_format_rate.value == 1.0
    assert lenient.forfeit_rate.value == 0.0
    factory, records, strict = _kuhn_run(tmp_path / "strict", untagged, parse="strict")
    assert factory.name == "openai:m/zero-shot/strict"
    assert strict.invalid_rate.value == 1.0 and strict.off_format_rate.value == 0.0
    # every game is cut off by invalid answers: a forfeit, lost, at the worst payoff (-2)
    assert strict.forfeit_rate.value == 1.0 and strict.forfeit_rate.n == 8
    assert strict.loss.value == 1.0 and strict.final_return.value == -2.0
    assert all(r["trial"]["returns"] == [-2.0, -2.0] for r in records)


def test_every_table_and_the_trainer_metrics_show_the_same_forfeit_return(tmp_path, capsys):
    with FakeChatServer(answer=lambda messages: "no idea") as server:
        argv = ["--agent", "openai:m", "--base-url", server.base_url, "--env"]
        argv += ["mage/KuhnPoker-v0", "--tasks", "3", "--episodes", "1", "--out", str(tmp_path)]
        argv += ["--env-kwargs", '{"reward_scale": 5}', "--no-plots"]
        assert run.main(argv) == 0
    out = capsys.readouterr().out
    assert "-10.000" in out and "forfeit" in out and "off-format" in out
    (row,) = csv.DictReader(open(tmp_path / "summary.csv"))
    assert float(row["final_return"]) == -10.0 and float(row["forfeit_rate"]) == 1.0
    assert float(row["loss"]) == 1.0 and float(row["off_format_rate"]) == 0.0
    markdown = (tmp_path / "summary.md").read_text()
    assert "| -10.000" in markdown and "100.0% [43.9, 100.0]" in markdown
    # the trainer's figures come from the same trial results
    plans = plan_groups("mage/KuhnPoker-v0", [0], group_size=2, trial={"num_episodes": 1})
    junk = lambda: LLMAgent(_Junk(), "zero-shot")  # noqa: E731
    trajectories = collect(plans, junk, batch_size=2)
    metrics = step_metrics([trial_record(t, [0.0] * len(t.turns)) for t in trajectories])
    assert metrics["trial/final_return"] == -2.0


class _Junk:
    name = "junk"

    def generate(self, chats):
        from mage_agents.base import Reply

        return [Reply("no idea") for _ in chats]


def test_records_of_a_version_that_did_not_measure_format_show_no_off_format_figure(tmp_path):
    # A run folder written before format honesty: its records have no off_format_steps, and
    # their earlier games' forfeits were never recorded (only final_forfeit). Reports must not
    # print a measured 0% for what was never measured.
    with FakeChatServer() as server:
        factory = build_agent_factory({"kind": "openai", "model": "m", "base_url": server.base_url})
        specs = plan_trials(
            factory.name, ["mage/KuhnPoker-v0"], tasks=3, trial=TrialConfig(num_episodes=2)
        )
        records = evaluate(factory, specs, ResultsFile(tmp_path / "results.jsonl"), batch_size=3)
    old = []
    for record in records:
        record = {k: v for k, v in record.items() if k != "off_format_steps"}
        trial = {k: v for k, v in record["trial"].items() if k != "forfeits"}
        old.append({**record, "trial": trial})
    (summary,) = summarize(old)
    assert summary.off_format_rate.n == 0 and summary.forfeit_rate.n == 3  # final games only
    columns, rows = table_cells([summary])
    assert rows[0][columns.index("off-format")] == "-"
    (mixed,) = summarize(old[:1] + records[1:])
    assert mixed.off_format_rate.n == sum(r["play_steps"] for r in records[1:])
    assert mixed.forfeit_rate.n == 1 + 2 * 2
