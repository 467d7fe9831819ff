"""Part 4's machinery on a saved tiny model: LoRA training on MAGE's page, the held-out scores.

The real run loads SmolLM2-135M-Instruct; here the same code path loads a tiny model saved to a
folder (``model:`` takes any local folder), so it runs in seconds.
"""

import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("peft")

from benchmarks import learning_pretrained  # noqa: E402
from benchmarks.learning_report import report  # noqa: E402
from benchmarks.learning_report_pretrained import trial_figures  # noqa: E402


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    from mage_agents.tiny_model import build_tiny_model

    folder = tmp_path_factory.mktemp("tiny")
    model, tokenizer = build_tiny_model(seed=0)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def test_the_variants_play_mages_published_page_in_free_text():
    for name, settings in learning_pretrained.VARIANTS.items():
        assert settings["strategy"] == "paper" and settings["action_choice"] == "generate"
        assert settings["trial"]["templates"] == "mage"
        rules = "mage" if name == "grpo-mage-rules" else "ours"
        assert settings["env_kwargs"]["answer_rules"] == rules


def test_the_exact_policy_scores_the_answer_the_page_asks_for():
    ours = learning_pretrained._page_answer({"answer_rules": "ours"})
    assert [ours(m) for m in ("check", "bet", "call", "fold")] == [
        "<action>PASS</action>",
        "<action>BET</action>",
        "<action>BET</action>",
        "<action>PASS</action>",
    ]
    # under MAGE's rules the legal moves are the tagged answers themselves
    assert learning_pretrained._page_answer({"answer_rules": "mage"}) == "{action}"


def test_evaluation_samples_at_mages_settings_and_restores_the_trainers(tiny_folder, tmp_path):
    settings = {**learning_pretrained.VARIANTS["grpo"], "model": tiny_folder}
    settings["max_completion_length"] = 4
    trainer = learning_pretrained.build_trainer(settings, 0, tmp_path, [])
    training = trainer.backend._config()
    with trainer.backend.sampling(temperature=0.7, top_k=20):
        assert (trainer.backend._config().temperature, trainer.backend._config().top_k) == (0.7, 20)
    assert trainer.backend._config() is training
    first = learning_pretrained.evaluate(trainer, tasks=1)
    assert first == learning_pretrained.evaluate(trainer, tasks=1)  # its own stream
    assert [t["opponent"] for t in first] == list(learning_pretrained.OPPONENTS)
    assert all(t["seed"] == learning_pretrained.EVAL_SEED and t["plays"] >= 1 for t in first)
    exact = learning_pretrained.exact_policy(trainer)
    assert 0.0 <= exact["exact/legal_mass"] <= 1.0
    assert "exact/cfr-argmax/second/value" in exact


def test_a_run_records_before_and_after_and_reports_them(tiny_folder, tmp_path):
    out = tmp_path / "runs"
    overrides = {"model": tiny_folder, "max_completion_length": 4}
    record = learning_pretrained.run_one(
        "grpo", 0, 1e9, 1, out, max_steps=1, tasks=1, overrides=overrides
    )
    assert record["steps"] == 1 and [e["step"] for e in record["evaluations"]] == [0, 1]
    assert record["train_cpu_s"] > 0 and record["scoring_cpu_s"] > 0
    assert [p["step"] for p in record["curve"]] == [0, 1]
    assert record["training"][0]["trial/invalid_rate"] >= 0.0
    saved = json.loads((out / "pretrained" / "grpo" / "seed0.json").read_text())
    assert saved["finished"] and saved["evaluations"] == record["evaluations"]
    assert (out / "pretrained" / "grpo" / "adapter-seed0" / "adapter_config.json").is_file()
    text = report(out, tmp_path / "figures")
    assert "Held-out trials, step 0 -> step 1 (seed 0):" in text
    assert "| return | cfr-argmax | 1 |" in text
    assert (tmp_path / "figures" / "pretrained.png").is_file()


def test_trial_figures_count_invalid_answers_per_play_turn():
    trial = {"returns": [-14.0], "pass_at_k": [0.0, 0.0, 0.0], "invalid": 2, "plays": 2}
    assert trial_figures(trial) == {
        "invalid": 1.0,
        "return": -14.0,
        "final_return": -14.0,
        "pass@1": 0.0,
        "pass@2": 0.0,
        "pass@3": 0.0,
    }


def _run(variant, seed, before, after):
    """A part-4 record whose two evaluations play the given (returns, invalid) per trial."""

    def trials(played):
        return [
            {"opponent": "balanced", "seed": 50_000 + k, "returns": returns, "invalid": bad}
            | {"plays": 4, "pass_at_k": [float(max(returns) > 0)] * 3}
            for k, (returns, bad) in enumerate(played)
        ]

    evaluations = [{"step": 0, "trials": trials(before)}, {"step": 9, "trials": trials(after)}]
    exact = {"step": 0, "exact/mean_value": 0.0, "exact/legal_mass": 0.5}
    record = {"part": "pretrained", "variant": variant, "seed": seed, "steps": 9}
    record |= {"train_cpu_s": 1.0, "scoring_cpu_s": 1.0, "wall_s": 1.0, "training": []}
    return record | {"evaluations": evaluations, "curve": [exact, {**exact, "step": 9}]}


def test_the_report_gives_seeds_an_interval_and_pairs_mage_with_grpo_by_trial(tmp_path):
    start = [([-5.0, -5.0, -5.0], 4), ([-5.0, -5.0, -5.0], 4)]
    runs = {
        ("grpo", 0): _run("grpo", 0, start, [([1.0, 1.0, 1.0], 0), ([-1.0, -1.0, -1.0], 0)]),
        ("grpo", 1): _run("grpo", 1, start, [([2.0, 2.0, 2.0], 1), ([0.0, 0.0, 0.0], 1)]),
        ("mage", 0): _run("mage", 0, start, [([1.0, 1.0, 3.0], 0), ([-1.0, -1.0, 1.0], 0)]),
    }
    for (variant, seed), record in runs.items():
        folder = tmp_path / "runs" / "pretrained" / variant
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"seed{seed}.json").write_text(json.dumps(record))
    text = report(tmp_path / "runs", tmp_path / "figures")
    # grpo's return rose by 5 (seed 0: from -5 to a mean of 0) and 6 (seed 1)
    assert "| grpo | return | 2 | +5.000, +6.000 | +5.500 ± 6.353 | not shown |" in text
    assert "| grpo | invalid | 2 | -1.000, -0.750 |" in text
    assert "| mage | return |" not in text  # one seed: no interval over seeds
    # mage after minus grpo after, seed 0, trial by trial: the same first hand, +2 on the last
    assert "| mage | 0 | return | 2 | +0.000 ± 12.706 | +0.000 ± 12.706 | +0.000 ± 0.000 |" in text
    assert (
        "| mage | 0 | gain | 2 | +0.000 ± 0.000 | +2.000 ± 0.000 | +2.000 ± 0.000 | shown |" in text
    )
