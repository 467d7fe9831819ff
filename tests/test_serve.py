"""Against a real OpenAI-compatible server: ``transformers serve`` on the tiny model saved to disk.

One server for the whole module (it starts in a few seconds). The runner's ``--agent openai:``
plays Kuhn trials against it end to end, and each model option is checked to do the same over
HTTP as in the local backend on the same model: greedy text, stop strings, token budget and
counts, top_k, top_p, thinking on a template without the switch, concurrency. The local backend
generates one chat at a time, as the server does (no padding to tell them apart).

``MAGE_SERVE_TEST_MODEL=smollm2-135m`` (or a folder) serves that model instead of the tiny one,
when it is fetched: the same checks on a real pretrained model (a few minutes).
"""

import json
import os
import subprocess
import sys
import time

import pytest

pytest.importorskip("torch")
from mage_agents.transformers_server import TransformersServer, serve_available  # noqa: E402

if not serve_available():
    pytest.skip(
        "the serve extra is not installed (transformers serve needs FastAPI and uvicorn): "
        "pip install 'mage-metarl[serve]'",
        allow_module_level=True,
    )

from baselines import run  # noqa: E402
from mage_agents.local_model import LocalModelBackend  # noqa: E402
from mage_agents.openai_client import OpenAIChatBackend  # noqa: E402
from mage_agents.tiny_model import build_tiny_model  # noqa: E402

CHATS = [
    [
        {"role": "system", "content": "You play Kuhn poker."},
        {"role": "user", "content": "Your card: K. Legal moves: check, bet."},
    ],
    [{"role": "user", "content": "Tic-tac-toe. Legal moves: (1, 1), (2, 3)."}],
    [{"role": "user", "content": "Reflect on this attempt, then give a plan."}],
]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    real = os.environ.get("MAGE_SERVE_TEST_MODEL")
    if real:
        from mage_agents.model_files import resolve_model

        return resolve_model(real).folder
    path = tmp_path_factory.mktemp("tiny-served")
    build_tiny_model(path, seed=1)
    return path


@pytest.fixture(scope="module")
def server(model_dir):
    with TransformersServer(model_dir) as started:
        yield started


@pytest.fixture(scope="module")
def local(model_dir):
    loaded = LocalModelBackend(model_dir)

    def make(**options):
        return LocalModelBackend(loaded.model, loaded.tokenizer, batch_size=1, **options)

    return make


def remote(started, **options):
    return OpenAIChatBackend(started.base_url, started.model, max_retries=1, **options)


def texts(backend, chats=CHATS):
    replies = backend.generate(chats)
    assert [r.error for r in replies] == [None] * len(chats)
    return replies


def test_greedy_text_and_token_counts_are_the_same_over_http(server, local):
    options = {"temperature": 0, "max_new_tokens": 8}
    here = texts(local(**options))
    there = texts(remote(server, temperature=0, max_tokens=8))
    assert [r.text for r in there] == [r.text for r in here]
    assert [r.prompt_tokens for r in there] == [r.prompt_tokens for r in here]
    assert [r.completion_tokens for r in there] == [r.completion_tokens for r in here] == [8] * 3


def test_a_stop_string_cuts_both_backends_at_the_same_place(server, local):
    free = texts(local(temperature=0, max_new_tokens=12, stop_strings=()))[0].text
    stop = free[4:7]  # a piece of what the model writes: both must stop right after it
    here = texts(local(temperature=0, max_new_tokens=12, stop_strings=(stop,)))[0]
    there = texts(remote(server, temperature=0, max_tokens=12, stop=(stop,)))[0]
    assert here.text == there.text == free[: free.index(stop) + len(stop)]


def test_top_k_1_and_a_tiny_top_p_sample_the_greedy_text_on_both(server, local):
    greedy = [r.text for r in texts(local(temperature=0, max_new_tokens=8))]
    top1 = remote(server, temperature=1.0, top_k=1, max_tokens=8, seed=0)
    assert [r.text for r in texts(top1)] == greedy  # refused top_k: carried in generation_config
    assert "generation_config" in top1.notes[0]
    assert [r.text for r in texts(local(temperature=1.0, top_k=1, max_new_tokens=8))] == greedy
    nucleus = remote(server, temperature=1.0, top_p=1e-6, max_tokens=8, server="transformers")
    assert [r.text for r in texts(nucleus)] == greedy
    here = local(temperature=1.0, top_p=1e-6, max_new_tokens=8)
    assert [r.text for r in texts(here)] == greedy


def test_a_temperature_samples_on_both(server, local):
    greedy = [r.text for r in texts(local(temperature=0, max_new_tokens=8))]
    hot = remote(server, temperature=1.5, max_tokens=8, seed=3, server="transformers")
    assert [r.text for r in texts(hot)] != greedy
    assert [r.text for r in texts(local(temperature=1.5, max_new_tokens=8))] != greedy


def test_thinking_on_a_template_without_the_switch_changes_nothing_on_both(server, local):
    greedy = [r.text for r in texts(local(temperature=0, max_new_tokens=8))]
    here = local(temperature=0, max_new_tokens=8, thinking=True)
    assert [r.text for r in texts(here)] == greedy and "no enable_thinking switch" in here.notes[0]
    there = remote(server, temperature=0, max_tokens=8, thinking=True)
    assert [r.text for r in texts(there)] == greedy  # the server takes the field, ignores it


def test_concurrent_requests_keep_their_order_and_answers(server, local):
    chats = CHATS * 3
    greedy = [r.text for r in texts(local(temperature=0, max_new_tokens=6), chats)]
    backend = remote(server, temperature=0, max_tokens=6, max_concurrency=4)
    assert [r.text for r in texts(backend, chats)] == greedy
    assert 1 <= backend.gate.max_in_flight <= 4


def test_the_runner_plays_the_ready_kuhn_config_against_the_server(server, tmp_path, capsys):
    # MAGE's ready config: top_k 20 (which transformers serve refuses as a field), thinking on
    # (the tiny template has no switch), 3 episodes with reflections, batched trials.
    out = tmp_path / "run"
    argv = ["--config", "mage_kuhn", "--agent", f"openai:{server.model}"]
    argv += ["--base-url", server.base_url, "--tasks", "3", "--batch-size", "3", "--no-plots"]
    argv += ["--agent-option", "max_tokens=8", "--out", str(out)]
    assert run.main(argv) == 0
    printed = capsys.readouterr().out
    assert "3 trials in" in printed and "generation_config" in printed
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(records) == 3 and not any(r["incomplete"] for r in records)
    assert all(r["completion_tokens"] > 0 and r["failed_steps"] == 0 for r in records)
    assert all(r["faults"] == 0 for r in records)  # the refused top_k is no fault
    summary = (out / "summary.md").read_text()
    assert "off-format" in summary and "forfeit" in summary and "## Backend notes" in summary


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie has ended: only its parent must reap it
        return stat.read().rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux signal (PDEATHSIG)")
def test_the_server_ends_with_a_parent_that_is_killed(model_dir):
    # kill -9 (or a CI timeout's SIGTERM) runs no cleanup in the parent: the server, in its own
    # session, must still not outlive it, holding its port and memory
    script = (
        "import time\nfrom mage_agents.transformers_server import TransformersServer\n"
        f"server = TransformersServer({str(model_dir)!r}).start()\n"
        "print(server.pid, flush=True)\ntime.sleep(600)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    parent.kill()
    parent.wait()
    for _ in range(100):
        if not _alive(child):
            break
        time.sleep(0.1)
    else:
        os.kill(child, 9)
        pytest.fail("the server outlived its killed parent")
