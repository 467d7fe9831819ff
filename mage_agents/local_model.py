"""A local Hugging Face causal language model as a generation backend.

The model is loaded from a local folder, a GGUF file or a fetched known model (nothing is
downloaded: :mod:`mage_agents.model_files`), prompts are rendered with the tokenizer's chat
template when it has one, and many prompts are generated as one left-padded batch. Generation
stops at the closing answer tag (``</action>``, ``</reflection>``) or at the end-of-sequence
token. Torch is imported by this module, the model loaders and the trainer only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from mage_agents.base import Chat, Reply
from mage_agents.placement import AUTO, choose_device, generation_dtype
from mage_agents.prompting import ANSWER_STOPS, cut_at_stop

__all__ = ["LocalModelBackend", "render_chat"]

DEFAULT_STOPS = ANSWER_STOPS


def render_chat(
    tokenizer: Any,
    chat: Chat,
    thinking: bool | None = None,
    template_kwargs: Mapping[str, Any] | None = None,
) -> str:
    """Render a chat as the model's prompt: its chat template, or a plain transcript without one.

    ``thinking`` sets the template's ``enable_thinking`` switch (Qwen3's) when it is not ``None``;
    ``template_kwargs`` are further variables of the template (TRL's ``chat_template_kwargs``).

    Example:
        >>> class NoTemplate:
        ...     chat_template = None
        >>> print(render_chat(NoTemplate(), [{"role": "user", "content": "Hi"}]))
        User: Hi
        Assistant:
    """
    if getattr(tokenizer, "chat_template", None):
        switch = dict(template_kwargs or {})
        if thinking is not None:
            switch["enable_thinking"] = bool(thinking)
        return tokenizer.apply_chat_template(
            chat, tokenize=False, add_generation_prompt=True, **switch
        )
    lines = [f"{m['role'].capitalize()}: {m['content']}" for m in chat]
    return "\n".join(lines) + "\nAssistant:"


class LocalModelBackend:
    """Batched generation with a local ``transformers`` causal LM.

    Args:
        model: A loaded model, or what :func:`~mage_agents.model_files.load_pretrained` loads:
            a folder saved with ``save_pretrained``, a ``.gguf`` file (or a folder holding one),
            or a known model fetched into the cache (``smollm2-135m``).
        tokenizer: The tokenizer (loaded with ``model`` when it is a path).
        temperature: Sampling temperature; 0 means greedy decoding.
        top_p: Nucleus sampling mass.
        top_k: Sample among the ``top_k`` likeliest tokens (LaMer and MAGE evaluated with 20);
            ``None`` keeps the model's generation config (``transformers`` defaults to 50).
        max_new_tokens: Upper bound on generated tokens per prompt.
        thinking: Turn the chat template's thinking switch on or off (Qwen3's
            ``enable_thinking``: LaMer evaluated with it off, MAGE on); ``None`` leaves the
            template's default. ``True`` on a template without the switch runs without thinking
            and says so in :attr:`notes` (what a server rendering that template does silently).
        batch_size: Prompts generated together (a call with more prompts runs several batches);
            ``None``: every call in one batch, so a runner's ``--batch-size`` trials are one
            batch on the device.
        stop_strings: Generation of a prompt stops once its text contains one of these.
        seed: Seeds torch before each batch (batch ``i`` of the backend's life uses ``seed + i``),
            so the same sequence of calls gives the same text.
        device: Where the model runs: ``"auto"`` (CUDA when there is one, else the CPU),
            ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ... On CUDA a card with bf16 generates in bf16
            (:mod:`mage_agents.placement`).
        hub_kernels: Let ``transformers`` swap layers for kernels fetched from the Hub when
            loading from a path (off: nothing is fetched; a machine offline loads the model).
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
        top_k: int | None = None,
        max_new_tokens: int = 256,
        thinking: bool | None = None,
        batch_size: int | None = None,
        stop_strings: Sequence[str] = DEFAULT_STOPS,
        seed: int = 0,
        device: str = AUTO,
        hub_kernels: bool = False,
        name: str | None = None,
        return_ids: bool = False,
    ) -> None:
        if (batch_size is not None and batch_size < 1) or max_new_tokens < 1 or temperature < 0:
            raise ValueError(
                "Need batch_size >= 1 (or None), max_new_tokens >= 1 and temperature >= 0."
            )
        if top_k is not None and (isinstance(top_k, bool) or int(top_k) < 1):
            raise ValueError(f"top_k must be None or an int >= 1, not {top_k!r}.")
        if isinstance(model, str | Path):
            from mage_agents.model_files import load_pretrained, resolve_model

            source = resolve_model(model)
            model, loaded = load_pretrained(model, hub_kernels=hub_kernels)
            tokenizer = tokenizer or loaded
            name = name or f"local:{source.name}"
        if tokenizer is None:
            raise ValueError("A loaded model needs its tokenizer: pass tokenizer=...")
        device = choose_device(device)
        self.model = model.to(device=device, dtype=generation_dtype(device)).eval()
        self.tokenizer = tokenizer
        self.tokenizer.padding_side = "left"  # generated tokens must follow every prompt directly
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.temperature, self.top_p = float(temperature), float(top_p)
        self.top_k = None if top_k is None else int(top_k)
        self.name = name or f"local:{type(model).__name__}"
        self.notes: list[str] = []
        """What the backend could not do as asked, and what it did instead (for the results)."""
        self.thinking = self._thinking_switch(thinking)
        self.max_new_tokens = int(max_new_tokens)
        self.batch_size = None if batch_size is None else int(batch_size)
        self.stop_strings = list(stop_strings)
        self.seed, self.device = int(seed), device
        self.return_ids = bool(return_ids)
        self._batches = 0

    def _thinking_switch(self, thinking: bool | None) -> bool | None:
        """The thinking setting the chat template can honour; a note when it cannot.

        ``thinking=True`` on a template without Qwen3's ``enable_thinking`` switch falls back to
        the template's default (the model does not think), noted in :attr:`notes`: a server that
        renders the same template ignores the switch the same way.
        """
        if thinking is None:
            return None
        template = getattr(self.tokenizer, "chat_template", None) or ""
        if thinking and "enable_thinking" not in template:
            self.notes.append(
                f"thinking=true: {self.name}'s chat template has no enable_thinking switch, so "
                "it answered without thinking; pass --agent-option thinking=null to ask for that."
            )
            return None
        return bool(thinking)

    def __repr__(self) -> str:
        return f"LocalModelBackend(name={self.name!r}, batch_size={self.batch_size})"

    def generate(self, chats: Sequence[Chat]) -> list[Reply]:
        """Generate one completion per chat, ``batch_size`` chats at a time."""
        prompts = [render_chat(self.tokenizer, chat, self.thinking) for chat in chats]
        replies: list[Reply] = []
        size = self.batch_size or max(len(prompts), 1)
        for start in range(0, len(prompts), size):
            replies.extend(self._generate_batch(prompts[start : start + size]))
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
            if self.top_k is not None:
                sampling["top_k"] = self.top_k
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
        return Reply(cut_at_stop(text, self.stop_strings), prompt_tokens, used)

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
