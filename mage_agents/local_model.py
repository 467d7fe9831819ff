"""A local Hugging Face causal language model as a generation backend.

The model is loaded from a local directory (no downloads: ``local_files_only=True``), prompts are
rendered with the tokenizer's chat template when it has one, and many prompts are generated as one
left-padded batch. Generation stops at the closing answer tag (``</action>``, ``</reflection>``) or
at the end-of-sequence token. This is the only module of ``mage_agents`` that imports torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from mage_agents.base import Chat, Reply

__all__ = ["LocalModelBackend", "render_chat"]

DEFAULT_STOPS = ("</action>", "</reflection>")


def render_chat(tokenizer: Any, chat: Chat) -> str:
    """Render a chat as the model's prompt: its chat template, or a plain transcript without one.

    Example:
        >>> class NoTemplate:
        ...     chat_template = None
        >>> print(render_chat(NoTemplate(), [{"role": "user", "content": "Hi"}]))
        User: Hi
        Assistant:
    """
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
    lines = [f"{m['role'].capitalize()}: {m['content']}" for m in chat]
    return "\n".join(lines) + "\nAssistant:"


class LocalModelBackend:
    """Batched generation with a local ``transformers`` causal LM.

    Args:
        model: A path to a local model directory, or a loaded model.
        tokenizer: The tokenizer (loaded from ``model`` when it is a path).
        temperature: Sampling temperature; 0 means greedy decoding.
        top_p: Nucleus sampling mass.
        max_new_tokens: Upper bound on generated tokens per prompt.
        batch_size: Prompts generated together (a call with more prompts runs several batches).
        stop_strings: Generation of a prompt stops once its text contains one of these.
        seed: Seeds torch before each batch (batch ``i`` of the backend's life uses ``seed + i``),
            so the same sequence of calls gives the same text.
        device: Where the model runs (``"cpu"``, ``"cuda"``, ...).
        name: The backend's name in results (default: the directory name).
        return_ids: Also return each reply's ``prompt_ids``, ``completion_ids`` and the sampling
            ``logprobs`` of the completion tokens (``log_softmax(logits / temperature)``, read
            from the logits ``generate`` computed; what a trainer needs). ``generate`` then keeps
            every step's logits (batch x new tokens x vocabulary) until the batch ends: lower
            ``batch_size`` for long generations with a large vocabulary.
    """

    def __init__(
        self,
        model: str | Path | Any,
        tokenizer: Any = None,
        *,
        temperature: float = 0.7,
        top_p: float = 0.8,
        max_new_tokens: int = 256,
        batch_size: int = 16,
        stop_strings: Sequence[str] = DEFAULT_STOPS,
        seed: int = 0,
        device: str = "cpu",
        name: str | None = None,
        return_ids: bool = False,
    ) -> None:
        if batch_size < 1 or max_new_tokens < 1 or temperature < 0:
            raise ValueError("Need batch_size >= 1, max_new_tokens >= 1 and temperature >= 0.")
        if isinstance(model, str | Path):
            path = Path(model)
            if not (path / "config.json").is_file():
                raise ValueError(
                    f"{path} is not a local model directory (no config.json). Pass a directory "
                    "saved with save_pretrained(); nothing is downloaded."
                )
            tokenizer = tokenizer or AutoTokenizer.from_pretrained(path, local_files_only=True)
            model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True)
            name = name or f"local:{path.name}"
        if tokenizer is None:
            raise ValueError("A loaded model needs its tokenizer: pass tokenizer=...")
        self.model = model.to(device).eval()
        self.tokenizer = tokenizer
        self.tokenizer.padding_side = "left"  # generated tokens must follow every prompt directly
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.temperature, self.top_p = float(temperature), float(top_p)
        self.max_new_tokens, self.batch_size = int(max_new_tokens), int(batch_size)
        self.stop_strings = list(stop_strings)
        self.seed, self.device = int(seed), device
        self.name = name or f"local:{type(model).__name__}"
        self.return_ids = bool(return_ids)
        self._batches = 0

    def __repr__(self) -> str:
        return f"LocalModelBackend(name={self.name!r}, batch_size={self.batch_size})"

    def generate(self, chats: Sequence[Chat]) -> list[Reply]:
        """Generate one completion per chat, ``batch_size`` chats at a time."""
        prompts = [render_chat(self.tokenizer, chat) for chat in chats]
        replies: list[Reply] = []
        for start in range(0, len(prompts), self.batch_size):
            replies.extend(self._generate_batch(prompts[start : start + self.batch_size]))
        return replies

    @torch.inference_mode()
    def _generate_batch(self, prompts: list[str]) -> list[Reply]:
        # A chat template writes the special tokens (BOS) itself: adding them again on encoding
        # would start every prompt with two BOS tokens (Llama 3, Gemma, ...).
        templated = bool(getattr(self.tokenizer, "chat_template", None))
        encoded = self.tokenizer(
            prompts, return_tensors="pt", padding=True, add_special_tokens=not templated
        ).to(self.device)
        torch.manual_seed(self.seed + self._batches)
        self._batches += 1
        sampling: dict[str, Any] = {"do_sample": self.temperature > 0}
        if self.temperature > 0:
            sampling.update(temperature=self.temperature, top_p=self.top_p)
        if self.stop_strings:
            sampling.update(stop_strings=self.stop_strings, tokenizer=self.tokenizer)
        output = self.model.generate(
            **encoded,
            max_new_tokens=self.max_new_tokens,
            pad_token_id=self.tokenizer.pad_token_id,
            return_dict_in_generate=True,
            output_logits=self.return_ids,
            **sampling,
        )
        width = encoded["input_ids"].shape[1]
        new_tokens = output.sequences[:, width:]
        logprobs = self._logprobs(output.logits, new_tokens) if self.return_ids else None
        replies = []
        for row, tokens in enumerate(new_tokens):
            mask = encoded["attention_mask"][row].bool()
            reply = self._reply(tokens, int(mask.sum()))
            if self.return_ids:
                prompt = encoded["input_ids"][row][mask]
                reply = self._with_ids(reply, tokens, prompt, logprobs[row])
            replies.append(reply)
        return replies

    def _logprobs(self, logits: Sequence[torch.Tensor], tokens: torch.Tensor) -> torch.Tensor:
        """Log-probability of each generated token under the sampling distribution's logits.

        One step at a time, so that no second (batch, tokens, vocabulary) tensor is built.
        """
        scale = self.temperature if self.temperature > 0 else 1.0
        columns = [
            torch.log_softmax(step.float() / scale, dim=-1).gather(-1, tokens[:, k : k + 1])
            for k, step in enumerate(logits)
        ]
        return torch.cat(columns, dim=1)

    def _reply(self, row: torch.Tensor, prompt_tokens: int) -> Reply:
        ids = row.tolist()
        ends = {self.tokenizer.eos_token_id, self.tokenizer.pad_token_id} - {None}
        used = next((i + 1 for i, t in enumerate(ids) if t in ends), len(ids))
        text = self.tokenizer.decode(ids[:used], skip_special_tokens=True)
        return Reply(_cut_at_stop(text, self.stop_strings), prompt_tokens, used)

    def _with_ids(
        self, reply: Reply, row: torch.Tensor, prompt: torch.Tensor, logprobs: torch.Tensor
    ) -> Reply:
        """Add the ids the model read and wrote, and the log-probs of the written ones."""
        ids = row.tolist()
        ends = {self.tokenizer.eos_token_id, self.tokenizer.pad_token_id} - {None}
        cut = next((i for i, t in enumerate(ids) if t in ends), len(ids))
        # An end token the model sampled is part of its completion; padding written after a
        # stop string (the row had finished) is not.
        if cut < len(ids) and ids[cut] == self.tokenizer.eos_token_id:
            before = self.tokenizer.decode(ids[:cut], skip_special_tokens=True)
            cut += not any(stop in before for stop in self.stop_strings)
        return replace(
            reply,
            prompt_ids=tuple(prompt.tolist()),
            completion_ids=tuple(ids[:cut]),
            logprobs=tuple(float(x) for x in logprobs[:cut].tolist()),
        )


def _cut_at_stop(text: str, stops: Sequence[str]) -> str:
    """Drop anything after the first stop string (a batch keeps generating for other rows)."""
    cuts = [text.find(s) + len(s) for s in stops if s in text]
    return text[: min(cuts)] if cuts else text
