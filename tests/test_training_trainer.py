"""MetaRLTrainer: scripted trials give the estimators' advantages row by row; real steps train."""

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

from mage_agents.advantages import config_settings, estimate  # noqa: E402
from mage_agents.base import Reply  # noqa: E402
from mage_agents.tiny_model import build_tiny_model  # noqa: E402
from mage_agents.training import MetaRLTrainer  # noqa: E402
from mage_agents.training.batch import TurnRow, turn_batch  # noqa: E402
from mage_agents.training.trainer import task_dataset  # noqa: E402
from tests import tiny_training  # noqa: E402

J_SEED = 0  # deals the learner (first seat) a Jack: a bet wins 1 vs always-pass, a check loses 1


def tiny_config(tmp_path, **overrides):
    settings = dict(
        estimator="grpo",
        opponent="always-pass",
        strategy="zero-shot",  # the default: the scripted answers follow its pages
        per_device_train_batch_size=4,
        max_completion_length=4,
        num_tasks=8,
    )
    # a test changes the trial settings it names, the others stay
    trial = {**tiny_training.TINY_KUHN["trial"], **overrides.pop("trial", {})}
    return tiny_training.tiny_config(tmp_path, **settings | overrides, trial=trial)


@pytest.fixture
def tiny():
    torch.set_num_threads(1)
    return build_tiny_model(seed=0)


class ScriptedBackend:
    """Answers call c, position i with script[c][i] (or a reflection), as token ids."""

    name = "scripted"

    def __init__(self, tokenizer, script):
        self.tokenizer, self.script, self.calls = tokenizer, script, 0

    def generate(self, chats):
        answers = self.script[self.calls]
        self.calls += 1
        replies = []
        for chat, answer in zip(chats, answers, strict=True):
            prompt = self.tokenizer(chat[-1]["content"])["input_ids"]
            ids = self.tokenizer(answer, add_special_tokens=False)["input_ids"]
            replies.append(
                Reply(
                    answer,
                    len(prompt),
                    len(ids),
                    prompt_ids=tuple(prompt),
                    completion_ids=tuple(ids),
                )
            )
        return replies


def scripted_step(trainer, script, seeds):
    trainer.model.train()  # as in a training step (the tiny model is built in eval mode)
    trainer.backend = ScriptedBackend(trainer.processing_class, script)
    played = []
    real_play = trainer.play
    trainer.play = lambda plans: played.extend(real_play(plans)) or played
    batch = trainer._generate_and_score_completions([{"seed": s} for s in seeds])
    return batch, played


REFLECT = "<reflection>bet with the jack</reflection>"
TWO_EPISODES = [  # call -> the answer of each of the 4 trials (all stay in lockstep)
    ["<action>bet</action>", "<action>check</action>", "<action>check</action>", "bet"],
    [REFLECT] * 4,
    ["<action>bet</action>", "<action>bet</action>", "check", "<action>check</action>"],
]


@pytest.mark.parametrize("estimator", ["grpo", "rloo", "gigpo", "lamer", "mage"])
def test_every_model_turn_is_a_row_with_the_estimators_advantage(tmp_path, tiny, estimator):
    model, tokenizer = tiny
    config = tiny_config(
        tmp_path,
        estimator=estimator,
        trial={"num_episodes": 2, "reflection": True, "stop_on_success": False},
    )
    trainer = MetaRLTrainer(model, config, processing_class=tokenizer)
    batch, played = scripted_step(trainer, TWO_EPISODES, [J_SEED] * 4)
    assert [t.result.returns for t in played] == [
        [1.0, 1.0],
        [-1.0, 1.0],
        [-1.0, -1.0],
        [1.0, -1.0],
    ]
    assert [t.phase for t in played[0].turns] == ["play", "reflect", "play"]
    expected = np.concatenate(estimate(estimator, played, **config_settings(estimator, config)))
    assert batch["advantages"].tolist() == pytest.approx(expected.tolist())
    assert batch["advantages"].shape == (12,)
    first = tokenizer.decode(batch["completion_ids"][0][batch["completion_mask"][0].bool()])
    assert first == "<action>bet</action>"
    assert "Your card: J." in tokenizer.decode(batch["prompt_ids"][0])
    assert int(batch["num_items_in_batch"]) == int(batch["completion_mask"].sum())


def test_grpo_advantages_match_the_hand_computed_ones(tmp_path, tiny):
    model, tokenizer = tiny
    config = tiny_config(
        tmp_path,
        trial={"num_episodes": 2, "reflection": True, "stop_on_success": False},
        statistics="trajectory",
    )
    trainer = MetaRLTrainer(model, config, processing_class=tokenizer)
    batch, _ = scripted_step(trainer, TWO_EPISODES, [J_SEED] * 4)
    # trial returns 2, 0, -2, 0: mean 0, unbiased std sqrt(8 / 3); every turn of a trial shares it
    a = 2 / np.sqrt(8 / 3)
    assert batch["advantages"].tolist() == pytest.approx(
        [a] * 3 + [0] * 3 + [-a] * 3 + [0] * 3, abs=1e-5
    )


def test_the_batch_is_padded_so_that_trls_split_drops_nothing(tmp_path, tiny):
    model, tokenizer = tiny
    config = tiny_config(
        tmp_path, num_generations=2, per_device_train_batch_size=2, steps_per_generation=3
    )
    trainer = MetaRLTrainer(model, config, processing_class=tokenizer)
    # 6 trials of one turn each ("raise" is invalid and ends its trial): 6 rows split evenly
    script = [["<action>bet</action>", "raise", "check", "bet", "bet", "<action>check</action>"]]
    batch, played = scripted_step(trainer, script, [0, 0, 2, 2, 3, 3])
    assert batch["advantages"].shape == (6,)
    # 4 rows over 3 chunks: 2 zero-mask rows are added, and they carry no loss
    config = tiny_config(
        tmp_path, num_generations=2, per_device_train_batch_size=2, steps_per_generation=3
    )
    trainer = MetaRLTrainer(model, config, processing_class=tokenizer)
    batch, played = scripted_step(trainer, [["bet", "check", "bet", "check"]], [0, 0, 2, 2])
    assert sum(len(t.turns) for t in played) == 4
    assert batch["advantages"].shape == (6,) and batch["completion_mask"][4:].sum() == 0
    assert batch["advantages"][4:].tolist() == [0.0, 0.0]
    assert batch["prompt_mask"][4:].sum(dim=1).tolist() == [1, 1]  # never a row with no token


def test_old_and_reference_log_probs_are_supplied_when_trl_needs_them(tmp_path, tiny):
    model, tokenizer = tiny
    script = [["<action>bet</action>", "<action>check</action>"] * 2]
    plain = MetaRLTrainer(model, tiny_config(tmp_path), processing_class=tokenizer)
    batch, _ = scripted_step(plain, script, [J_SEED] * 4)
    assert "old_per_token_logps" not in batch and "ref_per_token_logps" not in batch
    model.save_pretrained(tmp_path / "base")  # TRL loads the KL reference from a directory
    model.config._name_or_path = str(tmp_path / "base")
    again = MetaRLTrainer(
        model, tiny_config(tmp_path, num_iterations=2, beta=0.1), processing_class=tokenizer
    )
    batch, _ = scripted_step(again, script, [J_SEED] * 4)
    assert batch["old_per_token_logps"].shape == batch["completion_ids"].shape
    assert batch["ref_per_token_logps"].shape == batch["completion_ids"].shape
    assert torch.isfinite(batch["old_per_token_logps"]).all()


def test_a_kl_reference_for_a_model_built_in_code_is_asked_for(tmp_path, tiny):
    model, tokenizer = tiny
    with pytest.raises(ValueError, match="reference model"):
        MetaRLTrainer(model, tiny_config(tmp_path, beta=0.1), processing_class=tokenizer)


def test_models_are_only_read_from_local_directories(tmp_path):
    with pytest.raises(ValueError, match="not a local model directory"):
        MetaRLTrainer("Qwen/Qwen3-4B", tiny_config(tmp_path))


def test_a_model_directory_given_as_a_path_loads_with_its_kl_reference(tmp_path, tiny):
    model, tokenizer = tiny
    model.save_pretrained(tmp_path / "model")
    tokenizer.save_pretrained(tmp_path / "model")
    trainer = MetaRLTrainer(tmp_path / "model", tiny_config(tmp_path / "run", beta=0.1))
    assert trainer.ref_model is not None and trainer.processing_class is not None


def test_rows_of_different_tasks_in_one_group_are_refused(tmp_path, tiny):
    model, tokenizer = tiny
    trainer = MetaRLTrainer(model, tiny_config(tmp_path), processing_class=tokenizer)
    with pytest.raises(ValueError, match="should repeat one task"):
        trainer.plan([0, 0, 1, 1], group_size=4, tag="t")


def test_one_real_step_changes_the_parameters_and_logs_the_trial_figures(tmp_path, tiny):
    model, tokenizer = tiny
    trainer = MetaRLTrainer(model, tiny_config(tmp_path), processing_class=tokenizer)
    script = [["<action>bet</action>", "<action>check</action>"] * 2]
    trainer.backend = ScriptedBackend(tokenizer, script)  # a real loss on scripted answers
    before = [p.detach().clone() for p in model.parameters()]
    trainer.train()
    log = trainer.state.log_history[0]
    assert np.isfinite(log["loss"]) and log["trial/final_return"] == 0.0
    assert log["trial/pass@1"] == 0.5 and log["trial/always-pass/pass@1"] == 0.5
    assert log["advantages/max"] > 0 > log["advantages/min"]
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))


def test_a_real_step_trains_a_lora_adapter_with_a_kl_term(tmp_path, tiny):
    peft = pytest.importorskip("peft")
    model, tokenizer = tiny
    lora = peft.LoraConfig(
        r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"
    )
    trainer = MetaRLTrainer(
        model, tiny_config(tmp_path, beta=0.05), processing_class=tokenizer, peft_config=lora
    )
    adapters = {n: p.detach().clone() for n, p in trainer.model.named_parameters() if "lora_B" in n}
    base = {n: p.detach().clone() for n, p in trainer.model.named_parameters() if "lora" not in n}
    scripted = ScriptedBackend(tokenizer, [["<action>bet</action>", "<action>check</action>"] * 2])
    trainer.backend = scripted
    trainer.train()
    assert np.isfinite(trainer.state.log_history[0]["loss"])
    params = dict(trainer.model.named_parameters())
    assert any(not torch.equal(params[n], v) for n, v in adapters.items())
    assert all(torch.equal(params[n], v) for n, v in base.items())


def test_the_real_policy_generates_the_rows(tmp_path, tiny):
    model, tokenizer = tiny
    trainer = MetaRLTrainer(model, tiny_config(tmp_path), processing_class=tokenizer)
    trainer.model.eval()
    batch = trainer._generate_and_score_completions([{"seed": J_SEED}] * 4)
    lengths = batch["completion_mask"].sum(dim=1)
    assert 4 <= len(lengths) and (lengths <= 4).all() and (lengths[:4] > 0).all()


def test_envs_stepped_in_worker_processes_give_the_same_rows(tmp_path, tiny):
    model, tokenizer = tiny
    script = [["<action>bet</action>", "<action>check</action>"] * 2]
    here = MetaRLTrainer(model, tiny_config(tmp_path), processing_class=tokenizer)
    batch, _ = scripted_step(here, script, [J_SEED] * 4)
    pooled = MetaRLTrainer(model, tiny_config(tmp_path, env_workers=2), processing_class=tokenizer)
    try:
        other, _ = scripted_step(pooled, script, [J_SEED] * 4)
    finally:
        pooled._workers.close()
    assert torch.equal(batch["advantages"], other["advantages"])
    assert torch.equal(batch["prompt_ids"], other["prompt_ids"])


def test_the_task_dataset_has_one_row_per_seed(tmp_path):
    rows = task_dataset(tiny_config(tmp_path, num_tasks=3, task_seed=5))
    assert rows["seed"] == [5, 6, 7] and len(rows["prompt"]) == 3


@pytest.mark.parametrize("mode", ["sequence_mask", "token_truncate"])
def test_the_vllm_path_cuts_at_the_stop_and_corrects_by_importance_sampling(tmp_path, tiny, mode):
    model, tokenizer = tiny
    config = tiny_config(tmp_path, vllm_importance_sampling_mode=mode)
    trainer = MetaRLTrainer(model, config, processing_class=tokenizer)
    trainer.use_vllm = True  # what vLLM's client returns, without a GPU: ids and log-probs
    answers = ["<action>bet</action> and more", "<action>check</action> then"] * 2
    encoded = [tokenizer(a, add_special_tokens=False)["input_ids"] for a in answers]

    def vllm_generate(prompt_ids, images, fields, n):
        return encoded[: len(prompt_ids)], [[-1.0] * len(ids) for ids in encoded]

    trainer._generate_single_turn = vllm_generate
    trainer.model.train()
    batch = trainer._generate_and_score_completions([{"seed": J_SEED}] * 4)
    mask = batch["completion_mask"].bool()
    first = tokenizer.decode(batch["completion_ids"][0][mask[0]])
    assert first.startswith("<action>bet</action>") and "more" not in first  # cut at the stop
    sampled = batch["sampling_per_token_logps"]
    assert torch.equal(sampled[mask], torch.full_like(sampled[mask], -1.0))
    diff = (batch["old_per_token_logps"] - sampled) * batch["completion_mask"]
    if mode == "sequence_mask":
        ratio = torch.exp(diff.sum(dim=-1, keepdim=True))
        expected = ratio.masked_fill(ratio > config.vllm_importance_sampling_clip_max, 0.0)
    else:
        expected = torch.exp(diff).clamp(max=config.vllm_importance_sampling_clip_max)
    assert torch.allclose(batch["importance_sampling_ratio"], expected)


def test_with_vllm_legal_moves_keep_the_policys_log_probs_and_reflections_vllms(tmp_path, tiny):
    model, tokenizer = tiny
    trial = {"num_episodes": 2, "reflection": True, "stop_on_success": False}
    config = tiny_config(tmp_path, action_choice="legal", trial=trial, max_completion_length=8)
    trainer = MetaRLTrainer(model, config, processing_class=tokenizer)
    trainer.use_vllm = True  # vLLM writes the reflections; the moves are the model's choice
    written = tokenizer("<reflection>bet</reflection>", add_special_tokens=False)["input_ids"]
    trainer._generate_single_turn = lambda prompt_ids, images, fields, n: (
        [written] * len(prompt_ids),
        [[-1.0] * len(written)] * len(prompt_ids),
    )
    trainer.model.train()
    batch = trainer._generate_and_score_completions([{"seed": J_SEED}] * 4)
    moves = batch["legal_answer_mask"].flatten(1).any(dim=1)
    reflections = batch["completion_mask"].any(dim=1) & ~moves
    assert int(moves.sum()) == 8 and int(reflections.sum()) == 4
    ratio = batch["importance_sampling_ratio"].squeeze(-1)
    # a move was sampled from the renormalised policy of these very weights: ratio 1
    assert torch.allclose(ratio[moves], torch.ones_like(ratio[moves]), atol=1e-5)
    mask = batch["completion_mask"][reflections]
    old = (batch["old_per_token_logps"][reflections] * mask).sum(dim=-1)
    expected = torch.exp(old + mask.sum(dim=-1))  # sequence_mask; vLLM's log-probs were -1
    expected = expected.masked_fill(expected > config.vllm_importance_sampling_clip_max, 0.0)
    assert torch.allclose(ratio[reflections], expected)


def test_a_turn_without_sampler_log_probs_gets_an_importance_ratio_of_one(tmp_path, tiny):
    model, tokenizer = tiny
    trainer = MetaRLTrainer(model, tiny_config(tmp_path), processing_class=tokenizer)
    rows = [TurnRow([5, 6], [7, 8], 1.0, [-1.0, -2.0]), TurnRow([5], [9], -1.0, None)]
    batch = turn_batch(rows, tokenizer.pad_token_id, 1)
    assert batch["sampling_per_token_logps"][1, 0].isnan()
    old = torch.tensor([[-1.5, -2.0], [-0.5, 0.0]])
    ratio = trainer._importance_ratio(old, batch["sampling_per_token_logps"], batch)
    assert ratio.squeeze(-1).tolist() == pytest.approx([float(torch.exp(torch.tensor(-0.5))), 1.0])


THINKING_SWITCH = (
    "{% if enable_thinking is defined and not enable_thinking %}<think></think>{% endif %}"
)


def test_trls_chat_template_kwargs_shape_the_prompts_the_policy_reads(tmp_path, tiny):
    model, tokenizer = tiny
    tokenizer.chat_template += THINKING_SWITCH  # Qwen3's switch, in miniature
    config = tiny_config(tmp_path, chat_template_kwargs={"enable_thinking": False})
    trainer = MetaRLTrainer(model, config, processing_class=tokenizer)
    (reply,) = trainer.backend.generate([[{"role": "user", "content": "Your card: J."}]])
    assert tokenizer.decode(reply.prompt_ids).endswith("<|assistant|><think></think>")


def test_the_exact_kuhn_evaluation_reads_the_prompts_training_plays(tmp_path, tiny, monkeypatch):
    from mage_agents.training import evaluation
    from mage_agents.training.kuhn_policy import decision_prompts

    model, tokenizer = tiny
    config = tiny_config(
        tmp_path,
        opponent="aggressive",
        trial={"templates": "mage"},
        evaluation_tasks=1,
        temperature=0.7,
    )
    trainer = MetaRLTrainer(model, config, processing_class=tokenizer)
    policy = trainer.backend
    _, played = scripted_step(trainer, [["<action>bet</action>"] * 4], [J_SEED] * 4)
    trainer.backend = policy  # evaluation plays with the real policy
    asked = []
    monkeypatch.setattr(
        evaluation, "kuhn_exact_evaluation", lambda *a, **k: asked.append((a, k)) or {}
    )
    evaluation.evaluate_policy(trainer)
    (_, _, opponents, seats), settings = asked[0]
    assert settings.pop("temperature") == config.temperature == 0.7  # the policy it samples
    settings = {
        k: v for k, v in settings.items() if k not in ("answer_template", "chat_template_kwargs")
    }
    prompts = decision_prompts(opponents[0], seats[0], **settings)
    seen = played[0].turns[0].observation  # the published MAGE prompt, at the Jack's first move
    assert any(seen in p.chat[-1]["content"] for p in prompts)


def test_the_exact_kuhn_evaluation_covers_both_seats_when_training_rotates_them(
    tmp_path, tiny, monkeypatch
):
    from mage_agents.training import evaluation

    model, tokenizer = tiny
    config = tiny_config(tmp_path, trial={"seat_rotation": "trial"}, evaluation_tasks=1)
    trainer = MetaRLTrainer(model, config, processing_class=tokenizer)
    asked = []
    monkeypatch.setattr(
        evaluation, "kuhn_exact_evaluation", lambda *a, **k: asked.append((a, k)) or {}
    )
    evaluation.evaluate_policy(trainer)
    (_, _, _, seats), settings = asked[0]
    assert list(seats) == [0, 1] and "seat_rotation" not in settings


def test_trls_truncated_completion_masking_is_refused_not_ignored(tmp_path, tiny):
    model, tokenizer = tiny
    with pytest.raises(ValueError, match="mask_truncated_completions"):
        MetaRLTrainer(
            model,
            tiny_config(tmp_path, mask_truncated_completions=True),
            processing_class=tokenizer,
        )


def test_best_keeps_the_latest_of_tied_evaluations(tmp_path, tiny):
    from mage_agents.training.evaluation import EvaluationCallback

    model, tokenizer = tiny
    trainer = MetaRLTrainer(model, tiny_config(tmp_path), processing_class=tokenizer)
    saved = []

    def save_model(folder):
        saved.append(trainer.state.global_step)
        Path(folder).mkdir(parents=True, exist_ok=True)

    trainer.save_model = save_model
    callback = EvaluationCallback(trainer)
    for step, value in [(10, 0.0), (20, 1 / 3), (30, 1 / 3), (40, 0.0)]:
        trainer.state.global_step = step
        callback._keep_best({"eval/exact/mean_value": value})
    # the tie at step 30 replaces step 20: the later model is the more trained one
    assert trainer.best == {"metric": "eval/exact/mean_value", "value": 1 / 3, "step": 30}
    assert saved == [10, 20, 30]
    assert json.loads((tmp_path / "best" / "best.json").read_text())["step"] == 30
