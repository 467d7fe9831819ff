"""The supervised memory probe's building blocks: its pages, targets, control and scoring."""

import pytest

pytest.importorskip("torch")
pytest.importorskip("trl")

from benchmarks.learning import VARIANTS  # noqa: E402
from benchmarks.learning_probe import (  # noqa: E402
    MEMORY_MARK,
    ProbePage,
    blind,
    chance,
    kuhn_pages,
    kuhn_targets,
    lost_cells,
    mine_pages,
    probe_accuracy,
    train_probe,
)


def test_kuhn_targets_are_the_best_moves_knowing_the_opponents_card():
    # conservative folds a Queen to a bet and calls with a King: a Jack bluffs only a Queen
    assert kuhn_targets("conservative", "JQ", ["check", "bet"]) == {"bet"}
    assert kuhn_targets("conservative", "JK", ["check", "bet"]) == {"check"}
    # aggressive bets after a check: a Queen calls a Jack, folds to a King
    assert kuhn_targets("aggressive", "QJ", ["fold", "call"]) == {"call"}
    assert kuhn_targets("aggressive", "QK", ["fold", "call"]) == {"fold"}


def test_kuhn_pages_are_later_decisions_whose_memory_shows_the_card():
    pages = kuhn_pages(VARIANTS["signature"]["mage"], 3, seed=0)
    assert {p.kind for p in pages} == {"information", "other"}
    for page in pages:
        text = page.chat[-1]["content"]
        memory, now = text.rsplit(MEMORY_MARK, 1)
        assert "Showdown" in memory and "Showdown" not in blind(page).chat[-1]["content"]
        assert blind(page).chat[-1]["content"] == now
        assert page.targets and max(page.targets) < len(page.moves)
    # the same page never carries two different answers
    keys = [(p.chat[-1]["content"], p.moves) for p in pages]
    assert len(keys) == len(set(keys))


def test_mine_pages_point_at_the_cell_an_earlier_attempt_lost_on():
    pages = mine_pages(VARIANTS["minesweeper"]["lamer"], range(40), seed=0)
    assert pages
    for page in pages:
        memory = page.chat[-1]["content"].rsplit(MEMORY_MARK, 1)[0]
        for index in page.targets:
            assert f"you answered {page.moves[index]} (reward -" in memory
    assert lost_cells("Step 2: you answered (2, 2) (reward +0.5).\nNow:\n") == []
    assert 0 < chance(pages)["mine"] < 0.5


def test_the_probe_trains_on_the_legal_answers_and_scores_per_kind():
    from mage_agents.tiny_model import build_tiny_model

    pages = kuhn_pages(VARIANTS["signature"]["mage"], 1, seed=0)[:6]
    model, tokenizer = build_tiny_model(seed=0, init_std=0.125)
    losses = train_probe(model, tokenizer, pages, steps=3, batch=4)
    assert len(losses) == 3 and all(loss > 0 for loss in losses)
    accuracy = probe_accuracy(model, tokenizer, pages)
    assert set(accuracy) <= {"information", "other"}
    assert all(0.0 <= v <= 1.0 for v in accuracy.values())
    # a page whose every move is right is always scored right
    sure = ProbePage(pages[0].chat, pages[0].moves, frozenset(range(len(pages[0].moves))), "x")
    assert probe_accuracy(model, tokenizer, [sure]) == {"x": 1.0}


def test_the_packed_scoring_equals_one_forward_per_answer_in_values_and_gradients():
    import torch

    from benchmarks.learning_probe import _answer_logq, _answer_logq_full, _page_tensors
    from mage_agents.tiny_model import build_tiny_model

    settings = VARIANTS["minesweeper"]["lamer"]
    pages = mine_pages(settings, range(40), seed=0)[:3]  # pages of different lengths
    pages += kuhn_pages(VARIANTS["signature"]["mage"], 1, seed=0)[:2]  # and of 2 moves
    model, tokenizer = build_tiny_model(seed=0, init_std=0.125)
    encoded = _page_tensors(tokenizer, pages, "<action>{action}</action>")
    assert len({len(p) for p, _, _ in encoded}) > 1 and len({len(a) for _, a, _ in encoded}) > 1
    grads = []
    for score in (_answer_logq, _answer_logq_full):
        model.zero_grad()
        logq = score(model, encoded, tokenizer.pad_token_id)
        torch.stack([q[0] for q in logq]).sum().backward()
        grads.append([p.grad.clone() for p in model.parameters()])
        if score is _answer_logq:
            packed = [q.detach() for q in logq]
    full = [q.detach() for q in logq]
    for a, b in zip(packed, full, strict=True):
        assert a.shape == b.shape and torch.allclose(a, b, atol=1e-5)
    for a, b in zip(*grads, strict=True):
        assert torch.allclose(a, b, rtol=1e-4, atol=1e-4)  # float32 sums in another order
