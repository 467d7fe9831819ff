"""What ``MetaRLTrainer`` relies on inside TRL's ``GRPOTrainer``, checked at once.

TRL has no public hook for per-turn samples, so the trainer overrides a private method and calls
others. Private methods change without notice: :func:`trl_contract_problems` compares the installed
TRL with the shapes we were written against (TRL 1.16) and names every method that moved, so a TRL
upgrade fails loudly at trainer construction (and in the contract test), not silently in the loss.
"""

from __future__ import annotations

import inspect

__all__ = ["TRL_RANGE", "REQUIRED_METHODS", "LOSS_INPUT_KEYS", "trl_contract_problems"]

TRL_RANGE = ">=1.16,<1.17"
"""The TRL versions this trainer is written against (pinned in pyproject.toml)."""

REQUIRED_METHODS: dict[str, tuple[str, ...]] = {
    # overridden: one sample row per model turn, with its own advantage
    "_generate_and_score_completions": ("self", "inputs"),
    # calls it: shuffles and splits our batch into steps_per_generation chunks
    "_prepare_inputs": ("self", "generation_batch"),
    # called to generate (transformers or vLLM, weight sync included)
    "_generate_single_turn": (
        "self",
        "prompt_ids",
        "images",
        "multimodal_fields",
        "num_generations",
    ),
    # called for old and reference log-probs
    "_get_per_token_logps_and_entropies": (
        "self",
        "model",
        "input_ids",
        "attention_mask",
        "logits_to_keep",
        "batch_size",
    ),
    # overridden: our state (evaluation record, best value) survives resume
    "_save_checkpoint": ("self", "model", "trial"),
}
"""GRPOTrainer methods and the leading parameters we pass or receive."""

LOSS_INPUT_KEYS = (
    "prompt_ids",
    "prompt_mask",
    "completion_ids",
    "completion_mask",
    "advantages",
    "num_items_in_batch",
    "old_per_token_logps",
    "ref_per_token_logps",
)
"""Keys of the batch that ``GRPOTrainer._compute_loss`` must read (we produce them)."""


def trl_contract_problems() -> list[str]:
    """Return what differs from the GRPOTrainer shape the trainer relies on (empty: all good)."""
    import trl
    from trl import GRPOTrainer

    problems = []
    for name, leading in REQUIRED_METHODS.items():
        method = getattr(GRPOTrainer, name, None)
        if method is None:
            problems.append(f"GRPOTrainer.{name} no longer exists (TRL {trl.__version__}).")
            continue
        params = tuple(inspect.signature(method).parameters)[: len(leading)]
        if params != leading:
            problems.append(
                f"GRPOTrainer.{name} now takes {params}, not {leading} (TRL {trl.__version__})."
            )
    loss_source = inspect.getsource(GRPOTrainer._compute_loss)
    for key in LOSS_INPUT_KEYS:
        if f'"{key}"' not in loss_source:
            problems.append(f"GRPOTrainer._compute_loss no longer reads inputs[{key!r}].")
    if "advantages.dim() == 1" not in loss_source:
        problems.append(
            "GRPOTrainer._compute_loss may no longer accept per-token (N, C) advantages."
        )
    if not hasattr(GRPOTrainer, "_metrics") and "_metrics" not in inspect.getsource(
        GRPOTrainer.__init__
    ):
        problems.append("GRPOTrainer no longer logs through self._metrics.")
    return problems
