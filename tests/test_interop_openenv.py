"""Our trials through OpenEnv: a real server on 127.0.0.1 and OpenEnv's own client."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

import pytest

pytest.importorskip("openenv.core")

import mage_envs  # noqa: E402
from mage_agents.interop import MageAction, MageTrialClient  # noqa: E402
from tests.interop_server import REPO, served  # noqa: E402

KUHN = "mage/KuhnPoker-v0"
TICTACTOE = "mage/TicTacToe-v0"


def answer(page: str, legal: list[str], phase: str) -> str:
    """A scripted agent: the last legal move, or a fixed reflection."""
    return "Bet with a King, fold a Jack." if phase == "reflect" else legal[-1]


def play_in_process(seed: int, **settings) -> list[tuple]:
    env = mage_envs.make_trial(KUHN, **settings)
    page, info = env.reset(seed=seed)
    seen = [(page, tuple(info["legal_actions"]), info["phase"], 0.0, False)]
    done = False
    while not done:
        text = answer(page, info["legal_actions"], info["phase"])
        page, reward, terminated, truncated, info = env.step(text)
        done = terminated or truncated
        seen.append((page, tuple(info["legal_actions"]), info["phase"], reward, done))
    return seen, env.result().to_dict()


def play_over_openenv(client, seed: int, **reset) -> list[tuple]:
    result = client.reset(seed=seed, **reset)
    obs = result.observation
    seen = [(obs.page, tuple(obs.legal_moves), obs.phase, result.reward, result.done)]
    while not result.done:
        result = client.step(MageAction(text=answer(obs.page, obs.legal_moves, obs.phase)))
        obs = result.observation
        seen.append((obs.page, tuple(obs.legal_moves), obs.phase, result.reward, result.done))
    return seen, obs.trial


@pytest.fixture(scope="module")
def server():
    with served(KUHN, TICTACTOE, "--set", "num_episodes=3", "--set", "opponent=random") as url:
        yield url


def test_a_trial_through_openenv_is_the_gymnasium_trial_byte_for_byte(server):
    with MageTrialClient(base_url=server).sync() as client:
        for seed in (0, 7):
            remote, trial = play_over_openenv(client, seed)
            local, record = play_in_process(seed, num_episodes=3, opponent="random")
            assert remote == local
            assert trial == record
            state = client.state()
            assert state.record == record and state.phase == "done" and state.seed == seed
            assert state.total_reward == pytest.approx(sum(record["returns"]))
            assert "opponent_card" not in json.dumps(state.model_dump())


def test_a_client_chooses_a_served_id_and_its_settings(server):
    with MageTrialClient(base_url=server).sync() as client:
        remote, trial = play_over_openenv(
            client, 3, settings={"num_episodes": 2, "opponent": "aggressive"}
        )
        local, record = play_in_process(3, num_episodes=2, opponent="aggressive")
        assert remote == local and trial == record
        result = client.reset(seed=1, env_id=TICTACTOE, settings={"num_episodes": 1})
        assert "tic-tac-toe" in result.observation.page.lower()
        assert client.state().env_id == TICTACTOE


def test_concurrent_sessions_keep_their_own_trials(server):
    with (
        MageTrialClient(base_url=server).sync() as a,
        MageTrialClient(base_url=server).sync() as b,
    ):
        first_a = a.reset(seed=0).observation
        first_b = b.reset(seed=5).observation
        b.step(MageAction(text=first_b.legal_moves[0]))
        remote = [a.step(MageAction(text=first_a.legal_moves[-1])).observation.page]
        env = mage_envs.make_trial(KUHN, num_episodes=3, opponent="random")
        page, info = env.reset(seed=0)
        assert first_a.page == page
        assert remote == [env.step(info["legal_actions"][-1])[0]]


def test_a_plain_env_is_served_as_it_is():
    import gymnasium as gym

    with served(KUHN, "--plain", "--set", "opponent=always-pass") as url:
        with MageTrialClient(base_url=url).sync() as client:
            result = client.reset(seed=4)
            local = gym.make(KUHN, opponent="always-pass")
            page, info = local.reset(seed=4)
            assert result.observation.page == page
            assert result.observation.legal_moves == info["legal_actions"]
            result = client.step(MageAction(text="bet"))
            page, reward, terminated, _, _ = local.step("bet")
            assert (result.observation.page, result.reward, result.done) == (page, reward, True)
            assert client.state().record is None and client.state().total_reward == reward


@pytest.mark.parametrize(
    ("reset", "words"),
    [
        ({"env_id": "mage/Nope-v0"}, "unknown env id 'mage/Nope-v0'"),
        ({"settings": {"max_observation_chars": 10}}, "cannot be chosen by a client"),
        ({"settings": {"opponent": "agent:local:/tmp/model"}}, "set by the server's operator"),
        ({"settings": {"opponent": "nobody"}}, "cannot make mage/KuhnPoker-v0"),
        ({"settings": {"num_episodes": 10**9}}, "num_episodes must be an integer from 1 to 64"),
        ({"settings": {"seat": ["first"]}}, "must be a string, number or boolean"),
        ({"colour": "red"}, "not colour"),
        ({"seed": "zero"}, "seed must be a non-negative integer"),
        ({"seed": -1}, "seed must be a non-negative integer"),
    ],
)
def test_bad_resets_answer_in_openenv_errors_and_the_session_goes_on(server, reset, words):
    with MageTrialClient(base_url=server).sync() as client:
        with pytest.raises(RuntimeError, match="EXECUTION_ERROR") as error:
            client.reset(**reset)
        assert words in str(error.value)
        assert client.reset(seed=0).observation.legal_moves == ["check", "bet"]


def test_bad_steps_answer_in_openenv_errors_and_the_session_goes_on(server):
    with MageTrialClient(base_url=server).sync() as client:
        with pytest.raises(RuntimeError, match="call reset"):
            client.step(MageAction(text="bet"))
        client.reset(seed=0)
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
            client.step(MageAction.model_construct(text="x" * 10_000, metadata={}))
        nonsense = client.step(MageAction(text="\x00 raise the stakes \ud7ff"))
        assert nonsense.observation.invalid_action and not nonsense.done
        assert client.step(MageAction(text="bet")).observation.legal_moves == []


def test_openenvs_stateless_http_routes_answer_bad_input_in_words(server):
    import httpx

    assert httpx.post(f"{server}/reset", json={"seed": 0}).json()["observation"]["legal_moves"]
    bad = httpx.post(f"{server}/reset", json={"env_id": "mage/Nope-v0"})
    assert bad.status_code == 400 and "unknown env id" in bad.json()["detail"]
    bad = httpx.post(f"{server}/step", json={"action": {"text": "bet"}})
    assert bad.status_code == 400 and "call reset() to start one" in bad.json()["detail"]
    huge = httpx.post(f"{server}/step", content=b"x" * (2 << 20))
    assert huge.status_code == 413
    assert httpx.get(f"{server}/health").status_code == 200


def raw_session(url: str):
    from websockets.asyncio.client import connect

    return connect(url.replace("http", "ws") + "/ws", max_size=None)


def test_malformed_and_oversized_messages_close_only_their_own_session(server):
    async def scenario():
        async with raw_session(server) as ws:
            await ws.send("{not json")
            reply = json.loads(await ws.recv())
            assert reply["type"] == "error" and reply["data"]["code"] == "INVALID_JSON"
            await ws.send(json.dumps({"type": "step", "data": {"text": 5}}))
            reply = json.loads(await ws.recv())
            assert reply["data"]["code"] == "VALIDATION_ERROR"
        async with raw_session(server) as ws:
            await ws.send(json.dumps({"type": "step", "data": {"text": "x" * (2 << 20)}}))
            with pytest.raises(Exception, match="1009|too big|message"):
                await ws.recv()

    asyncio.run(scenario())
    with MageTrialClient(base_url=server).sync() as client:
        assert client.reset(seed=0).observation.legal_moves == ["check", "bet"]


async def opens_a_session(url: str) -> bool:
    from websockets.exceptions import ConnectionClosed

    async with raw_session(url) as ws:
        try:
            await ws.send(json.dumps({"type": "reset", "data": {"seed": 1}}))
            return json.loads(await ws.recv())["type"] == "observation"
        except ConnectionClosed:  # refused: the server said so and closed
            return False


def test_too_many_sessions_are_refused_and_a_vanished_client_frees_its_place():
    async def scenario(url):
        first = await raw_session(url)
        second = await raw_session(url)
        for ws in (first, second):
            await ws.send(json.dumps({"type": "reset", "data": {"seed": 0}}))
            assert json.loads(await ws.recv())["type"] == "observation"
        async with raw_session(url) as third:  # refused at once, before it says anything
            reply = json.loads(await third.recv())
            assert reply["data"]["code"] == "CAPACITY_REACHED"
        first.transport.abort()  # vanishes mid-trial: no close message, the socket just dies
        for _ in range(100):
            if await opens_a_session(url):
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the vanished client's session was never freed")
        await second.send(json.dumps({"type": "step", "data": {"text": "bet"}}))
        assert json.loads(await second.recv())["type"] == "observation"
        await second.close()

    with served(KUHN, "--max-sessions", "2") as url:
        asyncio.run(scenario(url))


def test_an_idle_session_is_closed_and_frees_its_place():
    with served(KUHN, "--max-sessions", "1", "--session-timeout", "1") as url:
        with MageTrialClient(base_url=url).sync() as idle:
            idle.reset(seed=0)
            for _ in range(40):  # the reaper looks every 5 s
                time.sleep(0.5)
                if asyncio.run(opens_a_session(url)):
                    break
            else:
                raise AssertionError("the idle session was never closed")
            with pytest.raises(RuntimeError, match="closed \\(idle too long\\)"):
                idle.reset(seed=0)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["mage/Nope-v0"], "cannot make mage/Nope-v0"),
        ([KUHN, "--set", "opponent"], "write KEY=VALUE"),
        ([KUHN, "--set", "opponent=nobody"], "cannot make mage/KuhnPoker-v0"),
        ([KUHN, "--max-sessions", "0"], "--max-sessions must be at least 1"),
    ],
)
def test_serve_env_bad_settings_are_one_line_and_exit_2(args, words):
    done = subprocess.run(
        [sys.executable, "-m", "baselines.run", "serve-env", *args, "--port", "0"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert words in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr
