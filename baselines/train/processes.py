"""``train`` under ``accelerate launch``: the output folder is decided and written once.

Every process of a launch runs ``train``. The folder's fate (new, resume, finished, refused,
``--restart`` removing the old run) is decided by the main process alone and sent to the others
(:func:`decided_on_main`), so that no process removes what another is writing; the files of the
run (``config.yaml``, the base model of a KL reference, the final state, the metrics, curves and
``index.html``) are written by the main process (:func:`on_main`); TRL writes checkpoints and
models once itself. With one process both are plain calls.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["decided_on_main", "on_main", "is_main", "launch_line"]

T = TypeVar("T")


def is_main(config: Any) -> bool:
    """Whether this is the main process of ``config``'s launch (the only one without a launch)."""
    return int(config.process_index) == 0


def _world(config: Any) -> int:
    return int(config.world_size)


def decided_on_main(config: Any, decide: Callable[[], T]) -> T:
    """Run ``decide`` on the main process and return its result on every process.

    Raises:
        ValueError: On every process, when ``decide`` raised it on the main one.
    """
    if _world(config) == 1:
        return decide()
    from accelerate.utils import broadcast_object_list

    answer: list[Any] = [None]
    if is_main(config):
        try:
            answer = [("ok", decide())]
        except ValueError as error:
            answer = [("error", str(error))]
    broadcast_object_list(answer, from_process=0)
    kind, value = answer[0]
    if kind == "error":
        raise ValueError(value)
    return value


def on_main(config: Any, write: Callable[[], Any]) -> None:
    """Run ``write`` on the main process; the others wait until it is done."""
    if is_main(config):
        write()
    if _world(config) > 1:
        from accelerate.state import PartialState

        PartialState().wait_for_everyone()


def launch_line(config: Any) -> str:
    """What the launch is: one process, or N processes and their backend (empty for one).

    ``accelerate launch --cpu --num_processes N`` starts one process on a machine without GPUs
    (its simple launcher); this line says how many really run.
    """
    world = _world(config)
    if world == 1:
        return ""
    backend = getattr(config.distributed_state, "backend", None) or "?"
    trials = config.per_device_train_batch_size * config.steps_per_generation
    return f"{world} processes ({backend}): {trials} trials each a step, {world * trials} in all."
