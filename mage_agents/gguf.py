"""A GGUF file as a dense, saveable ``transformers`` model (what both loaders of a GGUF use).

The model files' loader (:mod:`mage_agents.model_files`) and the fetcher's conversion
(:mod:`mage_agents.pretrained`) both read a GGUF through :func:`load_gguf`; it sits in its own
module so that the two import it, not each other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["load_gguf"]


def load_gguf(path: str | Path, dtype: Any = None, **load_options: Any) -> tuple[Any, Any]:
    """Load a GGUF file as a dense, saveable ``transformers`` model and its tokenizer.

    The file's own metadata gives the config, the tokenizer and the chat template. Quantised
    weights (Q4_1, Q8_0, ...) are unpacked to ``dtype`` (float32 by default); the result is an
    ordinary model: ``save_pretrained`` writes a folder :func:`load_pretrained` reads back.
    ``load_options`` go to the model's ``from_pretrained`` (``use_kernels=False``).
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = Path(path)
    options: dict[str, Any] = {"local_files_only": True, "gguf_file": path.name}
    tokenizer = AutoTokenizer.from_pretrained(path.parent, **options)
    try:
        from transformers import GgufConfig
    except ImportError:  # transformers before 5 always unpacks GGUF weights
        pass
    else:  # not given to the tokenizer: it would keep it and fail to save
        options["quantization_config"] = GgufConfig(dequantize=True)
    model = AutoModelForCausalLM.from_pretrained(path.parent, **options, **load_options)
    _clear_quantizer(model)
    if dtype not in (None, "auto"):
        model = model.to(getattr(torch, dtype) if isinstance(dtype, str) else dtype)
    return model, tokenizer


def _clear_quantizer(model: Any) -> None:
    """Forget the GGUF quantiser once every weight is dense, so that the model saves and trains."""
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is not None:
        packed = [n for n, p in model.named_parameters() if not p.dtype.is_floating_point]
        if packed:  # weights left in GGUF blocks cannot be written back as a normal folder
            raise ValueError(
                f"{len(packed)} weights stayed packed in GGUF blocks (e.g. {packed[0]}); "
                "this transformers cannot unpack them."
            )
        quantizer.remove_quantization_config(model)
    if getattr(model.config, "quantization_config", None) is not None:
        del model.config.quantization_config
    model.is_quantized = False
