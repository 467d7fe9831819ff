"""Scripted agents: legal play, reproducibility and outcomes that can be checked by hand."""

import gymnasium as gym
import pytest

import mage_envs
from baselines.evaluate.runner import evaluate, plan_trials
from baselines.report.summary import summarize
from baselines.results import ResultsFile
from mage_agents.scripted import NO_REFLECTION, BestResponseAgent, PolicyAgent, RandomLegalAgent
from mage_envs.meta import TrialConfig


def _run(agent, opponent, tasks, **kwargs):
    specs = plan_trials(agent, ["mage/KuhnPoker-v0"], [opponent], tasks=tasks, **kwargs)
    return evaluate(agent, specs, ResultsFile(None))


def test_random_legal_agent_is_legal_and_reproducible():
    env = gym.make("mage/TicTacToe-v0")
    plays = []
    for _ in range(2):
        agent, moves = RandomLegalAgent(), []
        agent.reset(seed=3)
        obs, info = env.reset(seed=0)
        done = False
        while not done:
            move = agent.act(obs, info)
            assert move in info["legal_actions"]
            obs, _, terminated, truncated, info = env.step(move)
            moves.append(move)
            done = terminated or truncated
        plays.append(moves)
    assert plays[0] == plays[1]
    assert agent.act("", {"phase": "reflect"}) == NO_REFLECTION


def test_always_bet_mirror_is_a_showdown_for_two_chips():
    records = _run("policy:always-bet", "always-bet", tasks=60)
    for record in records:
        assert record["actions"] == [["bet"]] * 3  # the learner acts first and the opponent calls
        assert record["final_payoff"] in (2.0, -2.0)
        # the same deal is replayed, so every attempt ends the same way
        assert len(set(record["trial"]["returns"])) == 1
    (summary,) = summarize(records)
    assert [iv.value for iv in summary.pass_at_k] == [summary.win.value] * 3


def test_best_response_to_always_bet_plays_the_hand_computed_strategy():
    # Against an opponent that always bets and calls, the best response from the first seat is:
    # check with every card, then call with K (+2) or Q (+2 vs J, -2 vs K), fold a J (-1).
    # Its value is (2 + 0 - 1) / 3 = 1/3 chip per hand (mage_envs.bounds agrees).
    records = _run("best-response", "always-bet", tasks=300, trial=TrialConfig(num_episodes=1))
    payoffs = {(tuple(r["actions"][0]), r["final_payoff"]) for r in records}
    assert payoffs == {
        (("check", "call"), 2.0),
        (("check", "call"), -2.0),
        (("check", "fold"), -1.0),
    }
    (summary,) = summarize(records)
    assert summary.mean_return.low < 1 / 3 < summary.mean_return.high


def test_policy_agent_needs_an_openspiel_env():
    agent = PolicyAgent("cfr")
    with pytest.raises(TypeError, match="OpenSpiel text envs"):
        agent.bind(gym.make("FrozenLake-v1"))
    assert "mage/KuhnPoker-v0" in mage_envs.ENV_IDS


def test_best_response_rejects_an_opponent_without_a_policy():
    env = gym.make("mage/TicTacToe-v0", opponent="mcts-100")
    agent = BestResponseAgent()
    agent.reset(0)
    agent.bind(env)
    obs, info = env.reset(seed=0)
    with pytest.raises(TypeError, match="explicit action probabilities"):
        agent.act(obs, info)
