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


def test_each_role_keeps_its_own_moving_baseline_updated_before_it_is_subtracted():
    state = {}
    batch = [game("first", [1.0], trial_id="a"), game("second", [-1.0], trial_id="b")]
    first = rae(batch, state=state)
    assert np.concatenate(first).tolist() == pytest.approx([0.95, -0.95])
    assert state == pytest.approx({"first": 0.05, "second": -0.05})
    # the next batch reads the baselines the first left: b = 0.95 * 0.05 + 0.05 * 3 = 0.1975
    (second,) = rae([game("first", [3.0], trial_id="c")], state=state)
    assert second.tolist() == pytest.approx([3.0 - 0.1975])
    assert state["second"] == pytest.approx(-0.05)  # untouched: no second-seat trial came


def test_every_turn_of_a_trajectory_gets_its_advantage_and_final_target_reads_the_last_episode():
    two = game("first", [1.0, 0.0], [2.0])  # turns: play, play, reflect, play
    (trial,) = rae([two], decay=0.5)  # score 3: b = 1.5, A = 1.5
    assert trial.tolist() == [1.5, 1.5, 1.5, 1.5]
    (final,) = rae([two], decay=0.5, target="final")  # score 2: b = 1, A = 1
    assert final.tolist() == [1.0, 1.0, 1.0, 1.0]


def test_without_state_each_call_starts_from_zero_and_order_within_a_batch_matters():
    a, b = game("first", [2.0], trial_id="a"), game("first", [4.0], trial_id="b")
    assert rae([a])[0].tolist() == rae([a])[0].tolist() == pytest.approx([1.9])
    forward = np.concatenate(rae([a, b])).tolist()
    backward = np.concatenate(rae([b, a])).tolist()
    assert forward == pytest.approx([1.9, 3.705]) and backward != pytest.approx(forward[::-1])


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
    assert charged.tolist() == pytest.approx([1.9])  # no invalid turn: nothing charged
    assert state == pytest.approx({"first": 0.1})

    class Config:
        rae_decay = 0.9

    assert config_settings("rae", Config()) == {"decay": 0.9}
    assert np.isfinite(rae([game("", [0.0])])[0]).all()
