"""A model's Kuhn policy read from its action probabilities, and its exact value."""

import pytest

torch = pytest.importorskip("torch")

from mage_agents.tiny_model import build_tiny_model  # noqa: E402
from mage_agents.training.kuhn_policy import (  # noqa: E402
    decision_prompts,
    evaluation_opponents,
    kuhn_exact_evaluation,
    kuhn_policy_table,
)


@pytest.fixture(scope="module")
def tiny():
    torch.set_num_threads(1)
    return build_tiny_model(seed=0)


class Prefers(torch.nn.Module):
    """A stand-in model whose next-token logits favour the tokens of some words."""

    def __init__(self, tokenizer, words):
        super().__init__()
        self.vocab = len(tokenizer)
        self.liked = sorted(
            {t for w in words for t in tokenizer(w, add_special_tokens=False)["input_ids"]}
        )
        self.weight = torch.nn.Parameter(torch.zeros(1))

    def forward(self, input_ids):
        logits = torch.zeros(*input_ids.shape, self.vocab)
        logits[..., self.liked] = 10.0
        return type("Out", (), {"logits": logits})()


def test_every_information_state_has_its_first_episode_prompt():
    for seat in (0, 1):
        prompts = decision_prompts("random", seat, num_episodes=3)
        assert len(prompts) == 6
        for p in prompts:
            text = p.chat[-1]["content"]
            assert text.startswith("Attempt 1 of 3.")
            assert f"Legal moves: {', '.join(p.moves)}." in text
            assert "JQK"[int(p.information_state[0])] in text.split("Your card: ")[1][:1]
    # against always-pass, the first player never faces a bet
    assert [p.information_state for p in decision_prompts("always-pass", 0)] == ["0", "1", "2"]


def test_the_table_follows_the_model_and_its_exact_value_is_known(tiny):
    _, tokenizer = tiny
    model = Prefers(tokenizer, ["<action>bet</action>", "<action>call</action>"])
    prompts = decision_prompts("aggressive", 0, num_episodes=1)
    table, mass = kuhn_policy_table(model, tokenizer, prompts)
    assert all(probs[1] > 0.99 for probs in table.values())  # bet, and call facing a bet
    assert 0.0 < mass <= 1.0
    metrics = kuhn_exact_evaluation(model, tokenizer, ["aggressive", "always-pass"], [0])
    assert metrics["exact/aggressive/first/value"] == pytest.approx(-1 / 3)
    assert metrics["exact/always-pass/first/value"] == pytest.approx(1.0)
    assert metrics["exact/always-pass/first/share_of_best"] == pytest.approx(1.0)
    assert metrics["exact/mean_value"] == pytest.approx((1 - 1 / 3) / 2)
    assert metrics["exact/aggressive/first/policy_value"] == pytest.approx(-1 / 3, abs=1e-3)


def test_a_real_model_gives_a_distribution_at_every_state(tiny):
    model, tokenizer = tiny
    table, mass = kuhn_policy_table(model, tokenizer, decision_prompts("random", 1))
    assert len(table) == 6 and mass < 1.0
    for probs in table.values():
        assert sorted(probs) == [0, 1] and sum(probs.values()) == pytest.approx(1.0)
    assert model.training is False  # left as it was found


def test_the_opponents_come_from_the_training_population():
    assert evaluation_opponents("mage-kuhn-train") == ["conservative", "aggressive", "balanced"]
    assert evaluation_opponents(None) == ["conservative", "aggressive", "balanced"]
    assert evaluation_opponents("aggressive") == ["aggressive"]


class Reads(torch.nn.Module):
    """A stand-in model that records what it reads and has no preference."""

    def __init__(self, tokenizer):
        super().__init__()
        self.vocab, self.read = len(tokenizer), []
        self.weight = torch.nn.Parameter(torch.zeros(1))

    def forward(self, input_ids):
        self.read.append(input_ids[0].tolist())
        return type("Out", (), {"logits": torch.zeros(*input_ids.shape, self.vocab)})()


def test_the_table_reads_the_prompt_rendered_with_the_chat_template_kwargs():
    _, tokenizer = build_tiny_model(seed=0)
    tokenizer.chat_template += (
        "{% if enable_thinking is defined and not enable_thinking %}<think></think>{% endif %}"
    )
    model = Reads(tokenizer)
    prompts = decision_prompts("aggressive", 0, num_episodes=1)[:1]
    kuhn_policy_table(model, tokenizer, prompts, chat_template_kwargs={"enable_thinking": False})
    answer = tokenizer("<action>check</action>", add_special_tokens=False)["input_ids"]
    assert tokenizer.decode(model.read[0][: -len(answer)]).endswith("<|assistant|><think></think>")


def test_the_table_is_the_policy_at_the_sampling_temperature(tiny):
    _, tokenizer = tiny
    model = Prefers(tokenizer, ["<action>bet</action>"])
    (prompt,) = decision_prompts("aggressive", 0, num_episodes=1)[:1]
    temperature, vocab, liked = 4.0, len(tokenizer), len(model.liked)
    # per token, log softmax(logits / T) with the liked tokens at 10 / T, the others at 0
    best = -torch.log(torch.tensor(liked + (vocab - liked) * torch.exp(torch.tensor(-10 / 4))))
    logps = []
    for move in prompt.moves:
        ids = tokenizer(f"<action>{move}</action>", add_special_tokens=False)["input_ids"]
        logps.append(sum(best if t in model.liked else best - 10 / 4 for t in ids))
    expected = torch.softmax(torch.stack(logps), dim=0).tolist()
    table, _ = kuhn_policy_table(model, tokenizer, [prompt], temperature=temperature)
    probs = table[prompt.information_state]
    assert [probs[a] for a in prompt.action_ids] == pytest.approx(expected, rel=1e-4)
    assert 0.01 < min(expected)  # far from the argmax table of temperature 1


@pytest.mark.parametrize("route", ["packed", "cached"])
def test_the_tiny_model_table_equals_one_forward_per_answer(route, monkeypatch):
    from mage_agents.training import answer_logps

    model, tokenizer = build_tiny_model(seed=3, init_std=0.125)
    prompts = decision_prompts("random", 1)

    # answers of different token lengths, so the padding of the packed answers is exercised
    def template(move):
        return move if move in ("bet", "call") else f"<action>{move.upper()}</action>"

    if route == "cached":
        monkeypatch.setattr(answer_logps, "packed_answer_logps", lambda *a: None)
    table, mass = kuhn_policy_table(model, tokenizer, prompts, template, temperature=0.7)
    monkeypatch.setattr(answer_logps, "answer_logps", lambda *a: None)
    want, want_mass = kuhn_policy_table(model, tokenizer, prompts, template, temperature=0.7)
    assert mass == pytest.approx(want_mass, rel=1e-4) and 0.0 < mass < 1.0
    for state, probs in want.items():
        assert table[state] == pytest.approx(probs, abs=1e-5)
    assert max(abs(p - 0.5) for probs in want.values() for p in probs.values()) > 0.01
