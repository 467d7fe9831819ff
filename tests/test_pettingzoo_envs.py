"""PettingZoo AEC versions of Kuhn poker and tic-tac-toe."""

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from mage_envs.games.kuhn_poker import CARD_NAMES
from mage_envs.pettingzoo import kuhn_poker_v0, tic_tac_toe_v0

MODULES = [kuhn_poker_v0, tic_tac_toe_v0]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_api_test(module):
    api_test(module.env(), num_cycles=300)


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_seed_test(module):
    seed_test(module.env, num_cycles=50)


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_mask_and_text_live_in_info(module):
    env = module.env()
    env.reset(seed=0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        assert isinstance(obs, np.ndarray)
        if terminated or truncated:
            env.step(None)
            continue
        assert info["action_mask"].dtype == np.int8
        assert list(np.flatnonzero(info["action_mask"])) == info["legal_action_ids"]
        assert info["text"].endswith("Legal moves: " + ", ".join(info["legal_actions"]) + ".")
        other = env.infos[[a for a in env.possible_agents if a != agent][0]]
        assert not other["action_mask"].any() and other["legal_actions"] == []
        env.step(info["legal_action_ids"][-1])


def test_text_actions_through_the_parser():
    env = kuhn_poker_v0.env()
    env.reset(seed=0)
    assert env.action_from_text("player_0", "<action>BET</action>") == 1
    assert env.action_from_text("player_0", "pass") == 0
    assert env.action_from_text("player_0", "gibberish") is None
    env.step(1)
    assert env.action_from_text("player_1", "call") == 1


def test_kuhn_text_keeps_cards_private_and_payoffs_zero_sum():
    env = kuhn_poker_v0.env()
    for seed in range(50):
        env.reset(seed=seed)
        cards = [CARD_NAMES[c] for c in env.unwrapped.openspiel_state.history()[:2]]
        for agent in env.agent_iter():
            obs, reward, terminated, truncated, info = env.last()
            if terminated:
                env.step(None)
                continue
            me = env.possible_agents.index(agent)
            assert f"Your card: {cards[me]}." in info["text"]
            assert "opponent's" not in info["text"]
            env.step(info["legal_action_ids"][seed % len(info["legal_action_ids"])])
        assert sum(env.unwrapped.openspiel_state.returns()) == 0


def test_illegal_integer_action_raises_clearly():
    env = tic_tac_toe_v0.env()
    env.reset(seed=0)
    env.step(4)
    with pytest.raises(ValueError, match="Illegal action 4"):
        env.step(4)


def test_pettingzoo_state_method_is_not_shadowed():
    from pettingzoo import AECEnv

    env = kuhn_poker_v0.env()
    env.reset(seed=0)
    assert type(env).state is AECEnv.state  # PettingZoo's global-state method, not a pyspiel state
    assert env.openspiel_state.history()[:2] != []


@pytest.mark.parametrize("env_id", ["mage/kuhn_poker-v0", "mage/tic_tac_toe-v0"])
def test_registered_with_pettingzoo_make(env_id):
    import pettingzoo

    import mage_envs

    assert env_id in mage_envs.registration.AEC_ENV_IDS
    api_test(pettingzoo.make("aec", env_id), num_cycles=100)


@pytest.mark.parametrize("action", [1.5, 1.0, "1", True, np.float32(1), np.bool_(True), [1]])
def test_non_integer_actions_are_rejected_not_read_as_an_id(action):
    env = tic_tac_toe_v0.env()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="Illegal action"):
        env.step(action)
    assert not env.unwrapped.openspiel_state.history()  # nothing was played


def test_numpy_integer_ids_from_the_action_space_are_accepted():
    env = tic_tac_toe_v0.env()
    env.reset(seed=0)
    env.step(np.int64(4))
    assert env.unwrapped.openspiel_state.history() == [4]


def test_render_test_passes_for_kuhn_and_fails_for_tic_tac_toe_as_documented():
    from pettingzoo.test import render_test

    render_test(kuhn_poker_v0.raw_env)  # every action is legal whenever it is one's turn
    # PettingZoo's render_test samples without the infos mask: it soon plays an occupied cell
    env = tic_tac_toe_v0.raw_env()
    with pytest.raises(ValueError, match="Illegal action"):
        for seed in range(20):  # bounded: 20 games of unmasked sampling
            env.reset(seed=seed)
            env.action_space("player_0").seed(seed)
            env.action_space("player_1").seed(seed)
            for agent in env.agent_iter(20):
                done = env.terminations[agent] or env.truncations[agent]
                env.step(None if done else env.action_space(agent).sample())


@pytest.mark.parametrize("module", [kuhn_poker_v0, tic_tac_toe_v0])
@pytest.mark.parametrize("mode", ["ansi", "human"])
def test_render_with_masked_sampling(module, mode, capsys):
    env = module.raw_env(render_mode=mode)
    env.reset(seed=0)
    for agent in env.agent_iter(30):
        done = env.terminations[agent] or env.truncations[agent]
        mask = env.infos[agent]["action_mask"]
        env.step(None if done else env.action_space(agent).sample(mask))
        shown = env.render()
        assert isinstance(shown, str) if mode == "ansi" else shown is None
    if mode == "human":
        assert "Legal moves" in capsys.readouterr().out
