"""RAE (SPIRAL's role-conditioned advantages) against values worked out by hand."""

from dataclasses import replace

import numpy as np
import pytest

from mage_agents.advantages import ESTIMATORS, config_settings, estimate, is_stateful, rae
from mage_agents.rollout import Trajectory


def game(seat, *episodes, trial_id=None):
    """A trajectory whose play turns sit in ``seat``, with these episode rewards."""
    t = Trajectory.from_rewards([list(e) for e in episodes], trial_id=trial_id or f"{seat}")
    return replace(t, turns=[replace(turn, seat=seat) for turn in t.turns])


def test_each_role_subtracts_its_baseline_read_before_its_own_score_enters_it():
    state = {}
    batch = [game("first", [1.0], trial_id="a"), game("second", [-1.0], trial_id="b")]
    first = rae(batch, state=state)
    # baselines start at 0 and are read before the update: the advantages are the raw scores
    # (updating first would give 0.95 and -0.95: decay times SPIRAL's advantage)
    assert np.concatenate(first).tolist() == pytest.approx([1.0, -1.0])
    assert state == pytest.approx({"first": 0.05, "second": -0.05})
    # the next batch reads the baseline the first left: A = 3 - 0.05
    # and then updates it: b = 0.95 * 0.05 + 0.05 * 3
    (second,) = rae([game("first", [3.0], trial_id="c")], state=state)
    assert second.tolist() == pytest.approx([2.95])
    assert state["first"] == pytest.approx(0.1975)
    assert state["second"] == pytest.approx(-0.05)  # untouched: no second-seat trial came


def test_every_turn_of_a_trajectory_gets_its_advantage_and_final_target_reads_the_last_episode():
    two = game("first", [1.0, 0.0], [2.0])  # turns: play, play, reflect, play
    state = {"first": 1.0}
    (trial,) = rae([two], decay=0.5, state=state)  # score 3: A = 3 - 1 = 2, then b = 2
    assert trial.tolist() == [2.0, 2.0, 2.0, 2.0] and state == {"first": 2.0}
    (final,) = rae([two], decay=0.5, target="final", state=state)  # score 2: A = 0, b = 2
    assert final.tolist() == [0.0, 0.0, 0.0, 0.0] and state == {"first": 2.0}


def test_without_state_each_call_starts_from_zero_and_order_within_a_batch_matters():
    a, b = game("first", [2.0], trial_id="a"), game("first", [4.0], trial_id="b")
    assert rae([a])[0].tolist() == rae([a])[0].tolist() == pytest.approx([2.0])
    forward = np.concatenate(rae([a, b])).tolist()  # 2 - 0, then 4 - 0.05 * 2
    backward = np.concatenate(rae([b, a])).tolist()  # 4 - 0, then 2 - 0.05 * 4
    assert forward == pytest.approx([2.0, 3.9]) and backward == pytest.approx([4.0, 1.8])


def test_batch_scaling_divides_by_the_batch_std_and_does_not_centre():
    a, b = game("first", [2.0], trial_id="a"), game("first", [4.0], trial_id="b")
    scaled = np.concatenate(estimate("rae", [a, b], batch_std=True)).tolist()
    # advantages 2 and 3.9, std 0.95: divided by it, their mean stays 2.95 / 0.95, not 0
    assert scaled == pytest.approx([2.0 / 0.95, 3.9 / 0.95])


def test_bad_settings_and_a_trajectory_in_two_seats_are_refused():
    with pytest.raises(ValueError, match="decay"):
        rae([game("first", [1.0])], decay=1.0)
    mixed = game("first", [1.0], [1.0])
    mixed = replace(mixed, turns=[*mixed.turns[:-1], replace(mixed.turns[-1], seat="second")])
    with pytest.raises(ValueError, match="seat_rotation: trial"):
        rae([mixed])


def test_registered_as_stateful_and_run_through_estimate_with_the_penalty():
    assert is_stateful("rae") and not any(is_stateful(n) for n in ESTIMATORS if n != "rae")
    state = {}
    (charged,) = estimate("rae", [game("first", [2.0])], invalid_penalty=0.5, state=state)
    assert charged.tolist() == pytest.approx([2.0])  # no invalid turn: nothing charged
    assert state == pytest.approx({"first": 0.1})

    class Config:
        rae_decay = 0.9

    assert config_settings("rae", Config()) == {"decay": 0.9}
    assert np.isfinite(rae([game("", [0.0])])[0]).all()
