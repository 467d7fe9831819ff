"""Where a loaded model runs: its device and dtype, and hub kernels off unless asked for.

A model that generates (``local:`` agents, league snapshots, the server) runs on CUDA when the
machine has it, in bf16 where the card supports it, unless its ``device`` says otherwise.
``transformers`` >= 5 swaps layers for kernels from the Hub by default, fetched when the model
first runs on a GPU (or is put in train mode there): a machine without network cannot load such a
model, so every loader here passes :func:`kernel_options` (off unless asked for).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

__all__ = ["AUTO", "choose_device", "generation_dtype", "kernel_options", "hub_kernels_allowed"]

AUTO = "auto"
"""The device setting that picks CUDA when there is one, else the CPU."""


def choose_device(device: str | None = AUTO) -> str:
    """The device a model runs on: ``auto`` (or ``None``) is CUDA when available, else the CPU.

    Raises:
        ValueError: For a device torch does not know, or CUDA on a machine without it.

    Example:
        >>> choose_device("cpu")
        'cpu'
    """
    import torch

    if device in (None, AUTO):
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        chosen = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(f"device {device!r}: give auto, cpu, cuda or cuda:N.") from None
    if chosen.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            f"device {device!r}: torch sees no CUDA device on this machine (torch "
            f"{torch.__version__}); give auto or cpu."
        )
    return str(chosen)


def generation_dtype(device: str) -> Any:
    """The dtype to generate in on ``device``: bf16 on a CUDA card that has it, else ``None``.

    ``None`` keeps the weights as loaded (a CPU generates fastest in the saved float32, and a
    card without bf16 keeps what was saved).

    Example:
        >>> generation_dtype("cpu") is None
        True
    """
    import torch

    if torch.device(device).type == "cuda" and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return None


def kernel_options(hub_kernels: bool = False) -> dict[str, Any]:
    """``from_pretrained``'s keyword for hub kernels: on only when asked for.

    ``transformers`` before 5 has them off by default (and before 4.54 no such keyword), so
    nothing is passed there unless they are asked for.

    Example:
        >>> kernel_options(hub_kernels=True)
        {'use_kernels': True}
    """
    if hub_kernels:
        return {"use_kernels": True}
    import transformers

    major = int(transformers.__version__.split(".")[0])
    return {"use_kernels": False} if major >= 5 else {}


@contextlib.contextmanager
def hub_kernels_allowed(allowed: bool) -> Iterator[None]:
    """Inside the block, models others load (TRL's reference copy) use hub kernels if ``allowed``.

    When they are not, ``USE_HUB_KERNELS=0`` while the block runs, then as it was.
    """
    if allowed:
        yield
        return
    before = os.environ.get("USE_HUB_KERNELS")
    os.environ["USE_HUB_KERNELS"] = "0"
    try:
        yield
    finally:
        if before is None:
            del os.environ["USE_HUB_KERNELS"]
        else:
            os.environ["USE_HUB_KERNELS"] = before
