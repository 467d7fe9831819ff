"""A model of the peak memory of a training step on one device, from a model's ``config.json``.

No weights are needed: the parameter count follows from the architecture (hidden size, layers,
heads, MLP width, vocabulary), and the rest from the training settings. The parts, in bytes:

* **weights**: parameters x 2 (bf16) or 4; a second copy for a KL reference without LoRA;
* **trainable state**: full fine-tuning keeps a gradient and AdamW's two moments per parameter,
  in the parameters' dtype; a LoRA adapter (PEFT keeps it in float32) 4 + 4 + 8 bytes per
  adapter parameter, ``r x (in + out)`` for each adapted linear layer;
* **activations** of one training forward, kept for its backward: per token and layer, the
  bytes of :data:`ACTIVATION_BYTES`, plus the additive attention mask (dtype bytes x the row's
  width); with gradient checkpointing, each layer's input (hidden x dtype bytes) and one
  layer's activations, recomputed in the backward; plus TRL's fused LM head (the hidden states
  of the scored tokens and one 4096 x 32768 logit tile);
* **vLLM colocate**: ``vllm_gpu_memory_utilization`` x the device's memory (vLLM takes that
  share for its weights and KV cache);
* **runtime**: an allowance for the CUDA context, NCCL buffers and allocator slack (3 GiB; not
  measured here).

The tokens of one forward are ``max_tokens_per_forward`` when it is set; without it, every row of
a micro-batch at the width of the longest (TRL's one forward). :data:`ACTIVATION_BYTES` were
counted with ``torch.autograd.graph.saved_tensors_hooks`` (the tensors autograd keeps for the
backward, parameters excluded) on five small Qwen3 and Llama shapes (head width 16, each
dimension varied on its own) and fit exactly by a linear form; on eleven other shapes (head
widths 8 to 64) it came within 2% wherever there are at least two key-value heads, and over by
4-9% with a single one (``tests/test_training_memory.py`` re-measures three). On a GPU the
attention kernels differ (flash attention keeps no mask): only a GPU run measures there. What it
leaves out: allocator fragmentation,
temporary buffers inside a layer's backward, the no-grad forwards of old and reference
log-probabilities (smaller than the training one), and generation without vLLM (its KV cache).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "ACTIVATION_BYTES",
    "Architecture",
    "TrainingShape",
    "estimate_memory",
    "activation_bytes_per_token",
    "GIB",
    "RUNTIME_ALLOWANCE",
]

GIB = 1024**3

ACTIVATION_BYTES = {
    # (family, dtype bytes): bytes per token and layer = a*hidden + b*q + c*kv + d*mlp + e,
    # q = heads x head_dim, kv = kv_heads x head_dim, mlp = intermediate size
    ("qwen3", 4): (28.0, 24.5, 8.25, 16.0, 30.0),
    ("qwen3", 2): (19.0, 14.5, 6.25, 8.0, 22.0),
    ("llama", 4): (28.0, 16.25, 0.0, 16.0, 30.0),
    ("llama", 2): (19.0, 8.25, 0.0, 8.0, 22.0),
}
"""Saved activations of one decoder layer (SDPA attention), measured (module docstring)."""

LM_HEAD_TILE = (4096, 32768)
"""TRL's fused LM head projects tokens x vocabulary in tiles of this size (TRL 1.16)."""

RUNTIME_ALLOWANCE = 3 * GIB
LORA_LINEARS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


@dataclass(frozen=True)
class Architecture:
    """A decoder-only transformer, as its ``config.json`` describes it.

    Attributes:
        model_type: ``qwen3``, ``llama``, ... (the activation coefficients' family).
        hidden: Hidden size.
        layers: Decoder layers.
        intermediate: MLP width.
        heads: Attention heads.
        kv_heads: Key-value heads.
        head_dim: Width of a head.
        vocab: Vocabulary size.
        tied: Input and output embeddings are one matrix.
    """

    model_type: str
    hidden: int
    layers: int
    intermediate: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    tied: bool

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Architecture:
        """Read the fields of a transformers ``config.json`` (a text config inside, if any)."""
        config = config.get("text_config", config)
        heads = int(config["num_attention_heads"])
        hidden = int(config["hidden_size"])
        return cls(
            model_type=str(config.get("model_type", "llama")),
            hidden=hidden,
            layers=int(config["num_hidden_layers"]),
            intermediate=int(config["intermediate_size"]),
            heads=heads,
            kv_heads=int(config.get("num_key_value_heads") or heads),
            head_dim=int(config.get("head_dim") or hidden // heads),
            vocab=int(config["vocab_size"]),
            tied=bool(config.get("tie_word_embeddings", False)),
        )

    def linears(self) -> dict[str, tuple[int, int]]:
        """``(in, out)`` of each linear layer of one decoder layer, by PEFT's module names."""
        h, mlp = self.hidden, self.intermediate
        q, kv = self.heads * self.head_dim, self.kv_heads * self.head_dim
        return {
            "q_proj": (h, q),
            "k_proj": (h, kv),
            "v_proj": (h, kv),
            "o_proj": (q, h),
            "gate_proj": (h, mlp),
            "up_proj": (h, mlp),
            "down_proj": (mlp, h),
        }

    def parameters(self) -> int:
        """The parameter count (embeddings once if tied).

        Example:
            >>> qwen3_4b = Architecture("qwen3", 2560, 36, 9728, 32, 8, 128, 151936, True)
            >>> round(qwen3_4b.parameters() / 1e9, 3)
            4.022
        """
        per_layer = sum(a * b for a, b in self.linears().values()) + 2 * self.hidden
        if self.model_type.startswith("qwen3"):
            per_layer += 2 * self.head_dim  # q_norm, k_norm
        embeddings = self.vocab * self.hidden * (1 if self.tied else 2)
        return self.layers * per_layer + embeddings + self.hidden

    def lora_parameters(self, rank: int, targets: Any = "all-linear") -> int:
        """Parameters of a LoRA adapter of ``rank`` on ``targets`` (``all-linear``: every one)."""
        names = LORA_LINEARS if targets in ("all-linear", None) else tuple(targets)
        shapes = self.linears()
        return self.layers * sum(rank * sum(shapes[n]) for n in names if n in shapes)


def _family(model_type: str) -> str:
    return "qwen3" if model_type.startswith("qwen3") else "llama"


def activation_bytes_per_token(arch: Architecture, dtype_bytes: int, width: int) -> float:
    """Bytes one decoder layer keeps for the backward, per token, rows ``width`` tokens wide."""
    a, b, c, d, e = ACTIVATION_BYTES[(_family(arch.model_type), 4 if dtype_bytes >= 4 else 2)]
    q, kv = arch.heads * arch.head_dim, arch.kv_heads * arch.head_dim
    layer = a * arch.hidden + b * q + c * kv + d * arch.intermediate + e
    return layer + dtype_bytes * width  # the additive attention mask, one row of it per token


@dataclass(frozen=True)
class TrainingShape:
    """What a training step holds on one device, besides the model.

    Attributes:
        tokens: Padded tokens of one training forward.
        width: Tokens of its widest row (prompt and completion).
        scored: Completion tokens the LM head scores in that forward.
        dtype_bytes: 2 for bf16 / fp16, 4 for float32.
        lora_rank: LoRA rank, or ``None`` for full fine-tuning.
        lora_targets: The adapted linear layers (``all-linear``: all of them).
        gradient_checkpointing: Layers recompute their activations in the backward.
        reference_copy: A second model for the KL term (``beta != 0`` without LoRA).
        vllm_bytes: vLLM's colocated share of the device (0: none or server mode).
        runtime_bytes: The CUDA context, NCCL and allocator allowance (0 on a CPU).
    """

    tokens: int
    width: int
    scored: int
    dtype_bytes: int = 2
    lora_rank: int | None = None
    lora_targets: Any = "all-linear"
    gradient_checkpointing: bool = True
    reference_copy: bool = False
    vllm_bytes: float = 0.0
    runtime_bytes: float = RUNTIME_ALLOWANCE


def estimate_memory(arch: Architecture, shape: TrainingShape) -> dict[str, float]:
    """Return the peak memory of a training step by part, in bytes (``total`` their sum).

    Example:
        >>> qwen3_4b = Architecture("qwen3", 2560, 36, 9728, 32, 8, 128, 151936, True)
        >>> shape = TrainingShape(tokens=32768, width=4096, scored=8192, lora_rank=32)
        >>> parts = estimate_memory(qwen3_4b, shape)
        >>> {k: round(v / GIB, 1) for k, v in parts.items()}  # doctest: +NORMALIZE_WHITESPACE
        {'weights': 7.5, 'trainable state': 1.0, 'activations': 11.7, 'lm head': 0.3,
         'vllm': 0.0, 'runtime': 3.0, 'total': 23.5}
    """
    b = shape.dtype_bytes
    weights = arch.parameters() * b * (2 if shape.reference_copy else 1)
    if shape.lora_rank:
        trainable = arch.lora_parameters(shape.lora_rank, shape.lora_targets) * (4 + 4 + 8)
    else:
        trainable = arch.parameters() * 3 * b  # gradient, AdamW's two moments
    layer = activation_bytes_per_token(arch, b, shape.width)
    if shape.gradient_checkpointing:
        activations = shape.tokens * (arch.layers * arch.hidden * b + layer)
    else:
        activations = shape.tokens * arch.layers * layer
    rows, columns = LM_HEAD_TILE
    tile = min(shape.scored, rows) * min(arch.vocab, columns) * b
    lm_head = shape.scored * arch.hidden * b + tile
    if not shape.lora_rank:  # the head's weight gradient, accumulated in float32
        lm_head += arch.vocab * arch.hidden * 4
    parts = {
        "weights": float(weights),
        "trainable state": float(trainable),
        "activations": float(activations),
        "lm head": float(lm_head),
        "vllm": float(shape.vllm_bytes),
        "runtime": float(shape.runtime_bytes),
    }
    parts["total"] = sum(parts.values())
    return parts
