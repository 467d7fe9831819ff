"""The local transformers backend with a tiny model built in code (nothing is downloaded)."""

import subprocess
import sys

import pytest

from baselines.agents import AgentFactory
from baselines.evaluate.runner import evaluate, plan_trials
from baselines.results import ResultsFile
from mage_agents.local_model import LocalModelBackend, render_chat
from mage_agents.prompting import LLMAgent
from mage_agents.tiny_model import build_tiny_model

CHAT = [
    {"role": "system", "content": "You play Kuhn poker."},
    {"role": "user", "content": "Your card: K. Legal moves: check, bet."},
]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny")
    build_tiny_model(path)
    return path


def test_loads_a_local_directory_and_counts_tokens(model_dir):
    backend = LocalModelBackend(model_dir, max_new_tokens=8, stop_strings=())
    replies = backend.generate([CHAT, CHAT[:1]])
    prompt = render_chat(backend.tokenizer, CHAT)
    assert prompt.endswith("<|assistant|>") and prompt.startswith("<|system|>")
    assert replies[0].prompt_tokens == len(backend.tokenizer(prompt)["input_ids"])
    assert replies[1].prompt_tokens < replies[0].prompt_tokens
    assert all(1 <= r.completion_tokens <= 8 and r.error is None for r in replies)


def test_a_chat_template_bos_is_not_doubled():
    from tokenizers.processors import TemplateProcessing

    from mage_agents.tiny_model import CHAT_TEMPLATE

    model, tokenizer = build_tiny_model()
    bos = "<|endoftext|>"
    bos_id = tokenizer.convert_tokens_to_ids(bos)
    # like Llama 3: the tokenizer adds BOS on encoding and the chat template writes it too
    tokenizer.bos_token = bos
    tokenizer._tokenizer.post_processor = TemplateProcessing(
        single=f"{bos} $A", special_tokens=[(bos, bos_id)]
    )
    tokenizer.chat_template = "{{ bos_token }}" + CHAT_TEMPLATE
    backend = LocalModelBackend(model, tokenizer, max_new_tokens=2, stop_strings=())
    seen = []
    generate = backend.model.generate
    backend.model.generate = lambda input_ids, **kw: (
        seen.append(input_ids) or generate(input_ids=input_ids, **kw)
    )
    (reply,) = backend.generate([CHAT])
    ids = seen[0][0].tolist()
    assert ids[0] == bos_id and ids[1] != bos_id
    prompt = render_chat(tokenizer, CHAT)
    assert reply.prompt_tokens == len(tokenizer(prompt, add_special_tokens=False)["input_ids"])


def test_same_seed_same_text(model_dir):
    first = LocalModelBackend(model_dir, max_new_tokens=12, seed=5).generate([CHAT] * 3)
    again = LocalModelBackend(model_dir, max_new_tokens=12, seed=5).generate([CHAT] * 3)
    other = LocalModelBackend(model_dir, max_new_tokens=12, seed=6).generate([CHAT] * 3)
    assert first == again
    assert first != other


def test_generation_stops_at_a_stop_string(model_dir):
    stops = ["e", "a"]
    backend = LocalModelBackend(model_dir, max_new_tokens=24, temperature=1.5, stop_strings=stops)
    replies = backend.generate([CHAT] * 8)
    stopped = [r.text for r in replies if any(s in r.text for s in stops)]
    assert stopped, "a random model should write an 'e' or an 'a' in 24 tokens"
    for text in stopped:
        first = min(text.find(s) for s in stops if s in text)
        assert first == len(text) - 1  # nothing after the first stop string


def test_batches_larger_than_batch_size_are_split(model_dir):
    backend = LocalModelBackend(model_dir, max_new_tokens=4, batch_size=2, temperature=0)
    assert len(backend.generate([CHAT] * 5)) == 5


def test_bad_paths_and_settings_are_explained(tmp_path):
    with pytest.raises(ValueError, match="config.json.*gguf"):
        LocalModelBackend(tmp_path)
    model, tokenizer = build_tiny_model()
    with pytest.raises(ValueError, match="tokenizer"):
        LocalModelBackend(model)
    with pytest.raises(ValueError, match="batch_size"):
        LocalModelBackend(model, tokenizer, batch_size=0)


def test_a_local_model_agent_plays_batched_trials(model_dir):
    backend = LocalModelBackend(model_dir, max_new_tokens=8, batch_size=4)
    calls = []
    generate = backend.generate
    backend.generate = lambda chats: calls.append(len(chats)) or generate(chats)
    factory = AgentFactory("tiny/react", lambda: LLMAgent(backend, "react"))
    specs = plan_trials("tiny/react", ["mage/KuhnPoker-v0"], ["random"], tasks=4)
    records = evaluate(factory, specs, ResultsFile(None), batch_size=4)
    assert len(records) == 4
    assert max(calls) == 4  # the four trials were answered together
    assert all(r["completion_tokens"] > 0 and r["prompt_tokens"] > 0 for r in records)
    # a random model writes no legal move: every play step is invalid and the env says so
    assert sum(r["invalid_steps"] for r in records) > 0


def test_importing_the_agents_and_the_cli_does_not_import_torch():
    code = "import sys, mage_agents, baselines.run; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_tiny_tokenizer_does_not_change_when_a_prompt_is_reworded():
    # Its corpus is frozen (mage_agents/tiny_model.py): every seeded learning figure in
    # docs/learning.md was measured on this vocabulary.
    import hashlib
    import json

    _, tokenizer = build_tiny_model()
    vocab = json.dumps(sorted(tokenizer.get_vocab().items())).encode()
    assert len(tokenizer.get_vocab()) == 642
    assert hashlib.sha256(vocab).hexdigest() == (
        "1c964c400ef9d498cf24136156806f8a7b1eef3ddef67711d97993b51c98027a"
    )


def test_local_agents_batch_what_the_device_fits_by_default_and_others_one_at_a_time():
    from baselines.agents import build_agent_factory
    from mage_agents.local_model import CPU_BATCH

    assert build_agent_factory("tiny").batch_size() == CPU_BATCH  # no GPU in the tests
    assert build_agent_factory({"kind": "tiny", "batch_size": 4}).batch_size() == 4
    assert build_agent_factory("random").batch_size() == 1
