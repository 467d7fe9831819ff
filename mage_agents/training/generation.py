"""The policy being trained, as a generation :class:`~mage_agents.base.Backend` for the engine.

The rollout engine asks a backend for one completion per chat. During training that backend is
the trainer's own model with TRL's generation settings (``temperature``, ``top_p``, ``top_k``,
``max_completion_length``, ``generation_kwargs``) and prompts rendered with its
``chat_template_kwargs``: with ``use_vllm`` it calls TRL's
``_generate_single_turn`` (vLLM, weight sync included); otherwise it runs ``generate`` on the
unwrapped model with the answer stop strings, so a turn ends at ``</action>`` instead of running
to ``max_completion_length``. Every reply carries the token ids TRL trains on.

With several processes the trainer's :class:`~.generation_rounds.GenerationRounds` keeps the
generation calls in step (``trainer.generation_rounds``): each call is a round in which every
process takes part, with dummy prompts where it has none, and :meth:`TrainerBackend.drain`
answers the others' rounds once this process's trials are over.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator, Sequence
from typing import Any

import torch

from mage_agents.base import Chat, Reply
from mage_agents.local_model import DEFAULT_STOPS, render_chat

__all__ = ["TrainerBackend", "cut_completion"]


def cut_completion(
    ids: Sequence[int], tokenizer: Any, stops: Sequence[str], ends: set[int]
) -> list[int]:
    """Return the completion up to its first stop string or end token (the end token kept).

    Example:
        >>> class Tok:
        ...     def decode(self, ids, skip_special_tokens=True):
        ...         return "".join(chr(96 + i) for i in ids if i > 0)
        >>> cut_completion([1, 2, 3, 4], Tok(), ["bc"], {0})
        [1, 2, 3]
        >>> cut_completion([1, 0, 0], Tok(), ["zz"], {0})
        [1, 0]
    """
    ids = list(ids)
    end = next((i + 1 for i, token in enumerate(ids) if token in ends), len(ids))
    ids = ids[:end]

    def stopped(n: int) -> bool:
        text = tokenizer.decode(ids[:n])
        return any(stop in text for stop in stops)

    if not stops or not stopped(len(ids)):
        return ids
    low, high = 1, len(ids)  # the shortest prefix that holds a stop string: "stopped" is monotone
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if stopped(middle) else (middle + 1, high)
    return ids[:low]


class TrainerBackend:
    """Generates with the model a :class:`~trl.GRPOTrainer` is training.

    Args:
        trainer: The trainer (its model, tokenizer, generation config and vLLM client).
        stop_strings: Generation of a turn stops once its text contains one of these.
    """

    name = "policy"

    def __init__(self, trainer: Any, stop_strings: Sequence[str] = DEFAULT_STOPS) -> None:
        self.trainer = trainer
        self.tokenizer = trainer.processing_class
        self.stop_strings = list(stop_strings)
        self._ends = {trainer.processing_class.eos_token_id} - {None}
        self._ends |= set(getattr(trainer, "eos_token_ids", None) or [])
        # TRL's chat_template_kwargs (e.g. Qwen3's enable_thinking) shape every prompt
        self.template_kwargs = dict(getattr(trainer, "chat_template_kwargs", None) or {})

    def generate(self, chats: Sequence[Chat]) -> list[Reply]:
        """Return one reply per chat, with its prompt and completion ids."""
        templated = bool(getattr(self.tokenizer, "chat_template", None))
        texts = [
            render_chat(self.tokenizer, chat, template_kwargs=self.template_kwargs)
            for chat in chats
        ]
        prompt_ids = (
            self.tokenizer(texts, add_special_tokens=not templated)["input_ids"] if texts else []
        )
        rounds = getattr(self.trainer, "generation_rounds", None)
        if rounds is None:
            completions, logprobs = self._call(prompt_ids)
        else:
            outputs = rounds.generate(prompt_ids, self._dummy(), self._pairs)
            completions = [c for c, _ in outputs]
            logprobs = [p for _, p in outputs] if self.trainer.use_vllm else None
        replies = []
        for k, (prompt, raw) in enumerate(zip(prompt_ids, completions, strict=True)):
            ids = cut_completion(raw, self.tokenizer, self.stop_strings, self._ends)
            text = self.tokenizer.decode(ids, skip_special_tokens=True)
            replies.append(
                Reply(
                    text,
                    len(prompt),
                    len(ids),
                    prompt_ids=tuple(prompt),
                    completion_ids=tuple(ids),
                    logprobs=None if logprobs is None else tuple(logprobs[k][: len(ids)]),
                )
            )
        return replies

    @contextlib.contextmanager
    def sampling(self, **settings: Any) -> Iterator[None]:
        """Generate with other generation settings inside the block (e.g. ``temperature=0.7``).

        For evaluating at the papers' sampling while training samples at its own; vLLM
        generation keeps TRL's settings.
        """
        saved = self._config()
        changed = copy.deepcopy(saved)
        for name, value in settings.items():
            setattr(changed, name, value)
        self._stopping = changed
        try:
            yield
        finally:
            self._stopping = saved

    def drain(self) -> int:
        """Take part in the other processes' generation calls until all trials are over.

        Returns the rounds taken (0 with one process: there are no others to wait for).
        """
        rounds = getattr(self.trainer, "generation_rounds", None)
        return 0 if rounds is None else rounds.drain(self._dummy(), self._pairs)

    def _call(self, prompt_ids: list[list[int]]) -> tuple[list, list | None]:
        """One generation call: (completion ids, their log-probs with vLLM, else ``None``)."""
        if self.trainer.use_vllm:
            return self.trainer._generate_single_turn(prompt_ids, None, {}, 1)
        return self._generate(prompt_ids), None

    def _pairs(self, prompt_ids: list[list[int]]) -> list[tuple[list, Any]]:
        completions, logprobs = self._call(prompt_ids)
        return list(zip(completions, logprobs or [None] * len(completions), strict=True))

    def _dummy(self) -> list[int]:
        """The prompt a process sends when it has none: one end token (its answer is dropped)."""
        token = self.tokenizer.eos_token_id
        return [self.tokenizer.pad_token_id if token is None else token]

    def _config(self) -> Any:
        """TRL's generation config, with the answer stop strings."""
        if getattr(self, "_stopping", None) is None:
            self._stopping = copy.deepcopy(self.trainer.generation_config)
            self._stopping.stop_strings = self.stop_strings or None
        return self._stopping

    def _generate(self, prompt_ids: list[list[int]]) -> list[list[int]]:
        from trl.models import unwrap_model_for_generation

        trainer = self.trainer
        pad = self.tokenizer.pad_token_id
        width = max(len(p) for p in prompt_ids)
        ids = torch.tensor([[pad] * (width - len(p)) + list(p) for p in prompt_ids])
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompt_ids])
        device = trainer.accelerator.device
        with (
            unwrap_model_for_generation(
                trainer.model_wrapped,
                trainer.accelerator,
                gather_deepspeed3_params=trainer.args.ds3_gather_for_generation,
            ) as model,
            torch.no_grad(),
        ):
            output = model.generate(
                input_ids=ids.to(device),
                attention_mask=mask.to(device),
                generation_config=self._config(),
                tokenizer=self.tokenizer,
            )
        return output[:, width:].tolist()
