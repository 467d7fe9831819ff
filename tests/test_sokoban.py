"""Sokoban rules, deadlocks, solver and the text env, through scripted move tables."""

import random

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings
from hypothesis import strategies as st

import mage_envs  # noqa: F401
from mage_envs.puzzles import (
    SokobanEnv,
    SokobanLevel,
    SokobanSettings,
    dead_cells,
    deadlocked_boxes,
    generate_level,
    solve,
)
from mage_envs.puzzles.sokoban_text import parse_moves

# -- rules: one move from a one-row corridor, written in XSB ---------------------------------------

MOVES = [
    # (row before, move, row after, blocked reason)
    ("#@_#", "right", "#_@#", None),
    ("#@$_#", "right", "#_@$#", None),
    ("#@$.#", "right", "#_@*#", None),
    ("#@*_#", "right", "#_+$#", None),
    ("#@._#", "right", "#_+_#", None),
    ("#_$@#", "left", "#$@_#", None),
    ("#@#", "right", "#@#", "wall"),
    ("#@$#", "right", "#@$#", "box against a wall"),
    ("#@$$_#", "right", "#@$$_#", "box against another box"),
    ("@$.", "left", "@$.", "wall"),  # the edge of the map counts as a wall
    ("#@$.#", "up", "#@$.#", "wall"),
]


def _row_level(row: str) -> SokobanLevel:
    """The row, over a second row that balances boxes and targets (a level needs equal counts)."""
    boxes = row.count("$") + row.count("*")
    targets = row.count(".") + row.count("*") + row.count("+")
    balance = "." * (boxes - targets) + "$" * (targets - boxes)
    return SokobanLevel.from_text(row + "\n#" + (balance or "*"))


@pytest.mark.parametrize(("before", "move", "after", "blocked"), MOVES)
def test_move_table(before, move, after, blocked):
    result = _row_level(before).step(move)
    assert result.blocked == blocked
    assert result.level.to_text().split("\n")[0] == after


def test_push_reports_the_box_and_counts_targets():
    level = SokobanLevel.from_text("#@$.#")
    result = level.step("right")
    assert result.push == (2, 3)
    assert (level.boxes_on_targets, result.level.boxes_on_targets) == (0, 1)
    assert result.level.solved and not level.solved


def test_xsb_round_trip_and_spaces_as_floor():
    text = "#######\n#_@$_.#\n#_*___#\n#######"
    level = SokobanLevel.from_text(text)
    assert level.to_text() == text
    assert SokobanLevel.from_text(text.replace("_", " ")).to_text() == text
    assert level.position(level.player) == (1, 2)


def test_windows_line_endings_are_read():
    text = "#####\r\n#@$.#\r\n#####\r\n"
    assert SokobanLevel.from_text(text) == SokobanLevel.from_text(text.replace("\r", ""))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("#@$.#\n#@__#", "exactly one player"),
        ("#_$.#", "exactly one player"),
        ("#@$$.#", "as many boxes as targets"),
        ("#@x.#", "Unknown symbol"),
    ],
)
def test_bad_levels_are_rejected_with_a_reason(text, message):
    with pytest.raises(ValueError, match=message):
        SokobanLevel.from_text(text)


def test_legal_moves_list_only_unblocked_moves():
    level = SokobanLevel.from_text("#####\n#@$_#\n#_._#\n#####")
    assert level.legal_moves() == ["down", "right"]


# -- deadlocks ------------------------------------------------------------------------------------


def test_dead_cells_of_a_room_by_hand():
    # Target in the middle of the bottom row. A box in a corner, or on the top row (no target
    # there), is dead; so are the side cells of the middle row, which can only be pushed into
    # corners. Only the centre column reaches the target.
    level = SokobanLevel.from_text("#####\n#___#\n#@$_#\n#_._#\n#####")
    dead = {level.position(c) for c in dead_cells(level)}
    assert dead == {(1, 1), (1, 2), (1, 3), (2, 1), (2, 3), (3, 1), (3, 3)}


@pytest.mark.parametrize(
    ("text", "stuck"),
    [
        ("#####\n#$__#\n#_@.#\n#####", [(1, 1)]),  # box in a corner
        ("######\n#_$__#\n#__@_#\n#.___#\n######", [(1, 2)]),  # along a wall with no target
        ("######\n#_@__#\n#.$$.#\n######", [(2, 2), (2, 3)]),  # 2x2 freeze against a wall
        ("######\n#_@__#\n#_**_#\n######", []),  # frozen, but both boxes are on targets
        ("######\n#_@__#\n#_*$.#\n######", [(2, 3)]),  # frozen next to a box on target
        ("######\n#@$_.#\n######", []),  # a live box
    ],
)
def test_deadlock_table(text, stuck):
    level = SokobanLevel.from_text(text)
    assert [level.position(b) for b in deadlocked_boxes(level)] == stuck


def _fewest_moves(level: SokobanLevel) -> int | None:
    """Plain breadth-first search over ``SokobanLevel.step``, with no pruning at all.

    Independent of the deadlock checks (which the solver uses to prune), so it can judge them.
    """
    seen, frontier, depth = {(level.boxes, level.player)}, [level], 0
    while frontier:
        if any(position.solved for position in frontier):
            return depth
        following = []
        for position in frontier:
            for move in ("up", "down", "left", "right"):
                after = position.step(move).level
                if (after.boxes, after.player) not in seen:
                    seen.add((after.boxes, after.player))
                    following.append(after)
        frontier, depth = following, depth + 1
    return None


@pytest.mark.parametrize(
    "settings_", [SokobanSettings(), SokobanSettings(num_boxes=3, boxes_start_off_targets=True)]
)
def test_detected_deadlocks_are_truly_unsolvable(settings_):
    """Soundness against an unpruned search, over random walks in generated levels."""
    rng = random.Random(7)
    checked = 0
    for seed in range(25):
        level = generate_level(seed, settings_).level
        for _ in range(12):
            level = level.step(rng.choice(["up", "down", "left", "right"])).level
            if deadlocked_boxes(level):
                assert _fewest_moves(level) is None, level.to_text()
                checked += 1
    assert checked > 10  # the walks do reach deadlocks, so the check is not vacuous


def test_solver_lengths_equal_an_unpruned_search():
    """The solver prunes dead states; an unpruned search must find the same optimal lengths."""
    rng = random.Random(3)
    for seed in range(20):
        level = generate_level(seed).level
        for _ in range(rng.randrange(4)):
            level = level.step(rng.choice(["up", "down", "left", "right"])).level
        solution = solve(level)
        assert (None if solution is None else len(solution)) == _fewest_moves(level)


# -- solver ---------------------------------------------------------------------------------------


def test_solver_optimal_length_by_hand():
    # Two pushes; between them the player must walk around the box (2 moves), plus 1 to start.
    level = SokobanLevel.from_text("#####\n#@__#\n#_$_#\n#__.#\n#####")
    assert len(solve(level)) == 5
    assert len(solve(level, heuristic=False)) == 5


def test_solver_says_unsolvable_and_solutions_replay():
    assert solve(SokobanLevel.from_text("######\n#_@__#\n#.$$.#\n######")) is None
    level = SokobanLevel.from_text("#######\n#_@__.#\n#_$$__#\n#.____#\n#######")
    solution = solve(level)
    for move in solution.moves:
        result = level.step(move)
        assert result.blocked is None
        level = result.level
    assert level.solved


# -- parsing the answer ---------------------------------------------------------------------------

PARSES = [
    ("up", ["up"]),
    ("UP, Left , l", ["up", "left", "left"]),
    ("<action>down then right</action>", ["down", "right"]),
    ("u d", ["up", "down"]),
    ("north, east", ["up", "right"]),
    ("I will go up.", ["up"]),
    ("Thinking: left is a wall. <answer>right, right</answer>", ["right", "right"]),
    ("up or left?", []),
    ("push the box left, then go down", []),
    ("", []),
    ("<action></action>", []),
    ("1, 2", []),
    ("upward", []),
]


@pytest.mark.parametrize(("text", "moves"), PARSES)
def test_parse_moves_table(text, moves):
    assert parse_moves(text) == moves


def test_parse_moves_rejects_non_text():
    assert parse_moves(None) == [] and parse_moves(3) == []


# -- the env: turns, rewards, deadlocks, truncation -----------------------------------------------

CORRIDOR = "#######\n#@$__.#\n#######"  # three pushes to the right solve it


def _env(**kwargs):
    return gym.make("mage/Sokoban-v0", **kwargs)


def test_multi_move_turn_and_reward_scheme():
    env = _env()
    obs, info = env.reset(options={"level": CORRIDOR})
    assert info["optimal_length"] == 3 and info["level_seed"] is None
    obs, reward, terminated, truncated, info = env.step("right, right")
    assert info["moves_applied"] == ["right", "right"] and not terminated
    assert reward == pytest.approx(-0.2)
    obs, reward, terminated, truncated, info = env.step("right")
    assert reward == pytest.approx(-0.1 + 1.0 + 10.0)
    assert terminated and not truncated and info["success"] and info["legal_actions"] == []
    assert "solved in 3 moves" in obs


def test_pushing_a_box_off_a_target_costs_the_target_reward():
    env = _env()
    env.reset(options={"level": "#######\n#@*___#\n#_$__.#\n#######"})
    _, reward, *_ = env.step("right")
    assert reward == pytest.approx(-0.1 - 1.0)


def test_moves_after_the_solution_are_not_played():
    env = _env()
    env.reset(options={"level": "######\n#@$.##\n######"})
    _, reward, terminated, _, info = env.step("right, left, left")
    assert terminated and info["success"] and info["moves_applied"] == ["right"]
    assert reward == pytest.approx(-0.1 + 1.0 + 10.0)


def test_blocked_second_move_stops_the_turn():
    env = _env()
    env.reset(options={"level": CORRIDOR})
    obs, reward, _, _, info = env.step("up, right")
    assert info["invalid_action"] and info["moves_applied"] == []
    assert reward == pytest.approx(-0.1) and "up is blocked (wall)" in obs
    obs, reward, _, _, info = env.step("right, up, right")
    assert not info["invalid_action"] and info["moves_applied"] == ["right"]
    assert "Move 2 (up) was blocked (wall); 2 skipped" in obs
    assert info["board"] == "#######\n#_@$_.#\n#######"


@pytest.mark.parametrize("answer", ["up, up, up, up", "hello", "", "<action>jump</action>"])
def test_invalid_turns_change_nothing(answer):
    env = _env(invalid_action_penalty=0.5)
    obs0, info0 = env.reset(seed=5)
    obs, reward, terminated, truncated, info = env.step(answer)
    assert info["invalid_action"] and reward == -0.5 and not terminated and not truncated
    assert info["board"] == info0["board"] and info["legal_actions"] == info0["legal_actions"]
    assert obs.startswith("Invalid answer") and info["turn"] == 1


DEADLOCK_NEXT = (
    "######\n#____#\n#_$__#\n#_@__#\n#.___#\n######"  # "up" pushes the box to the top row
)


def test_deadlock_ends_the_episode_with_feedback():
    env = _env()
    env.reset(options={"level": DEADLOCK_NEXT})
    obs, reward, terminated, truncated, info = env.step("up")
    assert terminated and not truncated and info["deadlock"] and not info["success"]
    assert "Deadlock: the box at (2, 3)" in obs and info["legal_actions"] == []
    with pytest.raises(RuntimeError, match="reset"):
        env.step("up")


def test_deadlock_can_be_left_open():
    env = _env(end_on_deadlock=False)
    env.reset(options={"level": DEADLOCK_NEXT})
    _, _, terminated, _, info = env.step("up")
    assert info["deadlock"] and not terminated and info["legal_actions"]


def test_an_invalid_turn_still_reports_the_deadlock():
    env = _env(end_on_deadlock=False)
    env.reset(options={"level": DEADLOCK_NEXT})
    env.step("up")
    *_, info = env.step("fly")
    assert info["invalid_action"] and info["deadlock"]


def test_deadlock_feedback_names_every_stuck_box():
    # "down" pushes the top box next to the other one along the bottom wall: a frozen pair.
    env = _env()
    env.reset(options={"level": "######\n#__@_#\n#__$_#\n#.$_.#\n######"})
    obs, _, terminated, _, info = env.step("down")
    assert terminated and info["deadlock"]
    assert "Deadlock: the boxes at (4, 3) and (4, 4) can never reach a target" in obs


def test_truncation_after_max_steps_turns():
    env = _env(max_steps=2)
    env.reset(options={"level": "#######\n#@_$_.#\n#_____#\n#######"})
    assert env.step("down")[3] is False
    obs, _, terminated, truncated, info = env.step("up")
    assert truncated and not terminated and not info["success"]
    assert "Out of turns (2)" in obs


def test_one_move_per_turn_setting():
    env = _env(moves_per_turn=1)
    obs, _ = env.reset(options={"level": CORRIDOR})
    assert "Write one move per turn: up, down, left or right." in obs
    obs, _, _, _, info = env.step("right, right")
    assert info["invalid_action"] and "2 moves given, at most 1 per turn" in obs


def test_unsolvable_or_solved_custom_levels_are_refused():
    with pytest.raises(ValueError, match="cannot be solved"):
        _env().reset(options={"level": "######\n#_@__#\n#.$$.#\n######"})
    with pytest.raises(ValueError, match="already solved"):
        _env().reset(options={"level": "#####\n#@*_#\n#####"})


def test_observation_shows_numbered_board_and_legend():
    env = _env()
    obs, _ = env.reset(options={"level": CORRIDOR})
    assert "Legend: # wall, _ floor, . target, $ box" in obs
    assert "    1 2 3 4 5 6 7\n 1  # # # # # # #\n 2  # @ $ _ _ . #" in obs
    assert "up to 3 moves per turn" in obs and "Turn 1 of 7" in obs


def test_same_seed_same_level_and_text():
    env_a, env_b = _env(), _env()
    for seed in (0, 1, 12345):
        assert env_a.reset(seed=seed) == env_b.reset(seed=seed)
    texts = {env_a.reset(seed=seed)[0] for seed in range(20)}
    assert len(texts) > 15


def test_level_matches_the_public_generator():
    env = _env()
    _, info = env.reset(seed=11)
    made = generate_level(11, SokobanSettings())
    assert info["board"] == made.level.to_text()
    assert info["optimal_length"] == len(made.solution)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(moves_per_turn=1, max_steps=21),
        dict(num_boxes=1, max_solution_length=10),
        dict(end_on_deadlock=False, invalid_action_penalty=0.0),
    ],
)
def test_check_env_with_settings(kwargs):
    check_env(SokobanEnv(**kwargs), skip_render_check=True)


def test_render_modes():
    env = SokobanEnv(render_mode="ansi")
    obs, _ = env.reset(seed=0)
    assert env.render() == obs
    with pytest.raises(ValueError, match="render_mode"):
        SokobanEnv(render_mode="rgb_array")


@pytest.mark.parametrize(
    "kwargs", [dict(moves_per_turn=0), dict(max_steps=0), dict(num_boxes=0), dict(height=2)]
)
def test_bad_settings_are_rejected(kwargs):
    with pytest.raises(ValueError):
        SokobanEnv(**kwargs)


_WORDS = st.sampled_from(["up", "down", "left", "right", "u", ",", " ", "then", "<action>", "x"])


@settings(max_examples=80, deadline=None)
@given(
    answers=st.lists(st.one_of(st.text(max_size=60), st.lists(_WORDS).map("".join)), max_size=12)
)
def test_fuzzed_answers_never_raise_and_keep_invariants(answers):
    env = _env()
    obs, info = env.reset(seed=3)
    for answer in answers:
        obs, reward, terminated, truncated, info = env.step(answer)
        assert env.observation_space.contains(obs)
        level = SokobanLevel.from_text(info["board"])
        assert len(level.boxes) == 2 and level.targets == env.unwrapped.initial_level.targets
        if terminated or truncated:
            obs, info = env.reset(seed=3)


def test_replaying_a_seed_reuses_its_level_and_plays_the_same(monkeypatch):
    import mage_envs.puzzles.sokoban_env as sokoban_env

    calls = []
    real = sokoban_env.generate_level
    monkeypatch.setattr(
        sokoban_env,
        "generate_level",
        lambda seed, settings: calls.append(seed) or real(seed, settings),
    )
    env = SokobanEnv()
    first = env.reset(seed=4)
    again = env.reset(seed=4)
    other = env.reset(seed=5)
    assert calls == [4, 5]
    assert first == again and other[0] != first[0]
    assert env.reset(seed=4) == SokobanEnv().reset(seed=4)
