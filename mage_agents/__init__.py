"""mage_agents: agents (scripted, local models, OpenAI-compatible endpoints) and trainers.

``import mage_agents`` stays light: the local-model backend (torch, transformers) is imported only
when ``mage_agents.LocalModelBackend`` is first used.
"""

from typing import Any

from mage_agents.base import (
    Agent,
    Backend,
    CallableAgent,
    PromptingAgent,
    Reply,
    act_batch,
    as_agent,
)
from mage_agents.openai_client import OpenAIChatBackend
from mage_agents.prompting import (
    STRATEGIES,
    LLMAgent,
    ReAct,
    Reflexion,
    Strategy,
    ZeroShot,
    register_strategy,
)
from mage_agents.scripted import BestResponseAgent, PolicyAgent, RandomLegalAgent

__all__ = [
    "Agent",
    "Backend",
    "PromptingAgent",
    "Reply",
    "CallableAgent",
    "as_agent",
    "act_batch",
    "OpenAIChatBackend",
    "LocalModelBackend",
    "Strategy",
    "ZeroShot",
    "ReAct",
    "Reflexion",
    "STRATEGIES",
    "register_strategy",
    "LLMAgent",
    "RandomLegalAgent",
    "PolicyAgent",
    "BestResponseAgent",
]


def __getattr__(name: str) -> Any:
    if name == "LocalModelBackend":  # torch is heavy: import it only when asked for
        from mage_agents.local_model import LocalModelBackend

        return LocalModelBackend
    raise AttributeError(f"module 'mage_agents' has no attribute {name!r}")
