"""Can the tiny model read its memory at all? A supervised probe on the pages RL trains on.

Part 1 found that a few full-batch steps of cross-entropy on the best answers learn Kuhn's card
table from the default init: the task was easy, RL's signal was weak. This probe asks the same of
the memory. It plays seeded random-legal trials of a part's own settings (its memory rendering,
its terse pages), keeps the decisions whose right answer only the memory tells, and trains a
fresh tiny model of the part (same init, same tokenizer) by cross-entropy on the legal answers,
as the legal-move policy scores them (``q`` renormalised over the legal answers' texts):

* ``signature`` (Kuhn, part 2): later-episode decisions whose memory shows a showdown (the
  opponent's card); the target is the best move knowing that card against the style, and the
  headline is the accuracy on the *information deals* (:mod:`benchmarks.learning_deals`),
  where a memory-blind policy plays at most one of two twin deals right.
* ``minesweeper`` (part 3): the first move of a later attempt after an attempt lost on a mine;
  the target is that mine's cell (the move the memory lists with its -0.1): a pure read of the
  memory, 1 in the number of unopened cells by chance.

Each probe also trains on the same pages with the memory cut off (only the page after
``Now:``): the memory-blind control, with the same targets. Accuracy is measured on pages of
other trials (Kuhn: other random plays of the same deals, which repeat some pages; Minesweeper:
the held-out boards of part 3's score).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["ProbePage", "kuhn_targets", "kuhn_pages", "mine_pages", "lost_cells", "blind"]
__all__ += ["train_probe"]
__all__ += ["probe_accuracy", "run_probe", "chance", "probe_table"]

MEMORY_MARK = "\nNow:\n"
"""Where a later attempt's page starts after the trial wrapper's memory."""


@dataclass(frozen=True)
class ProbePage:
    """One decision of the probe.

    Attributes:
        chat: The prompt the policy reads there.
        moves: The legal moves, in the env's order.
        targets: Indices of the right moves (more than one where they tie).
        kind: ``"information"`` or ``"other"`` (Kuhn deals), ``"mine"`` (Minesweeper).
    """

    chat: tuple[dict[str, str], ...]
    moves: tuple[str, ...]
    targets: frozenset[int]
    kind: str


def blind(page: ProbePage) -> ProbePage:
    """Return the page with its memory cut off: the text after the last ``Now:`` only."""
    chat = []
    for message in page.chat:
        content = message["content"]
        if MEMORY_MARK in content:
            content = content.rsplit(MEMORY_MARK, 1)[1]
        chat.append({**message, "content": content})
    return ProbePage(tuple(chat), page.moves, page.targets, page.kind)


def kuhn_targets(style: str, deal: str, moves: Sequence[str]) -> frozenset[str]:
    """Return the best moves at a first-seat decision knowing the deal (``"QK"``) and style.

    Example:
        >>> sorted(kuhn_targets("aggressive", "QJ", ["fold", "call"]))  # a Jack bluffs
        ['call']
        >>> sorted(kuhn_targets("conservative", "KQ", ["check", "bet"]))  # every plan wins 1
        ['bet', 'check']
    """
    from benchmarks.learning_deals import plan_returns

    returns = plan_returns(style)[deal]
    if "fold" in moves:  # facing a bet after a check
        fold, call = returns[("check", "fold")], returns[("check", "call")]
        return frozenset(m for m, v in (("fold", fold), ("call", call)) if v == max(fold, call))
    best = max(returns.values())
    return frozenset(plan[0] for plan, value in returns.items() if value == best)


def _play(env: Any, seed: int, rng: random.Random) -> list[tuple[str, dict[str, Any]]]:
    """Play one random-legal trial; return the (observation, info) of its play decisions."""
    obs, info = env.reset(seed=seed)
    seen, done = [], False
    while not done:
        if info.get("phase") == "play" and info.get("legal_actions"):
            seen.append((obs, info))
        obs, _, terminated, truncated, info = env.step(rng.choice(info["legal_actions"]))
        done = terminated or truncated
    return seen


def _trial_env(settings: dict[str, Any], opponent: str | None) -> Any:
    import mage_envs
    from mage_envs.meta import TrialConfig

    config = TrialConfig.from_mapping({**settings.get("trial", {}), "reflection": False})
    kwargs = {**settings.get("env_kwargs", {}), **({"opponent": opponent} if opponent else {})}
    return mage_envs.make_trial(settings["env_id"], config=config, **kwargs)


def _chat(settings: dict[str, Any], obs: str, info: dict[str, Any]) -> tuple[dict, ...]:
    from mage_agents.prompting import STRATEGIES

    chooser = STRATEGIES[settings.get("strategy", "zero-shot")]()
    return tuple(chooser.chat(obs, info, chooser.new_memory()))


def kuhn_pages(settings: dict[str, Any], trials: int, seed: int) -> list[ProbePage]:
    """Return part 2's probe pages from ``trials`` random trials per (style, deal).

    Pages whose memory shows no showdown are left out (no card to read); so are identical pages
    whose targets differ between styles (nothing on the page tells them apart).
    """
    from benchmarks.learning_common import DEALS, STYLES, deal_seeds
    from benchmarks.learning_deals import information_deals

    rng, found = random.Random(seed), {}
    for style in STYLES:
        env, known = _trial_env(settings, style), information_deals(style)
        try:
            for deal, task in zip(DEALS, deal_seeds(), strict=True):
                for _ in range(trials):
                    for obs, info in _play(env, task, rng):
                        memory = obs.rsplit(MEMORY_MARK, 1)[0] if MEMORY_MARK in obs else ""
                        if "Showdown" not in memory:
                            continue
                        moves = tuple(info["legal_actions"])
                        best = kuhn_targets(style, deal, moves)
                        chat = _chat(settings, obs, info)
                        kind = "information" if deal in known else "other"
                        key = (tuple(tuple(sorted(m.items())) for m in chat), moves)
                        found.setdefault(key, (chat, []))[1].append((best, kind))
        finally:
            env.close()
    pages = []
    for (_, moves), (chat, labels) in found.items():
        common = frozenset.intersection(*(best for best, _ in labels))
        if common:
            targets = frozenset(moves.index(m) for m in common)
            kind = "information" if any(k == "information" for _, k in labels) else "other"
            pages.append(ProbePage(chat, moves, targets, kind))
    return pages


def mine_pages(settings: dict[str, Any], boards: Sequence[int], seed: int) -> list[ProbePage]:
    """Return part 3's probe pages: a later attempt's first decision after a lost attempt.

    The targets are the cells the earlier attempts lost on, which the memory lists with their
    negative reward.
    """
    rng, pages = random.Random(seed), []
    env = _trial_env(settings, None)
    try:
        for board in boards:
            started: set[int] = set()
            for obs, info in _play(env, board, rng):
                index = info.get("episode_index", 0)
                if index in started:
                    continue
                started.add(index)
                moves = tuple(info["legal_actions"])
                targets = frozenset(moves.index(m) for m in lost_cells(obs) if m in moves)
                if index > 0 and targets:
                    pages.append(ProbePage(_chat(settings, obs, info), moves, targets, "mine"))
    finally:
        env.close()
    return pages


def lost_cells(obs: str) -> list[str]:
    r"""The cells a page's memory lists as lost: its moves with a negative reward.

    Example:
        >>> page = "Step 1: you answered (1, 2) (reward -0.1).\nNow:\nYou opened (3, 3)."
        >>> lost_cells(page)
        ['(1, 2)']
    """
    import re

    memory = obs.rsplit(MEMORY_MARK, 1)[0] if MEMORY_MARK in obs else ""
    return re.findall(r"you answered (\(\d+, \d+\)) \(reward -", memory)


def _page_tensors(tokenizer: Any, pages: Sequence[ProbePage], template: str) -> list[tuple]:
    """Token ids of each page's prompt and of each legal answer."""
    from mage_agents.local_model import render_chat

    templated = bool(getattr(tokenizer, "chat_template", None))
    out = []
    for page in pages:
        text = render_chat(tokenizer, list(page.chat))
        prompt = tokenizer(text, add_special_tokens=not templated)["input_ids"]
        answers = [
            tokenizer(template.format(action=m), add_special_tokens=False)["input_ids"]
            for m in page.moves
        ]
        out.append((prompt, answers, sorted(page.targets)))
    return out


def _answer_logq(model: Any, encoded: Sequence[tuple], pad: int) -> list[Any]:
    """``log q`` of every legal answer of each page (the policy renormalised over them).

    The pages' answers are packed after their prompts in one forward, as the trainer scores
    legal moves (:func:`~mage_agents.training.answer_logps.answer_logps`); a model whose
    attention takes neither a custom mask nor a cache gets one forward per answer.
    """
    import torch

    from mage_agents.training.answer_logps import answer_logps
    from mage_agents.training.legal_logps import answer_tensors, sequence_scores

    width = max(len(prompt) for prompt, _, _ in encoded)
    ids = torch.tensor([[pad] * (width - len(p)) + p for p, _, _ in encoded])
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p, _, _ in encoded])
    answers, answer_mask = answer_tensors([a for _, a, _ in encoded], pad)
    logps = answer_logps(model, ids, mask, answers, answer_mask, 1.0)
    if logps is None:
        return _answer_logq_full(model, encoded, pad)
    scores = sequence_scores(logps.float(), answer_mask)
    return [torch.log_softmax(scores[i, : len(a)], dim=0) for i, (_, a, _) in enumerate(encoded)]


def _answer_logq_full(model: Any, encoded: Sequence[tuple], pad: int) -> list[Any]:
    """:func:`_answer_logq` by one forward of ``[prompt | answer]`` per answer."""
    import torch

    sequences, spans = [], []
    for prompt, answers, _ in encoded:
        for answer in answers:
            sequences.append(prompt + answer)
            spans.append((len(prompt), len(answer)))
    width = max(map(len, sequences))
    ids = torch.tensor([s + [pad] * (width - len(s)) for s in sequences])
    mask = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in sequences])
    logps = torch.log_softmax(model(input_ids=ids, attention_mask=mask).logits.float(), dim=-1)
    scores = []
    for row, (start, length) in enumerate(spans):
        tokens = ids[row, start : start + length]
        steps = logps[row, start - 1 : start + length - 1]
        scores.append(steps.gather(1, tokens[:, None]).sum())
    out, k = [], 0
    for _, answers, _ in encoded:
        out.append(torch.log_softmax(torch.stack(scores[k : k + len(answers)]), dim=0))
        k += len(answers)
    return out


def train_probe(
    model: Any,
    tokenizer: Any,
    pages: Sequence[ProbePage],
    steps: int,
    learning_rate: float = 3e-3,
    batch: int = 16,
    seed: int = 0,
    template: str = "<action>{action}</action>",
) -> list[float]:
    """Train ``model`` for ``steps`` Adam steps of cross-entropy towards the pages' targets.

    The loss of a page is ``-log`` of the total ``q`` of its right moves. Returns the losses.
    """
    import torch

    encoded = _page_tensors(tokenizer, pages, template)
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
    rng, losses = random.Random(seed), []
    model.train()
    for _ in range(steps):
        chosen = rng.sample(encoded, min(batch, len(encoded)))
        logq = _answer_logq(model, chosen, tokenizer.pad_token_id)
        loss = -torch.stack(
            [
                torch.logsumexp(q[targets], dim=0)
                for q, (_, _, targets) in zip(logq, chosen, strict=True)
            ]
        ).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def probe_accuracy(
    model: Any,
    tokenizer: Any,
    pages: Sequence[ProbePage],
    template: str = "<action>{action}</action>",
) -> dict[str, float]:
    """Return the greedy policy's accuracy per page kind (its argmax among the right moves)."""
    import torch

    encoded = _page_tensors(tokenizer, pages, template)
    hits: dict[str, list[bool]] = {}
    model.eval()
    with torch.no_grad():
        for start in range(0, len(encoded), 16):
            part = encoded[start : start + 16]
            for page, q, (_, _, targets) in zip(
                pages[start : start + 16],
                _answer_logq(model, part, tokenizer.pad_token_id),
                part,
                strict=True,
            ):
                hits.setdefault(page.kind, []).append(int(q.argmax()) in targets)
    return {kind: sum(v) / len(v) for kind, v in sorted(hits.items())}


def chance(pages: Sequence[ProbePage]) -> dict[str, float]:
    """Return the accuracy of a uniform random choice per page kind.

    Example:
        >>> page = ProbePage((), ("a", "b", "c", "d"), frozenset({1}), "mine")
        >>> chance([page, ProbePage((), ("a", "b"), frozenset({0, 1}), "mine")])
        {'mine': 0.625}
    """
    shares: dict[str, list[float]] = {}
    for page in pages:
        shares.setdefault(page.kind, []).append(len(page.targets) / len(page.moves))
    return {kind: sum(v) / len(v) for kind, v in sorted(shares.items())}


def probe_table(variants: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Return the probe's Markdown: accuracy with the memory and without, per page kind.

    The memory's gain is the accuracy with it minus with it cut off, paired by seed (the same
    seed builds both models and draws the same pages); it is *shown* when its interval lies
    above 0.
    """
    from benchmarks.learning_common import interval95, verdict

    lines = [
        "| probe | seeds | pages (train, scored) | page kind | chance | with memory | "
        "memory cut off | with - cut off (paired) | memory read | steps | "
        "CPU s (with memory) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, runs in sorted(variants.items()):
        pages = f"{runs[0]['train_pages']}, {runs[0]['test_pages']}"
        for kind in runs[0]["memory"]["test"]:
            cells = []
            for label in ("memory", "blind"):
                m, h = interval95([r[label]["test"][kind] for r in runs])
                cells.append(f"{m:.2f} ± {h:.2f}")
            d, dh = interval95([r["memory"]["test"][kind] - r["blind"]["test"][kind] for r in runs])
            cpu = sum(r["memory"]["cpu_s"] for r in runs) / len(runs)
            lines.append(
                f"| {name} | {len(runs)} | {pages} | {kind} | {runs[0]['chance'][kind]:.2f} | "
                f"{cells[0]} | {cells[1]} | {d:+.3f} ± {dh:.3f} | {verdict(d, dh)} | "
                f"{runs[0]['steps']} | {cpu:.0f} |"
            )
    return lines


def run_probe(
    part: str,
    variant: str,
    seed: int,
    steps: int,
    settings: dict[str, Any],
    corpus: Sequence[str] = (),
) -> dict[str, Any]:
    """Train the probe of ``part`` (with the memory, then memory-blind); return its record.

    ``settings`` are the variant's (``learning.VARIANTS`` with the run's overrides) and
    ``corpus`` the extra pages the tiny tokenizer learns, as the variant's training runs do.

    Kuhn's pages are few (about 120 distinct ones from 30 random trials per style and deal), so
    its probe is scored on the pages it trained on: can the model fit a function of its memory?
    Minesweeper's is scored on the held-out boards of part 3.
    """
    import time

    from benchmarks.learning_common import EVAL_SEEDS, cpu_seconds
    from mage_agents.tiny_model import build_tiny_model

    if part == "signature":
        train = kuhn_pages(settings, 30, seed)
        test = train
    elif part == "minesweeper":
        train = mine_pages(settings, range(seed * 10_000, seed * 10_000 + 1500), seed)
        test = mine_pages(settings, list(EVAL_SEEDS) * 4, 10_000 + seed)
    else:
        raise ValueError(f"The memory probe has parts signature and minesweeper, not {part!r}.")
    record: dict[str, Any] = {"part": "probe", "variant": f"{part}-{variant}", "seed": seed}
    record |= {"steps": steps, "settings": settings}
    record |= {"train_pages": len(train), "test_pages": len(test), "chance": chance(test)}
    for label, shown in (("memory", False), ("blind", True)):
        model, tokenizer = build_tiny_model(
            seed=seed, init_std=settings.get("init_std"), extra_corpus=corpus
        )
        cpu0, wall0 = cpu_seconds(), time.perf_counter()
        use = [blind(p) for p in train] if shown else train
        losses = train_probe(model, tokenizer, use, steps, seed=seed)
        held = [blind(p) for p in test] if shown else test
        record[label] = {
            "train": probe_accuracy(model, tokenizer, use),
            "test": probe_accuracy(model, tokenizer, held),
            "loss_first": losses[0],
            "loss_last": sum(losses[-10:]) / len(losses[-10:]),
            "cpu_s": cpu_seconds() - cpu0,
            "wall_s": time.perf_counter() - wall0,
        }
    return record
