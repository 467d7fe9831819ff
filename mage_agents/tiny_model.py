"""A tiny, randomly initialised chat model built in code, for tests, smoke runs and benchmarks.

Nothing is downloaded: a byte-level BPE tokenizer is trained on a few lines of game text, given a
chat template, and paired with a two-layer Llama of random weights. It writes nonsense, quickly;
it exercises the whole generation path (chat template, left padding, batching, stop strings).

The chat template also calls tools, so that plain TRL's ``GRPOTrainer(environment_factory=...)``
runs on it (:func:`mage_agents.training.trial_environment`): with tools, or after a tool's
result, the assistant's turn opens a call of the trial's ``move`` tool, ``<|call|><action>``,
and the model writes the move as every env here reads an answer, ``MOVE</action>``;
:data:`RESPONSE_TEMPLATE` (transformers' response parser, which TRL and ``transformers serve``
read) turns the text after ``<|call|><action>`` up to ``</action>`` or the end token into
``move(move=...)``. An ``<action>`` the model writes itself, in a chat without tools, stays
content. A random model then plays a move on every turn (mostly an invalid one, which
the env answers with feedback), so the rewards of a group differ from the first step. Other
tools' calls are rendered as ``<call NAME>{arguments as JSON}</call>``; the parser knows only
``move``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["build_tiny_model", "reinitialise", "CHAT_TEMPLATE", "RESPONSE_TEMPLATE", "MOVE_TOOL"]
__all__ += ["tiny_tokenizer", "tiny_config"]

MOVE_TOOL = "move"
"""The tool the tiny chat model calls compactly (``TrialEnvironment.move(move)``)."""

CHAT_TEMPLATE = (
    "{% if tools %}<|system|>Tools: "
    "{% for t in tools %}{{ (t.function or t).name }}{{ ', ' if not loop.last }}{% endfor %}.\n"
    "{% endif %}"
    "{% for m in messages %}<|{{ m['role'] }}|>"
    "{% for c in m.get('tool_calls') or [] %}{% set f = c.function or c %}"
    "{% if f.name == 'move' and f.arguments is mapping and f.arguments | length == 1 %}"
    "<|call|><action>{{ f.arguments.values() | first }}</action>"
    "{% else %}<call {{ f.name }}>{{ f.arguments | tojson }}</call>{% endif %}"
    "{% endfor %}{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>"
    "{% if tools or messages | selectattr('role', 'equalto', 'tool') | list %}<|call|><action>"
    "{% endif %}"
    "{% endif %}"
)
"""A minimal chat template: ``<|role|>content`` per message, then ``<|assistant|>``.

Without tools it renders exactly that; with tools see the module's docstring.
"""

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|assistant|>",
    "fields": {
        "tool_calls": {
            "open": "<|call|><action>",
            "close_pattern": r"</action>|<\|endoftext\|>",
            "content": "text",
            "repeats": True,
            "transform": {
                "type": "function",
                "function": {"name": MOVE_TOOL, "arguments": {"move": "{content}"}},
            },
        },
        "content": {"close_pattern": r"<\|endoftext\|>", "content": "text"},
    },
}
"""How transformers (and so TRL) parses the tiny model's answer: ``<|call|><action>X</action>``
is ``move(move=X)``, the rest is content."""

_CORPUS = [
    "Attempt 1 of 3.\nAttempt 2 of 3.\nAttempt 3 of 3.\nYour memory of earlier attempts:",
    "Kuhn poker: cards J < Q < K, one card each, both ante 1 chip. You act first.",
    "Kuhn poker: cards J < Q < K, one card each, both ante 1 chip. You act second.",
    "Your card: K.\nYour card: Q.\nYour card: J.\nBetting so far: nothing yet.",
    "Betting so far: you checked, the opponent bet. Pot: 3 chips. Legal moves: fold, call.",
    "Pot: 2 chips (you put in 1, the opponent 1).\nLegal moves: check, bet.",
    "Invalid move: your answer did not name exactly one legal move (check, bet).",
    "Tic-tac-toe: three in a row wins. You play X and move first. Legal moves: (1, 1), (2, 3).",
    "<think>I hold the king, so I bet.</think><action>bet</action> <action>check</action>",
    "<reflection>New plan: call with a queen.</reflection> Choose exactly one legal move.",
    "Reflect on this attempt. Find the mistakes or inefficiencies, then give a concise, improved "
    "plan for the next attempt, which starts from the same initial state.",
    "Your trajectory:\nStep 1. You saw:\nYou answered: bet (reward +1)\nEnd of the attempt:",
]


def reinitialise(model: Any, std: float, seed: int) -> None:
    """Redraw every linear and embedding weight of ``model`` from N(0, std), seeded.

    ``transformers`` initialises with std 0.02, tuned for wide models: in a 64-wide model the
    attention paths then start about 1e-3 as strong as the residual stream, and a policy trained
    by RL from scratch does not learn to read its input (docs/learning.md); ``1/sqrt(hidden)``
    is the usual scale. Norm weights stay 1.
    """
    import torch

    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, (torch.nn.Linear, torch.nn.Embedding)):
                module.weight.copy_(torch.randn(module.weight.shape, generator=generator) * std)
                if getattr(module, "bias", None) is not None:
                    module.bias.zero_()


_SYSTEM = (
    "You are an agent playing a text game over several attempts. Read the game state carefully "
    "and play to win."
)
_PLAY = (
    "Choose exactly one legal move. Reply with the move alone inside <action></action> tags, "
    "for example <action>bet</action>."
)
_REFLECT = (
    "Answer with your reflection inside <reflection></reflection> tags: what went wrong or "
    "could be better, and a concise plan for the next attempt."
)
_REACT_PLAY = (
    "First think step by step inside <think></think> tags, then give exactly one legal move "
    "inside <action></action> tags, for example <think>...</think><action>bet</action>."
)
_REFLEXION_REFLECT = (
    "Your last attempt is over. Do not summarise the game; think about the strategy you "
    "followed and the mistake that cost you. Then write a concise new plan that fixes it, "
    "naming the moves you should have made, inside <reflection>New plan: ...</reflection> tags."
)
_PROMPT_SENTENCES = (
    _SYSTEM,
    _PLAY,
    _REFLECT,  # zero-shot
    _SYSTEM,
    _REACT_PLAY,
    _REFLECT,  # ReAct
    _SYSTEM,
    _PLAY,
    _REFLEXION_REFLECT,  # Reflexion
)
"""The strategies' system prompts and instructions as they read when the learning figures were
measured (zero-shot, ReAct, Reflexion; with repeats, which weigh the merges). In the corpus they
give about as many characters per token as a real tokenizer, so benchmark prompts have realistic
lengths. Frozen rather than read from :mod:`mage_agents.prompting`: rewording a prompt must not
change the tiny model, and with it every seeded figure measured on it."""


def build_tiny_model(
    save_dir: str | Path | None = None,
    seed: int = 0,
    layers: int = 2,
    hidden: int = 64,
    init_std: float | None = None,
    extra_corpus: Sequence[str] = (),
) -> tuple[Any, Any]:
    """Build (and optionally save) a tiny random chat model and its tokenizer.

    Args:
        save_dir: If given, ``save_pretrained`` both there, so that
            :class:`~mage_agents.local_model.LocalModelBackend` can load the directory.
        seed: Seeds the random weights.
        layers: Transformer layers.
        hidden: Hidden size.
        init_std: If given, redraw the weights with this std (:func:`reinitialise`; 0.125 for
            RL from scratch, see docs/learning.md); ``None`` keeps transformers' 0.02.
        extra_corpus: More text the tokenizer is trained on (e.g. an env's pages, so that its
            prompts get realistic lengths); empty keeps the default tokenizer.

    Returns:
        ``(model, tokenizer)``.
    """
    import torch
    from transformers import LlamaForCausalLM

    tokenizer = tiny_tokenizer(extra_corpus)
    config = tiny_config(tokenizer, layers, hidden)
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config).eval()
    if init_std is not None:
        reinitialise(model, init_std, seed)
    if save_dir is not None:
        model.save_pretrained(save_dir)
        tokenizer.save_pretrained(save_dir)
    return model, tokenizer


def tiny_tokenizer(extra_corpus: Sequence[str] = ()) -> Any:
    """The tiny model's byte-level BPE tokenizer with its chat template, trained in code.

    ``extra_corpus``: more text it is trained on (:func:`build_tiny_model`'s argument).
    """
    from tokenizers import ByteLevelBPETokenizer, Tokenizer
    from transformers import PreTrainedTokenizerFast

    corpus = [*_CORPUS, *_PROMPT_SENTENCES, *extra_corpus]
    specials = ["<|endoftext|>", "<|pad|>"]
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        corpus * 4, vocab_size=1500, min_frequency=2, special_tokens=specials, show_progress=False
    )
    # The trainer's wrapper is not a ``tokenizers.Tokenizer``: transformers' streaming response
    # parser (TRL's tool calls, ``transformers serve``) needs the real one, which its JSON gives.
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_str(bpe.to_str()),
        eos_token="<|endoftext|>",
        pad_token="<|pad|>",
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.response_template = dict(RESPONSE_TEMPLATE)
    return tokenizer


def tiny_config(tokenizer: Any, layers: int = 2, hidden: int = 64) -> Any:
    """The tiny model's ``LlamaConfig`` for ``tokenizer``: its architecture, without weights."""
    from transformers import LlamaConfig

    return LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=4096,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.eos_token_id,
    )
