"""A language model's Kuhn poker policy, read exactly from its action probabilities.

Kuhn poker has six information states per seat. For each one we build the very prompt the agent
sees in the first episode of a trial (by playing the env to that state), score every legal move
as the model's log-probability of writing it (``answer_template``, e.g. ``<action>bet</action>``),
and normalise over the legal moves. The resulting table's exact value against each opponent
(:mod:`mage_envs.policy_value`) measures learning without sampling noise. ``legal_mass``, the
total probability of the well-formed legal answers, says how much of the model's mass the table
covers (the rest is invalid or differently phrased text).

:func:`kuhn_exact_exploitability` reads the table at all twelve states (both seats, from the
prompts of self-play trials when the learner plays itself) and returns its exact NashConv and
exploitability (:func:`mage_envs.policy_value.kuhn_exploitability`, OpenSpiel's best
responses): the distance from equilibrium that self-play aims to close, without sampling noise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import mage_envs
from mage_agents.local_model import render_chat
from mage_agents.prompting import STRATEGIES
from mage_envs.games.openspiel_env import SELF_PLAY
from mage_envs.opponents import as_population
from mage_envs.policy_value import greedy_table, kuhn_exploitability, kuhn_policy_values

__all__ = [
    "CARDS",
    "card_policy",
    "DecisionPrompt",
    "decision_prompts",
    "evaluation_opponents",
    "kuhn_policy_table",
    "kuhn_exact_evaluation",
    "kuhn_exact_exploitability",
]

SEATS = ("first", "second")
MAX_SEEDS = 200
"""Deals tried per opponent and seat to reach every information state the opponent allows."""


@dataclass(frozen=True)
class DecisionPrompt:
    """The prompt at one information state of the learner.

    Attributes:
        information_state: OpenSpiel's information state string of the learner.
        chat: The chat prompt the agent reads there.
        moves: The legal moves' names, in the env's order.
        action_ids: Their OpenSpiel action ids.
    """

    information_state: str
    chat: list[dict[str, str]]
    moves: tuple[str, ...]
    action_ids: tuple[int, ...]


def decision_prompts(
    opponent: str, seat: int, strategy: str = "zero-shot", **trial_kwargs: Any
) -> list[DecisionPrompt]:
    """Return the first-episode prompt at every information state reachable against ``opponent``.

    Args:
        opponent: The opponent (its policy decides which states are reachable); ``"self"``:
            self-play trials, whose prompts at the states of both seats are returned.
        seat: The learner's seat, 0 or 1 (unused in self-play).
        strategy: The prompting strategy whose chat the agent reads.
        **trial_kwargs: :func:`mage_envs.make_trial` settings of the training env (the id is
            ``env_id``, default ``mage/KuhnPoker-v0``); ``seat`` and ``opponent`` are set here.
    """
    env_id = trial_kwargs.pop("env_id", "mage/KuhnPoker-v0")
    trial_kwargs.update(opponent=opponent, seat=SEATS[seat])
    env = mage_envs.make_trial(env_id, **trial_kwargs)
    chooser = STRATEGIES[strategy]()
    found: dict[str, DecisionPrompt] = {}
    states = 12 if opponent == SELF_PLAY else 6  # every state of the seat, or of both
    try:
        for seed in range(MAX_SEEDS):
            for path in _paths(env, seed):
                obs, info = path
                state = env.unwrapped.state.information_state_string(info["player"])
                if state not in found:
                    found[state] = DecisionPrompt(
                        state,
                        chooser.chat(obs, info, chooser.new_memory()),
                        tuple(info["legal_actions"]),
                        tuple(info["legal_action_ids"]),
                    )
            if len(found) == states:
                break
    finally:
        env.close()
    return sorted(found.values(), key=lambda p: p.information_state)


def _paths(env: Any, seed: int) -> Iterable[tuple[str, dict[str, Any]]]:
    """Yield (observation, info) at each learner decision of the first hand of ``seed``."""
    stack: list[tuple[str, ...]] = [()]
    while stack:
        moves = stack.pop()
        obs, info = env.reset(seed=seed)
        over = False
        for move in moves:
            obs, _, terminated, truncated, info = env.step(move)
            over = terminated or truncated or info.get("episode_index", 0) > 0
        if over or info.get("phase") != "play" or not info["legal_actions"]:
            continue
        yield obs, info
        stack.extend(moves + (move,) for move in info["legal_actions"])


def kuhn_policy_table(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[DecisionPrompt],
    answer_template: str | Callable[[str], str] = "<action>{action}</action>",
    chat_template_kwargs: Mapping[str, Any] | None = None,
    temperature: float = 1.0,
    scored: dict[tuple[str, str], float] | None = None,
) -> tuple[dict[str, dict[int, float]], float]:
    """Return the model's normalised policy over legal moves, and the mean legal mass.

    Each move's probability is the model's probability of writing ``answer_template`` with the
    move in it, right after the prompt, renormalised over the legal moves. The prompt is rendered
    as in training, with the chat template's ``chat_template_kwargs`` (TRL's setting), and the
    tokens are scored at the sampling ``temperature`` (the policy training samples and TRL's loss
    scores). ``scored`` keeps each (prompt, answer)'s log-probability across calls with the same
    model: the prompts of a state are the same against every opponent that reaches it.
    """
    import torch

    table, masses = {}, []
    scored = {} if scored is None else scored
    templated = bool(getattr(tokenizer, "chat_template", None))
    was_training = model.training
    model.eval()
    try:
        for prompt in prompts:
            text = render_chat(tokenizer, prompt.chat, template_kwargs=chat_template_kwargs)
            answers = [_answer(answer_template, move) for move in prompt.moves]
            if any((text, a) not in scored for a in answers):
                prompt_ids = tokenizer(text, add_special_tokens=not templated)["input_ids"]
                answer_ids = [tokenizer(a, add_special_tokens=False)["input_ids"] for a in answers]
                with torch.no_grad():
                    sums = _answer_sums(model, prompt_ids, answer_ids, temperature)
                scored.update(((text, a), s) for a, s in zip(answers, sums, strict=True))
            logps = torch.tensor([scored[(text, a)] for a in answers])
            masses.append(float(logps.exp().sum()))
            probs = torch.softmax(logps, dim=0).tolist()
            table[prompt.information_state] = dict(zip(prompt.action_ids, probs, strict=True))
    finally:
        model.train(was_training)
    return table, sum(masses) / max(len(masses), 1)


def _answer(template: str | Callable[[str], str], move: str) -> str:
    """The answer that plays ``move``: ``template(move)``, or the template with it filled in."""
    return template(move) if callable(template) else template.format(action=move)


def _answer_sums(
    model: Any, prompt_ids: list[int], answer_ids: list[list[int]], temperature: float
) -> list[float]:
    """Each answer's summed log-probability after the prompt, at ``temperature``.

    All answers are scored in one forward (:func:`~mage_agents.training.answer_logps.answer_logps`,
    the trainer's scoring). A model that takes no attention mask, or whose attention takes no
    custom mask and keeps no cache, gets one forward per answer.
    """
    import inspect

    import torch

    from mage_agents.training.answer_logps import answer_logps
    from mage_agents.training.legal_logps import answer_tensors, sequence_scores

    if "attention_mask" not in inspect.signature(model.forward).parameters:
        return [_one_answer(model, prompt_ids, ids, temperature) for ids in answer_ids]
    device = next(model.parameters()).device
    padded, mask = (t.to(device) for t in answer_tensors([answer_ids], 0))
    prompt = torch.tensor([prompt_ids], device=device)
    logps = answer_logps(model, prompt, torch.ones_like(prompt), padded, mask, temperature)
    if logps is None:
        return [_one_answer(model, prompt_ids, ids, temperature) for ids in answer_ids]
    return sequence_scores(logps.float(), mask)[0].tolist()


def _one_answer(
    model: Any, prompt_ids: list[int], answer_ids: list[int], temperature: float
) -> float:
    """One answer's summed log-probability, from a forward of ``[prompt | answer]``."""
    import torch

    device = next(model.parameters()).device
    ids = torch.tensor([prompt_ids + answer_ids], device=device)
    logits = _answer_logits(model, ids, len(answer_ids)).float()
    logps = torch.log_softmax(logits / temperature, dim=-1)
    return float(logps.gather(1, torch.tensor(answer_ids, device=device)[:, None]).sum())


def _answer_logits(model: Any, ids: Any, answer_length: int) -> Any:
    """The logits at the positions that predict the last ``answer_length`` tokens of ``ids``.

    Only those positions go through the output layer where the model can skip the others
    (transformers' ``logits_to_keep``; a 49k-token vocabulary makes it most of a pass).
    """
    import inspect

    if "logits_to_keep" in inspect.signature(model.forward).parameters:
        return model(input_ids=ids, logits_to_keep=answer_length + 1).logits[0, :-1]
    return model(input_ids=ids).logits[0, -answer_length - 1 : -1]


def kuhn_exact_evaluation(
    model: Any,
    tokenizer: Any,
    opponents: Sequence[str],
    seats: Sequence[int],
    strategy: str = "zero-shot",
    answer_template: str | Callable[[str], str] = "<action>{action}</action>",
    chat_template_kwargs: Mapping[str, Any] | None = None,
    temperature: float = 1.0,
    **trial_kwargs: Any,
) -> dict[str, float]:
    """Return the exact value of the model's greedy policy against each opponent and seat.

    Keys: ``exact/{opponent}/{seat}/value`` (chips per hand of the greedy policy),
    ``.../best_response`` (the best response's value, the most achievable),
    ``.../share_of_best`` (of the best response's value, when it is positive),
    ``.../policy_value`` (of the model's policy over legal moves itself, not its argmax),
    ``.../bet/{J,Q,K}`` and ``.../call/{J,Q,K}`` (the policy's probability of betting where it
    may open the betting, and of calling a bet, at each card, where the opponent lets the
    learner reach that state), ``exact/mean_value`` (greedy, over opponents and seats) and
    ``exact/legal_mass``.
    """
    metrics: dict[str, float] = {}
    values, masses = [], []
    scored: dict[tuple[str, str], float] = {}  # a state's page is the same for every opponent
    for opponent in opponents:
        for seat in seats:
            prompts = decision_prompts(opponent, seat, strategy, **dict(trial_kwargs))
            table, mass = kuhn_policy_table(
                model,
                tokenizer,
                prompts,
                answer_template,
                chat_template_kwargs,
                temperature,
                scored,
            )
            (row,) = kuhn_policy_values(greedy_table(table), [opponent], [seat])
            (mixed,) = kuhn_policy_values(table, [opponent], [seat])
            key = f"exact/{opponent}/{SEATS[seat]}"
            metrics[f"{key}/value"] = row.value
            metrics[f"{key}/best_response"] = row.best_response_value
            metrics[f"{key}/policy_value"] = mixed.value
            metrics.update({f"{key}/{k}": v for k, v in card_policy(table, seat).items()})
            if row.share_of_best is not None:
                metrics[f"{key}/share_of_best"] = row.share_of_best
            values.append(row.value)
            masses.append(mass)
    metrics["exact/mean_value"] = sum(values) / len(values)
    metrics["exact/legal_mass"] = sum(masses) / len(masses)
    return metrics


def kuhn_exact_exploitability(
    model: Any,
    tokenizer: Any,
    self_play: bool,
    strategy: str = "zero-shot",
    answer_template: str | Callable[[str], str] = "<action>{action}</action>",
    chat_template_kwargs: Mapping[str, Any] | None = None,
    temperature: float = 1.0,
    **trial_kwargs: Any,
) -> dict[str, float]:
    """Return the exact NashConv and exploitability of the model's policy in both seats.

    The policy at each of the twelve information states is the model's, over the legal moves
    (:func:`kuhn_policy_table`), read from the prompts of self-play trials (``self_play``) or
    of the learner's trials in each seat (against uniform play, which reaches every state).

    Keys: ``exact/nash_conv`` and ``exact/exploitability`` (of the policy itself), and
    ``exact/greedy_exploitability`` (of its argmax at each state).
    """
    opponents = [(SELF_PLAY, 0)] if self_play else [("random", 0), ("random", 1)]
    prompts = [
        prompt
        for opponent, seat in opponents
        for prompt in decision_prompts(opponent, seat, strategy, **dict(trial_kwargs))
    ]
    table, _ = kuhn_policy_table(
        model, tokenizer, prompts, answer_template, chat_template_kwargs, temperature
    )
    mixed, greedy = kuhn_exploitability(table), kuhn_exploitability(greedy_table(table))
    return {
        "exact/nash_conv": mixed.nash_conv,
        "exact/exploitability": mixed.exploitability,
        "exact/greedy_exploitability": greedy.exploitability,
    }


CARDS = "JQK"
"""Kuhn's cards, by OpenSpiel's card id."""


def card_policy(table: Mapping[str, Mapping[int, float]], seat: int) -> dict[str, float]:
    """Return P(bet) and P(call) at each card of a Kuhn policy table, as ``"bet/J"``, ...

    OpenSpiel's information states are the card id then the betting (``p`` pass, ``b`` bet);
    action 1 is bet or call. The first seat opens at ``"0"`` and faces a bet at ``"0pb"``; the
    second opens after a check at ``"0p"`` and faces a bet at ``"0b"``.

    Example:
        >>> card_policy({"0": {0: 0.25, 1: 0.75}, "2pb": {0: 0.0, 1: 1.0}}, seat=0)
        {'bet/J': 0.75, 'call/K': 1.0}
    """
    opening, facing = ("", "pb") if seat == 0 else ("p", "b")
    out = {}
    for kind, betting in (("bet", opening), ("call", facing)):
        for card_id, card in enumerate(CARDS):
            probs = table.get(f"{card_id}{betting}")
            if probs is not None:
                out[f"{kind}/{card}"] = float(probs.get(1, 0.0))
    return out


DEFAULT_OPPONENTS = ("conservative", "aggressive", "balanced")
"""MAGE's Kuhn styles: the exact evaluation's opponents when the training opponent is not one."""


def evaluation_opponents(opponent: str | None) -> list[str]:
    """Return the opponents to evaluate against: the training population's members, or the styles.

    Example:
        >>> evaluation_opponents("mage-kuhn-train")
        ['conservative', 'aggressive', 'balanced']
        >>> evaluation_opponents("cfr")
        ['cfr']
        >>> evaluation_opponents("self")  # self-play: the styles
        ['conservative', 'aggressive', 'balanced']
    """
    if opponent is None or opponent == SELF_PLAY:
        return list(DEFAULT_OPPONENTS)
    return list(as_population(opponent).member_names())
