"""``league:PATH`` opponents: a snapshot of a league of past selves playing the other seat.

``import baselines`` registers this module as the builder of the ``league`` scheme of the
opponent registry (mage_envs never imports it), as :mod:`baselines.opponents.agent` for
``agent:``. Training
writes the snapshots (:mod:`mage_agents.training.league`); this loads one (full weights, or a
LoRA adapter on its base) once per process and plays it greedily.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mage_agents.training.league import LEAGUE_SCHEME, PLAY_FILE, snapshot_name

__all__ = ["league_opponent"]


def league_opponent(path: str, game: Any) -> Any:
    """Build the opponent ``league:PATH``: the snapshot in ``PATH`` playing greedily.

    Raises:
        ValueError: If ``PATH`` holds no snapshot (no ``league.json``).
    """
    from baselines.opponents.agent import shared_factory
    from mage_envs.opponents.text_opponent import TextOpponent

    spec = f"{LEAGUE_SCHEME}:{path}"
    factory = shared_factory(spec, lambda: _snapshot_factory(Path(path)))
    return TextOpponent(factory.new_agent(), name=snapshot_name(spec))


def _snapshot_factory(folder: Path) -> Any:
    from baselines.agents import AgentFactory
    from mage_agents.local_model import LocalModelBackend
    from mage_agents.prompting import LLMAgent
    from mage_agents.training.legal import LegalMoveAgent, LegalMoveBackend

    if not (folder / PLAY_FILE).is_file():
        raise ValueError(
            f"league:{folder}: no snapshot there ({PLAY_FILE} missing); snapshots are written "
            "by training with league_every > 0 under OUTPUT/league/step-N."
        )
    play = json.loads((folder / PLAY_FILE).read_text())
    model, tokenizer = _load_snapshot(folder, play.get("base_model"))
    name = snapshot_name(f"{LEAGUE_SCHEME}:{folder}")
    backend: Any = LocalModelBackend(
        model, tokenizer, temperature=0.0, max_new_tokens=int(play["max_new_tokens"]), name=name
    )
    agent = LLMAgent
    if play["action_choice"] == "legal":
        backend = LegalMoveBackend(_SnapshotScorer(model, tokenizer, play), backend)
        backend.greedy = True
        agent = LegalMoveAgent
    return AgentFactory(name, lambda: agent(backend, play["strategy"]), backend=backend)


def _load_snapshot(folder: Path, base: str | None) -> tuple[Any, Any]:
    """Load a snapshot's model and tokenizer: full weights, or the adapter on its base."""
    from mage_agents.model_files import load_pretrained

    if base is None:
        return load_pretrained(folder)
    from peft import PeftModel
    from transformers import AutoTokenizer

    model, _ = load_pretrained(base)
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    return PeftModel.from_pretrained(model, folder, is_trainable=False), tokenizer


class _SnapshotScorer:
    """What :class:`~mage_agents.training.legal.LegalMoveBackend` reads of a trainer.

    For a snapshot: its model (in eval mode, so no exploration floor), tokenizer and settings.
    """

    def __init__(self, model: Any, tokenizer: Any, play: dict[str, Any]) -> None:
        from types import SimpleNamespace

        self.model = model.eval()
        self.processing_class = tokenizer
        self.temperature = float(play["temperature"])
        self.chat_template_kwargs = play.get("chat_template_kwargs") or {}
        self.args = SimpleNamespace(
            answer_template=play["answer_template"],
            exploration_floor=0.0,
            exploration_correction=False,
        )
        self.accelerator = SimpleNamespace(unwrap_model=lambda m: m)
