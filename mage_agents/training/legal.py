"""Acting by choosing among the legal moves: the trainer's setting for small models.

With ``action_choice="legal"`` a play turn is not free text: the model scores each legal move as
its log-probability of writing ``answer_template`` with the move in it (at the sampling
temperature), those scores are renormalised over the legal moves into the policy ``q``, and one
move is sampled. The completion trained on is that move's answer text, and the loss reads its
log-probability under ``q``, not under the whole vocabulary (:mod:`.legal_logps`): the gradient
is that of the policy that was sampled. This is the policy the exact Kuhn evaluation reads
(:mod:`mage_agents.training.kuhn_policy`), so what is sampled, trained and measured agree; no
probability is lost on invalid text, which a model trained from scratch otherwise writes almost
always.

``exploration_floor`` mixes in a uniform choice over the legal moves while training: the move
is drawn from ``mix = (1 - floor) * q + floor / n``, so no move's probability falls to zero and
stays there (the collapse seen in ``../shared/TRL.md``). With ``exploration_correction`` the
sample's advantage is multiplied by the importance weight ``q(a) / mix(a)``, which makes the
update the policy gradient of ``q``'s return; but that gradient vanishes with ``q(a)``, so a
move the model has all but dropped is sampled and never learned again. Off (the default), floor
samples count as the model's own: a biased choice, whose expected update is ``(1 - floor)``
times ``q``'s policy gradient plus ``floor`` times that of the uniform policy's samples, so a
better move the model has dropped is pushed back up at a rate set by the floor
(docs/learning.md measures both).

``move_entropy_bonus`` adds ``coef * (-log q(a) - batch mean)`` to each chosen move's advantage:
in expectation the gradient of ``coef`` times the entropy of ``q`` over the legal moves (not of
the whole vocabulary, which TRL's own ``entropy_coef`` would raise) for moves drawn from ``q``;
floor samples bias it as they bias the return's term, and ``exploration_correction`` weights
only the latter.

Turns without legal moves (reflections) are generated freely by the fallback backend.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch

from mage_agents.base import Chat, Reply
from mage_agents.local_model import render_chat
from mage_agents.prompting import LLMAgent, is_reflect
from mage_agents.training.answer_logps import answer_logps
from mage_agents.training.legal_logps import answer_tensors, legal_token_logps

__all__ = ["MoveChat", "MoveSample", "LegalMoveAgent", "LegalMoveBackend", "mixed_choice"]


@dataclass(frozen=True)
class MoveSample:
    """How one chosen turn was sampled: what the trainer needs besides its tokens.

    Attributes:
        weight: The importance weight applied to its advantage (``q / mix`` with
            ``exploration_correction``, else 1).
        surprise: ``-log q(a)`` of the chosen move under the renormalised policy.
        answers: Every legal move's answer, as token ids, in the env's order.
        choice: The index of the chosen answer in ``answers``.
        entropy: The entropy of ``q`` over the legal moves at this turn.
        log_legal_mass: ``log`` of the model's total probability of the legal answers.
    """

    weight: float
    surprise: float
    answers: tuple[tuple[int, ...], ...]
    choice: int
    entropy: float
    log_legal_mass: float


class MoveChat(list):
    """A chat prompt that also carries the legal moves of the state it was written for.

    Attributes:
        moves: The legal moves' names (empty for a turn without moves, e.g. a reflection).
    """

    moves: tuple[str, ...] = ()


class LegalMoveAgent(LLMAgent):
    """An :class:`~mage_agents.prompting.LLMAgent` whose prompts name the legal moves."""

    def prompt(self, observation: str, info: Mapping[str, Any]) -> Chat:
        """Return the chat prompt, as a :class:`MoveChat` holding the legal moves."""
        chat = MoveChat(super().prompt(observation, info))
        if not is_reflect(info):
            chat.moves = tuple(str(m) for m in info.get("legal_actions") or ())
        return chat


def mixed_choice(
    scores: torch.Tensor, floor: float, greedy: bool = False
) -> tuple[int, float, float]:
    """Sample a move from the scores mixed with a uniform floor.

    Args:
        scores: Log-probabilities (unnormalised) of the legal moves.
        floor: Weight of the uniform choice, in [0, 1).
        greedy: Take the most probable move instead (ties: the first).

    Returns:
        ``(index, q, weight)``: the move, its probability under the model's renormalised policy
        ``q``, and the importance weight ``q / mix`` of the sample.

    Example:
        >>> mixed_choice(torch.tensor([0.0, -100.0]), 0.0, greedy=True)[:2]
        (0, 1.0)
    """
    q = torch.softmax(scores.double(), dim=0)
    mix = (1.0 - floor) * q + floor / len(q)
    index = int(q.argmax()) if greedy else int(torch.multinomial(mix.float(), 1))
    weight = float(q[index] / mix[index])
    return index, float(q[index]), weight


class LegalMoveBackend:
    """Chooses among the legal moves with the trainer's model; reflections go to ``fallback``.

    Args:
        trainer: The :class:`~mage_agents.training.MetaRLTrainer` (model, tokenizer, settings).
        fallback: The backend of turns without legal moves (free generation).
    """

    name = "policy"

    def __init__(self, trainer: Any, fallback: Any) -> None:
        self.trainer = trainer
        self.fallback = fallback
        self.tokenizer = trainer.processing_class
        # (prompt ids, completion ids) -> how that chosen turn was sampled; the pair determines
        # it (same model, same moves, same move), so equal keys hold equal values
        self.samples: dict[tuple[tuple[int, ...], tuple[int, ...]], MoveSample] = {}
        self.greedy = False
        # in a scoring pass, (prompt ids, moves) -> the moves' scores: a page gets one move
        # however it is batched (padding moves the last bits, which can flip a near-tie)
        self._pages: dict[tuple, list] | None = None

    @contextmanager
    def scoring(self) -> Iterator[LegalMoveBackend]:
        """Play greedily, each page's move a function of the page alone, for the block.

        The model must not change inside the block: a page's scores are computed once. A
        scoring pass that weighs branches of a sampling opponent needs it (the same page in two
        branches must get the same move); training and a league snapshot do not use it, so
        their moves stay what they were and a resumed run equals an uninterrupted one.
        """
        greedy, self.greedy, self._pages = self.greedy, True, {}
        try:
            yield self
        finally:
            self.greedy, self._pages = greedy, None

    def clear(self) -> None:
        """Forget the sampling records (call before each batch)."""
        self.samples.clear()

    def sample_of(self, turn: Any) -> MoveSample | None:
        """Return how ``turn`` was sampled, or ``None`` for a free turn (a reflection)."""
        return self.samples.get((tuple(turn.prompt_ids or ()), tuple(turn.completion_ids or ())))

    def sampling_metrics(
        self,
        trajectories: Sequence[Any],
        total: Callable[[list[float]], list[float]] | None = None,
    ) -> dict[str, float]:
        """Return the mean entropy of ``q`` and legal mass at the chosen turns of ``trajectories``.

        ``moves/entropy`` is the policy's entropy over the legal moves (nats; ``log n`` is
        uniform), ``moves/legal_mass`` the model's total probability of the legal answers (the
        rest is on text no legal move is written with). ``total`` sums over the processes.
        """
        samples = [self.sample_of(t) for trajectory in trajectories for t in trajectory.turns]
        samples = [s for s in samples if s is not None]
        sums = [
            sum(s.entropy for s in samples),
            sum(math.exp(s.log_legal_mass) for s in samples),
            float(len(samples)),
        ]
        entropy, mass, count = sums if total is None else total(sums)
        if not count:
            return {}
        return {"moves/entropy": entropy / count, "moves/legal_mass": mass / count}

    def adjust(
        self,
        trajectories: Sequence[Any],
        advantages: Sequence[Any],
        total: Callable[[list[float]], list[float]] | None = None,
    ) -> list:
        """Return the advantages with the importance weights and the entropy bonus applied.

        A chosen turn's advantage ``A`` becomes ``A * w + move_entropy_bonus * (s - mean s)``,
        where ``w`` is its importance weight (1 unless ``exploration_correction``) and
        ``s = -log q(a)`` its surprise, centred over the batch's chosen turns: the policy gradient
        of the return plus ``move_entropy_bonus`` times the entropy of ``q``, which keeps the
        policy from saturating before it tells its information states apart. Free turns are
        unchanged. ``total`` sums a few numbers over the processes (several processes: the mean
        is the whole batch's, as with one).
        """
        import numpy as np

        samples = [[self.sample_of(t) for t in trajectory.turns] for trajectory in trajectories]
        surprises = [s.surprise for row in samples for s in row if s is not None]
        if total is None:
            mean = float(np.mean(surprises)) if surprises else 0.0
        else:
            summed, count = total([float(np.sum(surprises)), float(len(surprises))])
            mean = summed / count if count else 0.0
        coef = float(self.trainer.args.move_entropy_bonus)
        result = []
        for row, values in zip(samples, advantages, strict=True):
            out = np.asarray(values, dtype=np.float64).copy()
            for j, sample in enumerate(row):
                if sample is not None:
                    out[j] = out[j] * sample.weight + coef * (sample.surprise - mean)
            result.append(out)
        return result

    def drain(self) -> int:
        """Take part in the other processes' free generation until all trials are over."""
        return self.fallback.drain()

    def generate(self, chats: Sequence[Chat]) -> list[Reply]:
        """Return one reply per chat: a chosen legal move, or the fallback's free text."""
        replies: list[Reply | None] = [None] * len(chats)
        free = [i for i, chat in enumerate(chats) if not getattr(chat, "moves", ())]
        # with several processes the free generation is a round every process takes part in
        if free or getattr(self.trainer, "generation_rounds", None) is not None:
            for i, reply in zip(
                free, self.fallback.generate([chats[i] for i in free]), strict=True
            ):
                replies[i] = reply
        chosen = [i for i, chat in enumerate(chats) if getattr(chat, "moves", ())]
        if chosen:
            for i, reply in zip(chosen, self._choose([chats[i] for i in chosen]), strict=True):
                replies[i] = reply
        return [r for r in replies if r is not None]

    def _choose(self, chats: Sequence[Chat]) -> list[Reply]:
        trainer = self.trainer
        args = trainer.args
        templated = bool(getattr(self.tokenizer, "chat_template", None))
        # TRL's chat_template_kwargs (e.g. Qwen3's enable_thinking) shape every prompt, as in
        # free-text generation
        kwargs = dict(getattr(trainer, "chat_template_kwargs", None) or {})
        texts = [render_chat(self.tokenizer, chat, template_kwargs=kwargs) for chat in chats]
        prompts = self.tokenizer(texts, add_special_tokens=not templated)["input_ids"]
        answers = {
            move: self.tokenizer(
                args.answer_template.format(action=move), add_special_tokens=False
            )["input_ids"]
            for chat in chats
            for move in chat.moves
        }
        scored = self._page_scores(prompts, chats, answers)
        floor = args.exploration_floor if trainer.model.training and not self.greedy else 0.0
        replies = []
        for prompt, chat, rows in zip(prompts, chats, scored, strict=True):
            scores = torch.tensor([sum(r) for r in rows], dtype=torch.float64)
            index, q, weight = mixed_choice(scores, floor, greedy=self.greedy)
            move = chat.moves[index]
            ids = tuple(answers[move])
            options = tuple(tuple(answers[m]) for m in chat.moves)
            log_q = torch.log_softmax(scores, dim=0)
            self.samples[(tuple(prompt), ids)] = MoveSample(
                weight=weight if args.exploration_correction else 1.0,
                surprise=-math.log(max(q, 1e-300)),
                answers=options,
                choice=index,
                entropy=float(-(log_q.exp() * log_q).nan_to_num().sum()),
                log_legal_mass=float(torch.logsumexp(scores, dim=0)),
            )
            replies.append(
                Reply(
                    args.answer_template.format(action=move),
                    len(prompt),
                    len(ids),
                    prompt_ids=tuple(prompt),
                    completion_ids=ids,
                    logprobs=_policy_logprobs(rows, options, index),
                )
            )
        return replies

    def _page_scores(
        self, prompts: list[list[int]], chats: Sequence[Chat], answers: Mapping[str, list[int]]
    ) -> list[list]:
        """Per chat, the per-token log-probabilities of each of its legal answers.

        In a scoring pass (:meth:`scoring`) a page seen before keeps its scores, and a page is
        scored once however often the batch holds it; otherwise every row is scored as batched.
        """
        keys = [(tuple(p), tuple(chat.moves)) for p, chat in zip(prompts, chats, strict=True)]
        known = self._pages
        todo = range(len(chats))
        if known is not None:
            todo = sorted({keys[i]: i for i in reversed(todo) if keys[i] not in known}.values())
        pairs = [(prompts[i], answers[m]) for i in todo for m in chats[i].moves]
        temperature = float(getattr(self.trainer, "temperature", 1.0) or 1.0)
        token_logps = self._score(pairs, temperature) if pairs else []
        rows_at, start = {}, 0
        for i in todo:
            rows_at[i] = token_logps[start : start + len(chats[i].moves)]
            start += len(chats[i].moves)
        if known is None:
            return [rows_at[i] for i in range(len(chats))]
        known.update((keys[i], rows_at[i]) for i in todo)
        return [known[key] for key in keys]

    def _score(self, pairs: list[tuple[list[int], list[int]]], temperature: float) -> list:
        """Return the per-token log-probabilities of each (prompt, answer) pair.

        Each distinct prompt is encoded once, its answers packed after it or read from its
        key-value cache (:func:`~mage_agents.training.answer_logps.answer_logps`).
        """
        model = self.trainer.accelerator.unwrap_model(self.trainer.model)
        device = next(model.parameters()).device
        distinct: dict[tuple[int, ...], list[list[int]]] = {}
        for prompt, answer in pairs:
            distinct.setdefault(tuple(prompt), []).append(answer)
        prompts = list(distinct)
        prompt_ids, prompt_mask = _left_padded(prompts, self.tokenizer.pad_token_id, device)
        answer_ids, answer_mask = answer_tensors(list(distinct.values()), 0)
        was_training = model.training
        model.eval()  # gradient checkpointing turns the cache off in training mode
        try:
            with torch.no_grad():
                logps = answer_logps(
                    model,
                    prompt_ids,
                    prompt_mask,
                    answer_ids.to(device),
                    answer_mask.to(device),
                    temperature,
                )
        finally:
            model.train(was_training)
        order = {prompt: d for d, prompt in enumerate(prompts)}
        seen = dict.fromkeys(prompts, 0)
        result = []
        for prompt, answer in pairs:
            key = tuple(prompt)
            result.append(logps[order[key], seen[key], : len(answer)].tolist())
            seen[key] += 1
        return result


def _left_padded(
    prompts: list[tuple[int, ...]], pad: int, device: Any
) -> tuple[torch.Tensor, torch.Tensor]:
    """The prompts left-padded to one length (RoPE is relative, the pads are masked)."""
    width = max(map(len, prompts))
    ids = torch.tensor([[pad] * (width - len(p)) + list(p) for p in prompts], device=device)
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=device)
    return ids, mask


def _policy_logprobs(
    rows: Sequence[Sequence[float]], answers: Sequence[Sequence[int]], index: int
) -> tuple[float, ...]:
    """The chosen answer's token log-probabilities under the renormalised policy."""
    padded, mask = answer_tensors([answers], 0)
    logps = torch.zeros(padded.shape, dtype=torch.float64)
    for k, row in enumerate(rows):
        logps[0, k, : len(row)] = torch.tensor(row, dtype=torch.float64)
    out = legal_token_logps(logps, padded, mask, torch.tensor([index]))
    return tuple(float(v) for v in out[0, : len(answers[index])])
