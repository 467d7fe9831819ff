"""Agents as opponents: `agent:SPEC` names, their own seat's page only, faults never scored."""

import json

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mage_envs
from baselines import run
from mage_agents import RandomLegalAgent, Reply
from mage_agents.fake_endpoint import FakeChatServer
from mage_agents.rollout import BackendFailure, collect, plan_groups, rollout
from mage_envs.games.views import render_view
from mage_envs.opponents import (
    OpponentFault,
    Population,
    TextOpponent,
    make_opponent,
)
from mage_envs.opponents.text_opponent import MEMORY_HEADER

KUHN, TTT = "mage/KuhnPoker-v0", "mage/TicTacToe-v0"
CARD = {0: "J", 1: "Q", 2: "K"}


class Spy(RandomLegalAgent):
    """Plays random legal moves and keeps every page it read, with the env state at that time."""

    name = "spy"

    def __init__(self, env=None):
        super().__init__()
        self.env, self.seen = env, []

    def act(self, observation, info):
        self.seen.append((observation, dict(info), self.env and self.env.unwrapped.state))
        return super().act(observation, info)


def test_an_agent_opponent_reads_only_its_own_seats_page():
    spy = Spy()
    env = gym.make(KUHN, opponent=TextOpponent(spy), seat="random")
    spy.env = env
    text_game = env.unwrapped.text_game
    for seed in range(60):
        env.reset(seed=seed)
        done = False
        while not done:
            legal = env.unwrapped._view.names
            _, _, done, _, _ = env.step(legal[seed % len(legal)])
    assert len(spy.seen) > 60
    for observation, info, state in spy.seen:
        seat = info["player"]
        mine, theirs = CARD[state.history()[seat]], CARD[state.history()[1 - seat]]
        # The page is the renderer's view of the opponent's own seat, nothing else ...
        assert observation == render_view(text_game, state, seat).text
        assert f"Your card: {mine}." in observation
        # ... so it never names the learner's card (the learner's seat sees it as "Your card").
        if mine != theirs:
            assert f"Your card: {theirs}" not in observation and f"'s {theirs}" not in observation
        assert info["legal_actions"] == list(render_view(text_game, state, seat).names)


def test_an_agent_opponent_in_tic_tac_toe_reads_the_board_from_its_side():
    spy = Spy()
    env = spy.env = gym.make(TTT, opponent=TextOpponent(spy), seat="first")
    env.reset(seed=0)
    env.step("(2, 2)")
    (observation, info, state) = spy.seen[-1]
    assert info["seat"] == "second" and "(2, 2)" not in info["legal_actions"]
    assert "The opponent played (2, 2)." in observation
    assert observation == render_view(env.unwrapped.text_game, state, 1).text


@pytest.mark.parametrize("spec", ["agent:random", "agent-memory:random"])
def test_agent_specs_go_wherever_an_opponent_name_goes(spec):
    env = gym.make(KUHN, opponent=spec)
    assert env.reset(seed=0)[1]["opponent"] == spec
    mixed = gym.make(KUHN, opponent=Population({spec: 1, "cfr": 1}))
    names = {mixed.reset(seed=s)[1]["opponent"] for s in range(20)}
    assert names == {spec, "cfr"}
    trial = mage_envs.make_trial(KUHN, num_episodes=2, opponent=spec)
    assert trial.reset(seed=3)[1]["opponent"] == spec


def test_a_python_agent_object_is_an_opponent_too():
    opponent = make_opponent(RandomLegalAgent(), gym.make(KUHN).unwrapped.game)
    assert isinstance(opponent, TextOpponent) and opponent.name == "agent:random-legal"
    env = gym.make(KUHN, opponent=RandomLegalAgent())
    assert env.reset(seed=0)[1]["opponent"] == "agent:random-legal"


def test_a_bad_agent_spec_is_refused_by_name():
    with pytest.raises(ValueError, match="Unknown agent kind 'nope'"):
        gym.make(KUHN, opponent="agent:nope")
    with pytest.raises(ValueError, match="agent: needs an agent spec"):
        gym.make(KUHN, opponent="agent:")
    with pytest.raises(ValueError, match="an opponent's seat may not see"):
        gym.make(KUHN, opponent="agent:best-response")
    with pytest.raises(ValueError, match="by its own name"):
        gym.make(KUHN, opponent="agent:policy:cfr")
    with pytest.raises(ValueError, match=r"schemes: agent:\.\.\., agent-memory:\.\.\."):
        gym.make(KUHN, opponent="agnet:random")


def test_the_same_seed_gives_the_same_trial_against_an_agent_opponent():
    def play(seed):
        env = mage_envs.make_trial(KUHN, num_episodes=3, opponent="agent:random")
        obs, info = env.reset(seed=seed)
        texts, done = [obs], False
        while not done:
            move = (info.get("legal_actions") or ["fine"])[0]
            obs, _, done, _, info = env.step(move)
            texts.append(obs)
        return texts

    assert play(5) == play(5)


def test_a_remembering_opponent_reads_its_earlier_games_of_the_trial_and_forgets_at_the_next():
    spy = Spy()
    opponent = TextOpponent(spy, memory=True)
    env = mage_envs.make_trial(
        KUHN, num_episodes=3, opponent=opponent, seat="second", stop_on_success=False
    )
    for seed in (0, 1):
        spy.seen.clear()
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            obs, _, done, _, info = env.step((info.get("legal_actions") or ["a plan"])[0])
        firsts = [o for o, i, _ in spy.seen if i["episode"] == 0]
        assert firsts and all(MEMORY_HEADER not in o for o in firsts)
        last = [o for o, i, _ in spy.seen if i["episode"] == 2][0]
        assert last.startswith(MEMORY_HEADER) and "Game 2: you played" in last
        assert "Game 3" not in last and "This game:" in last


class _Junk:
    name = "junk"

    def reset(self, seed=None):
        pass

    def act(self, observation, info):
        return "I refuse to play"


def test_an_opponent_that_never_names_a_move_forfeits_and_the_learner_wins():
    env = gym.make(KUHN, opponent=TextOpponent(_Junk(), max_invalid_actions=3), seat="second")
    obs, info = env.reset(seed=0)
    assert info["opponent_forfeit"] is True and info["payoff"] == 2.0 and info["success"]
    assert "named no legal move in 3 answers and forfeits" in obs


class _Flaky(RandomLegalAgent):
    """Random legal play whose backend gives no answer at its ``bad``-th call (0: never)."""

    name = "flaky"

    def __init__(self, bad=1):
        super().__init__()
        self.bad, self.calls = bad, 0

    def act(self, observation, info):
        self.calls += 1
        if self.calls == self.bad:
            return Reply("", error="HTTP 503 after 4 attempts", faults=4)
        return super().act(observation, info)


def test_an_opponent_backend_fault_raises_out_of_the_env_as_no_result():
    env = gym.make(KUHN, opponent=TextOpponent(_Flaky()), seat="second")
    with pytest.raises(OpponentFault, match="HTTP 503"):
        env.reset(seed=0)


@pytest.mark.parametrize("seat, bad", [("second", 1), ("first", 1), ("second", 2)])
def test_an_opponent_backend_fault_voids_its_trial_and_the_batch_plays_on(seat, bad):
    # Learner second, bad 1: the opponent fails at the trial's start; otherwise after a step.
    plans = plan_groups(KUHN, [0, 1, 2], group_size=1, trial={"num_episodes": 3})

    def make_env(plan):
        flaky = _Flaky(bad if plan.trial_id == plans[1].trial_id else 0)
        return mage_envs.make_trial(
            KUHN, num_episodes=3, opponent=TextOpponent(flaky), seat=seat, stop_on_success=False
        )

    done = list(rollout(plans, RandomLegalAgent, batch_size=3, make_env=make_env))
    failed = [t for t in done if t.incomplete]
    assert [t.trial_id for t in failed] == [plans[1].trial_id]
    (trajectory,) = failed
    assert trajectory.failure == "opponent agent:flaky: HTTP 503 after 4 attempts"
    assert trajectory.turns[-1].backend_failed and trajectory.turns[-1].faults >= 1
    assert sorted(t.trial_id for t in done if not t.incomplete) == sorted(
        p.trial_id for p in (plans[0], plans[2])
    )
    with pytest.raises(BackendFailure, match="opponent agent:flaky"):
        collect(plans, RandomLegalAgent, batch_size=3, make_env=make_env)


def test_the_runner_never_scores_a_game_whose_opponent_failed_and_replays_it(tmp_path, capsys):
    out = tmp_path / "out"
    with FakeChatServer(faults=["401"]) as server:
        opponent = f"agent:openai:fake@{server.base_url}"
        argv = ["--agent", "random", "--env", KUHN, "--opponent", opponent, "--tasks", "3"]
        argv += ["--out", str(out), "--no-plots"]
        assert run.main(argv) == run.EXIT_FAILED_TRIALS
        err = capsys.readouterr().err
        assert "1 trials failed" in err and f"opponent {opponent}: HTTP 401" in err
        lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
        assert [r["incomplete"] for r in lines] == [True, False, False]
        assert "401" in lines[0]["errors"][0] and lines[0]["opponent"] == opponent
        assert run.main(argv) == 0  # the rerun plays the failed trial again, nothing else
        lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
        assert [r["incomplete"] for r in lines] == [True, False, False, False]
        assert lines[3]["trial_id"] == lines[0]["trial_id"]


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=200))
def test_any_text_an_opponent_writes_is_a_legal_move_a_reask_or_a_forfeit(text):
    class Says:
        name = "says"

        def reset(self, seed=None):
            pass

        def act(self, observation, info):
            return text

    env = gym.make(KUHN, opponent=TextOpponent(Says(), max_invalid_actions=2), seat="second")
    obs, info = env.reset(seed=0)
    assert isinstance(obs, str)
    if info.get("opponent_forfeit"):
        assert info["payoff"] == 2.0
    else:
        assert info["legal_actions"]


def test_a_model_is_an_opponent_through_its_agent_spec():
    # agent:tiny is the tiny model of the tests behind the local backend (agent:local:PATH loads
    # a folder through the same factory; its loading is tested in test_agents_local.py).
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    env = gym.make(KUHN, opponent="agent:tiny", seat="second")
    obs, info = env.reset(seed=0)
    assert info["opponent"] == "agent:tiny"
    # the model's text was read as a move, or it forfeited: either way the game went on in words
    assert info.get("opponent_forfeit") or info["opponent_moves"]


def test_in_a_pettingzoo_env_an_agent_opponent_reads_its_page_and_can_forfeit():
    from mage_envs import MetaEpisodeWrapper
    from mage_envs.pettingzoo import kuhn_poker_v0

    spy = Spy()
    env = MetaEpisodeWrapper(
        kuhn_poker_v0.env(), learner="player_1", opponents=TextOpponent(spy), num_episodes=1
    )
    env.reset(seed=0)
    (observation, info, _) = spy.seen[0]
    assert info["seat"] == "first" and "Your card:" in observation
    assert observation.endswith("Legal moves: check, bet.")
    junk = MetaEpisodeWrapper(
        kuhn_poker_v0.env(), learner="player_0", opponents=TextOpponent(_Junk()), num_episodes=1
    )
    obs, info = junk.reset(seed=0)
    obs, reward, terminated, truncated, info = junk.step("bet")
    assert terminated and reward == 2.0 and info["trial"]["returns"] == [2.0]


def test_a_run_config_names_an_agent_opponent(tmp_path, capsys):
    config = tmp_path / "c.yaml"
    config.write_text(
        "agents: [random]\nenvs: [mage/KuhnPoker-v0]\nopponents: [agent:random, cfr]\n"
        "tasks: 2\ntrial: {num_episodes: 2}\n"
    )
    out = tmp_path / "out"
    assert run.main(["--config", str(config), "--out", str(out), "--no-plots"]) == 0
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert sorted({r["opponent"] for r in lines}) == ["agent:random", "cfr"] and len(lines) == 4
    assert all(r["trial"]["opponents"][0] == r["opponent"] for r in lines)
