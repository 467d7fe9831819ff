"""Our trials through verifiers' own evaluation, against our fake endpoint on 127.0.0.1.

Skipped where the ``verifiers`` extra is absent. Nothing here needs ``uv`` or the network: the
player's harness calls the model in process, and preparing a ``uv`` program fails every test.
"""

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

pytest.importorskip("verifiers.v1")

from verifiers.v1.cli.eval.runner import run_eval  # noqa: E402
from verifiers.v1.configs.cli.eval import EvalConfig  # noqa: E402
from verifiers.v1.runtimes import Runtime  # noqa: E402

import mage_envs  # noqa: E402
from mage_agents.fake_endpoint import FakeChatServer, first_legal_move  # noqa: E402

ENV_ID = "mage/KuhnPoker-v0"


@pytest.fixture(autouse=True)
def no_uv_programs(monkeypatch):
    """Fail any test that would prepare a program with ``uv`` (and so need the network)."""

    async def refuse(self, *args, **kwargs):
        raise AssertionError("the page harness must not prepare a uv program")

    monkeypatch.setattr(Runtime, "prepare_uv_script", refuse)


SETTINGS = {"num_episodes": 3, "opponent": "always-pass", "stop_on_success": True}


def _evaluate(
    base_url, tmp_path, settings, num_trials=2, model="fake", sampling=None, first_seed=0
):
    """Run ``vf-eval mage-verifiers`` in process, one trial at a time; return its episodes."""
    config = EvalConfig.model_validate(
        {
            "env": {
                "taskset": {
                    "id": "mage-verifiers",
                    "env_id": ENV_ID,
                    "settings": settings,
                    "num_trials": num_trials,
                    "first_seed": first_seed,
                }
            },
            "model": model,
            "sampling": sampling or {},
            "client": {"base_url": base_url, "api_key_var": "MAGE_TEST_NO_KEY"},
            "max_concurrent": 1,
            "push": False,
            "rich": None,
            "output_dir": str(tmp_path),
        }
    )
    return asyncio.run(run_eval(config))


def _recording_policy(pages, contexts):
    def answer(messages):
        contexts.append(len(messages))
        pages.append(messages[-1]["content"])
        return first_legal_move(messages)

    return answer


def _play_directly(seed, settings, pages):
    """The same policy on ``mage_envs.make_trial``: the trial's return and figures."""
    env = mage_envs.make_trial(ENV_ID, **settings)
    page, _ = env.reset(seed=seed)
    total, done = 0.0, False
    while not done:
        pages.append(page)
        answer = first_legal_move([{"role": "user", "content": page}])
        page, reward, terminated, truncated, info = env.step(answer)
        total += reward
        done = terminated or truncated
    return total, info["trial"]


def test_same_pages_and_rewards_as_make_trial(tmp_path):
    pages, contexts = [], []
    with FakeChatServer(answer=_recording_policy(pages, contexts)) as server:
        episodes = _evaluate(server.base_url, tmp_path, SETTINGS)
    direct_pages = []
    direct = [_play_directly(seed, SETTINGS, direct_pages) for seed in (0, 1)]
    assert pages == direct_pages  # byte for byte, in order
    assert set(contexts) == {1}  # only the newest page: the memory is on the page
    assert [e.ok for e in episodes] == [True, True]
    by_seed = {e.task.data.seed: e.traces for e in episodes}
    for seed, (total, figures) in enumerate(direct):
        [trace] = by_seed[seed]
        assert trace.rewards["trial_return"].score == total
        assert trace.info["trial"] == figures
        for k, value in enumerate(figures["pass_at_k"], start=1):
            assert trace.metrics[f"pass_at_{k}"] == value
    # always-pass folds to a bet with a Jack: some trial stopped on a win, before 3 hands.
    assert any(figures["stopped_early"] for _, figures in direct)


def test_reflection_and_opponent_settings_reach_the_trial(tmp_path):
    settings = {"num_episodes": 2, "opponent": "aggressive", "seat": "second"}
    pages, contexts = [], []
    with FakeChatServer(answer=_recording_policy(pages, contexts)) as server:
        [episode] = _evaluate(server.base_url, tmp_path, settings, num_trials=1)
    direct_pages = []
    total, figures = _play_directly(0, settings, direct_pages)
    assert pages == direct_pages
    assert figures["opponents"] == ["aggressive", "aggressive"]
    assert episode.traces[0].info["trial"] == figures
    assert episode.traces[0].rewards["trial_return"].score == total


def test_bad_setting_stops_as_the_config_is_read(tmp_path):
    with FakeChatServer() as server:
        with pytest.raises(ValidationError) as raised:
            _evaluate(server.base_url, tmp_path, {"opponent": "no-such-style"})
        assert server.requests == 0
    [error] = raised.value.errors()
    assert error["msg"].startswith("Value error, cannot make mage/KuhnPoker-v0 with")
    assert "\n" not in error["msg"]


def test_endpoint_error_fails_the_episode_without_a_reward(tmp_path):
    with FakeChatServer(faults=["401"]) as server:
        [episode] = _evaluate(server.base_url, tmp_path, SETTINGS, num_trials=1)
    assert not episode.ok
    [trace] = episode.traces
    assert "trial_return" not in trace.rewards
    assert [error.message for error in trace.errors] == [
        'upstream 401: {"error": {"message": "injected fault"}}'
    ]


def test_the_tiny_model_plays_a_trial_through_transformers_serve(tmp_path):
    pytest.importorskip("torch")
    from mage_agents.tiny_model import build_tiny_model
    from mage_agents.transformers_server import TransformersServer, serve_available

    if not serve_available():
        pytest.skip("the serve extra is not installed: pip install 'mage-metarl[serve]'")
    build_tiny_model(tmp_path / "tiny", seed=1)
    settings = {"num_episodes": 2, "opponent": "always-pass", "invalid_action_penalty": 1.0}
    with TransformersServer(tmp_path / "tiny") as server:
        [episode] = _evaluate(
            server.base_url,
            tmp_path / "runs",
            settings,
            num_trials=1,
            model=server.model,
            sampling={"max_tokens": 8, "temperature": 0.0},
        )
    assert episode.ok, episode.traces[0].errors
    [trace] = episode.traces
    figures = trace.info["trial"]
    assert figures["num_episodes"] == 2
    # The tiny model's answers are not moves: every turn costs the penalty, and the return says so.
    assert trace.rewards["trial_return"].score == sum(figures["returns"]) < 0
    assert figures["invalid_actions"] > 0


def test_vf_eval_runs_it_from_the_command_line(tmp_path):
    vf_eval = Path(sys.executable).parent / "vf-eval"
    if not vf_eval.exists():
        pytest.skip("no vf-eval beside this Python")
    root = Path(__file__).resolve().parents[1]  # mage_verifiers, found by its id
    environ = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]),
    }
    with FakeChatServer() as server:
        command = [str(vf_eval), "mage-verifiers", "--model", "fake", "--no-push", "--no-rich"]
        command += ["--client.base-url", server.base_url, "-n", "2", "-o", str(tmp_path)]
        command += ["--env.taskset.settings", json.dumps(SETTINGS)]
        done = subprocess.run(command, capture_output=True, text=True, env=environ, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    [traces] = tmp_path.glob("*/traces.jsonl")
    episodes = [json.loads(line) for line in traces.read_text().splitlines()]
    returns = {
        e["task"]["data"]["seed"]: e["traces"][0]["rewards"]["trial_return"]["score"]
        for e in episodes
    }
    direct = {seed: _play_directly(seed, SETTINGS, [])[0] for seed in (0, 1)}
    assert returns == direct


def test_one_scripted_trial_is_the_same_through_gymnasium_openenv_and_verifiers(tmp_path):
    pytest.importorskip("openenv.core")
    from mage_agents.interop import MageAction, MageTrialClient
    from tests.interop_server import served

    settings = {"num_episodes": 3, "opponent": "random"}
    gym_pages = []
    gym_return, gym_trial = _play_directly(7, settings, gym_pages)
    with served(ENV_ID, "--set", "num_episodes=3", "--set", "opponent=random") as url:
        with MageTrialClient(base_url=url).sync() as client:
            result = client.reset(seed=7)
            openenv_pages, openenv_return = [], 0.0
            while not result.done:
                page = result.observation.page
                openenv_pages.append(page)
                text = first_legal_move([{"role": "user", "content": page}])
                result = client.step(MageAction(text=text))
                openenv_return += result.reward
            openenv_trial = result.observation.trial
    vf_pages, contexts = [], []
    with FakeChatServer(answer=_recording_policy(vf_pages, contexts)) as server:
        [episode] = _evaluate(server.base_url, tmp_path, settings, num_trials=1, first_seed=7)
    [trace] = episode.traces
    assert len(gym_pages) >= 5  # three hands and the two reflections between them
    assert gym_pages == openenv_pages == vf_pages
    assert gym_return == openenv_return == trace.rewards["trial_return"].score
    assert gym_trial == openenv_trial == trace.info["trial"]
