"""Every legal answer's log-probabilities after its prompt, by the three routes.

The packed route (the answers after the prompt in one row, each blind to the others), the cache
route and one full forward per answer must give the same values and the same gradients, on
left-padded prompts and answers of different lengths and counts; the loss's scorer falls back
from one route to the next when the model cannot take it.
"""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from mage_agents.tiny_model import build_tiny_model  # noqa: E402
from mage_agents.training import answer_logps as routes  # noqa: E402
from mage_agents.training.legal_logps import full_answer_logps  # noqa: E402

TEMPERATURE = 0.8


def batch(prompts=3, length=30, moves=5, width=6, seed=0):
    """Left-padded prompts; answers right-padded, some rows with fewer or shorter answers."""
    g = torch.Generator().manual_seed(seed)
    prompt_ids = torch.randint(5, 600, (prompts, length), generator=g)
    prompt_mask = torch.ones(prompts, length, dtype=torch.long)
    for d in range(prompts):
        prompt_mask[d, : 4 * d] = 0
    answer_ids = torch.randint(5, 600, (prompts, moves, width), generator=g)
    answer_mask = torch.ones(prompts, moves, width, dtype=torch.long)
    answer_mask[0, :, width - 2 :] = 0  # shorter answers
    answer_mask[1, moves - 2 :] = 0  # fewer moves
    answer_mask[2, 1, 1:] = 0  # a one-token answer
    return prompt_ids, prompt_mask, answer_ids, answer_mask


def full_score(model):
    """TRL's contract: ``log p`` of the last ``width`` tokens of each row, one forward each."""

    def score(ids, mask, width):
        logits = model(input_ids=ids, attention_mask=mask).logits[:, -width - 1 : -1]
        logps = torch.log_softmax(logits.float() / TEMPERATURE, dim=-1)
        return logps.gather(2, ids[:, -width:, None])[:, :, 0]

    return score


def values_and_grads(model, route, inputs):
    model.zero_grad()
    logps = route(model, *inputs)
    assert logps is not None
    (logps * inputs[3]).sum().backward()
    return logps.detach(), [p.grad.clone() for p in model.parameters()]


def close(got, want, mask):
    values, grads = got
    assert float((values - want[0])[mask.bool()].abs().max()) < 1e-4
    for g, w in zip(grads, want[1], strict=True):
        assert float((g - w).norm()) <= 1e-4 * float(w.norm()) + 1e-7


@pytest.mark.parametrize("attention", ["sdpa", "eager"])
def test_packed_cached_and_full_forwards_give_the_same_values_and_gradients(attention):
    model, _ = build_tiny_model(seed=1, init_std=0.125)
    model.config._attn_implementation = attention
    model.train()
    inputs = batch()

    def full(m, *args):
        return full_answer_logps(full_score(m), *args[:4])

    want = values_and_grads(model, full, inputs)
    assert all(float(g.norm()) > 0 for g in want[1][:4])
    for route in (routes.packed_answer_logps, routes.cached_answer_logps):
        close(
            values_and_grads(model, lambda m, *a, route=route: route(m, *a, TEMPERATURE), inputs),
            want,
            inputs[3],
        )


def test_the_packed_route_leaves_answers_blind_to_each_other():
    model, _ = build_tiny_model(seed=1, init_std=0.125)
    inputs = batch()
    with torch.no_grad():
        before = routes.packed_answer_logps(model, *inputs, TEMPERATURE)
        changed = list(inputs)
        changed[2] = inputs[2].clone()
        changed[2][:, 0] = 7  # rewrite the first answer of every prompt
        after = routes.packed_answer_logps(model, *changed, TEMPERATURE)
    mask = inputs[3].bool()
    assert torch.equal(before[:, 1:][mask[:, 1:]], after[:, 1:][mask[:, 1:]])
    assert not torch.equal(before[:, 0][mask[:, 0]], after[:, 0][mask[:, 0]])


def test_the_scorer_falls_back_when_the_model_takes_neither_route(monkeypatch):
    model, _ = build_tiny_model(seed=1, init_std=0.125)
    model.train()
    inputs = batch()
    want = full_answer_logps(full_score(model), *inputs).detach()
    scorer = routes.answer_scorer(model, full_score(model), TEMPERATURE, batch_size=2)
    mask = inputs[3].bool()
    assert float((scorer(*inputs).detach() - want)[mask].abs().max()) < 1e-4  # packed, chunked

    monkeypatch.setattr(routes, "PACKED_ATTENTION", ())  # e.g. flash attention
    assert routes.packed_answer_logps(model, *inputs, TEMPERATURE) is None
    assert float((scorer(*inputs).detach() - want)[mask].abs().max()) < 1e-4  # the cache route

    model.gradient_checkpointing_enable()  # no cache in training mode
    assert routes.cached_answer_logps(model, *inputs, TEMPERATURE) is None
    used = []
    score = full_score(model)
    fallback = routes.answer_scorer(model, lambda *a: used.append(1) or score(*a), TEMPERATURE)
    assert float((fallback(*inputs).detach() - want)[mask].abs().max()) < 1e-4
    assert used  # the full forwards ran


def test_the_routes_benchmark_times_three_routes_that_agree():
    from benchmarks.answer_routes import time_routes

    figures = time_routes((3, 20, 4, 5))
    assert {"packed", "cache", "one forward per answer"} <= set(figures)
    assert all(figures[k] > 0 for k in ("packed", "cache", "one forward per answer"))
    assert figures["largest difference"] < 1e-4
