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
