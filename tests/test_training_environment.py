"""The environment_factory adapter trains one step with a plain TRL GRPOTrainer."""

import pytest

torch = pytest.importorskip("torch")
trl = pytest.importorskip("trl")

from datasets import Dataset  # noqa: E402
from trl.chat_template_utils import qwen3_chat_template  # noqa: E402

from mage_agents.tiny_model import build_tiny_model  # noqa: E402
from mage_agents.training import TrialEnvironment, trial_environment  # noqa: E402

TOOL_CALL = '<tool_call>\n{{"name": "move", "arguments": {{"move": "{move}"}}}}\n</tool_call>'


def test_a_trial_plays_through_the_move_tool_and_owns_its_reward():
    env = trial_environment("mage/KuhnPoker-v0", opponent="always-pass", seat="first")()
    first = env.reset(seed=3, prompt="ignored")
    assert "Legal moves: check, bet." in first and "`move` tool" in first
    assert "Invalid move" in env.move("raise")
    assert env.get_reward() == -1.0  # unfinished: the penalty
    assert env.move("bet").endswith("The trial is over.")
    assert env.get_reward() == 1.0 and env.trial["returns"] == [1.0]
    assert env.move("bet") == "The trial is over: no more moves."


def test_bad_settings_fail_when_the_factory_is_made():
    with pytest.raises(Exception, match="NoSuchGame"):
        trial_environment("mage/NoSuchGame-v0")


def test_only_move_is_offered_as_a_tool():
    public = [
        n
        for n in vars(TrialEnvironment)
        if not n.startswith("_") and callable(getattr(TrialEnvironment, n))
    ]
    assert sorted(public) == ["get_reward", "move", "reset"]


def test_a_plain_grpo_trainer_trains_one_step_on_a_trial(tmp_path, monkeypatch):
    torch.set_num_threads(1)
    model, tokenizer = build_tiny_model(seed=0)
    tokenizer.chat_template = qwen3_chat_template  # a template TRL can parse tool calls from
    rows = [
        {"prompt": [{"role": "user", "content": "Play Kuhn poker."}], "seed": s} for s in (1, 2)
    ]
    args = trl.GRPOConfig(
        output_dir=str(tmp_path),
        per_device_train_batch_size=4,
        num_generations=4,
        max_completion_length=64,
        max_steps=1,
        learning_rate=1e-2,
        bf16=False,
        use_cpu=True,
        gradient_checkpointing=False,
        report_to=[],
        logging_steps=1,
        save_strategy="no",
    )
    factory = trial_environment("mage/KuhnPoker-v0", opponent="always-pass", seat="first")
    trainer = trl.GRPOTrainer(
        model=model,
        args=args,
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
        environment_factory=factory,
    )
    # The random model never writes a tool call: script the first answer of each rollout (bet
    # wins 1 chip against always-pass, check wins 1 only at the showdown) and let TRL run the
    # tool, append its result and generate again with the real model.
    calls = {"n": 0}
    real = trainer._generate_single_turn

    def scripted(prompt_ids, *rest, **kwargs):
        calls["n"] += 1
        if calls["n"] > 1:
            return real(prompt_ids, *rest, **kwargs)
        moves = ["bet", "raise", "bet", "raise"] * (len(prompt_ids) // 4)
        text = [TOOL_CALL.format(move=m) + tokenizer.eos_token for m in moves]
        return [tokenizer(t, add_special_tokens=False)["input_ids"] for t in text], None

    monkeypatch.setattr(trainer, "_generate_single_turn", scripted)
    before = [p.detach().clone() for p in model.parameters()]
    trainer.train()
    log = next(e for e in trainer.state.log_history if "loss" in e)
    assert torch.isfinite(torch.tensor(log["loss"]))
    assert log["tools/call_frequency"] > 0
    # bet ends the hand (+1); an invalid move leaves it unfinished (-1 penalty, then no tool call)
    assert log["rewards/TrialEnvironment/mean"] == pytest.approx(0.0)
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
