"""Prompting strategies (zero-shot, ReAct, Reflexion) as thin layers over a generation backend.

A :class:`Strategy` turns an observation into a chat prompt and the model's answer into the text
sent to the env. :class:`LLMAgent` pairs a strategy with a :class:`~mage_agents.base.Backend` and
keeps the strategy's per-trial memory. Answers are read with the envs' own parser
(:func:`mage_envs.parsing.parse_action`), so an agent and the env agree on what a move is.

- **zero-shot**: the observation, then "answer with one legal move inside ``<action>`` tags".
- **ReAct**: think first inside ``<think>`` tags, then act inside ``<action>`` tags.
- **Reflexion** (Shinn et al., 2023): after a failed episode the model writes a short new plan; the
  last 3 plans are kept and shown before the task as "Your memory for the task below: Trial i: ...".
  No weights change: it is a prompting baseline.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from mage_agents.base import Backend, Chat, Reply
from mage_envs.parsing import extract_tagged, grid_pairs, normalize, parse_action, tagged_content

__all__ = [
    "Strategy",
    "ZeroShot",
    "ReAct",
    "Reflexion",
    "Paper",
    "LLMAgent",
    "STRATEGIES",
    "read_answer",
    "ANSWER_STOPS",
    "cut_at_stop",
    "read_move",
    "PARSE_MODES",
    "MOVE_LIST_HEADINGS",
    "register_strategy",
]

_THINK = re.compile(r"<\s*think\s*>.*?(<\s*/\s*think\s*>|$)", re.IGNORECASE | re.DOTALL)
_REFLECTION_TAG = re.compile(r"<\s*reflection\s*>(.*?)<\s*/\s*reflection\s*>", re.I | re.DOTALL)

ANSWER_TAG = "</action>"
"""Generation can stop at this string: nothing after the move is read."""

ANSWER_STOPS = (ANSWER_TAG, "</reflection>")
"""The closing answer tags: every backend stops generating at the first of them by default."""


MOVE_LIST_HEADINGS = ("legal moves:", "available actions:", "admissible actions:")
"""Headings under which an observation already lists its moves (the games, WebShop and ShopSim,
ALFWorld): a strategy does not list them again after such a page."""


def cut_at_stop(text: str, stops: Sequence[str]) -> str:
    """Drop anything after the first stop string (kept), as a backend that stops there would.

    Example:
        >>> cut_at_stop("<action>bet</action> and more", ANSWER_STOPS)
        '<action>bet</action>'
    """
    cuts = [text.find(s) + len(s) for s in stops if s and s in text]
    return text[: min(cuts)] if cuts else text


def is_reflect(info: Mapping[str, Any]) -> bool:
    """Return True in the reflect phase of a trial."""
    return info.get("phase") == "reflect"


PARSE_MODES = ("lenient", "strict")
"""How an agent reads a move: ``lenient`` reads it from free text too; ``strict`` only from the
requested format (the move alone in an ``<action>`` tag), and sends anything else as invalid."""


def read_answer(text: str, info: Mapping[str, Any]) -> str:
    """Read the env-facing text out of a model's answer.

    In the play phase the answer is the last ``<action>`` (or ``<answer>``) tag, mapped to the legal
    move's exact name when the envs' parser recognises one (a legal action written in a tag, as
    envs under published answer rules list them, is matched by its content); unrecognised text is
    passed on as is so that the env reports it as invalid (see :func:`read_move`). In the reflect
    phase the answer is the reflection, without any ``<think>`` block.

    Example:
        >>> kuhn = {"legal_actions": ["check", "bet"]}
        >>> read_answer("<think>K is best</think><action>Bet</action>", kuhn)
        'bet'
        >>> read_answer("<think>hmm</think>I should bet less.", {"phase": "reflect"})
        'I should bet less.'
    """
    visible = _THINK.sub("", text).strip()
    if is_reflect(info):
        tagged = _REFLECTION_TAG.findall(visible)
        return (tagged[-1] if tagged else extract_tagged(visible)).strip()
    return read_move(text, info)[0]


def read_move(text: str, info: Mapping[str, Any], strict: bool = False) -> tuple[str, bool]:
    """Read a play-phase answer: the text to send to the env, and whether it was off-format.

    The requested format is the move alone inside an ``<action>`` tag (a tag left open by a stop
    string counts as closed). An answer is *off-format* when it has no such tag, or when the tag
    holds other words around the one legal move found in it: the lenient parser still reads a
    move there, which a small model that copies the prompt gets right by chance. With ``strict``
    an off-format answer is sent as the empty text, which every env rejects as invalid.

    Example:
        >>> kuhn = {"legal_actions": ["check", "bet"]}
        >>> read_move("<action>Bet</action>", kuhn), read_move("I bet.", kuhn)
        (('bet', False), ('bet', True))
        >>> read_move("I bet.", kuhn, strict=True), read_move("<action>I bet</action>", kuhn)
        (('', True), ('bet', True))
    """
    visible = _close_open_tag(_THINK.sub("", text).strip())
    content = tagged_content(visible)
    source = (visible if content is None else content).strip()
    legal = list(info.get("legal_actions") or [])
    names = [extract_tagged(move) for move in legal]  # tagged legal answers match by content
    aliases = info.get("action_aliases") or {}  # the env's other spellings ("pass" for check)
    index = parse_action(source, names, aliases)
    if index is None:
        # no legal move named: the env judges it (several moves in one answer, junk)
        off_format, answer = content is None, source
    else:
        alone = _alone(source, names[index], aliases)
        off_format, answer = content is None or not alone, legal[index]
    return ("" if strict and off_format else answer), off_format


def _alone(content: str, move: str, aliases: Mapping[str, str]) -> bool:
    """True if ``content`` is the move alone: any case, an alias of it, a pair in any spelling."""
    written = normalize(content)
    if written == normalize(move):
        return True
    if any(normalize(a) == written and normalize(m) == normalize(move) for a, m in aliases.items()):
        return True
    pair = grid_pairs(move)
    return bool(pair) and grid_pairs(written) == pair and not re.search(r"[a-z]", written)


def _close_open_tag(text: str) -> str:
    """Close an ``<action>`` tag left open by a stop string (servers drop the stop text)."""
    lowered = text.lower()
    if lowered.rfind("<action>") > lowered.rfind(ANSWER_TAG):
        return text + ANSWER_TAG
    return text


class Strategy:
    """Builds prompts; subclasses change the instructions and the memory rules.

    Attributes:
        name: The strategy's name in results.
        reads_moves: Whether :meth:`read` reads the move out of the reply (and so can judge
            its format, and parse it strictly).
    """

    name = "zero-shot"
    reads_moves = True
    # No example move: it decides a small model's choice (python -m benchmarks
    # prompt_example: SmolLM2-135M put 0.98 of its on-format mass on an example "bet", 0.01
    # without the example; docs/agents.md).
    play_instruction = (
        "Choose exactly one legal move. Reply with the move alone inside <action></action> tags."
    )
    reflect_instruction = (
        "Answer with your reflection inside <reflection></reflection> tags: what went wrong or "
        "could be better, and a concise plan for the next attempt."
    )

    def system_prompt(self) -> str:
        """Return the system message shared by every step."""
        return (
            "You are an agent playing a text game over several attempts. Read the game state "
            "carefully and play to win."
        )

    def new_memory(self) -> list[str]:
        """Return the memory of a fresh trial."""
        return []

    def chat(self, observation: str, info: Mapping[str, Any], memory: list[str]) -> Chat:
        """Return the chat prompt for one step."""
        instruction = self.reflect_instruction if is_reflect(info) else self.play_instruction
        legal = info.get("legal_actions")
        shown = any(heading in observation.lower() for heading in MOVE_LIST_HEADINGS)
        moves = (
            f"\nLegal moves: {', '.join(legal)}."
            if legal and not shown and not is_reflect(info)
            else ""
        )
        user = f"{self.memory_block(memory, observation)}{observation}{moves}\n\n{instruction}"
        return [
            {"role": "system", "content": self.system_prompt()},
            {"role": "user", "content": user},
        ]

    def memory_block(self, memory: list[str], observation: str = "") -> str:
        """Return the text placed before the observation (none for stateless strategies)."""
        return ""

    def remember(self, answer: str, info: Mapping[str, Any], memory: list[str]) -> None:
        """Update ``memory`` after an answer (stateless strategies keep nothing)."""

    def read(self, text: str, info: Mapping[str, Any], strict: bool = False) -> tuple[str, bool]:
        """Return the env-facing answer of a model's reply and whether it was off-format.

        Play answers go through :func:`read_move` (``strict``: an off-format one is sent empty),
        reflections through :func:`read_answer`.
        """
        if is_reflect(info):
            return read_answer(text, info), False
        return read_move(text, info, strict)


class ZeroShot(Strategy):
    """Answer directly with one legal move."""


class ReAct(Strategy):
    """Think step by step, then act (Yao et al., 2023), in one generation."""

    name = "react"
    play_instruction = (
        "First think step by step inside <think></think> tags, then give exactly one legal move "
        "inside <action></action> tags."
    )


class Reflexion(Strategy):
    """Verbal reinforcement: keep the last ``keep`` reflections and show them before the task.

    Args:
        keep: How many reflections to keep (3 in the published method).
        max_chars: Each reflection is cut to this many characters.
    """

    name = "reflexion"
    reflect_instruction = (
        "Your last attempt is over. Do not summarise the game; think about the strategy you "
        "followed and the mistake that cost you. Then write a concise new plan that fixes it, "
        "naming the moves you should have made, inside <reflection>New plan: ...</reflection> tags."
    )

    def __init__(self, keep: int = 3, max_chars: int = 2000) -> None:
        if keep < 1 or max_chars < 1:
            raise ValueError("Reflexion needs keep >= 1 and max_chars >= 1.")
        self.keep = keep
        self.max_chars = max_chars

    def memory_block(self, memory: list[str], observation: str = "") -> str:
        """Return "Your memory for the task below:" and the kept reflections, or nothing.

        Nothing is added when the observation already shows every kept reflection (the trial
        wrapper's memory does), so the prompt never carries the same memory twice.
        """
        if not memory or all(text in observation for text in memory[-self.keep :]):
            return ""
        numbered = list(enumerate(memory, start=1))[-self.keep :]
        lines = [f"Trial {i}: {text}" for i, text in numbered]
        return "Your memory for the task below:\n" + "\n".join(lines) + "\n\n"

    def remember(self, answer: str, info: Mapping[str, Any], memory: list[str]) -> None:
        """Store a reflection (only the last ``keep`` are shown)."""
        if is_reflect(info) and answer:
            memory.append(answer[: self.max_chars])


class Terse(Strategy):
    """The observation alone, without a system prompt or instructions.

    For small models trained from scratch that choose among the legal moves
    (``MetaRLConfig(action_choice="legal")``): they cannot read instructions, and the shorter
    prompt makes each training step about twice as cheap.
    """

    name = "terse"

    def chat(self, observation: str, info: Mapping[str, Any], memory: list[str]) -> Chat:
        """Return the chat prompt for one step: one user message."""
        instruction = f"\n\n{self.reflect_instruction}" if is_reflect(info) else ""
        content = f"{self.memory_block(memory, observation)}{observation}{instruction}"
        return [{"role": "user", "content": content}]


class Paper(Strategy):
    """The published pages as the papers' code sent them, and the answers as it read them.

    For the paper configs (``templates="lamer"`` / ``"mage"`` with the envs' published answer
    rules): the observation, a whole published page, is the one user message (no system prompt,
    no added instruction, as LaMer's and MAGE's rollouts built the chat), and the model's reply
    goes to the env untouched, so the env's published projection reads it as theirs did (the
    first ``<action>`` tag, its case, what is invalid) and the trial reads the reflection from
    ``<remark>`` as theirs did.
    """

    name = "paper"
    reads_moves = False

    def chat(self, observation: str, info: Mapping[str, Any], memory: list[str]) -> Chat:
        """Return the chat prompt for one step: the page as the one user message."""
        return [{"role": "user", "content": observation}]

    def read(self, text: str, info: Mapping[str, Any], strict: bool = False) -> tuple[str, bool]:
        """Return the reply untouched: the env's published rules judge its format, not us."""
        return text, False


STRATEGIES: dict[str, type[Strategy]] = {
    "zero-shot": ZeroShot,
    "react": ReAct,
    "reflexion": Reflexion,
    "terse": Terse,
    "paper": Paper,
}
"""Strategy name -> class (a :class:`Strategy` subclass that builds with no arguments). Read at
call time: a name added with :func:`register_strategy` works in agents, configs and the CLI."""


def register_strategy(name: str, strategy: type[Strategy]) -> None:
    """Make ``strategy=name`` available to :class:`LLMAgent`, ``MetaRLConfig`` and ``--strategy``.

    Raises:
        TypeError: If ``strategy`` is not a :class:`Strategy` subclass.
    """
    if not (isinstance(strategy, type) and issubclass(strategy, Strategy)):
        raise TypeError(f"A strategy is a Strategy subclass, not {strategy!r}.")
    STRATEGIES[name] = strategy


class LLMAgent:
    """An agent that prompts a model through a backend with a prompting strategy.

    One instance plays one trial at a time; many instances may share one backend, and
    :func:`~mage_agents.base.act_batch` then answers them with one batched call.

    Args:
        backend: Generates the completions (local model, endpoint, or anything with ``generate``).
        strategy: A :class:`Strategy` or one of the names in :data:`STRATEGIES`.
        name: The agent's name in results (default ``"<backend>/<strategy>"``, with
            ``"/strict"`` after it in strict mode).
        parse: ``"lenient"`` (default) or ``"strict"`` (see :func:`read_move`).
    """

    def __init__(
        self,
        backend: Backend,
        strategy: Strategy | str = "zero-shot",
        name: str = "",
        parse: str = "lenient",
    ):
        if parse not in PARSE_MODES:
            raise ValueError(f"parse must be one of {', '.join(PARSE_MODES)}, not {parse!r}.")
        if isinstance(strategy, str):
            if strategy not in STRATEGIES:
                raise ValueError(
                    f"Unknown strategy {strategy!r}. Valid names: {', '.join(STRATEGIES)}."
                )
            strategy = STRATEGIES[strategy]()
        if parse == "strict" and not strategy.reads_moves:
            raise ValueError(
                f"The {strategy.name} strategy sends the reply to the env untouched (the env's "
                "own answer rules judge its format), so parse=strict would change nothing; "
                "leave parse unset, or use another strategy."
            )
        self.backend = backend
        self.strategy = strategy
        self.strict = parse == "strict"
        self.name = name or f"{backend.name}/{strategy.name}" + ("/strict" if self.strict else "")
        self.memory: list[str] = strategy.new_memory()

    def reset(self, seed: int | None = None) -> None:
        """Forget the previous trial's memory."""
        self.memory = self.strategy.new_memory()

    def prompt(self, observation: str, info: Mapping[str, Any]) -> Chat:
        """Return the chat prompt for this step."""
        return self.strategy.chat(observation, info, self.memory)

    def receive(self, reply: Reply, info: Mapping[str, Any]) -> Reply:
        """Read the env-facing answer from the backend's reply and update memory."""
        if reply.error is not None:
            return reply
        answer, off_format = self.strategy.read(reply.text, info, self.strict)
        self.strategy.remember(answer, info, self.memory)
        # token ids, log-probs and the fault count travel on to the rollout, and the whole
        # answer to the transcripts
        completion = reply.text if answer != reply.text else None
        return replace(reply, text=answer, completion=completion, off_format=off_format)

    def act(self, observation: str, info: Mapping[str, Any]) -> Reply:
        """Answer one step on its own (an unbatched call)."""
        return self.receive(self.backend.generate([self.prompt(observation, info)])[0], info)
