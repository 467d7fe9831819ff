"""An LLM agent plays one Kuhn poker trial through an OpenAI-compatible endpoint.

Point ``BASE_URL`` at your server (vLLM, llama.cpp, ...) and set ``MODEL``; with no server at hand
this script starts the small scripted stand-in that the tests use, so it runs offline as it is.

Run: python examples/llm_agent_on_a_trial.py
"""

import contextlib

import mage_envs
from mage_agents.fake_endpoint import FakeChatServer
from mage_agents.openai_client import OpenAIChatBackend
from mage_agents.prompting import LLMAgent

BASE_URL = None  # e.g. "http://127.0.0.1:8000/v1"; None starts the offline stand-in
MODEL = "Qwen/Qwen3-4B"

with FakeChatServer() if BASE_URL is None else contextlib.nullcontext() as server:
    backend = OpenAIChatBackend(BASE_URL or server.base_url, MODEL, temperature=0.7, top_p=0.8)
    agent = LLMAgent(backend, strategy="react")
    env = mage_envs.make_trial(
        "mage/KuhnPoker-v0", num_episodes=3, opponent="mage-kuhn-eval", seat="second"
    )
    agent.reset(seed=0)
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        reply = agent.act(obs, info)
        obs, reward, terminated, truncated, info = env.step(reply.text)
        done = terminated or truncated

trial = info["trial"]
if BASE_URL is None:
    print("No BASE_URL set: the offline stand-in answered (first legal move), not a model.\n")
print(obs, end="\n\n")
print("returns per attempt:", trial["returns"])
print("pass@k:", trial["pass_at_k"])
