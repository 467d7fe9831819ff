"""``train --check``: validate a training config anywhere, and say what it would run.

No weights are loaded and no GPU is needed. The check resolves the config (``base:`` chains,
``defaults:``, flags), builds its ``MetaRLConfig`` (every field checked, as a run would; a
``bf16: true`` that this machine cannot honour is checked as off and reported, since TRL's
refusal is about the hardware, not the config), builds its LoRA config, builds the env and the
opponent, plays one trial with a random-legal agent through the trial settings the trainer uses
(the no-download stand-in for WebShop's and ALFWorld's data), reads the model's ``config.json``
(or, for a known model not on disk, its architecture from ``baselines/configs/models``) and its
tokenizer when there is one, and prints what would run: trials and rows per step, the run's
budget (generations, trials played, optimizer steps: TRL's ``max_steps`` counts optimizer
steps, not generations), tokens per forward, the memory estimate of a step
(:mod:`mage_agents.training.memory`) and the TRL settings that matter. The tiny model's
architecture comes from its config alone: no weights are built, whatever its size. Problems a run
may meet later (an estimate over the device, a row over the token budget) are listed as
warnings; invalid settings exit 2, as ``train`` does; what the run would die on here (a model
that is not on disk, a tokenizer without a chat template, ``report_to`` or ``use_vllm`` naming
what is not installed, hub kernels offline: :mod:`baselines.train.refusals`) is printed after
what would run, one line each on stderr, and exits 2.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from baselines.errors import EXIT_OK, EXIT_SETTINGS, SETTINGS_ERRORS, print_error, settings_error
from baselines.train.refusals import machine_refusals, model_refusals
from baselines.train.trial_shape import measured_env, play_scripted
from mage_agents.training.memory import (
    GIB,
    RUNTIME_ALLOWANCE,
    Architecture,
    TrainingShape,
    estimate_memory,
)

__all__ = ["check", "check_main", "run_budget", "CheckReport", "read_model", "MODELS_DIR"]
__all__ += ["DEVICE_GIB"]

MODELS_DIR = Path(__file__).parents[1] / "configs" / "models"
"""Architectures of known models (their ``config.json`` values, with their source)."""

DEVICE_GIB = 80.0
"""The device the estimate is compared with (an 80 GB A100 / H100); ``--set`` cannot change it."""

CHARS_PER_TOKEN = 4.0
"""Characters a token of English text, when no tokenizer is on disk."""

SCRIPTED_TRIALS = 4
"""Trials the check plays (the first validates the env; all of them size a step)."""


def _size(count: float) -> str:
    """Bytes, in GiB (MiB below one)."""
    return f"{count / GIB:.1f} GiB" if count >= GIB else f"{count / 2**20:.1f} MiB"


def _parameters(count: int) -> str:
    return f"{count / 1e9:.2f}B" if count >= 1e8 else f"{count / 1e6:.2f}M"


@dataclass
class CheckReport:
    """What ``--check`` found: lines to print, warnings, refusals and the figures behind them."""

    lines: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    """What the run would die on here: each a line naming the setting and what it accepts."""
    figures: dict[str, Any] = field(default_factory=dict)


def read_model(
    spec: str, settings: dict[str, Any]
) -> tuple[Architecture | None, Any, str, list[str]]:
    """The model's architecture, tokenizer, where they came from, and what it lacks to train.

    The architecture and the tokenizer may be ``None``; what the model lacks are refusals. No
    weights are read or built.
    """
    if spec == "tiny":
        return (*_tiny_model(settings), [])
    from mage_agents.model_files import resolve_model

    try:
        source = resolve_model(spec)
    except ValueError:
        known = MODELS_DIR / f"{Path(spec).name.lower()}.json"
        refusals = model_refusals(spec, None, False, None)
        if known.is_file():
            arch = Architecture.from_config(json.loads(known.read_text()))
            return arch, None, f"{known.name} (not on disk: {spec})", refusals
        return None, None, f"not found ({spec})", refusals
    from transformers import AutoConfig, AutoTokenizer

    options = {"gguf_file": source.gguf_file} if source.gguf_file else {}
    config = AutoConfig.from_pretrained(source.folder, local_files_only=True, **options)
    try:
        tokenizer = AutoTokenizer.from_pretrained(source.folder, local_files_only=True, **options)
    except (OSError, ValueError):
        tokenizer = None
    where = str(source.folder / (source.gguf_file or "config.json"))
    refusals = model_refusals(spec, source.folder, source.gguf_file is not None, tokenizer)
    return Architecture.from_config(config.to_dict()), tokenizer, where, refusals


def _tiny_model(settings: dict[str, Any]) -> tuple[Architecture, Any, str]:
    """The tiny model's architecture and tokenizer from its settings, without its weights."""
    import inspect

    from mage_agents.tiny_model import build_tiny_model, tiny_config, tiny_tokenizer

    try:  # the keys build_tiny_model takes, as the run would check them
        given = inspect.signature(build_tiny_model).bind(**(settings.get("tiny_model") or {}))
    except TypeError as error:
        raise ValueError(
            f"tiny_model: {error}; it takes layers, hidden, seed, init_std, extra_corpus."
        ) from None
    given.apply_defaults()
    options = given.arguments
    tokenizer = tiny_tokenizer(options["extra_corpus"])
    config = tiny_config(tokenizer, options["layers"], options["hidden"])
    arch = Architecture.from_config(config.to_dict())
    return arch, tokenizer, "the tiny model (code; its architecture only, no weights built)"


def _tokens(prompts: list[str], tokenizer: Any) -> list[int]:
    if tokenizer is None:
        return [int(len(p) / CHARS_PER_TOKEN) + 1 for p in prompts]
    return [len(ids) for ids in tokenizer(prompts, add_special_tokens=False)["input_ids"]]


def _config(settings: dict[str, Any], report: CheckReport) -> Any:
    from baselines.train.config import build_config
    from mage_agents.training.config import _cuda_has_bf16

    wanted = bool(settings.get("bf16"))
    if wanted and not _cuda_has_bf16():  # the hardware's refusal, not the config's
        report.warnings.append(
            "bf16 is on: this machine has no GPU with bf16, so it was checked as off; it runs "
            "where one is."
        )
        settings = {**settings, "bf16": False}
    config = build_config(settings)
    report.figures["bf16"] = wanted or bool(config.bf16)
    return config


def _lora(settings: dict[str, Any]) -> Any:
    from baselines.train.config import peft_config

    return peft_config(settings)  # builds PEFT's LoraConfig: its fields are checked


def _trl_lines(config: Any, lora: Any, bf16: bool) -> list[str]:
    vllm = "off (transformers generate)"
    if config.use_vllm:
        vllm = f"{config.vllm_mode}"
        if config.vllm_mode == "colocate":
            vllm += f", {config.vllm_gpu_memory_utilization:.0%} of the device"
    adapter = "off (full fine-tuning)"
    if lora is not None:
        targets = lora.target_modules
        targets = targets if isinstance(targets, str) else ", ".join(sorted(targets))
        adapter = f"r {lora.r}, alpha {lora.lora_alpha}, on {targets}"
    return [
        f"  vLLM: {vllm}",
        f"  LoRA: {adapter}",
        f"  bf16: {'on' if bf16 else 'off'}; gradient checkpointing: "
        f"{'on' if config.gradient_checkpointing else 'off'}",
        f"  loss {config.loss_type}, beta {config.beta} (KL reference: "
        f"{'none' if config.beta == 0 else ('the base model' if lora else 'a second copy')}), "
        f"num_iterations {config.num_iterations}, learning rate {config.learning_rate:g}",
        f"  sampling: temperature {config.temperature}, top_p {config.top_p}, top_k "
        f"{config.top_k}, max_completion_length {config.max_completion_length}",
    ]


def _forward_shape(config: Any, turns: float, widest: int) -> dict[str, int]:
    """Rows of a generation and of a micro-batch, and the tokens of one training forward.

    Rows as the scripted trials played and at most; tokens: the budget, or a micro-batch's rows
    at the widest row.
    """
    trials = config.per_device_train_batch_size * config.steps_per_generation
    shape = {"trials": trials, "rows": round(trials * turns)}
    shape["most_rows"] = trials * config.max_turns
    shape["micro_rows"] = max(1, shape["rows"] // config.steps_per_generation)
    shape["tokens"] = config.max_tokens_per_forward or shape["micro_rows"] * widest
    return shape


def run_budget(config: Any, rows_per_generation: float) -> dict[str, Any]:
    """What a whole run plays and trains, per process, as TRL 1.16 schedules it.

    TRL's ``max_steps`` counts optimizer steps, each of ``gradient_accumulation_steps``
    micro-batches; a generation (``per_device_train_batch_size x steps_per_generation`` trials)
    feeds ``steps_per_generation x num_iterations`` micro-batches; so a run plays
    ``ceil(max_steps x gradient_accumulation_steps / (steps_per_generation x num_iterations))``
    generations.

    Example:
        >>> from types import SimpleNamespace
        >>> config = SimpleNamespace(max_steps=300, gradient_accumulation_steps=1,
        ...     steps_per_generation=8, num_iterations=1, per_device_train_batch_size=8)
        >>> budget = run_budget(config, rows_per_generation=640)
        >>> budget["generations"], budget["trials"], budget["rows_per_step"]
        (38, 2432, 80.0)
    """
    accumulation = config.gradient_accumulation_steps
    micro = config.max_steps * accumulation
    feeds = config.steps_per_generation * config.num_iterations
    generations = -(-micro // feeds)  # TRL generates at micro-batch 0, feeds, 2 x feeds, ...
    trials = config.per_device_train_batch_size * config.steps_per_generation
    return {
        "optimizer_steps": config.max_steps,
        "micro_batches": micro,
        "steps_per_generation_feeds": feeds / accumulation,
        "generations": generations,
        "trials_per_generation": trials,
        "trials": generations * trials,
        "rows_per_step": rows_per_generation * accumulation / config.steps_per_generation,
    }


def _budget_line(config: Any, budget: dict[str, Any]) -> str:
    return (
        f"the run, per process: {budget['optimizer_steps']:,} optimizer steps (max_steps; "
        f"{config.gradient_accumulation_steps} micro-batch(es) each, about "
        f"{budget['rows_per_step']:.0f} rows) from {budget['generations']:,} generations of "
        f"{budget['trials_per_generation']} trials, each feeding "
        f"{budget['steps_per_generation_feeds']:g} optimizer step(s) (steps_per_generation "
        f"{config.steps_per_generation} x num_iterations {config.num_iterations} micro-batches): "
        f"{budget['trials']:,} trials played"
    )


def check(settings: dict[str, Any]) -> CheckReport:
    """Check ``settings`` (a ``train`` config merged with its flags) without loading weights.

    Raises:
        ValueError: For an invalid setting (the message says which), as ``train`` would.
    """
    from mage_agents.training.trials import check_trials

    report = CheckReport()
    config = _config(settings, report)
    lora = _lora(settings)
    env_id, env_kwargs = measured_env(config.env_id, dict(config.env_kwargs))
    if env_id == config.env_id:
        check_trials(config)
    else:  # its data is not here: the settings are checked on the stand-in
        stand_in = copy.copy(config)
        stand_in.env_id, stand_in.env_kwargs = env_id, env_kwargs
        evaluation = getattr(config, "evaluation_env_kwargs", None) or {}
        stand_in.evaluation_env_kwargs = measured_env(config.env_id, dict(evaluation))[1]
        check_trials(stand_in)
        report.warnings.append(
            f"{config.env_id}'s data is not on this machine: the trials were checked on "
            f"{env_id} (same pages and engine); a run needs the data (docs/webshop.md, "
            "docs/alfworld.md)."
        )
    played = play_scripted(config, SCRIPTED_TRIALS)
    arch, tokenizer, source, refusals = read_model(str(settings.get("model", "tiny")), settings)
    report.refusals += refusals + machine_refusals(config)
    prompt_tokens = _tokens(played.prompts, tokenizer)
    widest = max(prompt_tokens, default=0) + config.max_completion_length
    turns = sum(played.turns) / len(played.turns)
    shape = _forward_shape(config, turns, widest)
    tokens, trials = shape["tokens"], shape["trials"]
    counted = "tokenizer" if tokenizer is not None else f"{CHARS_PER_TOKEN:g} characters a token"
    env = played.env_id + (" (stand-in)" if played.env_id != config.env_id else "")
    report.lines += [
        f"estimator {config.estimator}; env {config.env_id}, opponent {config.opponent}; "
        f"{config.trial.num_episodes} episode(s) a trial, reflection {config.trial.reflection}",
        f"{len(played.turns)} scripted trials on {env}: {turns:.1f} model turns a trial "
        f"({min(played.turns)}-{max(played.turns)}), prompts up to "
        f"{max(prompt_tokens, default=0)} tokens ({counted})",
        f"a generation, per process: {trials} trials ({trials // config.num_generations} groups of "
        f"{config.num_generations}), about {shape['rows']} rows as they played (at most "
        f"{shape['most_rows']}: {config.max_turns} turns a trial), cut into "
        f"{config.steps_per_generation} micro-batch(es) of about {shape['micro_rows']} rows",
    ]
    budget = run_budget(config, shape["rows"])
    report.lines.append(_budget_line(config, budget))
    report.figures["run"] = budget
    if config.max_tokens_per_forward is None:
        report.lines.append(
            f"tokens per forward: about {tokens:,} (no max_tokens_per_forward: TRL runs a "
            f"micro-batch's rows in one forward, at the widest row, {widest} tokens)"
        )
    else:
        report.lines.append(
            f"tokens per forward: at most {tokens:,} (max_tokens_per_forward); widest row "
            f"{widest} tokens"
        )
        if widest > tokens:
            report.warnings.append(
                f"the widest row ({widest} tokens) exceeds max_tokens_per_forward ({tokens}): "
                "it gets a forward of its own, over the budget."
            )
    report.figures.update(shape, widest=widest)
    report.lines.append(f"model: {source}")
    if arch is None:
        report.warnings.append(f"no model architecture ({source}): no memory estimate.")
    else:
        _memory(report, config, arch, lora, tokens, widest)
    report.lines += ["TRL settings:", *_trl_lines(config, lora, report.figures["bf16"])]
    return report


def _memory(
    report: CheckReport, config: Any, arch: Architecture, lora: Any, tokens: int, widest: int
) -> None:
    vllm = 0.0
    if config.use_vllm and config.vllm_mode == "colocate":
        vllm = config.vllm_gpu_memory_utilization * DEVICE_GIB * GIB
    rows = max(1, tokens // max(widest, 1))
    shape = TrainingShape(
        tokens=tokens,
        width=widest,
        scored=min(tokens, rows * config.max_completion_length),
        dtype_bytes=2 if report.figures["bf16"] else 4,
        lora_rank=None if lora is None else int(lora.r),
        lora_targets=None if lora is None else lora.target_modules,
        gradient_checkpointing=bool(config.gradient_checkpointing),
        reference_copy=config.beta != 0 and lora is None,
        vllm_bytes=vllm,
        runtime_bytes=0.0 if config.use_cpu else RUNTIME_ALLOWANCE,
    )
    parts = estimate_memory(arch, shape)
    report.figures["memory"] = parts
    shown = ", ".join(f"{k} {_size(v)}" for k, v in parts.items() if k != "total" and v)
    report.lines.append(
        f"memory of a step, one device: {_size(parts['total'])} ({shown}; "
        f"{_parameters(arch.parameters())} parameters)"
    )
    if config.use_vllm and parts["total"] > DEVICE_GIB * GIB:
        report.warnings.append(
            f"the estimate ({parts['total'] / GIB:.0f} GiB) exceeds an {DEVICE_GIB:.0f} GB "
            "device: set max_tokens_per_forward (docs/training.md, Scale out)."
        )


def check_main(settings: dict[str, Any], console: Console) -> int:
    """Print the check of ``settings``; return 0 (warnings included) or 2 for an invalid one.

    A config the run would die on here (:mod:`baselines.train.refusals`) prints what would run,
    then each refusal on stderr, and returns 2.
    """
    try:
        report = check(settings)
    except SETTINGS_ERRORS as error:
        return settings_error(error)
    for line in report.lines:
        console.print(line, highlight=False, markup=False)
    for warning in report.warnings:
        console.print(f"warning: {warning}", highlight=False, markup=False)
    for refusal in report.refusals:
        print_error(escape(refusal))
    if report.refusals:
        return EXIT_SETTINGS
    console.print("check passed: nothing was trained or written.", highlight=False)
    return EXIT_OK
