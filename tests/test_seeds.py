"""The one child-seed rule: derivations are distinct and stable, draws take one step of a stream."""

from __future__ import annotations

import random

import numpy as np
import pytest

import mage_envs  # noqa: F401  (registers the ids)
from baselines.evaluate.runner import plan_trials
from mage_agents.rollout import plan_groups
from mage_envs.seeds import SEED_BITS, child_seed, draw_seed


def test_child_seeds_are_stable_across_processes_and_versions():
    # Pinned: SeedSequence(parent, spawn_key=path), top 31 bits. A change here changes every
    # seeded agent and search bot, so it must be a deliberate, documented break.
    assert [child_seed(0, k) for k in range(3)] == [1878776328, 336614359, 1620722436]
    assert child_seed(7, 3, 1) == child_seed(np.int64(7), np.uint32(3), 1)


def test_child_seeds_are_distinct_per_path_and_31_bits_wide():
    paths = [(p, a, b) for p in range(20) for a in range(10) for b in range(10)]
    paths += [(p, a) for p in range(20) for a in range(10)] + [(p,) for p in range(20)]
    seeds = [child_seed(*path) for path in paths]
    assert len(set(seeds)) == len(paths)  # (s,), (s, 0) and (s, 0, 0) included
    assert all(0 <= s < 2**SEED_BITS for s in seeds)
    assert 0 <= child_seed(2**130 + 5, 2**40) < 2**31  # any width of parent


def test_negative_seeds_are_refused_clearly():
    with pytest.raises(ValueError, match="non-negative"):
        child_seed(-1, 0)
    with pytest.raises(ValueError, match="non-negative"):
        child_seed(3, 0, -2)


def test_a_drawn_seed_is_the_next_31_bits_of_the_stream_in_one_draw():
    stdlib, reference = random.Random(9), random.Random(9)
    assert [draw_seed(stdlib) for _ in range(5)] == [reference.getrandbits(31) for _ in range(5)]
    ours, theirs = np.random.default_rng(9), np.random.default_rng(9)
    drawn = [draw_seed(ours) for _ in range(5)]
    assert drawn == [int(theirs.bit_generator.random_raw()) >> 33 for _ in range(5)]
    assert ours.bit_generator.state == theirs.bit_generator.state  # one raw draw each, no more
    assert all(0 <= s < 2**31 for s in drawn) and len(set(drawn)) == 5


def test_the_runner_and_the_rollout_plans_derive_agent_seeds_with_it():
    specs = plan_trials("random", ["mage/KuhnPoker-v0"], ["aggressive"], tasks=2, repeats=3)
    assert [s.seed for s in specs] == [child_seed(s.task_seed, s.repeat) for s in specs]
    plans = plan_groups("mage/KuhnPoker-v0", [4, 9], 3, seed=5)
    assert [p.seed for p in plans] == [child_seed(t, k, 5) for t in (4, 9) for k in range(3)]
    plain = plan_groups("mage/KuhnPoker-v0", [4], 3)  # no stream: the evaluation's own seeds
    assert [p.seed for p in plain] == [child_seed(4, k) for k in range(3)]
