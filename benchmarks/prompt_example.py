"""Benchmark: what the example move in the zero-shot instruction does to a model's moves.

The zero-shot instruction ends with an example answer. A small model may copy it: the example
then chooses its move. This asks for the first Kuhn poker decision of ``--deals`` deals in each
seat (first to act: check or bet; second, facing the aggressive style's bet: fold or call) with
four wordings of the instruction, and prints per wording and decision

- the moves sampled (``--samples`` answers per prompt), the invalid and off-format rates;
- the model's preference between the on-format answers: the probability of
  ``<action>bet</action>`` (or ``call``) among the decision's two on-format answers, from their
  log-likelihoods after the prompt (teacher forcing), averaged over the prompts. Unlike the
  sampled moves, which a small model mostly writes off-format or not at all, it shows the pull
  of the example directly;

for these wordings:

- ``bet``: "... for example <action>bet</action>." (the wording before this benchmark);
- ``none``: no example;
- ``rotating``: the example is one of the decision's legal moves, taking turns from prompt to
  prompt;
- ``placeholder``: "... for example <action>MOVE</action>", a word that is never a move.

Run: ``python -m benchmarks prompt_example [--model smollm2-135m] [--deals 24]
[--samples 2]`` (temperature 0.7, top_p 0.8, top_k 20, 32 new tokens, stop at ``</action>``).
"""

from __future__ import annotations

import argparse
import os
from collections import Counter
from typing import Any

from benchmarks import positive_int
from mage_agents.prompting import ZeroShot, read_move
from mage_envs.meta.make import make_trial
from mage_envs.parsing import parse_action

__all__ = ["main", "WORDINGS", "decisions"]

BASE = "Choose exactly one legal move. Reply with the move alone inside <action></action> tags"

WORDINGS = {
    "bet": lambda legal, i: f"{BASE}, for example <action>bet</action>.",
    "none": lambda legal, i: f"{BASE}.",
    "rotating": lambda legal, i: f"{BASE}, for example <action>{legal[i % len(legal)]}</action>.",
    "placeholder": lambda legal, i: f"{BASE}, for example <action>MOVE</action>.",
}
"""Wording name -> f(legal moves, prompt index) -> the play instruction."""

ALIASES = {"check/bet": {"pass": "check"}, "fold/call": {"pass": "fold", "bet": "call"}}
"""The Kuhn env's aliases (``bet`` is a call when facing a bet): what the env accepts."""


def decisions(deals: int) -> list[tuple[str, str, dict[str, Any]]]:
    """Return ``(kind, observation, info)`` for the first decision of each deal and seat."""
    found = []
    for seat, kind in (("first", "check/bet"), ("second", "fold/call")):
        for seed in range(deals):
            env = make_trial("mage/KuhnPoker-v0", num_episodes=1, opponent="aggressive", seat=seat)
            observation, info = env.reset(seed=seed)
            found.append((kind, observation, info))
    return found


def _chats(wording: str, states: list, samples: int) -> list:
    strategy = ZeroShot()
    chats = []
    for i in range(len(states) * samples):
        _, observation, info = states[i % len(states)]
        turn = i + i // len(states)  # each sample of a prompt gets the next move as example
        strategy.play_instruction = WORDINGS[wording](info["legal_actions"], turn)
        chats.append(strategy.chat(observation, info, []))
    return chats


def preference(backend: Any, chats: list, legal: list[list[str]]) -> list[float]:
    """Return, per chat, the probability of its second move's on-format answer among both."""
    import torch

    from mage_agents.local_model import render_chat

    tokenizer, model = backend.tokenizer, backend.model
    shares = []
    for chat, moves in zip(chats, legal, strict=True):
        prompt = render_chat(tokenizer, chat)
        width = len(tokenizer(prompt, add_special_tokens=False)["input_ids"])
        scores = []
        for move in moves:
            ids = tokenizer(prompt + f"<action>{move}</action>", add_special_tokens=False)
            ids = torch.tensor([ids["input_ids"]])
            with torch.inference_mode():
                logits = model(ids).logits[0, width - 1 : -1].float()
            picked = torch.log_softmax(logits, -1).gather(-1, ids[0, width:, None])
            scores.append(float(picked.sum()))
        shares.append(float(torch.softmax(torch.tensor(scores), 0)[1]))
    return shares


def main(argv: list[str]) -> None:
    """Run the benchmark and print one table per wording."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks prompt_example")
    parser.add_argument("--model", default="smollm2-135m", help="a fetched name or a folder")
    parser.add_argument("--deals", type=positive_int, default=24)
    parser.add_argument("--samples", type=positive_int, default=2, help="answers per prompt")
    args = parser.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    from mage_agents.local_model import LocalModelBackend

    torch.set_num_threads(1)
    backend = LocalModelBackend(
        args.model, temperature=0.7, top_p=0.8, top_k=20, max_new_tokens=32, batch_size=16
    )
    states = decisions(args.deals)
    print(f"{args.model}: {args.deals} deals x 2 seats x {args.samples} samples per wording")
    head = f"{'wording':<12}{'decision':<11}{'moves sampled':<28}{'invalid':>8}{'off-format':>11}"
    print(head + f"{'P(bet|call) on-format':>23}")
    for wording in WORDINGS:
        chats = _chats(wording, states, args.samples)
        legal = [states[i % len(states)][2]["legal_actions"] for i in range(len(chats))]
        scored = preference(backend, chats, legal)
        replies = backend.generate(chats)
        played: dict[str, list[tuple[str, bool]]] = {}
        for i, reply in enumerate(replies):
            kind, _, info = states[i % len(states)]
            answer, off_format = read_move(reply.text, info)
            index = parse_action(answer, info["legal_actions"], ALIASES[kind])
            move = "invalid" if index is None else info["legal_actions"][index]
            played.setdefault(kind, []).append((move, off_format))
        for kind, moves in played.items():
            counts = Counter(move for move, _ in moves)
            shown = ", ".join(f"{m} {counts[m] / len(moves):.0%}" for m in kind.split("/"))
            invalid = counts["invalid"] / len(moves)
            off = sum(off for move, off in moves if move != "invalid") / len(moves)
            pulls = [p for i, p in enumerate(scored) if states[i % len(states)][0] == kind]
            pull = sum(pulls) / len(pulls)
            print(f"{wording:<12}{kind:<11}{shown:<28}{invalid:>8.0%}{off:>11.0%}{pull:>23.2f}")
