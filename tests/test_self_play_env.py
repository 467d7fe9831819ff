"""Self-play trials (``opponent="self"``): each seat sees only its own view; rewards per seat."""

import gymnasium as gym
import pyspiel
import pytest
from gymnasium.utils.env_checker import check_env

import mage_envs
from mage_agents import RandomLegalAgent
from mage_agents.rollout import collect, plan_groups
from mage_agents.rollout.self_play import split_seats

CARDS = "JQK"


def play_out(env_id, seed, pick=0, **kwargs):
    env = gym.make(env_id, opponent="self", **kwargs)
    obs, info = env.reset(seed=seed)
    seen, reward = [], 0.0
    while True:
        seen.append((obs, info))
        obs, reward, terminated, truncated, last = env.step(info["legal_actions"][pick])
        info = last
        if terminated or truncated:
            env.final_observation = obs
            return env, seen, reward, last


@pytest.mark.parametrize("seed", range(12))
def test_each_seat_reads_its_own_card_never_the_others(seed):
    env, seen, _, last = play_out("mage/KuhnPoker-v0", seed, pick=-1)
    state = env.unwrapped.state
    cards = {p: CARDS[int(state.information_state_string(p)[0])] for p in (0, 1)}
    assert {info["player"] for _, info in seen} == {0, 1}  # both seats were asked
    for obs, info in seen:
        assert f"Your card: {cards[info['player']]}." in obs and info["opponent"] == "self"
        assert info["seat"] == ("first", "second")[info["player"]]
        assert "opponent's" not in obs and "opponent_card" not in info
    if last.get("showdown"):  # the check can fail: the end of a showdown names the other card
        assert "opponent's" in env.final_observation


@pytest.mark.parametrize("seed", range(8))
def test_the_seat_rewards_are_openspiels_returns_times_the_scale(seed):
    env, seen, reward, last = play_out("mage/KuhnPoker-v0", seed, reward_scale=5)
    returns = env.unwrapped.state.returns()
    assert last["seat_rewards"] == [5 * r for r in returns]
    assert last["seat_names"] == ["first", "second"]
    assert reward == last["seat_rewards"][seen[-1][1]["player"]]  # the mover is paid its own


def test_tic_tac_toe_alternates_seats_and_shows_the_other_seats_last_move():
    env, seen, _, last = play_out("mage/TicTacToe-v0", 0)
    players = [info["player"] for _, info in seen]
    assert players == [p % 2 for p in range(len(players))]
    assert seen[1][1]["opponent_moves"] == [seen[0][1]["legal_actions"][0]]
    assert last["opponent_moves"] == []  # the game is over: nobody moved after the last mover
    assert sorted(last["seat_rewards"]) in ([-1.0, 1.0], [0.0, 0.0])


def test_a_forfeit_loses_the_game_for_the_seat_that_forfeits_and_wins_it_for_the_other():
    env = gym.make("mage/KuhnPoker-v0", opponent="self", max_invalid_actions=1)
    _, info = env.reset(seed=0)
    _, reward, terminated, truncated, last = env.step("what?")
    assert truncated and not terminated and last["forfeit"]
    worst = pyspiel.load_game("kuhn_poker").min_utility()
    expected = [worst, -worst] if info["player"] == 0 else [-worst, worst]
    assert last["seat_rewards"] == expected and reward == worst


def test_spirals_rule_an_invalid_answer_ends_the_game_minus_1_5_and_plus_0_5():
    spiral = {"max_invalid_actions": 1, "forfeit_payoff": -1.5, "forfeit_winner_payoff": 0.5}
    env = gym.make("mage/KuhnPoker-v0", opponent="self", **spiral)
    _, info = env.reset(seed=0)
    env.step(info["legal_actions"][0])  # the first seat plays; the second answers junk
    _, reward, _, truncated, last = env.step("what?")
    assert truncated and last["forfeit"] and last["player"] == 1
    assert last["seat_rewards"] == [0.5, -1.5] and reward == -1.5  # not zero-sum, as SPIRAL's
    with pytest.raises(ValueError, match="forfeit_winner_payoff"):
        gym.make("mage/KuhnPoker-v0", opponent="self", forfeit_winner_payoff=float("inf"))


def test_the_self_play_env_passes_gymnasiums_checker():
    check_env(gym.make("mage/KuhnPoker-v0", opponent="self").unwrapped, skip_render_check=True)
    assert mage_envs  # the ids are registered by the import


def test_split_seats_gives_each_seat_its_turns_and_its_payoff_zero_sum():
    plans = plan_groups(
        "mage/KuhnPoker-v0", range(20), 1, opponent="self", trial={"num_episodes": 1}
    )
    for trajectory in collect(plans, RandomLegalAgent, batch_size=20):
        seats = split_seats(trajectory)
        assert [s.turns[0].seat for s in seats] == ["first", "second"]
        assert sum(len(s.turns) for s in seats) == len(trajectory.turns)
        assert seats[0].result.final_return == -seats[1].result.final_return != 0
        assert seats[0].group_id.endswith("|first") and seats[1].trial_id.endswith("|second")
        assert all({t.seat for t in s.turns} == {s.turns[0].seat} for s in seats)


def test_split_seats_refuses_a_trial_of_several_episodes():
    (plan,) = plan_groups("mage/KuhnPoker-v0", [0], 1, opponent="self", trial={"num_episodes": 2})
    (trajectory,) = collect([plan], RandomLegalAgent)
    with pytest.raises(ValueError, match="num_episodes: 1"):
        split_seats(trajectory)


def test_the_runner_skips_self_play_with_the_reason_instead_of_printing_a_mixed_score(
    tmp_path, capsys
):
    from baselines import run

    out = tmp_path / "out"
    argv = ["--opponent", "self", "--opponent", "cfr", "--tasks", "2", "--out", str(out)]
    argv += ["--env", "mage/KuhnPoker-v0", "--no-plots"]
    assert run.main(argv) == 0
    assert "Skipping mage/KuhnPoker-v0 against self: 'self' is self-play" in capsys.readouterr().err
    lines = (out / "results.jsonl").read_text().splitlines()
    assert lines and all('"self"' not in line for line in lines)
