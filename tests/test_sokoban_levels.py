"""Generated Sokoban levels: 200 per registered setting are solvable within the turn budget.

Every level is solved by the A* solver; its length must equal the optimal length the env reports,
lie in the setting's range and fit in ``max_steps * moves_per_turn`` moves; the solution, replayed
through the env ``moves_per_turn`` moves at a time, must reach success. Breadth-first search
(which needs no heuristic) confirms every A* length, so the reported lengths are optimal.
"""

import gymnasium as gym
import pytest

import mage_envs  # noqa: F401
from mage_envs.puzzles import GenerationError, SokobanSettings, generate_level, solve

SOKOBAN_IDS = ["mage/Sokoban-v0", "mage/SokobanMoreBoxes-v0", "mage/SokobanLarge-v0"]
LEVELS = 200


def _replay(env, moves, per_turn):
    for start in range(0, len(moves), per_turn):
        obs, reward, terminated, truncated, info = env.step(
            ", ".join(moves[start : start + per_turn])
        )
        assert not info["invalid_action"], obs
    return terminated, truncated, info


@pytest.mark.parametrize("env_id", SOKOBAN_IDS)
def test_generated_levels_are_solved_and_replay_to_success(env_id):
    env = gym.make(env_id)
    game = env.unwrapped
    low, high = game.settings.min_solution_length, game.settings.max_solution_length
    budget = game.max_steps * game.moves_per_turn
    assert high <= budget
    lengths = set()
    for seed in range(LEVELS):
        _, info = env.reset(seed=seed)
        solution = solve(game.initial_level)
        assert solution is not None
        assert len(solution) == info["optimal_length"]
        assert low <= len(solution) <= high
        lengths.add(len(solution))
        if game.settings.boxes_start_off_targets:
            assert not game.initial_level.boxes & game.initial_level.targets
        terminated, truncated, info = _replay(env, solution.moves, game.moves_per_turn)
        assert terminated and not truncated and info["success"]
    assert len(lengths) >= 8  # levels of many lengths, not one easy template


@pytest.mark.parametrize("env_id", SOKOBAN_IDS)
def test_astar_lengths_equal_breadth_first_lengths(env_id):
    game = gym.make(env_id).unwrapped
    for seed in range(LEVELS):
        game.reset(seed=seed)
        assert len(solve(game.initial_level, heuristic=False)) == game.optimal_length


def test_generation_is_a_pure_function_of_seed_and_settings():
    wide = SokobanSettings(height=7, width=7, num_boxes=2)
    for seed in (0, 1, 2**40):
        assert generate_level(seed) == generate_level(seed)
        assert generate_level(seed, wide) == generate_level(seed, wide)
    assert len({generate_level(seed).level for seed in range(30)}) == 30


def test_impossible_ranges_raise_a_clear_error():
    tight = SokobanSettings(min_solution_length=60, max_solution_length=60, max_attempts=3)
    with pytest.raises(GenerationError, match="No level with an optimal length in"):
        generate_level(0, tight)
    with pytest.raises(ValueError, match="too little floor"):
        SokobanSettings(height=4, width=4, num_boxes=3)
    with pytest.raises(ValueError, match="min_solution_length"):
        SokobanSettings(min_solution_length=9, max_solution_length=5)
