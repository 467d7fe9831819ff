"""The trainer's weights into a colocated vLLM engine on a CPU, through vLLM's own reload.

TRL syncs a colocated engine by loading each parameter in place (``model.load_weights``). vLLM's
CPU backend repacks every linear layer's weight for its matrix kernels once the model is loaded,
which leaves the layer's parameter empty and without its weight loader: there that load fails
("'Parameter' object has no attribute 'weight_loader'"). vLLM's ``reload_weights`` (the model
runner's) puts the layers back in checkpoint form, loads the weights and repacks them, and is the
path taken on a CPU. On a GPU, TRL's own sync stays.
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["reload_weights", "sync_by_reload_on_cpu"]


def reload_weights(generation: Any) -> None:
    """Load the trainer's current weights into ``generation``'s colocated engine.

    Args:
        generation: TRL's ``VLLMGeneration`` in colocate mode (its ``llm`` and the trainer's
            parameters under vLLM's names, LoRA adapters merged, from ``_iter_named_params``).
    """
    runner = generation.llm.llm_engine.model_executor.driver_worker.model_runner
    runner.reload_weights(weights_iterator=generation._iter_named_params())
    generation.llm.reset_prefix_cache()  # cached prompts were computed with the old weights


def sync_by_reload_on_cpu(generation: Any) -> bool:
    """Make a colocated engine on a CPU sync through :func:`reload_weights`; say whether it did."""
    from vllm.platforms import current_platform

    if generation.mode != "colocate" or not current_platform.is_cpu():
        return False
    generation.sync_weights = functools.partial(reload_weights, generation)
    return True
