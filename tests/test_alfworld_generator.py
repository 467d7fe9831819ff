"""ALFWorld task types, shipped layouts and our game generator (no engine needed)."""

import importlib.util
import json
import re

import pytest

# find_spec, not importorskip: importing alfworld creates $ALFWORLD_DATA, which the tests point
# at a temporary folder only once they run.
if importlib.util.find_spec("alfworld") is None:
    pytest.skip("needs the alfworld extra", allow_module_level=True)

from mage_envs.alfworld import (  # noqa: E402
    TASK_TYPES,
    UNSEEN_TASK_TYPES,
    GeneratorSettings,
    generate_game,
    task_types,
)
from mage_envs.alfworld.layouts import floor_plans, is_unseen_scene, load_room  # noqa: E402

SMALL = GeneratorSettings(max_receptacles=6, max_objects=6)


def test_task_type_spellings():
    assert task_types(None) == TASK_TYPES
    assert task_types("unseen") == UNSEEN_TASK_TYPES == task_types(["cool", "pick-two"])
    assert task_types([6, "5"]) == UNSEEN_TASK_TYPES
    assert task_types("seen") == tuple(t for t in TASK_TYPES if t not in UNSEEN_TASK_TYPES)
    for bad in ("fly", 0, 7, [], True):
        with pytest.raises(ValueError, match="task type"):
            task_types(bad)


def test_the_package_ships_the_four_room_types():
    plans = floor_plans()
    assert len(plans) == 120
    assert {load_room(p).room_type for p in plans} == {
        "kitchen",
        "livingroom",
        "bedroom",
        "bathroom",
    }
    assert is_unseen_scene(3) and is_unseen_scene(405) and not is_unseen_scene(407)
    with pytest.raises(ValueError, match="FloorPlan999"):
        load_room(999)


@pytest.mark.parametrize("task_type", TASK_TYPES)
def test_same_seed_same_bytes_other_seed_other_game(task_type):
    first = generate_game(7, task_type, SMALL).files()
    assert first == generate_game(7, task_type, SMALL).files()
    others = {generate_game(seed, task_type, SMALL).files()["game.tw-pddl"] for seed in range(5)}
    assert len(others) > 1
    assert generate_game(7, task_type, SMALL, attempt=1).files() != first


def _placements(problem: str) -> dict[str, str]:
    init = problem.split("(:goal")[0]
    return dict(re.findall(r"\(inReceptacle (\S+) (\S+)\)", init))


@pytest.mark.parametrize("task_type", TASK_TYPES)
@pytest.mark.parametrize("settings", [SMALL, GeneratorSettings(scenes="unseen")])
def test_games_are_well_formed(task_type, settings):
    for seed in range(4):
        made = generate_game(seed, task_type, settings)
        game, traj = made.game, made.traj_data
        assert traj["task_type"] == task_type and game["solvable"] is True
        params = traj["pddl_params"]
        assert f"Your task is to: {made.task}." in game["grammar"]
        assert "UNKNOWN GOAL" not in game["grammar"]
        problem = game["pddl_problem"]
        assert "(:domain alfred)" in problem and "(:goal" in problem
        placed = _placements(problem)
        target = params["object_target"]
        targets = [o for o in placed if o.startswith(f"{target}_bar_")]
        assert len(targets) >= (2 if task_type == "pick_two_obj_and_place" else 1)
        parent = params["parent_target"]
        # the target never starts in its goal receptacle
        assert not any(placed[o].startswith(f"{parent}_bar_") for o in targets if parent)
        if task_type == "look_at_obj_in_light":
            assert f"(toggleable {params['toggle_target']}_bar_1)" in problem
        plan = int(traj["scene"]["floor_plan"].removeprefix("FloorPlan"))
        assert is_unseen_scene(plan) == (settings.scenes == "unseen")
        if settings.max_receptacles:
            declared = re.findall(r"^ +\w+ - receptacle$", problem, flags=re.MULTILINE)
            assert 3 <= len(declared) <= settings.max_receptacles
            assert len(placed) <= settings.max_objects
        assert json.loads(made.files()["traj_data.json"]) == traj


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="scenes"):
        GeneratorSettings(scenes="mars")
    with pytest.raises(ValueError, match="max_receptacles"):
        GeneratorSettings(max_receptacles=2)
    with pytest.raises(ValueError, match="task type"):
        generate_game(0, "juggle")


def test_a_seed_names_the_same_game_across_versions_of_this_code():
    # If this fails, the generator changed: bump GENERATOR_VERSION so that cached games of the
    # old generator are not served under the new one's seeds, then update the digest.
    import hashlib

    text = generate_game(3, "pick_and_place_simple").files()["game.tw-pddl"]
    digest = hashlib.sha256(text.encode()).hexdigest()
    assert digest.startswith("0038bc1784f3d7a6"), digest
