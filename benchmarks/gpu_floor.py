"""What the device can do, measured in the same run: copy bandwidth, a matmul's FLOP/s.

The references of ``python -m benchmarks gpu`` (:mod:`.gpu`): a decode step cannot be faster
than reading the weights once (their bytes / the device-to-device copy bandwidth), and an update
cannot run faster than the device's matmuls in the update's dtype. Also the FLOPs an update's
forwards count, from the model's parameters and the tokens they read.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

__all__ = ["copy_bandwidth", "matmul_flops", "update_flops", "synchronize"]


def synchronize(device: str) -> None:
    """Wait for the device's queued work (CUDA runs asynchronously; a CPU does not)."""
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _best_seconds(run: Callable[[], Any], device: str, repeats: int) -> float:
    """The fastest of ``repeats`` timed runs, after one warm-up."""
    run()
    synchronize(device)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        synchronize(device)
        best = min(best, time.perf_counter() - start)
    return best


def copy_bandwidth(device: str, megabytes: int, repeats: int = 5) -> float:
    """Bytes a second a device-to-device copy moves (read and written, so 2 x its size).

    Example:
        >>> copy_bandwidth("cpu", megabytes=1, repeats=1) > 0
        True
    """
    import torch

    source = torch.empty(megabytes * 2**20, dtype=torch.uint8, device=device)
    target = torch.empty_like(source)
    seconds = _best_seconds(lambda: target.copy_(source), device, repeats)
    return 2 * source.numel() / seconds


def matmul_flops(device: str, size: int, dtype: Any, repeats: int = 5) -> float:
    """FLOP/s of a ``size``-square matmul in ``dtype`` on random data (``2 x size^3`` a product).

    Example:
        >>> import torch
        >>> matmul_flops("cpu", 64, torch.float32, repeats=1) > 0
        True
    """
    import torch

    generator = torch.Generator(device=device).manual_seed(0)
    a = torch.randn(size, size, device=device, dtype=dtype, generator=generator)
    b = torch.randn(size, size, device=device, dtype=dtype, generator=generator)
    return 2 * size**3 / _best_seconds(lambda: a @ b, device, repeats)


def update_flops(
    parameters: int, trained_tokens: int, scored_tokens: int, lora: bool, checkpointing: bool
) -> float:
    """Matmul FLOPs of an update's forwards and backwards over the model's weights.

    A forward is 2 FLOPs a parameter a token; a backward is 2 more for the inputs' gradients,
    and 2 more for the weights' gradients unless the weights are frozen (LoRA, whose adapter is
    small enough to leave out); gradient checkpointing runs each forward twice. Forwards without
    gradients (old and reference log-probabilities) are ``scored_tokens``. Attention's own
    products (quadratic in the width) are left out, so this undercounts long rows.

    Example:
        >>> update_flops(10, trained_tokens=3, scored_tokens=1, lora=True, checkpointing=True)
        200.0
    """
    passes = 2 + 2 + (0 if lora else 2) + (2 if checkpointing else 0)
    return float(parameters * (passes * trained_tokens + 2 * scored_tokens))
