"""``MetaRLConfig``: TRL's ``GRPOConfig`` plus the settings of meta-RL trials and estimators.

Everything TRL already configures (learning rate, group size ``num_generations``, ``beta``,
``loss_type``, ``entropy_coef``, LoRA through ``peft_config``, ``use_vllm``, logging, checkpoints)
keeps its TRL name and meaning. The fields added here say what is played (env, opponent, trial
shape) and how each model turn's advantage is computed (the estimator and its settings); none
of them reuses a name of ``GRPOConfig`` or ``TrainingArguments``
(:data:`~mage_agents.training.trl_contract.REUSED_TRL_FIELDS`, checked by a contract test).
Defaults are the published ones (LaMer / MAGE, see docs/training.md), except where a field says
otherwise.
"""

from __future__ import annotations

import functools
import types
import typing
from dataclasses import dataclass, field
from typing import Any

from trl import GRPOConfig

from mage_agents.advantages import ESTIMATORS
from mage_agents.advantages.gigpo import OMEGA
from mage_agents.advantages.lamer import REFLECTION_SCORES
from mage_agents.advantages.rae import RAE_DECAY
from mage_agents.advantages.returns import ACROSS, STEP_GAMMA, TRAJ_GAMMA
from mage_agents.prompting import STRATEGIES
from mage_agents.training.small_model import SMALL_MODEL_DEFAULTS
from mage_agents.training.trials import training_trial
from mage_envs.games.openspiel_env import SELF_PLAY
from mage_envs.meta import TrialConfig

__all__ = ["MetaRLConfig"]

STATISTICS = ("trajectory", "turn")
SCALINGS = ("default", "group", "batch", "none")
ACTION_CHOICES = ("generate", "legal")


def _help(text: str) -> dict[str, str]:
    return {"help": text}


NO_GROUP_STD = {
    "rloo": "RLOO's leave-one-out advantage has no group-std scaling",
    "rae": "RAE subtracts its role's moving baseline and has no group",
}
"""Estimators that refuse ``scale_advantages: group``, and why."""


@dataclass
class MetaRLConfig(GRPOConfig):
    """Configuration of :class:`~mage_agents.training.MetaRLTrainer`.

    Each dataset row is a task (a seed); TRL's sampler repeats it ``num_generations`` times, which
    makes the group of trials of the same task that the estimators compare.

    Raises:
        ValueError: From ``__post_init__``, when a setting is invalid; the message says why.
    """

    estimator: str = field(
        default="mage",
        metadata=_help("Advantage estimator: grpo, rloo, gigpo, lamer, mage, rae, ..."),
    )
    env_id: str = field(
        default="mage/KuhnPoker-v0", metadata=_help("Gymnasium id of the env played in trials.")
    )
    env_kwargs: dict[str, Any] = field(
        default_factory=dict,
        metadata=_help("Keyword arguments of the env, e.g. {seat: second, reward_scale: 5}."),
    )
    opponent: str | None = field(
        default=None,
        metadata=_help("Opponent name or population preset (e.g. mage-kuhn-train); None: env's."),
    )
    self_play: bool = field(
        default=False,
        metadata=_help(
            "The policy plays every seat of a two-player game (opponent 'self'); each seat's "
            "turns are rows with that seat's reward and role (rae). Trials are single games."
        ),
    )
    trial: dict[str, Any] | str | TrialConfig = field(
        default_factory=dict,
        metadata=_help(
            "Trial settings (TrialConfig's), e.g. {num_episodes: 3, memory: reflection_only, "
            "seat_rotation: trial}; unset ones: TrialConfig's defaults but stop_on_success: true."
        ),
    )
    strategy: str = field(
        default="zero-shot",
        metadata=_help(
            "Prompting strategy: zero-shot, react, reflexion, terse, paper (the published page "
            "alone, the reply read by the env's published rules), or one registered."
        ),
    )
    step_gamma: float = field(
        default=STEP_GAMMA,
        metadata=_help(f"Discount of step returns within an episode ({STEP_GAMMA})."),
    )
    traj_gamma: float = field(
        default=TRAJ_GAMMA,
        metadata=_help("Discount across episodes (LaMer/MAGE 0.6; 0.9 Sokoban), in [0, 1]."),
    )
    omega: float = field(
        default=OMEGA, metadata=_help(f"Weight of GiGPO's step (anchor-state) term ({OMEGA}).")
    )
    reflection_score: str = field(
        default="next",
        metadata=_help(
            "lamer/mage: a reflection turn's episode-term score: next (the episode it "
            "precedes) or zero (the published code's)."
        ),
    )
    returns_across: str = field(
        default="paper",
        metadata=_help(
            "lamer/mage: returns across episodes by the paper's formula or the published "
            "code's recursion (code: a later episode also discounted by step_gamma)."
        ),
    )
    rae_decay: float = field(
        default=RAE_DECAY,
        metadata=_help("rae: decay of each role's moving baseline, in [0, 1) (SPIRAL 0.95)."),
    )
    league_every: int = field(
        default=0,
        metadata=_help(
            "Snapshot the learner every K optimizer steps into OUTPUT/league/step-N, an opponent "
            "from then on (0: no league)."
        ),
    )
    league_size: int = field(
        default=4, metadata=_help("League: how many of the latest snapshots are kept (>= 1).")
    )
    league_weight: float = field(
        default=0.5,
        metadata=_help(
            "League: share of training trial groups that meet a snapshot instead of opponent, "
            "in (0, 1]."
        ),
    )
    league_sampling: str = field(
        default="uniform",
        metadata=_help(
            "League: uniform over the kept snapshots, or winrate (PFSP: by each snapshot's "
            "smoothed win rate against the learner)."
        ),
    )
    statistics: str = field(
        default="turn",
        metadata=_help("Group statistics count each turn (published) or each 'trajectory' once."),
    )
    scale_advantages: str = field(
        default="default",
        metadata=_help(
            "default: the estimator's published scaling; group: divide by the group std; "
            "batch: divide the estimator's (centred) values by the batch std, not re-centred; "
            "none: centre only (rae: on its role's baseline, always)."
        ),
    )
    invalid_action_penalty: float | None = field(
        default=None,
        metadata=_help("Reward subtracted for an invalid answer; None: the env's own (LaMer 0.5)."),
    )
    max_turns: int = field(
        default=64, metadata=_help("Most model turns a trial may take before it is stopped.")
    )
    differential_reward: bool = field(
        default=True,
        metadata=_help("MAGE: episode reward R_n - R_(n-1) (off: the ablation without it)."),
    )
    opponent_normalization: bool = field(
        default=True,
        metadata=_help("MAGE: advantage groups formed per opponent (off: the ablation)."),
    )
    env_workers: int = field(
        default=0,
        metadata=_help("Processes stepping the envs beside generation (0: here; for slow envs)."),
    )
    num_tasks: int = field(
        default=4096, metadata=_help("Training tasks (dataset rows), seeds task_seed, +1, ...")
    )
    task_seed: int = field(default=0, metadata=_help("First training task seed."))
    evaluation_steps: int = field(
        default=0, metadata=_help("Evaluate every this many optimizer steps (0: never).")
    )
    evaluation_tasks: int = field(
        default=64, metadata=_help("Held-out tasks played at each evaluation.")
    )
    evaluation_seed: int = field(
        default=1_000_000, metadata=_help("First held-out task seed (far from training seeds).")
    )
    evaluation_env_kwargs: dict[str, Any] = field(
        default_factory=dict,
        metadata=_help(
            "Env keyword arguments set over env_kwargs for evaluation, e.g. {split: test} (the "
            "held-out goals or games; without it evaluation plays the training split)."
        ),
    )
    evaluation_opponents: list[str] = field(
        default_factory=list,
        metadata=_help("Kuhn: opponents of the exact greedy-policy value (default: the styles)."),
    )
    evaluation_transcripts: int = field(
        default=2,
        metadata=_help(
            "Trials per opponent kept as transcripts at each evaluation, the first ones by task "
            "(OUTPUT/transcripts/eval-step-N.jsonl.gz; 0: none)."
        ),
    )
    keep_best: bool = field(
        default=True, metadata=_help("Save the best evaluated model in OUTPUT/best.")
    )
    answer_template: str = field(
        default="<action>{action}</action>",
        metadata=_help("How a move is written; scores each legal move in exact Kuhn evaluation."),
    )

    action_choice: str = field(
        default="generate",
        metadata=_help(
            "generate: free text (the published setting); legal: sample among the legal moves "
            "scored by answer_template (small models, see docs/learning.md)."
        ),
    )
    exploration_floor: float = field(
        default=0.0,
        metadata=_help(
            "With action_choice=legal: weight of a uniform legal move mixed into training "
            "samples, in [0, 1) (counted as the policy's own unless exploration_correction)."
        ),
    )

    exploration_correction: bool = field(
        default=False,
        metadata=_help(
            "Multiply floor samples' advantages by q/mix (unbiased, but a move near probability "
            "0 then gets no gradient: off by default)."
        ),
    )

    move_entropy_bonus: float = field(
        default=0.0,
        metadata=_help(
            "With action_choice=legal: bonus on the entropy of the legal-move policy q, added to "
            "each chosen move's advantage as coef * (-log q(a) - batch mean); >= 0."
        ),
    )

    # -- scale: memory per forward (docs/training.md, "Scale out") ------------------------------

    max_tokens_per_forward: int | None = field(
        default=None,
        metadata=_help(
            "Most padded tokens one training forward holds: each micro-batch's rows are split "
            "into forwards of at most this many, sorted by length, their gradients accumulated "
            "to exactly the one-forward update (None: TRL's one forward per micro-batch)."
        ),
    )

    # -- loading -----------------------------------------------------------------------------

    hub_kernels: bool = field(
        default=False,
        metadata=_help(
            "Let transformers swap layers for kernels fetched from the Hugging Face Hub when it "
            "loads the model and TRL's reference copy (model_init_kwargs' use_kernels). Off: "
            "nothing is fetched, so a machine without network loads the model as it is."
        ),
    )

    @classmethod
    def for_small_model(cls, **settings: Any) -> MetaRLConfig:
        """Return a config whose unset settings take the small-model defaults.

        The defaults (:data:`~mage_agents.training.small_model.SMALL_MODEL_DEFAULTS`: legal-move
        choice with an exploration floor, an entropy bonus on the legal-move policy,
        batch-scaled advantages, a constant learning rate, terse prompts) made a tiny model
        trained from scratch learn (docs/learning.md); ``settings`` override any of them.

        Example:
            >>> config = MetaRLConfig.for_small_model(output_dir="/tmp/run", move_entropy_bonus=0.1)
            >>> config.action_choice, config.move_entropy_bonus, config.lr_scheduler_type.value
            ('legal', 0.1, 'constant')
        """
        return cls(**{**SMALL_MODEL_DEFAULTS, **settings})

    def __post_init__(self) -> None:
        self._read_self_play()
        self.trial = training_trial(self.trial)
        _check_types(self)
        if self.self_play and self.trial.num_episodes != 1:
            raise ValueError(
                "Self-play trials are single games (trial num_episodes: 1, SPIRAL's setting): "
                "across episodes each seat's memory would show it the other seat's private "
                f"view. Got num_episodes={self.trial.num_episodes}."
            )
        self._check_move_choice()
        self._check_league()
        self._check_forward_budget()
        # the registries are read now: a name registered by the user's package is a choice too
        _check_choice("estimator", self.estimator, tuple(ESTIMATORS))
        _check_choice("statistics", self.statistics, STATISTICS)
        _check_choice("reflection_score", self.reflection_score, REFLECTION_SCORES)
        _check_choice("returns_across", self.returns_across, ACROSS)
        _check_choice("scale_advantages", self.scale_advantages, SCALINGS)
        if self.scale_advantages == "group" and self.estimator in NO_GROUP_STD:
            raise ValueError(
                f"{NO_GROUP_STD[self.estimator]} (the estimator would ignore group scaling): use "
                "scale_advantages default (or none, the same here) or batch."
            )
        _check_choice("strategy", self.strategy, tuple(STRATEGIES))
        for name in ("step_gamma", "traj_gamma"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} is a discount: it must lie in [0, 1], not {value}.")
        if self.temperature <= 0:
            # TRL's loss, generation and legal-move scoring divide the logits by it (TRL does not
            # check: 0 fails in the first loss, a negative value trains the inverted policy)
            raise ValueError(
                "temperature divides the logits of sampling and of the loss: give a value > 0, "
                f"not {self.temperature}."
            )
        if not 0.0 <= self.rae_decay < 1.0:
            raise ValueError(
                f"rae_decay weighs a baseline's past: it must lie in [0, 1), not {self.rae_decay}."
            )
        if self.omega < 0:
            raise ValueError(f"omega weights GiGPO's step term: it must be >= 0, not {self.omega}.")
        if self.invalid_action_penalty is not None and self.invalid_action_penalty < 0:
            raise ValueError(
                "invalid_action_penalty is subtracted from the reward: give a value >= 0, not "
                f"{self.invalid_action_penalty}."
            )
        for name in ("max_turns", "num_tasks", "evaluation_tasks"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, not {getattr(self, name)}.")
        counts = (self.evaluation_steps, self.task_seed, self.evaluation_seed, self.env_workers)
        if min(*counts, self.evaluation_transcripts) < 0:
            raise ValueError(
                "evaluation_steps, task_seed, evaluation_seed, env_workers and "
                "evaluation_transcripts must be >= 0."
            )
        if self.num_generations is not None and self.num_generations < 2:
            raise ValueError(
                f"estimator {self.estimator!r} compares the trials of a task with each other: "
                f"num_generations (the group size) must be at least 2, not {self.num_generations}."
            )
        if "{action}" not in self.answer_template:
            raise ValueError("answer_template must contain '{action}', where the move goes.")
        if self.bf16 is None and not self.fp16:
            # TRL turns bf16 on by default, which transformers refuses on a CPU-only machine:
            # use it exactly where the hardware has it.
            self.bf16 = _cuda_has_bf16()
        _name_checkpointing_anew(self)
        super().__post_init__()
        self._check_kernels()

    def _check_kernels(self) -> None:
        """Refuse TRL's way of asking for hub kernels when it says otherwise than ours."""
        given = self.model_init_kwargs if isinstance(self.model_init_kwargs, dict) else {}
        if "use_kernels" in given and bool(given["use_kernels"]) != self.hub_kernels:
            raise ValueError(
                f"model_init_kwargs' use_kernels ({given['use_kernels']}) and hub_kernels "
                f"({self.hub_kernels}) disagree: set hub_kernels alone, true or false."
            )

    def _read_self_play(self) -> None:
        """``opponent: self`` means self-play; self-play's trials are single games by default."""
        if self.opponent == SELF_PLAY:
            self.self_play = True
        if not self.self_play:
            return
        if self.opponent not in (None, SELF_PLAY):
            raise ValueError(
                f"self_play plays the policy against itself: leave opponent unset (or 'self'), "
                f"not {self.opponent!r}."
            )
        self.opponent = SELF_PLAY
        if isinstance(self.trial, dict) and "num_episodes" not in self.trial:
            self.trial = {**self.trial, "num_episodes": 1}

    def _check_league(self) -> None:
        """Refuse league settings that cannot be honoured, saying why."""
        from mage_agents.training.league import SAMPLINGS

        _check_choice("league_sampling", self.league_sampling, SAMPLINGS)
        if self.league_every < 0 or self.league_size < 1:
            raise ValueError(
                f"league_every must be >= 0 (0: off) and league_size >= 1, not "
                f"{self.league_every} and {self.league_size}."
            )
        if not self.league_every:
            return
        if not 0.0 < self.league_weight <= 1.0:
            raise ValueError(
                f"league_weight is the share of trials that meet a snapshot: it must lie in "
                f"(0, 1], not {self.league_weight}."
            )
        if self.self_play:
            raise ValueError(
                "A league and self_play do not mix here: a self-play game trains both seats, a "
                "league game only the learner's. Give a scripted opponent or population with "
                "league_every, or self_play without it."
            )

    def _check_move_choice(self) -> None:
        """Refuse bad legal-move settings, and TRL's vocabulary entropy bonus with them."""
        _check_choice("action_choice", self.action_choice, ACTION_CHOICES)
        if self.move_entropy_bonus < 0:
            raise ValueError(
                "move_entropy_bonus is a bonus weight: give a value >= 0, not "
                f"{self.move_entropy_bonus}."
            )
        if not 0.0 <= self.exploration_floor < 1.0:
            raise ValueError(
                f"exploration_floor is a mixing weight: it must lie in [0, 1), not "
                f"{self.exploration_floor}."
            )
        if self.action_choice == "legal" and (self.entropy_coef or self.use_adaptive_entropy):
            raise ValueError(
                "entropy_coef and use_adaptive_entropy are TRL's loss-level bonus on the entropy "
                "of every completion token over the whole vocabulary: with action_choice='legal' "
                "it spreads the model's mass onto text no legal move is written with, and the "
                "choice renormalised over the legal moves hides it. The bonus on the legal-move "
                "policy's entropy (called entropy_coef in configs written before this check) is "
                "move_entropy_bonus: rename entropy_coef to move_entropy_bonus, same value, and "
                "leave TRL's entropy_coef at 0."
            )

    def _check_forward_budget(self) -> None:
        """Refuse a token budget that is not a count, or that would change TRL's update."""
        budget = self.max_tokens_per_forward
        if budget is None:
            return
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            raise ValueError(
                f"max_tokens_per_forward counts tokens: give an integer >= 1 (or None), not "
                f"{budget!r}."
            )
        if self.top_entropy_quantile < 1.0:
            raise ValueError(
                "top_entropy_quantile < 1 keeps the tokens above an entropy quantile of the whole "
                "micro-batch; split into forwards by max_tokens_per_forward, the quantile would "
                "be each forward's and the update would change. Use one of the two."
            )

    def to_dict(self) -> dict[str, Any]:
        """TRL's serialisation, with the trial as its mapping of non-default settings."""
        values = super().to_dict()
        values["trial"] = {
            k: v if isinstance(v, str | int | float | bool | type(None)) else repr(v)
            for k, v in self.trial.non_defaults().items()
        }
        return values


_KINDS = {
    "int": ("an integer", lambda v: isinstance(v, int) and not isinstance(v, bool)),
    "float": ("a number", lambda v: isinstance(v, int | float) and not isinstance(v, bool)),
    "bool": ("true or false", lambda v: isinstance(v, bool)),
    "str": ("a string", lambda v: isinstance(v, str)),
    "list[str]": ("a list of strings", lambda v: isinstance(v, list)),
    "dict[str, Any]": ("a mapping", lambda v: isinstance(v, dict)),
}


@functools.cache
def _number_fields(cls: type) -> dict[str, str]:
    """The number fields of ``cls`` and its parents, by kind (``float`` or ``float | None``).

    Read from the classes' annotations: transformers' argument parser rewrites the fields'
    ``type`` in place (``float | None`` becomes ``float``), so a field's ``type`` can lie. A
    user's subclass whose annotations cannot be resolved here gets its nearest parent's fields.
    """
    kinds = {}
    for name, hint in _resolved_hints(cls).items():
        if hint is float:
            kinds[name] = "float"
        elif typing.get_origin(hint) in (typing.Union, types.UnionType):
            if set(typing.get_args(hint)) == {float, type(None)}:
                kinds[name] = "float | None"
    return kinds


def _resolved_hints(cls: type) -> dict[str, Any]:
    """The type hints of ``cls``, or of its nearest parent whose annotations all resolve."""
    for klass in cls.__mro__:
        try:
            return typing.get_type_hints(klass)
        except (NameError, TypeError):  # a name imported only for type checkers, say
            continue
    return {}


def _check_types(config: MetaRLConfig) -> None:
    """Refuse a value of another type than its field's, naming both.

    Our fields, and the number fields of TRL and transformers, which take a string such as
    ``"1e-3"`` (YAML 1.1 reads a number without a dot so) and fail only in the optimizer.
    """
    kinds = {**_number_fields(type(config)), **MetaRLConfig.__annotations__}
    for name, kind in kinds.items():
        value = getattr(config, name)
        optional = kind.endswith(" | None")
        known = _KINDS.get(kind.removesuffix(" | None"))
        if known is None or (value is None and optional) or known[1](value):
            continue
        raise ValueError(f"{name} takes {known[0]}{' or null' if optional else ''}, not {value!r}.")


def _cuda_has_bf16() -> bool:
    import torch

    return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())


CHECKPOINTING_RENAMES = (
    ("gradient_checkpointing", "activation_checkpointing"),
    ("gradient_checkpointing_kwargs", "activation_checkpointing_kwargs"),
)
"""TRL's names of activation checkpointing, and the names transformers 5.18 gave them."""


def _name_checkpointing_anew(config: Any) -> None:
    """Hand TRL's ``gradient_checkpointing*`` values to transformers under their new names.

    From 5.18 transformers reads ``activation_checkpointing*`` and warns about the old names, which
    TRL sets by default (checkpointing on): every run printed that warning, again at each save.
    Versions without the new names keep the old ones, which they read.
    """
    for old, new in CHECKPOINTING_RENAMES:
        if hasattr(config, new) and getattr(config, new) is None:
            setattr(config, new, getattr(config, old))


def _check_choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"Unknown {name} {value!r}: choose one of {', '.join(choices)}.")
