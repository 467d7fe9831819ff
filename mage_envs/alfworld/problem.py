"""The PDDL problem of a generated game, written as the official games write theirs.

Objects are typed agent / object / receptacle / location / otype / rtype; every object and
receptacle type of ALFRED is declared (the domain's actions name some as constants); the initial
facts say where each receptacle is, what it is, whether it opens, where each object lies and what
can be done with it, and which receptacle types can hold which object types (without
``canContain`` the engine never offers "move ... to ...").
"""

from __future__ import annotations

from dataclasses import dataclass

from mage_envs.alfworld import tables

__all__ = ["LAMPS", "Scene", "location_name", "mangle", "problem_text"]

LAMPS = ("DeskLamp", "FloorLamp")
"""The lamps of the look-at-in-light task (toggleable, not pickupable)."""

_FACT_PROPERTIES = (("Heatable", "heatable"), ("Coolable", "coolable"), ("Cleanable", "cleanable"))
_FACT_PROPERTIES += (("Sliceable", "sliceable"), ("Toggleable", "toggleable"))


def mangle(text: str) -> str:
    """ALFRED id -> PDDL name, as the official games spell them (``|`` -> ``_bar_`` ...)."""
    for old, new in (("|", "_bar_"), ("-", "_minus_"), ("+", "_plus_"), (".", "_dot_")):
        text = text.replace(old, new)
    return text.replace(",", "_comma_")


def location_name(pose: tuple[float, float, int, int]) -> str:
    """A location named as the official games do (x and z in 0.25 steps, rotation / 90, horizon)."""
    x, z, rotation, horizon = pose
    parts = (round(x / 0.25), round(z / 0.25), rotation // 90, horizon)
    return mangle("loc|" + "|".join(str(p) for p in parts))


@dataclass
class Scene:
    """The placed world, ready to be written as a PDDL problem.

    Attributes:
        receptacles: ``(PDDL name, type, location)`` of each receptacle.
        objects: ``(PDDL name, type, PDDL name of its receptacle)`` of each object.
    """

    receptacles: list[tuple[str, str, str]]
    objects: list[tuple[str, str, str]]


def problem_text(name: str, scene: Scene, goal: str) -> str:
    """The PDDL problem of a scene: every type declared, the initial facts, then ``goal``."""
    constants = tables.constants()
    # A type name may be declared once: movable receptacles (a mug) are object types only.
    rtypes = sorted(set(constants.RECEPTACLES) - tables.movable())
    otypes = sorted((set(constants.OBJECTS) | tables.movable()) - set(rtypes))
    locations = sorted({loc for _, _, loc in scene.receptacles} | {"loc_bar_start"})
    declared = ["        agent1 - agent"]
    declared += [f"        {o}Type - otype" for o in otypes]
    declared += [f"        {r}Type - rtype" for r in rtypes]
    declared += [f"        {name_} - object" for name_, _, _ in scene.objects]
    declared += [f"        {name_} - receptacle" for name_, _, _ in scene.receptacles]
    declared += [f"        {loc} - location" for loc in locations]
    facts = ["(atLocation agent1 loc_bar_start)"] + _receptacle_facts(scene)
    facts += _object_facts(scene) + _can_contain(scene)
    init = "\n".join(f"        {fact}" for fact in facts)
    return (
        f"(define (problem {name})\n    (:domain alfred)\n    (:objects\n"
        + "\n".join(declared)
        + f"\n    )\n    (:init\n{init}\n    )\n{goal}"
    )


def _receptacle_facts(scene: Scene) -> list[str]:
    openable = set(tables.constants().OPENABLE_CLASS_LIST)
    facts = []
    for name, kind, loc in scene.receptacles:
        facts += [f"(receptacleType {name} {kind}Type)", f"(receptacleAtLocation {name} {loc})"]
        if kind in openable:
            facts.append(f"(openable {name})")
    return facts


def _object_facts(scene: Scene) -> list[str]:
    where = {name: loc for name, _, loc in scene.receptacles}
    properties = tables.properties()
    facts = []
    for name, kind, receptacle in scene.objects:
        facts += [
            f"(objectType {name} {kind}Type)",
            f"(inReceptacle {name} {receptacle})",
            f"(objectAtLocation {name} {where[receptacle]})",
        ]
        if kind not in LAMPS:
            facts.append(f"(pickupable {name})")
        if kind in tables.movable():
            facts.append(f"(isReceptacleObject {name})")
        facts += [f"({fact} {name})" for key, fact in _FACT_PROPERTIES if kind in properties[key]]
    return facts


def _can_contain(scene: Scene) -> list[str]:
    kinds = sorted({kind for _, kind, _ in scene.receptacles})
    objects = sorted({kind for _, kind, _ in scene.objects})
    fits = tables.fits()
    return [f"(canContain {r}Type {o}Type)" for r in kinds for o in objects if o in fits.get(r, ())]
