"""Our generator of ALFWorld games over the shipped floor plans (not the official distribution).

ALFWorld's own generator replays ALFRED trajectories in the 3D simulator, which cannot run here.
This one builds a game from a floor plan the ``alfworld`` package ships: it picks a task that the
room supports (a target object, a goal receptacle, the appliance or lamp the task needs), places
every object type of the room at random in receptacles that can hold it (never the target in its
goal receptacle), and writes the two files the engine reads (``game.tw-pddl``, ``traj_data.json``)
with the package's own PDDL domain, text grammar, goal formulas and task sentences. The rooms,
object types and rules are ALFWorld's; where objects lie, and so how often each task arises, are
ours. Results on these games are not comparable with published ALFWorld numbers.

A game is a pure function of ``(seed, task_type, settings)``: same inputs, same bytes.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from mage_envs.alfworld import tables
from mage_envs.alfworld.layouts import Receptacle, Room, floor_plans, is_unseen_scene, load_room
from mage_envs.alfworld.problem import LAMPS, Scene, location_name, mangle, problem_text
from mage_envs.alfworld.tasks import TASK_TYPES

__all__ = ["GeneratorSettings", "GeneratedGame", "generate_game", "GENERATOR_VERSION"]

GENERATOR_VERSION = 1
"""Bumped whenever a seed would give a different game (the cache folders are keyed by it)."""

_APPLIANCE = {
    "pick_clean_then_place_in_recep": "SinkBasin",
    "pick_heat_then_place_in_recep": "Microwave",
    "pick_cool_then_place_in_recep": "Fridge",
}
_PROPERTY = {
    "pick_clean_then_place_in_recep": "Cleanable",
    "pick_heat_then_place_in_recep": "Heatable",
    "pick_cool_then_place_in_recep": "Coolable",
}
_LAMP_HOLDERS = ("Desk", "SideTable", "Dresser", "CoffeeTable", "DiningTable", "Shelf", "TVStand")


@dataclass(frozen=True)
class GeneratorSettings:
    """What the generator may build.

    Attributes:
        scenes: ``"train"`` (ALFRED's training floor plans, 7-30 of each room type),
            ``"unseen"`` (its held-out plans 1-6) or ``"all"``.
        max_receptacles: Keep at most this many receptacles of the room (those the task needs
            first); ``None`` keeps them all. Smaller rooms load and play faster.
        max_objects: Place at most this many objects (the task's first); ``None``: every
            object type of the room, one to three of each.
    """

    scenes: str = "train"
    max_receptacles: int | None = None
    max_objects: int | None = None

    def __post_init__(self) -> None:
        if self.scenes not in ("train", "unseen", "all"):
            raise ValueError(f"scenes must be 'train', 'unseen' or 'all', not {self.scenes!r}.")
        for name in ("max_receptacles", "max_objects"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 4):
                raise ValueError(f"{name} must be None or an integer >= 4, not {value!r}.")

    def key(self) -> str:
        """A short name of these settings, used in cache folder names."""
        return f"{self.scenes}-r{self.max_receptacles or 'all'}-o{self.max_objects or 'all'}"


@dataclass(frozen=True)
class _Task:
    """What one game asks: the room, target object, goal receptacle, appliance and lamp."""

    room: Room
    task_type: str
    target: str
    parent: str = ""
    appliance: str = ""
    lamp: str = ""


@dataclass
class GeneratedGame:
    """One generated game: the contents of its two files, and where it came from.

    Attributes:
        game: The ``game.tw-pddl`` mapping (domain, grammar with the task, problem, solvable).
        traj_data: The ``traj_data.json`` mapping (task type and parameters).
        task: The task sentence shown to the agent.
    """

    game: dict
    traj_data: dict
    task: str = field(default="")

    def files(self) -> dict[str, str]:
        """Return the two files' text, file name -> content (sorted keys, fixed layout)."""
        return {
            "game.tw-pddl": json.dumps(self.game, indent=1, sort_keys=True) + "\n",
            "traj_data.json": json.dumps(self.traj_data, indent=1, sort_keys=True) + "\n",
        }


def _portable(room: Room) -> list[str]:
    """Object types of the room that some static receptacle of the room can hold."""
    kinds = room.receptacle_kinds()
    return [o for o in room.object_types if any(o in tables.fits().get(k, ()) for k in kinds)]


def _room_tasks(room: Room, task_type: str) -> list[_Task]:
    """Every (target, goal receptacle) pair of ``task_type`` that this room supports."""
    goals_valid = tables.constants().GOALS_VALID[task_type]
    room_names = {"kitchen": "Kitchen", "livingroom": "LivingRoom", "bedroom": "Bedroom"}
    if room_names.get(room.room_type, "Bathroom") not in goals_valid:
        return []
    kinds = sorted(room.receptacle_kinds() - tables.movable())
    appliance = _APPLIANCE.get(task_type, "")
    if appliance == "SinkBasin" and appliance not in kinds and "BathtubBasin" in kinds:
        appliance = "BathtubBasin"
    if appliance and appliance not in kinds:
        return []
    portable = _portable(room)
    wanted = tables.properties().get(_PROPERTY.get(task_type, ""), None)
    targets = [o for o in portable if wanted is None or o in wanted]
    if task_type == "look_at_obj_in_light":
        lamps = [lamp for lamp in LAMPS if lamp in room.object_types]
        if not lamps or not any(k in kinds for k in _LAMP_HOLDERS):
            return []
        return [
            _Task(room, task_type, o, lamp=lamps[0]) for o in targets if o not in tables.movable()
        ]
    tasks = []
    for target in targets:
        holders = [k for k in kinds if target in tables.fits().get(k, ())]
        for parent in holders:
            # the target must be able to start somewhere else than its goal receptacle
            if parent != appliance and any(k != parent for k in holders):
                tasks.append(_Task(room, task_type, target, parent, appliance))
    return tasks


@cache
def _candidate_rooms(task_type: str, scenes: str) -> tuple[int, ...]:
    def wanted(plan: int) -> bool:
        return scenes == "all" or is_unseen_scene(plan) == (scenes == "unseen")

    return tuple(p for p in floor_plans() if wanted(p) and _room_tasks(load_room(p), task_type))


def _pick_task(rng: random.Random, task_type: str, settings: GeneratorSettings) -> _Task:
    plans = _candidate_rooms(task_type, settings.scenes)
    if not plans:
        raise ValueError(f"No shipped floor plan supports {task_type} in scenes={settings.scenes}.")
    return rng.choice(_room_tasks(load_room(rng.choice(plans)), task_type))


def _keep_receptacles(rng: random.Random, task: _Task, limit: int | None) -> list[Receptacle]:
    """The receptacles of the game: those the task needs first, then others at random."""
    order = list(task.room.receptacles)
    rng.shuffle(order)
    fits = tables.fits()
    needs = [
        lambda r: r.kind == task.parent,
        lambda r: r.kind == task.appliance,
        lambda r: r.kind != task.parent and task.target in fits.get(r.kind, ()),
        lambda r: bool(task.lamp) and r.kind in _LAMP_HOLDERS,
    ]
    kept: list[Receptacle] = []
    for need in needs:
        found = next((r for r in order if need(r) and r not in kept), None)
        if found is not None:
            kept.append(found)
    kept += [r for r in order if r not in kept]
    kept = [r for r in kept if r.kind not in tables.movable()][: limit or len(kept)]
    return sorted(kept, key=lambda r: r.alfred_id)


def _objects_to_place(rng: random.Random, task: _Task, limit: int | None) -> list[str]:
    """Object types to place, one entry per instance: the task's objects first."""
    pick_two = task.task_type == "pick_two_obj_and_place"
    count = rng.randint(2, 3) if pick_two else rng.randint(1, 2)
    objects = [task.target] * count + ([task.lamp] if task.lamp else [])
    others = [o for o in _portable(task.room) if o != task.target]
    rng.shuffle(others)
    for kind in others:
        objects += [kind] * rng.randint(1, 3)
    return objects[: limit or len(objects)]


def _place(rng: random.Random, task: _Task, settings: GeneratorSettings) -> Scene:
    kept = _keep_receptacles(rng, task, settings.max_receptacles)
    receptacles = [(mangle(r.alfred_id), r.kind, location_name(r.pose)) for r in kept]
    fits = tables.fits()
    placed: list[tuple[str, str, str]] = []
    counts: dict[str, int] = {}
    for kind in _objects_to_place(rng, task, settings.max_objects):
        if kind in LAMPS:
            spots = [r for r in receptacles if r[1] in _LAMP_HOLDERS]
        else:
            spots = [r for r in receptacles if kind in fits.get(r[1], ())]
        if kind == task.target:
            spots = [r for r in spots if r[1] != task.parent]
        if spots:
            counts[kind] = counts.get(kind, 0) + 1
            placed.append((f"{kind}_bar_{counts[kind]}", kind, rng.choice(spots)[0]))
    return Scene(receptacles, placed)


def _data_text(name: str) -> str:
    return (resources.files("alfworld") / "data" / name).read_text()


def generate_game(
    seed: int, task_type: str, settings: GeneratorSettings | None = None, attempt: int = 0
) -> GeneratedGame:
    """Generate one game of ``task_type`` from ``seed``.

    Args:
        seed: Any integer; the same seed, task type and settings give the same game, byte for byte.
        task_type: One of :data:`~mage_envs.alfworld.tasks.TASK_TYPES`.
        settings: Scenes and room size (default: ALFRED's training floor plans, whole rooms).
        attempt: Draws another game for the same seed (the store moves on to the next attempt
            when the expert cannot win a game).

    Returns:
        The game's two files. Whether the expert solves it is checked separately (the engine
        is needed): see :func:`mage_envs.alfworld.expert.solve`.
    """
    if task_type not in TASK_TYPES:
        raise ValueError(f"Unknown task type {task_type!r}; known: {list(TASK_TYPES)}.")
    settings = settings or GeneratorSettings()
    key = f"mage-alfworld/{GENERATOR_VERSION}/{task_type}/{settings.key()}/{seed}/{attempt}"
    rng = random.Random(key)  # a str seed hashes the same way in every process
    task = _pick_task(rng, task_type, settings)
    scene = _place(rng, task, settings)
    library = tables.goal_library()[task_type]
    params = {"obj": task.target, "recep": task.parent, "toggle": task.lamp}
    goal = library["pddl"].replace("#", "-").format(**params)
    sentence = rng.choice(library["templates"]).format(
        **{k: v.lower() for k, v in params.items()}, mrecep=""
    )
    name = f"mage_{task_type}_{seed}"
    game = {
        "pddl_domain": _data_text("alfred.pddl"),
        "grammar": _data_text("alfred.twl2").replace("UNKNOWN GOAL", sentence),
        "pddl_problem": problem_text(name, scene, goal),
        "solvable": True,
    }
    traj_data = {
        "task_type": task_type,
        "pddl_params": {
            "object_target": task.target,
            "parent_target": task.parent,
            "toggle_target": task.lamp,
            "mrecep_target": "",
            "object_sliced": False,
        },
        "scene": {"floor_plan": f"FloorPlan{task.room.floor_plan}"},
        "generator": {
            "name": "mage",
            "version": GENERATOR_VERSION,
            "seed": seed,
            "attempt": attempt,
            "settings": settings.key(),
        },
    }
    return GeneratedGame(game, traj_data, sentence)
