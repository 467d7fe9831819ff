"""MetaRLConfig: the meta-RL fields with help, published defaults, and errors that say why."""

from dataclasses import dataclass, fields

import pytest

pytest.importorskip("trl")

from mage_agents.training import MetaRLConfig  # noqa: E402

OWN = {
    "estimator", "env_id", "env_kwargs", "opponent", "trial", "strategy", "step_gamma",
    "traj_gamma", "omega", "statistics", "scale_advantages", "invalid_action_penalty",
    "max_turns", "differential_reward", "opponent_normalization", "num_tasks", "task_seed",
    "evaluation_steps", "evaluation_tasks", "evaluation_seed", "evaluation_opponents",
    "keep_best", "answer_template", "action_choice", "exploration_floor",
    "exploration_correction", "move_entropy_bonus", "reflection_score", "returns_across",
}  # fmt: skip


def config(tmp_path, **kwargs):
    return MetaRLConfig(output_dir=str(tmp_path), use_cpu=True, report_to=[], **kwargs)


def test_every_added_field_has_a_one_line_help():
    helps = {f.name: f.metadata.get("help", "") for f in fields(MetaRLConfig)}
    for name in OWN:
        assert helps[name] and "\n" not in helps[name], name


def test_the_defaults_are_the_published_ones(tmp_path):
    c = config(tmp_path)
    trial = c.trial
    assert (c.estimator, trial.num_episodes, trial.same_task, trial.stop_on_success) == (
        "mage",
        3,
        True,
        True,
    )
    assert (c.step_gamma, c.traj_gamma, c.omega, c.statistics) == (0.95, 0.6, 1.0, "turn")
    assert trial.memory == "reflection_only" and c.differential_reward and c.opponent_normalization
    assert c.bf16 is False  # no CUDA here: TRL's bf16 default would be refused


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({"estimator": "ppo"}, "Unknown estimator 'ppo': choose one of grpo, rloo, gigpo"),
        ({"strategy": "chatty"}, "Unknown strategy 'chatty': choose one of zero-shot, .*paper"),
        ({"num_generations": 1}, "num_generations \\(the group size\\) must be at least 2"),
        ({"traj_gamma": 1.5}, "traj_gamma is a discount: it must lie in \\[0, 1\\]"),
        ({"step_gamma": -0.1}, "step_gamma is a discount"),
        ({"omega": -1.0}, "omega weights GiGPO's step term"),
        ({"trial": {"memory": "everything"}}, "memory must be one of"),
        ({"trial": {"episodes": 3}}, "trial: unknown trial setting 'episodes'"),
        ({"trial": [3]}, "trial must be a mapping of trial settings"),
        ({"statistics": "group"}, "Unknown statistics 'group'"),
        ({"scale_advantages": "std"}, "Unknown scale_advantages 'std'"),
        ({"invalid_action_penalty": -1.0}, "give a value >= 0"),
        ({"trial": {"num_episodes": 0}}, "num_episodes must be an int >= 1"),
        ({"traj_gamma": "abc"}, "traj_gamma takes a number, not 'abc'"),
        ({"learning_rate": "1e-3"}, "learning_rate takes a number, not '1e-3'"),  # TRL's
        ({"max_grad_norm": "1"}, "max_grad_norm takes a number, not '1'"),
        ({"max_turns": 2.5}, "max_turns takes an integer, not 2.5"),
        ({"keep_best": "yes"}, "keep_best takes true or false, not 'yes'"),
        ({"answer_template": "<action></action>"}, "must contain '\\{action\\}'"),
        ({"env_kwargs": "seat=first"}, "env_kwargs takes a mapping, not 'seat=first'"),
        ({"move_entropy_bonus": -0.1}, "move_entropy_bonus is a bonus weight"),
        ({"action_choice": "legal", "entropy_coef": 0.3}, "rename entropy_coef to move_entropy"),
        ({"action_choice": "legal", "use_adaptive_entropy": True}, "whole vocabulary"),
        ({"estimator": "rloo", "scale_advantages": "group"}, "RLOO's leave-one-out advantage"),
        ({"estimator": "rae", "scale_advantages": "group"}, "RAE subtracts its role's moving"),
        ({"reflection_score": "first"}, "Unknown reflection_score 'first': choose one of next"),
        ({"returns_across": "both"}, "Unknown returns_across 'both': choose one of paper, code"),
        ({"temperature": 0.0}, "temperature divides the logits"),  # TRL's loss: 1 / 0
        ({"temperature": -1.0}, "give a value > 0, not -1.0"),
    ],
)
def test_bad_settings_are_refused_with_the_reason(tmp_path, kwargs, reason):
    with pytest.raises(ValueError, match=reason):
        config(tmp_path, **kwargs)


def test_the_published_codes_switches_reach_lamer_and_mage(tmp_path):
    from mage_agents.advantages import config_settings

    published = config(tmp_path, reflection_score="zero", returns_across="code")
    for name in ("lamer", "mage"):
        settings = config_settings(name, published)
        assert (settings["reflection_score"], settings["across"]) == ("zero", "code")
        defaults = config_settings(name, config(tmp_path))
        assert (defaults["reflection_score"], defaults["across"]) == ("next", "paper")


def test_a_subclass_with_an_unresolvable_annotation_still_checks_trls_numbers(tmp_path):
    # its own annotation names a type imported only for type checkers: its parent's hints serve
    @dataclass
    class Mine(MetaRLConfig):
        note: "NotImportedHere | None" = None  # noqa: F821

    mine = Mine(output_dir=str(tmp_path), use_cpu=True, report_to=[])
    assert mine.note is None
    with pytest.raises(ValueError, match="learning_rate takes a number, not '1e-3'"):
        Mine(output_dir=str(tmp_path), use_cpu=True, report_to=[], learning_rate="1e-3")


def test_trl_settings_keep_their_trl_checks(tmp_path):
    with pytest.raises(ValueError, match="divisible by num_generations"):
        config(tmp_path, per_device_train_batch_size=6, num_generations=4)


def test_trls_entropy_coef_keeps_trls_meaning(tmp_path):
    # free text: TRL's loss-level bonus over the vocabulary, as in GRPOConfig; ours stays off
    free = config(tmp_path, entropy_coef=0.05)
    assert (free.entropy_coef, free.move_entropy_bonus) == (0.05, 0.0)
    legal = config(tmp_path, action_choice="legal", move_entropy_bonus=0.3)
    assert (legal.entropy_coef, legal.move_entropy_bonus) == (0.0, 0.3)
