"""Kuhn poker opponents: MAGE's styles by card and situation, and CFR against known maths."""

import pyspiel
import pytest
from hypothesis import given
from hypothesis import strategies as st
from open_spiel.python import policy as openspiel_policy
from open_spiel.python.algorithms import expected_game_score

from mage_envs.opponents import CFROpponent, KuhnStyle, SeatView, equilibrium_policy, make_opponent
from mage_envs.opponents.cfr import clear_memory_cache

KUHN = pyspiel.load_game("kuhn_poker")
J, Q, K = 0, 1, 2
PASS, BET = 0, 1


def view_after(deal: tuple[int, int], betting: list[int]) -> SeatView:
    """The view of the player to act after ``deal`` (cards of players 0 and 1) and ``betting``."""
    state = KUHN.new_initial_state()
    for action in [*deal, *betting]:
        state.apply_action(action)
    return SeatView.from_state(state, state.current_player())


def bet_probability(name: str, deal, betting) -> float:
    return make_opponent(name, KUHN).action_probabilities(view_after(deal, betting))[BET]


# (card of the acting style, betting before its move) -> bet probability, from the paper's words.
OPEN, AFTER_CHECK, FACING_BET, FACING_RAISE = [], [PASS], [BET], [PASS, BET]
CASES = {
    "conservative": {J: (0, 0), Q: (0, 0), K: (1, 1)},
    "aggressive": {J: (1, 0), Q: (1, 1), K: (1, 1)},
    "balanced": {J: (0, 0), Q: (1, 0), K: (1, 1)},
    "always-pass": {J: (0, 0), Q: (0, 0), K: (0, 0)},
    "always-bet": {J: (1, 1), Q: (1, 1), K: (1, 1)},
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("card", [J, Q, K])
def test_styles_follow_the_paper_in_every_situation(name, card):
    open_bet, call = CASES[name][card]
    other = (card + 1) % 3  # the other card never changes the style's choice
    # As first player: opening, and facing a bet after checking.
    assert bet_probability(name, (card, other), OPEN) == open_bet
    assert bet_probability(name, (card, other), FACING_RAISE) == call
    # As second player: after a check, and facing a bet.
    assert bet_probability(name, (other, card), AFTER_CHECK) == open_bet
    assert bet_probability(name, (other, card), FACING_BET) == call


@given(
    st.tuples(*[st.floats(0, 1)] * 3),
    st.tuples(*[st.floats(0, 1)] * 3),
    st.integers(0, 2**32),
)
def test_custom_style_samples_legal_moves_and_replays_with_a_seed(open_bet, call, seed):
    style = KuhnStyle("custom", open=open_bet, facing=call)
    view = view_after((K, J), [])
    style.reset(seed, 0)
    first = [style.act(view) for _ in range(5)]
    style.reset(seed, 0)
    assert [style.act(view) for _ in range(5)] == first
    assert set(first) <= {PASS, BET}
    probs = style.action_probabilities(view)
    assert probs[BET] == pytest.approx(open_bet[K]) and sum(probs.values()) == pytest.approx(1)


def test_style_rejects_bad_settings_and_foreign_views():
    with pytest.raises(ValueError, match="three bet probabilities"):
        KuhnStyle("bad", open=(0, 0.5, 1.5), facing=(0, 0, 1))
    with pytest.raises(ValueError, match="Kuhn poker information state"):
        make_opponent("conservative", KUHN).action_probabilities(
            SeatView(KUHN, 0, (0, 1), "not a kuhn state")
        )


def test_cfr_is_an_equilibrium_with_the_known_game_value():
    table = equilibrium_policy(KUHN)
    exploitability = pyspiel.exploitability(KUHN, table)
    assert exploitability <= 1e-3
    policy = openspiel_policy.tabular_policy_from_callable(
        KUHN, lambda state: dict(table[state.information_state_string()])
    )
    values = expected_game_score.policy_value(KUHN.new_initial_state(), [policy, policy])
    assert values[0] == pytest.approx(-1 / 18, abs=1e-3)
    assert values[1] == pytest.approx(1 / 18, abs=1e-3)


def test_cfr_plus_converges_further():
    table = equilibrium_policy(KUHN, iterations=1000, algorithm="cfr+")
    assert pyspiel.exploitability(KUHN, table) <= 2e-4


@pytest.mark.parametrize("card", [J, Q, K])
def test_cfr_argmax_second_to_act_plays_the_conservative_style(card):
    # why part 2's held-out opponent scores as conservative against a learner that acts first
    for other in {J, Q, K} - {card}:
        for betting in (AFTER_CHECK, FACING_BET):
            deal = (other, card)
            assert bet_probability("cfr-argmax", deal, betting) == bet_probability(
                "conservative", deal, betting
            )
    # acting first it differs: a Queen calls a bet after checking (equilibrium: 1/3 + alpha)
    assert bet_probability("cfr-argmax", (Q, J), FACING_RAISE) == 1.0
    assert bet_probability("conservative", (Q, J), FACING_RAISE) == 0.0


def test_cfr_modes_and_names():
    sample, argmax = make_opponent("cfr", KUHN), make_opponent("cfr-argmax", KUHN)
    assert (sample.name, argmax.name) == ("cfr", "cfr-argmax")
    view = view_after((K, J), [])  # a King opens: equilibrium bets with probability 3 * alpha
    probs = sample.action_probabilities(view)
    assert 0 < probs[BET] < 1
    one_hot = argmax.action_probabilities(view)
    assert sorted(one_hot.values()) == [0.0, 1.0]
    assert one_hot[BET] == float(probs[BET] > probs[PASS])
    # A Jack facing a bet always folds in equilibrium, and the argmax agrees.
    assert argmax.action_probabilities(view_after((Q, J), [BET]))[PASS] == 1.0


def test_cfr_is_cached_in_memory_and_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("MAGE_CACHE_DIR", str(tmp_path))
    clear_memory_cache()
    solved = equilibrium_policy(KUHN, iterations=300)
    assert equilibrium_policy(KUHN, iterations=300) is solved
    assert len(list(tmp_path.glob("cfr-*.json"))) == 1
    clear_memory_cache()
    loaded = equilibrium_policy(KUHN, iterations=300)
    assert loaded is not solved and loaded == solved  # byte-exact floats through JSON
    monkeypatch.setenv("MAGE_CACHE_DIR", "off")
    clear_memory_cache()
    assert equilibrium_policy(KUHN, iterations=300) == solved


def test_cfr_refuses_games_it_cannot_solve():
    with pytest.raises(ValueError, match="3 players"):
        CFROpponent(pyspiel.load_game("kuhn_poker", {"players": 3}))
    with pytest.raises(ValueError, match="too large for tabular CFR"):
        CFROpponent(pyspiel.load_game("tic_tac_toe"))
    with pytest.raises(ValueError, match="mode must be"):
        CFROpponent(KUHN, mode="greedy")
    with pytest.raises(ValueError, match="algorithm must be"):
        equilibrium_policy(KUHN, algorithm="dcfr")
    with pytest.raises(ValueError, match="has no information state"):
        make_opponent("cfr", KUHN).action_probabilities(SeatView(KUHN, 0, (0, 1), "9x"))


def test_equilibrium_policy_takes_a_game_name_too():
    from mage_envs.opponents.cfr import equilibrium_policy

    assert equilibrium_policy("kuhn_poker") == equilibrium_policy(pyspiel.load_game("kuhn_poker"))


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: [data],  # valid JSON, not the cache's mapping
        lambda data: {**data, "policy": {}},
        lambda data: {**data, "policy": {"not a state": [[0, 1.0]]}},
        lambda data: {**data, "policy": {k: [[0, 2.0]] for k in data["policy"]}},
        lambda data: {**data, "policy": {k: "ab" for k in data["policy"]}},
        lambda data: {key: value for key, value in data.items() if key != "policy"},
    ],
)
def test_a_cache_file_with_wrong_contents_is_recomputed(damage, tmp_path, monkeypatch):
    import json

    monkeypatch.setenv("MAGE_CACHE_DIR", str(tmp_path))
    clear_memory_cache()
    solved = equilibrium_policy(KUHN, iterations=50)
    (path,) = tmp_path.glob("cfr-*.json")
    path.write_text(json.dumps(damage(json.loads(path.read_text()))))
    clear_memory_cache()
    assert equilibrium_policy(KUHN, iterations=50) == solved
    clear_memory_cache()
