"""The trainer benchmark's building blocks: its views, the memory model's shape, a budget's run."""

import pytest

pytest.importorskip("torch")
pytest.importorskip("trl")

from benchmarks import trainer_memory  # noqa: E402
from benchmarks.trainer import VIEWS, WHOLE, view_of  # noqa: E402
from benchmarks.trainer_budgets import budget_run  # noqa: E402


def test_each_view_flag_names_its_module_and_a_plain_run_has_no_view():
    assert view_of([]) is None and view_of(["--overhead", "--steps", "2"]) is None
    assert view_of(["--processes", "--trials", "8"]) == (VIEWS["--processes"], ["--trials", "8"])
    assert set(WHOLE) <= set(VIEWS)


def test_the_predicted_activations_grow_by_the_same_bytes_with_each_row_of_a_forward():
    width = trainer_memory.PROMPT + trainer_memory.COMPLETION
    one, two, three = (trainer_memory.predicted_activations(k * 4 * width) for k in (1, 2, 3))
    assert two > one and three - two == pytest.approx(two - one)
    # a budget between two multiples of the row width holds the whole rows that fit
    assert trainer_memory.predicted_activations(4 * width + width // 2) == one


def test_a_step_measured_in_a_fresh_process_holds_at_least_the_saved_activations():
    (measured,) = trainer_memory.rss_check((1024,), rows=8)
    assert measured["budget"] == 1024
    assert measured["growth"] >= measured["predicted"]  # saved tensors are in the peak
    assert measured["growth"] < 10 * measured["predicted"]  # and most of it


def test_a_budget_run_bounds_every_forward_and_keeps_the_rows():
    figures = budget_run("tiny_kuhn_mage", 512, steps=1)
    assert figures["forward/largest_tokens"] <= 512
    assert figures["forward/count"] > 1 and figures["rows"] > 0
    assert 0 < figures["forward/padding_efficiency"] <= 1
    assert figures["update"] > 0 and figures["step"] >= figures["update"]


def test_the_generation_benchmark_replays_a_steps_calls_through_both_paths():
    from benchmarks.trainer_generation import measure

    # measure() raises unless the trainer and generate alone wrote the same tokens
    figures = measure(trials=4, repeats=1, tokens=6, episodes=1)
    assert figures["calls"] >= 1 and figures["prompts"] >= 4  # every trial's first move at least
    assert 0 < figures["render"] < figures["trainer"] and 0 < figures["generate"]
