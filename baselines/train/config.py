"""A training config read and built: its file, ``MetaRLConfig``, model and LoRA config.

What ``train`` and ``train --check`` both need, below either of them: reading a config file,
resolving ``defaults: small-model``, checking every value (:func:`build_config`), building the
tiny model or loading a local one (:func:`load_model`) and PEFT's ``LoraConfig``.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import yaml

from baselines.settings import resolve_config
from baselines.train.flags import checked_values
from baselines.train.folder import LEGACY_TRIAL_KEYS
from mage_agents.training.small_model import SMALL_MODEL_DEFAULTS, init_std_for
from mage_agents.yaml_bounds import load_yaml, yaml_problem

__all__ = ["TRAIN_CONFIG_DIR", "OWN_KEYS", "DEFAULTS", "MOVED_TO_TRIAL", "STEP_COUNTS"]
__all__ += ["read_config", "build_config", "load_model", "peft_config"]

TRAIN_CONFIG_DIR = Path(__file__).parents[1] / "configs" / "train"
"""The ready training configs (installed with the package)."""

OWN_KEYS = ("model", "tiny_model", "lora", "out", "plots", "base", "defaults")
"""Config keys that are not MetaRLConfig fields."""

DEFAULTS = ("published", "small-model")
"""``defaults:`` what fills the settings a config leaves out."""


def read_config(path: Path, depth: int = 0) -> dict[str, Any]:
    """Read a training config file (a path or a ready config's name), its ``base:`` merged in.

    Raises:
        ValueError: For a file that is not a mapping, keys of earlier versions that belong
            under ``trial:``, or ``base:`` configs nested too deeply.
    """
    file = resolve_config(path, TRAIN_CONFIG_DIR, "training config")
    try:
        data = load_yaml(file.read_text())
    except yaml.YAMLError as error:
        raise ValueError(f"{file}: not valid YAML: {yaml_problem(error)}.") from None
    if data is None or data == {}:
        raise ValueError(
            f"{path}: the training config is empty: give its settings (env_id, estimator, ...) "
            "or base: a ready config to start from (python -m baselines.run train --help)."
        )
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a training config is a YAML mapping of settings.")
    moved = [key for key in data if key in MOVED_TO_TRIAL]
    if moved:
        raise ValueError(
            f"{file}: {', '.join(moved)} belong under trial: now (the trial settings, "
            "TrialConfig's, trial_kwargs' keys too), e.g. trial: {num_episodes: 3, memory: "
            "reflection_only}."
        )
    base = data.pop("base", None)
    if base is not None:
        if depth > 8:
            raise ValueError(f"{path}: 'base' configs nest too deeply (a loop?).")
        inherited = read_config(Path(base), depth + 1)
        trial = {**(inherited.get("trial") or {}), **(data.get("trial") or {})}
        data = {**inherited, **data}
        if trial:  # a config changes the trial settings it names, the base's others stay
            data["trial"] = trial
    return data


MOVED_TO_TRIAL = (*LEGACY_TRIAL_KEYS, "trial_kwargs")
"""Keys of earlier training configs that are trial settings now (under ``trial:``)."""


def build_config(settings: dict[str, Any]) -> Any:
    """Return the :class:`~mage_agents.training.MetaRLConfig` of ``settings``.

    Library warnings raised while the config is checked (TRL's, transformers') are shown only
    when it is valid: a bad config prints its one error line alone.

    Raises:
        ValueError: For an unknown key (with the closest field names), a value of the wrong
            type (naming the field and what it takes) or an invalid value.
    """
    with warnings.catch_warnings(record=True) as caught:
        from mage_agents.training import MetaRLConfig

        values = {k: v for k, v in settings.items() if k not in OWN_KEYS}
        if _small_model(settings):
            values = {**SMALL_MODEL_DEFAULTS, **values}
        values = checked_values(values, "the training config")
        values.setdefault("report_to", [])
        values.setdefault("disable_tqdm", True)  # the progress lines below replace the bar
        _check_step_counts(values)
        config = MetaRLConfig(output_dir=settings["out"], **values)
    for warning in caught:
        warnings.showwarning(
            warning.message, warning.category, warning.filename, warning.lineno, warning.file
        )
    return config


STEP_COUNTS = ("max_steps", "logging_steps", "save_steps")
"""Step counts a config may leave out but not set below 1 (``evaluation_steps`` 0: never).

TRL reads ``max_steps: -1`` as "train ``num_train_epochs`` epochs instead": a config that wants
that leaves ``max_steps`` out."""


def _check_step_counts(values: dict[str, Any]) -> None:
    for name in STEP_COUNTS:
        value = values.get(name)
        if value is not None and (not isinstance(value, int | float) or value <= 0):
            raise ValueError(f"{name} counts optimizer steps: give a number >= 1, not {value!r}.")


def _small_model(settings: dict[str, Any]) -> bool:
    """Whether the config asks for the small-model defaults (``defaults: small-model``)."""
    choice = settings.get("defaults", "published")
    if choice not in DEFAULTS:
        raise ValueError(f"defaults must be one of {', '.join(DEFAULTS)}, not {choice!r}.")
    return choice == "small-model"


def load_model(settings: dict[str, Any]) -> tuple[Any, Any]:
    """Return (model, tokenizer): the tiny model built in code, or a local directory's."""
    spec = settings["model"]
    if spec == "tiny":
        from mage_agents.tiny_model import build_tiny_model

        options = dict(settings.get("tiny_model") or {})
        options.setdefault("seed", settings.get("seed", 0))  # --seed draws another model too
        if _small_model(settings):  # 64: build_tiny_model's default width
            options.setdefault("init_std", init_std_for(options.get("hidden", 64)))
        return build_tiny_model(**options)
    from mage_agents.model_files import load_pretrained

    try:  # a folder, a .gguf file (loaded dense and saveable) or a fetched name (smollm2-135m)
        return load_pretrained(spec, dtype="auto", hub_kernels=bool(settings.get("hub_kernels")))
    except ValueError as error:
        raise ValueError(f"model {spec!r}: {error} Or give 'tiny'.") from None


def peft_config(settings: dict[str, Any]) -> Any:
    """PEFT's ``LoraConfig`` of the config's ``lora:`` mapping (its fields checked), or ``None``."""
    lora = settings.get("lora")
    if not lora:
        return None
    try:
        from peft import LoraConfig
    except ImportError as error:
        raise ValueError("lora needs peft: pip install 'mage-metarl[train]'.") from error
    return LoraConfig(**{"task_type": "CAUSAL_LM", **lora})
