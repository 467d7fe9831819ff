"""Sampling settings of both backends (top_k, thinking) and the paper configs' budgets."""

import pytest
import torch

from baselines import run
from mage_agents.fake_endpoint import FakeChatServer
from mage_agents.local_model import LocalModelBackend, render_chat
from mage_agents.openai_client import OpenAIChatBackend
from mage_agents.tiny_model import build_tiny_model

torch.set_num_threads(1)
CHAT = [{"role": "user", "content": "Legal moves: check, bet."}]


def test_local_top_k_one_samples_the_greedy_text():
    model, tokenizer = build_tiny_model(seed=0)
    greedy = LocalModelBackend(model, tokenizer, temperature=0, max_new_tokens=8, stop_strings=())
    top1 = LocalModelBackend(
        model, tokenizer, temperature=1.5, top_k=1, max_new_tokens=8, stop_strings=(), seed=3
    )
    wide = LocalModelBackend(
        model, tokenizer, temperature=1.5, max_new_tokens=8, stop_strings=(), seed=3
    )
    chats = [CHAT, [{"role": "user", "content": "Your card: K."}]]
    expected = [r.text for r in greedy.generate(chats)]
    assert [r.text for r in top1.generate(chats)] == expected
    assert [r.text for r in wide.generate(chats)] != expected


def test_local_thinking_switch():
    class Qwen3Like:
        chat_template = "{% if enable_thinking is defined %}...{% endif %}"

        def apply_chat_template(self, chat, **kwargs):
            self.kwargs = kwargs
            return "prompt"

    tokenizer = Qwen3Like()
    render_chat(tokenizer, CHAT, thinking=False)
    assert tokenizer.kwargs["enable_thinking"] is False
    render_chat(tokenizer, CHAT)
    assert "enable_thinking" not in tokenizer.kwargs
    model, tiny_tokenizer = build_tiny_model(seed=0)
    # no switch in the template: it runs without thinking, as a server rendering it would, and
    # says so once, with the flag that asks for that
    backend = LocalModelBackend(model, tiny_tokenizer, thinking=True)
    assert backend.thinking is None
    (note,) = backend.notes
    assert "no enable_thinking switch" in note and "--agent-option thinking=null" in note
    assert LocalModelBackend(model, tiny_tokenizer, thinking=False).notes == []
    with pytest.raises(ValueError, match="top_k"):
        LocalModelBackend(model, tiny_tokenizer, top_k=0)


def test_endpoint_sends_top_k_and_the_thinking_switch():
    with FakeChatServer() as server:
        OpenAIChatBackend(server.base_url, "m", top_k=20, thinking=False).generate([CHAT])
        OpenAIChatBackend(server.base_url, "m").generate([CHAT])
    sent, plain = server.bodies
    assert sent["top_k"] == 20
    assert sent["chat_template_kwargs"] == {"enable_thinking": False}
    assert "top_k" not in plain and "chat_template_kwargs" not in plain


@pytest.mark.parametrize(
    ("config", "budget", "thinking"),
    [
        ("lamer_sokoban", 1024, False),
        ("lamer_minesweeper", 1024, False),
        ("mage_kuhn", 8192, True),
        ("mage_tictactoe", 3072, True),
    ],
)
def test_paper_configs_carry_the_published_sampling(config, budget, thinking):
    settings = run.load_settings(
        ["--config", config, "--agent", "openai:m", "--agent", "random"]
        + ["--base-url", "http://127.0.0.1:1/v1", "--agent-option", "temperature=0.1"]
    )
    model, scripted = settings.agents
    assert settings.tasks == 128
    assert scripted == "random"
    assert model["temperature"] == 0.1  # the command line wins
    assert (model["top_p"], model["top_k"], model["max_tokens"]) == (0.8, 20, budget)
    assert model["thinking"] is thinking
    assert settings.trial.templates == ("lamer" if config.startswith("lamer") else "mage")


def test_an_agent_dicts_own_options_win_over_the_configs(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(
        "agents: [{kind: openai, model: m, base_url: 'http://127.0.0.1:1/v1', top_k: 5}]\n"
        "model_options: {top_k: 20, max_tokens: 64}\n"
    )
    (agent,) = run.load_settings(["--config", str(path)]).agents
    assert (agent["top_k"], agent["max_tokens"]) == (5, 64)


def test_local_agents_read_max_tokens_as_their_budget():
    from baselines.agents import build_agent_factory

    agent = build_agent_factory({"kind": "tiny", "max_tokens": 4}).new_agent()
    assert agent.backend.max_new_tokens == 4
    with pytest.raises(ValueError, match="not both"):
        build_agent_factory({"kind": "tiny", "max_tokens": 4, "max_new_tokens": 5})
