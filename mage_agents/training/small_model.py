"""The settings that make a small model learn from scratch through the trainer (docs/learning.md).

A pretrained LLM writes its moves as free text and keeps the published scalings, which are
:class:`~mage_agents.training.MetaRLConfig`'s own defaults. A small model trained from random
weights (the tiny model of :mod:`mage_agents.tiny_model`, or anything of that size) does not: it
puts almost all its mass on invalid text, saturates on a card-blind policy, and never recovers.
These defaults made 10 of 10 seeds reach Kuhn poker's best response (docs/learning.md, part 1);
:meth:`MetaRLConfig.for_small_model` and the training configs' ``defaults: small-model`` apply
them wherever a setting is not given.
"""

from __future__ import annotations

__all__ = ["SMALL_MODEL_DEFAULTS", "SMALL_MODEL_INIT_STD"]

SMALL_MODEL_DEFAULTS = {
    "action_choice": "legal",  # sample among the legal moves: no mass on invalid text
    "exploration_floor": 0.1,  # a uniform legal move mixed into training samples
    "exploration_correction": False,  # corrected, a dropped move is never learned again
    "scale_advantages": "batch",  # the group std erases the size of a win
    "entropy_coef": 0.3,  # keeps the policy soft until it tells its states apart
    "learning_rate": 3e-3,
    "strategy": "terse",  # the observation alone: about half the tokens
}
"""MetaRLConfig settings for a small model trained from scratch."""

SMALL_MODEL_INIT_STD = 0.125
"""Init std of the 64-wide tiny model (1/sqrt(hidden)): at transformers' 0.02 the attention
paths start ~1e-3 of the residual stream and the policy never reads its input."""
