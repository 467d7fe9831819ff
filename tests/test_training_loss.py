"""What TRL's loss reads and what is logged of it.

With legal-move choice the loss trains the renormalised policy that was sampled: its gradient on a
real Kuhn batch is compared with autograd of the exact objective, computed here independently
from plain forwards of every legal answer; the old and reference log-probabilities TRL reads are
checked against the same independent ``log q``. The logged loss parts add up to TRL's loss.
"""

import math
import re

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")
hypothesis = pytest.importorskip("hypothesis")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from mage_agents.tiny_model import build_tiny_model  # noqa: E402
from mage_agents.training import MetaRLTrainer  # noqa: E402
from mage_agents.training.legal_logps import answer_tensors, legal_token_logps  # noqa: E402
from tests.tiny_training import LEGAL_CHOICE, tiny_config  # noqa: E402

TEMPERATURE = 0.8


def legal_config(tmp_path, **overrides):
    settings = dict(
        estimator="grpo",
        opponent="aggressive",
        **LEGAL_CHOICE,
        per_device_train_batch_size=16,
        temperature=TEMPERATURE,
        num_tasks=16,
    )
    return tiny_config(tmp_path, **settings | overrides)


def kuhn_batch(tmp_path, model, tokenizer, **overrides):
    trainer = MetaRLTrainer(model, legal_config(tmp_path, **overrides), processing_class=tokenizer)
    played = []
    play = trainer.play
    trainer.play = lambda plans: played.extend(play(plans)) or played
    trainer.model.train()
    trainer.current_gradient_accumulation_steps = 1  # set by the training loop in a real step
    batch = trainer._generate_and_score_completions([{"seed": s} for s in (0, 0, 0, 0, 1, 1, 1, 1)])
    return trainer, batch, [turn for trajectory in played for turn in trajectory.turns]


def exact_log_q(model, tokenizer, turn):
    """log q(a) of a turn's answer, from a plain forward of the prompt and each legal answer."""
    moves = re.search(r"Legal moves: (.*)\.", turn.observation).group(1).split(", ")
    scores, chosen = [], None
    for move in moves:
        answer = tokenizer(f"<action>{move}</action>", add_special_tokens=False)["input_ids"]
        ids = torch.tensor([list(turn.prompt_ids) + answer])
        logits = model(input_ids=ids).logits[0, len(turn.prompt_ids) - 1 : -1] / TEMPERATURE
        token_logps = torch.log_softmax(logits.float(), dim=-1)
        scores.append(token_logps.gather(1, torch.tensor(answer)[:, None]).sum())
        if tuple(answer) == tuple(turn.completion_ids):
            chosen = len(scores) - 1
    scores = torch.stack(scores)
    return scores[chosen] - torch.logsumexp(scores, dim=0), scores[chosen]


def grads(model, loss):
    model.zero_grad()
    loss.backward()
    return [p.grad.detach().clone() for p in model.parameters()]


def test_the_loss_gradient_is_autograd_of_the_renormalised_policys_objective(tmp_path):
    torch.manual_seed(0)
    model, tokenizer = build_tiny_model(seed=2, init_std=0.125)
    trainer, batch, turns = kuhn_batch(tmp_path, model, tokenizer)
    advantages = batch["advantages"]
    assert len(turns) >= 8 and bool((advantages[: len(turns)] != 0).any())
    loss_grads = grads(model, trainer._compute_loss(trainer.model, batch))

    # dapo at ratio 1: the gradient of -sum_i A_i log q(a_i) / (loss tokens)
    rows = [(turn, float(a)) for turn, a in zip(turns, advantages.tolist(), strict=False)]
    items = float(batch["num_items_in_batch"])
    exact = sum(a * exact_log_q(model, tokenizer, turn)[0] for turn, a in rows) / items
    exact_grads = grads(model, -exact)
    for got, want in zip(loss_grads, exact_grads, strict=True):
        assert float((got - want).norm()) <= 1e-4 * float(want.norm()) + 1e-9  # float32 noise
    assert all(float(g.norm()) > 1e-3 for g in exact_grads[:8])

    # the objective of the whole-vocabulary log p(a), which the loss used to train, differs
    vocabulary = sum(a * exact_log_q(model, tokenizer, turn)[1] for turn, a in rows) / items
    wrong = grads(model, -vocabulary)
    assert float((loss_grads[-1] - wrong[-1]).norm()) > 0.1 * float(wrong[-1].norm())


def test_old_and_reference_log_probs_are_the_renormalised_policys(tmp_path):
    torch.manual_seed(0)
    model, tokenizer = build_tiny_model(seed=2, init_std=0.125)
    model.save_pretrained(tmp_path / "base")  # TRL loads the KL reference from a directory
    model.config._name_or_path = str(tmp_path / "base")
    trainer, batch, turns = kuhn_batch(tmp_path, model, tokenizer, num_iterations=2, beta=0.1)
    mask = batch["completion_mask"].bool()
    with torch.no_grad():
        for i, turn in enumerate(turns):
            log_q = float(exact_log_q(model, tokenizer, turn)[0])
            for name in ("old_per_token_logps", "ref_per_token_logps"):
                assert float(batch[name][i][mask[i]].sum()) == pytest.approx(log_q, abs=1e-4)
            # the sampler recorded the same policy (it is what vLLM's ratio would compare)
            sample = trainer.backend.sample_of(turn)
            assert sample.surprise == pytest.approx(-log_q, abs=1e-4)
    # at the weights it was sampled with, the policy's ratio is 1 and the KL to itself is 0
    trainer._compute_loss(trainer.model, batch)
    log = {k: v[-1] for k, v in trainer._metrics["train"].items()}
    assert log["kl"] == pytest.approx(0.0, abs=1e-5)
    assert log["clip_ratio/region_mean"] == 0.0


@st.composite
def legal_answers(draw):
    """A few distinct answers over a small alphabet (shared prefixes are likely)."""
    count = draw(st.integers(2, 5))
    words = draw(
        st.lists(
            st.lists(st.integers(1, 3), min_size=1, max_size=4).map(tuple),
            min_size=count,
            max_size=count,
            unique=True,
        )
    )
    logps = [draw(st.lists(st.floats(-6, -0.01), min_size=len(w), max_size=len(w))) for w in words]
    return words, logps, draw(st.integers(0, count - 1))


@settings(max_examples=200, deadline=None)
@given(legal_answers())
def test_token_values_are_the_tries_conditionals_and_sum_to_log_q(case):
    words, logps, choice = case
    ids, mask = answer_tensors([words], 0)
    token_logps = torch.zeros(ids.shape, dtype=torch.float64)
    for k, row in enumerate(logps):
        token_logps[0, k, : len(row)] = torch.tensor(row, dtype=torch.float64)
    out = legal_token_logps(token_logps, ids, mask, torch.tensor([choice]))[0]
    p = [math.exp(sum(row)) for row in logps]
    chosen = words[choice]
    assert float(out.sum()) == pytest.approx(math.log(p[choice] / sum(p)), abs=1e-9)
    assert float(out[len(chosen) :].abs().sum()) == 0.0
    for t in range(len(chosen)):
        # the mass of the answers through this token, over the mass through its prefix
        through = sum(pk for w, pk in zip(words, p, strict=True) if w[: t + 1] == chosen[: t + 1])
        before = sum(pk for w, pk in zip(words, p, strict=True) if w[:t] == chosen[:t])
        if t == len(chosen) - 1:
            through = p[choice]  # the answer ends here (another may continue past it)
        assert float(out[t]) == pytest.approx(math.log(through / before), abs=1e-9)


def last(trainer, name):
    return trainer._metrics["train"][name][-1]


@pytest.mark.parametrize("loss_type", ["dapo", "grpo", "bnpo"])
def test_with_no_advantage_the_loss_is_the_kl_penalty_and_the_policy_part_is_zero(
    tmp_path, loss_type
):
    torch.manual_seed(0)
    model, tokenizer = build_tiny_model(seed=2, init_std=0.125)
    model.save_pretrained(tmp_path / "base")  # TRL loads the KL reference from a directory
    model.config._name_or_path = str(tmp_path / "base")
    trainer, batch, _ = kuhn_batch(tmp_path, model, tokenizer, beta=0.5, loss_type=loss_type)
    with torch.no_grad():  # a reference that differs from the policy: a non-zero KL
        for p in trainer.ref_model.parameters():
            p.add_(0.05 * torch.randn_like(p))
    batch["ref_per_token_logps"] = trainer._reference_log_probs(batch, "train")
    loss = float(trainer._compute_loss(trainer.model, batch))
    policy, penalty = last(trainer, "loss/policy"), last(trainer, "loss/kl_penalty")
    assert policy + penalty == pytest.approx(loss, rel=1e-6) and penalty > 0
    batch["advantages"] = torch.zeros_like(batch["advantages"])
    loss = float(trainer._compute_loss(trainer.model, batch))
    assert last(trainer, "loss/policy") == pytest.approx(0.0, abs=1e-7)
    assert last(trainer, "loss/kl_penalty") == pytest.approx(loss, rel=1e-5) and loss > 0
    assert "loss/entropy_bonus" not in trainer._metrics["train"]  # TRL's bonus is off


def test_trls_entropy_bonus_is_its_own_column_and_the_parts_add_up(tmp_path):
    model, tokenizer = build_tiny_model(seed=2, init_std=0.125)
    free = {"action_choice": "generate", "exploration_floor": 0.0, "entropy_coef": 0.2}
    trainer, batch, _ = kuhn_batch(tmp_path, model, tokenizer, **free)
    assert trainer._entropy_bonus_enabled  # free text: TRL's bonus, with TRL's meaning
    loss = float(trainer._compute_loss(trainer.model, batch))
    bonus, policy = last(trainer, "loss/entropy_bonus"), last(trainer, "loss/policy")
    assert bonus == pytest.approx(0.2 * last(trainer, "entropy"), rel=1e-5)
    assert policy - bonus == pytest.approx(loss, rel=1e-6, abs=1e-7)


def test_a_real_step_logs_the_policy_part_in_the_units_of_trls_loss(tmp_path):
    torch.set_num_threads(1)
    model, tokenizer = build_tiny_model(seed=2, init_std=0.125)
    # two micro-batches a step: TRL divides each by the accumulation, the Trainer sums them
    config = legal_config(
        tmp_path, gradient_accumulation_steps=2, steps_per_generation=2, logging_steps=1
    )
    trainer = MetaRLTrainer(model, config, processing_class=tokenizer)
    trainer.train()
    log = trainer.state.log_history[0]
    assert log["loss/policy"] == pytest.approx(log["loss"], abs=1e-6)
    assert 0 < log["moves/entropy"] <= 0.7 and 0 < log["moves/legal_mass"] <= 1
