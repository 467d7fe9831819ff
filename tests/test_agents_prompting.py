"""Prompting strategies, answer reading and the batched form of the agent protocol."""

import pytest

from mage_agents.base import CallableAgent, Reply, act_batch, as_agent
from mage_agents.prompting import LLMAgent, ReAct, Reflexion, ZeroShot, read_answer

KUHN = {"legal_actions": ["check", "bet"], "phase": "play"}
REFLECT = {"phase": "reflect", "legal_actions": []}


class EchoBackend:
    """Answers every chat with fixed texts, counting calls and prompts."""

    name = "echo"

    def __init__(self, answers):
        self.answers = list(answers)
        self.calls = []

    def generate(self, chats):
        self.calls.append(list(chats))
        return [Reply(self.answers.pop(0), prompt_tokens=3, completion_tokens=2) for _ in chats]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<action>BET</action>", "bet"),
        ("<think>check or bet? bet</think><action>check</action>", "check"),
        ("I will <action>bet", "bet"),  # a stop string cut the closing tag
        ("<action>raise</action>", "raise"),  # passed on: the env reports it invalid
        ("Bet.", "bet"),
    ],
)
def test_read_answer_uses_the_envs_parser(text, expected):
    assert read_answer(text, KUHN) == expected


def test_read_answer_in_the_reflect_phase_returns_the_reflection():
    text = "<think>private</think><reflection>Bet with a King.</reflection>"
    assert read_answer(text, REFLECT) == "Bet with a King."
    assert read_answer("Just fold less.", REFLECT) == "Just fold less."


def test_zero_shot_and_react_prompts():
    chat = ZeroShot().chat("Your card: K.", KUHN, [])
    assert [m["role"] for m in chat] == ["system", "user"]
    assert "Legal moves: check, bet." in chat[1]["content"]
    assert "<action>" in chat[1]["content"]
    assert "<think>" in ReAct().chat("Your card: K.", KUHN, [])[1]["content"]
    reflect = ZeroShot().chat("Reflect on it.", REFLECT, [])[1]["content"]
    assert "<reflection>" in reflect and "Legal moves" not in reflect


def test_reflexion_keeps_the_last_three_reflections_in_its_memory_format():
    agent = LLMAgent(
        EchoBackend([f"<reflection>plan {i}</reflection>" for i in range(5)]), "reflexion"
    )
    for _ in range(5):
        agent.act("Reflect.", REFLECT)
    user = agent.prompt("Your card: Q.", KUHN)[1]["content"]
    assert user.startswith("Your memory for the task below:\nTrial 3: plan 2\nTrial 4: plan 3\n")
    assert "Trial 5: plan 4" in user and "plan 1" not in user
    agent.reset()
    assert "memory" not in agent.prompt("Your card: Q.", KUHN)[1]["content"]


def test_reflexion_does_not_repeat_memory_the_observation_already_shows():
    strategy = Reflexion()
    observation = "Your memory: On attempt 1 ... Your reflection: plan 0\nYour card: Q."
    assert strategy.memory_block(["plan 0"], observation) == ""
    assert strategy.memory_block(["plan 0"], "Your card: Q.").startswith("Your memory")


def test_act_batch_makes_one_backend_call_per_backend():
    shared = EchoBackend(["<action>bet</action>", "<action>check</action>"])
    agents = [LLMAgent(shared), LLMAgent(shared), CallableAgent(lambda obs: "check")]
    replies = act_batch(agents, ["o1", "o2", "o3"], [KUHN, KUHN, KUHN])
    assert [r.text for r in replies] == ["bet", "check", "check"]
    assert len(shared.calls) == 1 and len(shared.calls[0]) == 2
    assert (replies[0].prompt_tokens, replies[0].completion_tokens) == (3, 2)


def test_a_crashing_agent_fails_its_step_only():
    def broken(observation, info):
        raise KeyError("boom")

    replies = act_batch(
        [as_agent(broken), CallableAgent(lambda o, i: "bet")], ["a", "b"], [KUHN] * 2
    )
    assert replies[0].text == "" and "KeyError" in replies[0].error
    assert replies[1].text == "bet"


def test_bad_agents_and_strategies_are_rejected():
    with pytest.raises(TypeError, match="agent"):
        as_agent(42)
    with pytest.raises(ValueError, match="strategy"):
        LLMAgent(EchoBackend([]), "chain-of-thought")


def test_strict_parsing_is_refused_where_the_strategy_does_not_read_the_answer():
    # the paper strategy hands the reply to the env's published rules untouched: a strict mode
    # there would change nothing, and a run named ".../paper/strict" would say it did
    with pytest.raises(ValueError, match="paper.*parse=strict"):
        LLMAgent(EchoBackend([]), "paper", parse="strict")
    assert LLMAgent(EchoBackend([]), "zero-shot", parse="strict").name == "echo/zero-shot/strict"


def test_read_answer_matches_legal_actions_written_in_tags():
    tagged = {"legal_actions": ["<action>PASS</action>", "<action>BET</action>"], "phase": "play"}
    assert read_answer("I bet. <action>bet</action>", tagged) == "<action>BET</action>"


def test_the_paper_strategy_sends_the_page_alone_and_the_reply_untouched():
    import mage_envs

    reply = "<think>the page says PASS or BET</think> <action>PASS</action> or <action>BET</action>"
    agent = LLMAgent(EchoBackend([reply, "<remark>a</remark> <remark>b</remark>"]), "paper")
    env = mage_envs.make_trial(
        "mage/KuhnPoker-v0",
        templates="mage",
        answer_rules="mage",
        opponent="always-bet",
        seat="second",
    )
    obs, info = env.reset(seed=0)
    answer = agent.act(obs, info)
    assert agent.backend.calls[0] == [[{"role": "user", "content": obs}]]
    assert answer.text == reply  # the env's projection reads the first tag: PASS
    _, _, _, _, info = env.step(answer.text)
    assert not info["invalid_action"] and info["phase"] == "reflect"
    assert agent.act("page", info).text == "<remark>a</remark> <remark>b</remark>"
