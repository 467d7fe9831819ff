"""Forwards bounded by tokens: every row once, within the budget, and the same update.

The same step's micro-batch, on the tiny model, gives the same loss and the same gradient (to
float32 noise) in one forward (TRL's) and in many small ones (``max_tokens_per_forward``), for the
loss types that normalise differently, with legal-move choice (its renormalising forward) and
with TRL's entropy bonus; the old log-probabilities scored in bounded forwards are the same too.
"""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from mage_agents.tiny_model import build_tiny_model  # noqa: E402
from mage_agents.training import MetaRLConfig, MetaRLTrainer  # noqa: E402
from mage_agents.training.batch import TurnRow, turn_batch  # noqa: E402
from mage_agents.training.forwards import (  # noqa: E402
    RowSizes,
    forward_tokens,
    plan_forwards,
    row_sizes,
    rows_of,
)
from tests.tiny_training import LEGAL_CHOICE, tiny_config  # noqa: E402


@st.composite
def row_tables(draw):
    rows = draw(st.integers(1, 40))
    prompt = draw(st.lists(st.integers(1, 50), min_size=rows, max_size=rows))
    completion = draw(st.lists(st.integers(0, 9), min_size=rows, max_size=rows))
    moves = draw(st.lists(st.sampled_from([0, 0, 2, 3]), min_size=rows, max_size=rows))
    answer = [draw(st.integers(1, 4)) if m else 0 for m in moves]
    sizes = RowSizes(
        prompt, completion, moves, answer, [m * a for m, a in zip(moves, answer, strict=True)]
    )
    return sizes, draw(st.integers(1, 400))


@settings(max_examples=300, deadline=None)
@given(row_tables())
def test_every_row_is_in_one_forward_within_the_budget(case):
    # rows without loss tokens too: several processes hold as many rows a forward (TRL gathers
    # a value per row), padding rows included
    sizes, budget = case
    forwards = plan_forwards(sizes, budget)
    placed = sorted(r for forward in forwards for r in forward)
    assert placed == list(range(len(sizes.completion)))
    for forward in forwards:
        assert forward_tokens(sizes, forward) <= budget or len(forward) == 1


def test_a_budget_below_one_token_is_refused(tmp_path):
    with pytest.raises(ValueError, match="counts tokens"):
        plan_forwards(RowSizes([1], [1], [0], [0], [0]), 0)
    with pytest.raises(ValueError, match="max_tokens_per_forward counts tokens"):
        MetaRLConfig(output_dir=str(tmp_path), use_cpu=True, max_tokens_per_forward=0)
    with pytest.raises(ValueError, match="top_entropy_quantile"):
        MetaRLConfig(
            output_dir=str(tmp_path),
            use_cpu=True,
            max_tokens_per_forward=512,
            top_entropy_quantile=0.2,
        )


def test_a_sub_batch_keeps_its_rows_and_cuts_only_unused_padding():
    rows = [TurnRow([4, 5, 6, 7], [8], 0.5), TurnRow([4], [8, 9, 10], -1.0), TurnRow([6], [9], 2)]
    batch = turn_batch(rows, 0, 4)
    part = rows_of(batch, [1, 2])
    assert part["prompt_ids"].tolist() == [[4], [6]]
    assert part["completion_ids"].tolist() == [[8, 9, 10], [9, 0, 0]]
    assert part["advantages"].tolist() == [-1.0, 2.0]
    assert int(part["num_items_in_batch"]) == int(batch["num_items_in_batch"]) == 5
    assert row_sizes(part).prompt == [1, 1]


def _trainer(tmp_path, **overrides):
    settings = dict(
        estimator="mage",
        opponent="mage-kuhn-train",
        trial={"num_episodes": 3, "reflection": True},  # free rows, prompts that grow
        **LEGAL_CHOICE,
        max_completion_length=6,
        num_tasks=8,
    )
    model, tokenizer = build_tiny_model(seed=3, init_std=0.125)
    config = tiny_config(tmp_path, **settings | overrides)
    trainer = MetaRLTrainer(model, config, processing_class=tokenizer)
    trainer.model.train()
    trainer.current_gradient_accumulation_steps = 1  # set by the training loop in a real step
    return trainer


def _gradient(trainer, batch, budget):
    trainer.args.max_tokens_per_forward = budget
    trainer.model.zero_grad()
    loss = trainer.compute_loss(trainer.model, batch)
    trainer.accelerator.backward(loss)
    grads = [p.grad.detach().clone() for p in trainer.model.parameters()]
    figures = {k: v[-1] for k, v in trainer._metrics["train"].items() if k.startswith("forward/")}
    return float(loss.detach()), grads, figures


CASES = {
    # legal-move choice: each forward also renormalises over its rows' legal answers
    "legal": ({}, ("dapo", "grpo")),
    # free text, TRL's entropy bonus (a token mean), old log-probs (scored in bounded forwards)
    "free": (
        {
            "action_choice": "generate",
            "exploration_floor": 0.0,
            "entropy_coef": 0.1,
            "num_iterations": 2,
        },
        ("dapo", "bnpo", "dr_grpo"),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_small_budget_gives_the_gradient_of_one_forward(tmp_path, case):
    torch.set_num_threads(1)
    torch.manual_seed(0)
    overrides, loss_types = CASES[case]
    trainer = _trainer(tmp_path, **overrides)
    seeds = [{"seed": s} for s in (0, 0, 0, 0, 1, 1, 1, 1)]
    batch = trainer._generate_and_score_completions(seeds)
    sizes = row_sizes(batch)
    longest = max(
        p + c for p, c, m in zip(sizes.prompt, sizes.completion, sizes.moves, strict=True) if not m
    )
    budget = 3 * longest  # several rows a forward, many forwards
    for loss_type in loss_types:  # each normalises the loss in its own way
        trainer.loss_type = loss_type
        loss, grads, one = _gradient(trainer, batch, None)
        bounded_loss, bounded_grads, many = _gradient(trainer, batch, budget)
        assert bounded_loss == pytest.approx(loss, rel=1e-5, abs=1e-7), loss_type
        assert any(float(g.norm()) > 1e-4 for g in grads)
        for got, want in zip(bounded_grads, grads, strict=True):
            assert float((got - want).norm()) <= 1e-5 * float(want.norm()) + 1e-8, loss_type

    assert one["forward/count"] == 1 and many["forward/count"] >= 3
    assert many["forward/padding_efficiency"] > one["forward/padding_efficiency"]
    assert many["forward/largest_tokens"] <= max(budget, max(sizes.prompt) * 4)
    if "old_per_token_logps" in batch:  # scored in bounded forwards: the same values
        trainer.args.max_tokens_per_forward = budget
        bounded_old = trainer._log_probs(trainer.model, batch, "train")
        mask = batch["completion_mask"].bool()
        assert torch.allclose(bounded_old[mask], batch["old_per_token_logps"][mask], atol=1e-5)


def test_a_step_with_a_budget_trains_and_logs_its_forwards(tmp_path):
    torch.set_num_threads(1)
    trainer = _trainer(tmp_path, max_tokens_per_forward=400)
    before = [p.detach().clone() for p in trainer.model.parameters()]
    trainer.train()
    log = trainer.state.log_history[0]
    assert 0 < log["forward/padding_efficiency"] <= 1 and log["forward/rows"] >= 1
    assert log["forward/count"] >= 2 and log["forward/largest_tokens"] > 0
    assert log["loss/policy"] == pytest.approx(log["loss"], abs=1e-6)
    changed = [
        not torch.equal(a, b) for a, b in zip(before, trainer.model.parameters(), strict=True)
    ]
    assert any(changed)
