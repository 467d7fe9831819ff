"""Every text the trial wrapper adds around the inner env's observations, in one place.

Prompting research swaps these: pass ``templates=Templates(...)`` (or ``dataclasses.replace`` of
:data:`DEFAULT_TEMPLATES`) to :class:`~mage_envs.meta.MetaEpisodeWrapper`. Templates are
``str.format`` strings; the fields each one receives are listed in :class:`Templates`.

The defaults follow LaMer's prompts: the memory lists reflections as "On attempt k the task was not
solved. Your reflection: ...", and the reflection prompt asks for the mistakes of the past attempt
and a concise plan for the next one, inside a tag.
"""

from __future__ import annotations

from dataclasses import dataclass

from mage_envs.meta.page import PageTemplates

__all__ = ["Templates", "DEFAULT_TEMPLATES", "check_templates"]


@dataclass(frozen=True)
class Templates:
    """The wrapper's text templates.

    Attributes:
        attempt: First line of every play observation. Fields: ``attempt`` (1-based),
            ``num_episodes``.
        memory_header: Line above the memory of earlier attempts.
        reflection_entry: One stored reflection. Fields: ``attempt``, ``outcome``, ``reflection``.
        history_entry: What happened in one earlier attempt. Fields: ``attempt``, ``outcome``,
            ``history`` (its steps, rendered with ``history_step``, and its last observation).
        history_step: One step of an earlier attempt in memory. Fields: ``step`` (1-based),
            ``action``, ``reward``.
        outcome_solved: Outcome words of a solved attempt. Field: ``ret`` (its return).
        outcome_unsolved: Outcome words of an unsolved attempt. Field: ``ret``.
        recent_header: Line above the last steps of the current attempt. Field: ``n``.
        step: One step of a trajectory. Fields: ``step`` (1-based), ``observation``, ``action``,
            ``reward``.
        final_observation: The observation that ended an attempt. Field: ``observation``.
        current: Line above the inner env's current observation (when memory is shown).
        same_task: How the next attempt starts when ``same_task=True``.
        new_task: How the next attempt starts when ``same_task=False``.
        reflection_prompt: The reflection step's observation. Fields: ``attempt``,
            ``num_episodes``, ``outcome``, ``trajectory``, ``next_start``, ``max_chars``.
        reflection_tag: Tag whose last content is kept as the reflection.
        reflection_without_tag: What is stored when the answer has no such tag: ``"keep"`` (the
            whole answer, our default) or ``"empty"`` (nothing, as LaMer and MAGE did).
        page: A whole-page layout (:class:`~mage_envs.meta.page.PageTemplates`) that replaces
            the composition above for play and reflection observations (the published presets
            of :mod:`mage_envs.meta.presets` set one); ``None`` (default) uses the fields above.
    """

    attempt: str = "Attempt {attempt} of {num_episodes}."
    memory_header: str = "Your memory of earlier attempts:"
    reflection_entry: str = (
        "On attempt {attempt} the task was {outcome}. Your reflection: {reflection}"
    )
    history_entry: str = "On attempt {attempt} the task was {outcome}. What happened:\n{history}"
    history_step: str = "Step {step}: you answered {action} (reward {reward:+g})."
    outcome_solved: str = "solved (return {ret:+g})"
    outcome_unsolved: str = "not solved (return {ret:+g})"
    recent_header: str = "Your last {n} steps in this attempt:"
    step: str = "Step {step}. You saw:\n{observation}\nYou answered: {action} (reward {reward:+g})"
    final_observation: str = "End of the attempt:\n{observation}"
    current: str = "Now:"
    same_task: str = "the same initial state"
    new_task: str = "a new task, against the same opponent if there is one"
    reflection_prompt: str = (
        "Attempt {attempt} of {num_episodes} is over: the task was {outcome}.\n"
        "Your trajectory:\n{trajectory}\n\n"
        "Reflect on this attempt. Find the mistakes or inefficiencies, then give a concise, "
        "improved plan for the next attempt, which starts from {next_start}. Write the "
        "reflection inside <reflection></reflection> (at most {max_chars} characters)."
    )
    reflection_tag: str = "reflection"
    reflection_without_tag: str = "keep"
    page: PageTemplates | None = None


_SAMPLE_FIELDS = {
    "attempt": 1,
    "num_episodes": 3,
    "outcome": "not solved (return +0)",
    "reflection": "r",
    "history": "h",
    "ret": 0.0,
    "n": 1,
    "step": 1,
    "observation": "o",
    "action": "a",
    "reward": 0.0,
    "trajectory": "{trajectory}",
    "next_start": "s",
    "max_chars": 2000,
}


def check_templates(templates: Templates) -> None:
    """Format every template with sample fields, so that a broken one fails early and clearly.

    Raises:
        ValueError: If a template names an unknown field or is not a valid format string.
    """
    if templates.reflection_without_tag not in ("keep", "empty"):
        raise ValueError(
            "reflection_without_tag must be 'keep' or 'empty', not "
            f"{templates.reflection_without_tag!r}."
        )
    if templates.page is not None:
        templates.page.check()
    for name, template in vars(templates).items():
        if not isinstance(template, str):
            continue
        try:
            template.format(**_SAMPLE_FIELDS)
        except (KeyError, IndexError, ValueError) as error:
            raise ValueError(
                f"Template {name!r} cannot be formatted ({error!r}); the fields it may use are "
                f"listed in the Templates docstring."
            ) from error


DEFAULT_TEMPLATES = Templates()
"""The templates used unless the wrapper is given others."""
