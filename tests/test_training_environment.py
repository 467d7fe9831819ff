"""The environment_factory adapter trains one step with a plain TRL GRPOTrainer."""

import pytest

torch = pytest.importorskip("torch")
trl = pytest.importorskip("trl")

from datasets import Dataset  # noqa: E402

from mage_agents.tiny_model import build_tiny_model  # noqa: E402
from mage_agents.training import TrialEnvironment, trial_environment  # noqa: E402
from tests.tiny_training import tiny_run  # noqa: E402


def test_a_trial_plays_through_the_move_tool_and_owns_its_reward():
    env = trial_environment("mage/KuhnPoker-v0", opponent="always-pass", seat="first")()
    first = env.reset(seed=3, prompt="ignored")
    assert "Legal moves: check, bet." in first and "`move` tool" in first
    assert "Invalid move" in env.move("raise")
    assert env.get_reward() == -1.0  # unfinished: the penalty
    assert env.move("bet").endswith("The trial is over.")
    assert env.get_reward() == 1.0 and env.trial["returns"] == [1.0]
    assert env.move("bet") == "The trial is over: no more moves."


def test_a_ready_trial_config_keeps_its_episodes_unless_num_episodes_is_given():
    from mage_envs.meta import TrialConfig

    config = TrialConfig(num_episodes=3, stop_on_success=True)
    assert TrialEnvironment("mage/KuhnPoker-v0")._env.num_episodes == 1
    assert TrialEnvironment("mage/KuhnPoker-v0", config=config)._env.num_episodes == 3  # was 1
    given = TrialEnvironment("mage/KuhnPoker-v0", num_episodes=2, config=config)._env.config
    assert (given.num_episodes, given.stop_on_success) == (2, True)


def test_bad_settings_fail_when_the_factory_is_made():
    with pytest.raises(Exception, match="NoSuchGame"):
        trial_environment("mage/NoSuchGame-v0")


def test_only_move_is_offered_as_a_tool():
    import inspect

    # as TRL lists them: the class's functions, inherited ones included
    public = [
        n
        for n, _ in inspect.getmembers(TrialEnvironment, predicate=inspect.isfunction)
        if not n.startswith("_")
    ]
    assert sorted(public) == ["get_reward", "move", "reset"]


OLD_TEMPLATE = (  # the tiny template before it could call tools: chats without tools render so
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def test_the_tiny_chat_template_calls_the_move_tool_and_renders_plain_chats_as_before():
    from jinja2 import Template
    from trl.chat_template_utils import is_chat_template_prefix_preserving, supports_tool_calling

    _, tokenizer = build_tiny_model(seed=0)
    assert supports_tool_calling(tokenizer) and is_chat_template_prefix_preserving(tokenizer)
    chat = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Card: J."}]
    for generation in (True, False):
        old = Template(OLD_TEMPLATE).render(messages=chat, add_generation_prompt=generation)
        assert (
            tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=generation)
            == old
        )
    env = trial_environment("mage/KuhnPoker-v0", opponent="aggressive")()
    prompt = tokenizer.apply_chat_template(
        chat, tools=[env.move], tokenize=False, add_generation_prompt=True
    )
    assert prompt.endswith("<|assistant|><|call|><action>")  # the turn opens a call of move
    prefix = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    answer = tokenizer("bet</action> and more", add_special_tokens=False)["input_ids"]
    parsed = tokenizer.parse_response(answer, prefix=prefix, tools=[env.move])
    (call,) = parsed["tool_calls"]
    assert call["function"] == {"name": "move", "arguments": {"move": "bet"}}
    # without tools (an agent's answer, e.g. through `transformers serve`) the text stays content
    plain = tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
    prefix = tokenizer(plain, add_special_tokens=False)["input_ids"]
    answer = tokenizer("I bet. <action>bet</action>", add_special_tokens=False)["input_ids"]
    parsed = tokenizer.parse_response(answer, prefix=prefix)
    assert "tool_calls" not in parsed and parsed["content"] == "I bet. <action>bet</action>"


def test_a_plain_grpo_trainer_step_on_the_tiny_model_has_non_zero_advantages(tmp_path):
    torch.set_num_threads(1)
    model, tokenizer = build_tiny_model(seed=0)  # as built: no template or parser to add
    rows = [
        {"prompt": [{"role": "user", "content": "Play Kuhn poker."}], "seed": s} for s in range(8)
    ]
    args = trl.GRPOConfig(
        **tiny_run(
            tmp_path,
            per_device_train_batch_size=64,  # 8 deals x 8 hands
            num_generations=8,
            max_completion_length=24,
            max_tool_calling_iterations=4,
            max_steps=1,
            bf16=False,
        )
    )
    factory = trial_environment(
        "mage/KuhnPoker-v0", opponent="aggressive", seat="first", max_invalid_actions=2
    )
    trainer = trl.GRPOTrainer(
        model=model,
        args=args,
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
        environment_factory=factory,
    )
    before = [p.detach().clone() for p in model.parameters()]
    trainer.train()  # the real model writes every answer: nothing is scripted
    log = next(e for e in trainer.state.log_history if "loss" in e)
    assert log["tools/call_frequency"] >= 1.0  # every turn calls move
    assert log["reward_std"] > 0 and log["frac_reward_zero_std"] < 1.0  # non-zero advantages
    assert log["grad_norm"] > 0
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
