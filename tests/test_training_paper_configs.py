"""The paper training configs train on the published pages, with the published budgets.

Every ``*_qwen3_4b`` config of the papers' methods is built as ``train`` builds it; its first
trial's pages must be the pages the paper's evaluation preset shows on the same task, byte for
byte (the trial settings, the env's answer rules and the prompting strategy together), and its
budget must be the published one: the rollout batches, the trials a batch plays, and the
optimizer updates a batch feeds, derived from the config the way TRL 1.16 runs it
(``max_steps`` counts optimizer steps; one generation feeds
``steps_per_generation / gradient_accumulation_steps`` of them).
"""

import importlib.util
from dataclasses import replace
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("trl")

import mage_envs  # noqa: E402, F401  (registers the ids)
from baselines import run  # noqa: E402
from baselines.train.command import TRAIN_CONFIG_DIR, _read_config, build_config  # noqa: E402
from mage_agents.prompting import STRATEGIES  # noqa: E402
from mage_agents.rollout.plan import TrialPlanner, make_trial_env  # noqa: E402
from mage_agents.training.trials import trial_planner  # noqa: E402

HAS_ALFWORLD = importlib.util.find_spec("alfworld") is not None
PAPER_METHODS = ("lamer", "mage", "gigpo", "grpo", "rloo")
"""The methods of LaMer's and MAGE's papers (the self-play and league configs are SPIRAL's)."""
PAPER_CONFIGS = sorted(
    p.stem
    for p in Path(TRAIN_CONFIG_DIR).glob("*_qwen3_4b.yaml")
    if p.stem.split("_")[0] in PAPER_METHODS
)

# the evaluation preset whose pages each env's paper configs train on
PRESET = {
    "sokoban": "lamer_sokoban",
    "minesweeper": "lamer_minesweeper",
    "kuhn": "mage_kuhn",
    "tictactoe": "mage_tictactoe_mixed",  # training mixes the seats, trial by trial
    "webshop": "lamer_webshop",
    "alfworld": "lamer_alfworld",
}
OWN_PRESET = {"mage_webshop_qwen3_4b": "mage_webshop", "mage_alfworld_qwen3_4b": "mage_alfworld"}
# env settings that differ between the published training and evaluation runs: the task split,
# ALFWorld's turn limit (10 training, 30 evaluation) and the format penalty (the trainer's)
TRAINING_ONLY = ("split", "task_types", "max_steps", "invalid_action_penalty", "seat")
STAND_INS = {  # the data are a download: the same pages and engine on generated tasks
    "mage/WebShop-v0": ("mage/ShopSim-v0", ("catalogue", "goals", "split")),
    "mage/ALFWorld-v0": ("mage/ALFWorld-Generated-v0", ("split",)),
}

# Published budgets (each from the training script the config names): rollout batches
# (trainer.total_epochs over a dataset of train_data_size rows, one batch an epoch), tasks a
# batch (train_data_size), the group (env.rollout.n), and the optimizer updates a batch feeds
# here. Published updates: one per 64 sample rows (ppo_mini_batch_size=64, ppo_epochs=1), so the
# count follows the trials' length; ours is that count for trials as long as a random-legal
# agent plays them (docs/training.md, "Budgets").
BUDGETS = {
    "lamer_sokoban_qwen3_4b": (300, 16, 8, 32),
    "mage_sokoban_qwen3_4b": (300, 16, 8, 32),
    "gigpo_sokoban_qwen3_4b": (300, 16, 24, 32),
    "grpo_sokoban_qwen3_4b": (300, 16, 24, 32),
    "rloo_sokoban_qwen3_4b": (300, 16, 24, 32),
    "lamer_minesweeper_qwen3_4b": (300, 16, 8, 16),
    "mage_minesweeper_qwen3_4b": (300, 16, 8, 16),
    "gigpo_minesweeper_qwen3_4b": (300, 16, 24, 16),
    "grpo_minesweeper_qwen3_4b": (300, 16, 24, 16),
    "rloo_minesweeper_qwen3_4b": (300, 16, 24, 16),
    "mage_kuhn_qwen3_4b": (150, 16, 8, 8),
    "lamer_kuhn_qwen3_4b": (150, 16, 8, 8),
    "gigpo_kuhn_qwen3_4b": (150, 16, 8, 2),
    "grpo_kuhn_qwen3_4b": (150, 16, 24, 6),
    "rloo_kuhn_qwen3_4b": (150, 16, 24, 6),
    "mage_tictactoe_qwen3_4b": (150, 16, 8, 16),
    "lamer_tictactoe_qwen3_4b": (150, 16, 8, 16),
    "gigpo_tictactoe_qwen3_4b": (150, 16, 8, 8),
    "grpo_tictactoe_qwen3_4b": (150, 16, 24, 16),
    "rloo_tictactoe_qwen3_4b": (150, 16, 24, 16),
    "lamer_webshop_qwen3_4b": (150, 8, 8, 32),
    "mage_webshop_qwen3_4b": (150, 8, 8, 32),
    "gigpo_webshop_qwen3_4b": (150, 8, 24, 32),
    "grpo_webshop_qwen3_4b": (150, 8, 24, 32),
    "lamer_alfworld_qwen3_4b": (150, 8, 8, 32),
    "mage_alfworld_qwen3_4b": (150, 8, 8, 32),
    "gigpo_alfworld_qwen3_4b": (150, 8, 24, 32),
    "grpo_alfworld_qwen3_4b": (150, 8, 24, 32),
}


def _training_config(name, tmp_path):
    settings = _read_config(Path(name)) | {"out": str(tmp_path), "use_vllm": False, "bf16": False}
    return build_config(settings)


def _preset(name):
    env = name.removesuffix("_qwen3_4b").split("_", 1)[1]
    return OWN_PRESET.get(name, PRESET[env])


def _preset_env_kwargs(settings, env_id):
    given = settings.env_kwargs or {}
    return {**given.get("*", {}), **given.get(env_id, {})}


def _stand_in(env_id, kwargs):
    if env_id not in STAND_INS:
        return env_id, kwargs
    if env_id == "mage/ALFWorld-v0" and not HAS_ALFWORLD:
        pytest.skip("needs the alfworld extra (the generated games stand in for the download)")
    other, dropped = STAND_INS[env_id]
    return other, {k: v for k, v in kwargs.items() if k not in dropped}


def _pages(env, seed, answers=None):
    """Every page of one trial, and the answers given: ``answers`` in turn, else an unreadable
    answer first (the answer rules' feedback is on the next page), then the first legal one."""
    pages, chosen = [], []
    try:
        page, info = env.reset(seed=seed)
        done = False
        while not done:
            pages.append(page)
            answer = info["legal_actions"][0] if info.get("legal_actions") else "I reflect."
            answer = "I am not sure." if not chosen else answer
            answer = answers[len(chosen)] if answers else answer
            chosen.append(answer)
            page, _, terminated, truncated, info = env.step(answer)
            done = terminated or truncated
    finally:
        env.close()
    return pages, chosen


def test_every_paper_config_is_covered():
    assert PAPER_CONFIGS == sorted(BUDGETS) and len(PAPER_CONFIGS) == 28


@pytest.mark.parametrize("name", PAPER_CONFIGS)
def test_a_training_trial_shows_the_evaluation_presets_pages(name, tmp_path):
    config = _training_config(name, tmp_path)
    preset = run.load_settings(["--config", _preset(name)])
    ours = trial_planner(config).plan(7, 0)
    env_id, train_kwargs = _stand_in(config.env_id, dict(ours.env_kwargs))
    published = _preset_env_kwargs(preset, env_id)
    for key, value in published.items():  # the published rules, where training keeps them
        if key not in TRAINING_ONLY:
            assert train_kwargs.get(key) == value, f"{name}: env setting {key}"
    shown = {k: train_kwargs[k] for k in TRAINING_ONLY if k in train_kwargs}
    trial = preset.trial
    if not config.trial.reflection:  # one attempt, as the RL baselines train
        trial = replace(trial, num_episodes=1, reflection=False)
    theirs = TrialPlanner(env_id, config.opponent, {**published, **shown}, trial)
    train_env = make_trial_env(replace(ours, env_id=env_id, env_kwargs=train_kwargs))
    pages, answers = _pages(train_env, 7)
    their_pages, _ = _pages(make_trial_env(theirs.plan(7, 0)), 7, answers)
    assert len(pages) > 1 and pages == their_pages  # every page, reflections included
    assert config.trial.templates == preset.trial.templates
    strategy = STRATEGIES[config.strategy]()
    their_strategy = STRATEGIES[preset.model_options["strategy"]]()
    for page in (pages[0], pages[-1]):
        chat = strategy.chat(page, {}, [])
        assert chat == their_strategy.chat(page, {}, []) == [{"role": "user", "content": page}]


@pytest.mark.parametrize("name", PAPER_CONFIGS)
def test_the_budget_is_the_published_one(name, tmp_path):
    batches, tasks, group, updates = BUDGETS[name]
    config = _training_config(name, tmp_path)
    per_generation = config.steps_per_generation // config.gradient_accumulation_steps
    assert config.steps_per_generation % config.gradient_accumulation_steps == 0
    trials = config.per_device_train_batch_size * config.steps_per_generation
    assert (config.num_generations, trials, per_generation) == (group, tasks * group, updates)
    assert config.max_steps == batches * per_generation  # max_steps counts optimizer steps
    # the published test_freq=5 and save_freq=10 count rollout batches
    assert config.evaluation_steps == 5 * per_generation
    assert config.save_steps == 10 * per_generation
    assert config.lr_scheduler_type.value == "constant"  # verl's warmup_style: constant


@pytest.mark.parametrize("name", [n for n in PAPER_CONFIGS if "_kuhn_" in n])
def test_the_exact_kuhn_evaluation_scores_answers_the_env_reads_as_the_move(name, tmp_path):
    # the exact evaluation scores answer_template.format(action=move) for each legal move
    config = _training_config(name, tmp_path)
    env = make_trial_env(trial_planner(config).plan(0, 0))
    _, info = env.reset(seed=0)
    for move in info["legal_actions"]:
        env.reset(seed=0)
        *_, after = env.step(config.answer_template.format(action=move))
        assert not after["invalid_action"], f"{name}: {move!r} written as the template says"


def test_a_paper_config_trains_a_step_on_the_published_pages(tmp_path):
    # mage_kuhn_qwen3_4b's pages, answer rules and strategy, at the tiny model's size
    import json

    from rich.console import Console

    from baselines.train.command import train

    settings = _read_config(Path("mage_kuhn_qwen3_4b"))
    settings |= {"out": str(tmp_path), "model": "tiny", "lora": None, "use_vllm": False}
    settings |= {"bf16": False, "gradient_checkpointing": False, "use_cpu": True, "beta": 0.0}
    settings |= {"num_generations": 2, "per_device_train_batch_size": 2, "max_steps": 1}
    settings |= {"steps_per_generation": 1, "max_completion_length": 4, "evaluation_steps": 0}
    settings |= {"save_steps": 1, "evaluation_opponents": [], "report_to": []}
    trainer = train(settings, Console(width=200))
    assert trainer.args.strategy == "paper" and trainer.args.trial.templates == "mage"
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    (entry,) = [row for row in rows if "loss" in row]
    # the random tiny model answers off the published format: MAGE's 6 turns an attempt, each
    # invalid (-2), 3 attempts and 2 reflections: 20 rows a trial
    assert entry["rows"] == 40 and entry["trial/turns"] == 20
    assert entry["trial/invalid_rate"] == 1.0 and entry["trial/final_return"] == -12.0
