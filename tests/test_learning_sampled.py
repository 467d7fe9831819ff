"""Part 2's sampled held-out opponent, scored exactly over the branches of its moves."""

import pytest

pyspiel = pytest.importorskip("pyspiel")
pytest.importorskip("trl")

from benchmarks.learning import VARIANTS, build_trainer  # noqa: E402
from benchmarks.learning_common import DEALS, deal_seeds, play_scored  # noqa: E402
from benchmarks.learning_eval import episode_returns  # noqa: E402
from benchmarks.learning_sampled import sampled_returns  # noqa: E402
from mage_envs.opponents import ScriptedOpponent, SeatView, make_opponent  # noqa: E402
from mage_envs.policy_value import kuhn_policy_value  # noqa: E402


@pytest.fixture(scope="module")
def trainer(tmp_path_factory):
    settings = dict(VARIANTS["signature"]["mage"])
    return build_trainer(settings, 0, tmp_path_factory.mktemp("sampled"), [])


@pytest.mark.parametrize("opponent", ["conservative", "aggressive", "cfr-argmax"])
def test_a_deterministic_opponent_over_its_branches_scores_its_own_trials(trainer, opponent):
    # every script but its own moves weighs 0, and the scripted trial replays it game by game
    mean, deals = sampled_returns(trainer, opponent)
    exact, by_deal = episode_returns(trainer, (opponent,))
    assert mean == pytest.approx(exact[opponent], abs=1e-12)
    for deal in DEALS:
        assert deals[deal] == pytest.approx(by_deal[opponent][deal], abs=1e-12)


def _first_episode_table(trainer):
    """The learner's first-hand policy, read from the trials against two scripts."""
    cases = [(script, seed) for seed in deal_seeds() for script in ("script:0", "script:1")]
    trajectories = play_scored(trainer, cases, 1, stop_on_success=False)
    table = {}
    pairs = [trajectories[k : k + 2] for k in range(0, len(trajectories), 2)]
    for deal, (folds, bets) in zip(DEALS, pairs, strict=True):
        card = str("JQK".index(deal[0]))
        first = [t for t in folds.turns if t.phase == "play"][0].move
        table[card] = {0 if first == "check" else 1: 1.0}
        facing = [t for t in bets.turns if t.phase == "play"][1:]  # after a check, the bet
        if facing:
            table[card + "pb"] = {0 if facing[0].move == "fold" else 1: 1.0}
    return table


def test_the_sampled_cfrs_first_episode_is_the_policys_exact_value(trainer):
    # a peer: OpenSpiel's expected value of the learner's first-hand policy against CFR's
    mean, deals = sampled_returns(trainer, "cfr")
    value = kuhn_policy_value(_first_episode_table(trainer), "cfr", seat=0)
    assert mean[0] == pytest.approx(value, abs=1e-9)
    assert mean == pytest.approx([sum(deals[d][k] for d in DEALS) / 6 for k in range(3)])


def test_the_script_plays_its_move_in_each_game_and_refuses_more_games():
    kuhn = pyspiel.load_game("kuhn_poker")
    opponent = make_opponent("script:1.0", kuhn)
    assert isinstance(opponent, ScriptedOpponent) and opponent.name == "script:1.0"
    state = kuhn.new_initial_state()
    for action in (0, 2, 0):  # J to the learner, K to the opponent, the learner checks
        state.apply_action(action)
    view = SeatView.from_state(state, 1, kuhn)
    moves = []
    for seed in range(2):
        opponent.reset(seed, 1)
        moves.append(opponent.act(view))
    assert moves == [1, 0]
    opponent.reset(2, 1)
    with pytest.raises(ValueError, match="has no move for game 3"):
        opponent.act(view)


@pytest.mark.parametrize("spec", ["script:", "script:1.x", "script:1..0", "script:²"])
def test_a_malformed_script_is_refused_with_the_form_it_takes(spec):
    with pytest.raises(ValueError, match="action ids joined by dots"):
        make_opponent(spec, pyspiel.load_game("kuhn_poker"))


def test_the_branches_weigh_one_with_a_forfeited_game_among_them():
    import itertools

    from benchmarks.learning_sampled import branch_weight

    cfr = make_opponent("cfr", pyspiel.load_game("kuhn_poker"))
    scripts = list(itertools.product((0, 1), repeat=3))
    # a Jack facing a check bluffs a third of the time; game 2 was forfeited before it moved
    weights = [branch_weight(cfr, "QJ", [0, None, 1], s) for s in scripts]
    assert sum(weights) == pytest.approx(1.0, abs=1e-12)
    bluff = sum(w for s, w in zip(scripts, weights, strict=True) if s[0] == 1)
    assert bluff == pytest.approx(dict(cfr.table["0p"])[1], abs=1e-12)
