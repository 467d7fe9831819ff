"""Generation calls in step across processes: a fake collective generator counts them.

Two "processes" (threads) each play their own trials through the trainer's real generation
backend and the real rollout engine; their trials end at different turns. The fake generator is
collective the way TRL's vLLM server mode is: every process must call it, each time with as many
prompts (TRL slices each process's completions by its own prompt count). With the rounds, every
call is matched; without them the processes fall out of step (a hang on a real run, here a
broken barrier).
"""

import random
import threading

import pytest

pytest.importorskip("torch")
pytest.importorskip("trl")

from mage_agents.prompting import LLMAgent  # noqa: E402
from mage_agents.rollout import collect, plan_groups  # noqa: E402
from mage_agents.tiny_model import build_tiny_model  # noqa: E402
from mage_agents.training.generation import TrainerBackend  # noqa: E402
from mage_agents.training.generation_rounds import GenerationRounds  # noqa: E402

ANSWERS = ["<action>check</action>", "<action>bet</action>", "<action>call</action>", "x"]


class FakeGroup:
    """An all-gather between threads; a barrier that breaks when a process is missing."""

    def __init__(self, size, timeout=3.0):
        self.barrier = threading.Barrier(size, timeout=timeout)
        self.slots = [None] * size

    def all_gather(self, rank, value):
        self.slots[rank] = value
        self.barrier.wait()
        values = list(self.slots)
        self.barrier.wait()
        return values


class FakeTrainer:
    """What TrainerBackend reads of a trainer, with a collective vLLM-like generator."""

    def __init__(self, rank, group, tokenizer, rounds):
        self.rank, self.group, self.processing_class = rank, group, tokenizer
        self.use_vllm, self.generation_rounds = True, rounds
        self.calls = []  # prompts sent at each generation call
        self.random = random.Random(rank)

    def _generate_single_turn(self, prompt_ids, images, fields, num_generations):
        counts = self.group.all_gather(self.rank, len(prompt_ids))
        if len(set(counts)) > 1:  # TRL's server mode slices completions by this count
            raise AssertionError(f"processes sent {counts} prompts to one collective call")
        self.calls.append(len(prompt_ids))
        texts = [self.random.choice(ANSWERS) for _ in prompt_ids]
        ids = [self.processing_class(t, add_special_tokens=False)["input_ids"] for t in texts]
        return ids, [[-1.0] * len(i) for i in ids]


def play(rank, group, tokenizer, aligned, trials, episodes, results):
    rounds = None
    if aligned:
        rounds = GenerationRounds(lambda mine: group.all_gather(rank, list(mine)), True)
    trainer = FakeTrainer(rank, group, tokenizer, rounds)
    backend = TrainerBackend(trainer)
    plans = plan_groups(
        "mage/KuhnPoker-v0",
        list(range(10 * rank, 10 * rank + trials)),
        2,
        trial={"num_episodes": episodes},
        env_kwargs={"max_invalid_actions": 2},
        seed=rank,
    )
    try:
        done = collect(plans, lambda: LLMAgent(backend, "zero-shot"), batch_size=len(plans))
        drained = backend.drain()
        results[rank] = {"calls": trainer.calls, "drained": drained, "trials": done}
    except Exception as error:  # noqa: BLE001 - the other thread's failure is what we look at
        results[rank] = {"error": error}
        group.barrier.abort()


def run(aligned, trials=(3, 1), episodes=(3, 1)):
    """Process 0: 3 groups of 3-episode trials; process 1: one group of one-hand trials."""
    _, tokenizer = build_tiny_model(seed=0)
    group, results = FakeGroup(len(trials)), {}
    threads = [
        threading.Thread(target=play, args=(rank, group, tokenizer, aligned, n, e, results))
        for rank, (n, e) in enumerate(zip(trials, episodes, strict=True))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


def test_every_process_makes_the_same_generation_calls_with_the_rounds():
    results = run(aligned=True)
    assert all("error" not in r for r in results.values()), results
    first, second = results[0], results[1]
    assert len(first["trials"]) == 6 and len(second["trials"]) == 2
    turns = [sum(len(t.turns) for t in r["trials"]) for r in (first, second)]
    assert turns[0] > turns[1]  # the second process's trials end first
    assert first["calls"] == second["calls"] and len(first["calls"]) > 0
    assert second["drained"] > 0  # it kept answering the first's rounds with dummy prompts


def test_without_the_rounds_the_processes_fall_out_of_step():
    results = run(aligned=False)
    errors = [r["error"] for r in results.values() if "error" in r]
    assert errors, "the unaligned processes happened to stay in step: the test cannot tell"
    # the engine reports a generator's failure as the backend's (BackendFailure), naming it
    assert all("BrokenBarrierError" in repr(e) or "AssertionError" in repr(e) for e in errors), (
        errors
    )


def test_one_process_needs_no_exchange():
    rounds = GenerationRounds(lambda mine: [list(mine)], pad_to_largest=False)
    assert rounds.generate([[1], [2]], [0], lambda prompts: [p[0] for p in prompts]) == [1, 2]
    assert rounds.generate([], [0], lambda prompts: pytest.fail("no call")) == []
    assert rounds.drain([0], lambda prompts: pytest.fail("no call")) == 0
    # without padding to the largest, an idle process sends one dummy prompt
    lone = GenerationRounds(lambda mine: [list(mine), [1, 5]], pad_to_largest=False)
    assert lone.generate([], [0], lambda prompts: [len(prompts)]) == [] and lone.calls == 1
