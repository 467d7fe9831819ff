"""TRL's GRPOTrainer, 2 steps on the tiny model, through OpenEnv and through the in-process door."""

import pytest

torch = pytest.importorskip("torch")
trl = pytest.importorskip("trl")
pytest.importorskip("openenv.core")

from datasets import Dataset  # noqa: E402

from mage_agents.interop import OpenEnvTrialEnvironment, openenv_trial_environment  # noqa: E402
from mage_agents.tiny_model import build_tiny_model  # noqa: E402
from mage_agents.training import TrialEnvironment, trial_environment  # noqa: E402
from tests.interop_server import served  # noqa: E402
from tests.tiny_training import tiny_run  # noqa: E402

KUHN = "mage/KuhnPoker-v0"
TRIAL = {"num_episodes": 2, "opponent": "always-pass", "seat": "first"}
RULES = {"invalid_action_penalty": 1.0, "max_invalid_actions": 2}  # the client may set these


def train_two_steps(factory, folder):
    torch.manual_seed(0)
    model, tokenizer = build_tiny_model(seed=0)
    prompt = [{"role": "user", "content": "Play Kuhn poker."}]
    rows = Dataset.from_list([{"prompt": prompt, "seed": s} for s in range(64)])
    args = trl.GRPOConfig(
        **tiny_run(
            folder,
            per_device_train_batch_size=32,  # 4 deals x 8 trials
            num_generations=8,
            max_completion_length=48,
            max_tool_calling_iterations=6,
            max_steps=2,
            bf16=False,
            disable_tqdm=True,
        )
    )
    trainer = trl.GRPOTrainer(
        model=model,
        args=args,
        train_dataset=rows,
        processing_class=tokenizer,
        environment_factory=factory,
    )
    trainer.train()
    logs = [e for e in trainer.state.log_history if "loss" in e]
    return logs, trainer.environments, [p.detach().clone() for p in model.parameters()]


def check_a_door(logs, environments):
    assert len(logs) == 2
    assert logs[0]["grad_norm"] > 0 and logs[0]["reward_std"] > 0  # a signal from step 1
    for env in environments:  # a finished rollout's reward is its trial's return
        if env.trial is not None:
            assert env.get_reward() == pytest.approx(sum(env.trial["returns"]))


def play(env, seed):
    pages = [env.reset(seed=seed, prompt="ignored")]
    rewards = [env.get_reward()]  # unfinished: the penalty
    for move in ("raise", "bet", "Bet again.", "bet", "bet"):  # invalid, play, reflect, play, over
        pages.append(env.move(move))
        rewards.append(env.get_reward())
    return pages, rewards, env.trial


def test_both_doors_give_the_same_pages_and_the_trials_return_as_reward():
    inside = trial_environment(KUHN, **RULES, **TRIAL)()
    settings = [f"--set={key}={value}" for key, value in TRIAL.items()]
    with served(KUHN, *settings) as url:
        remote = openenv_trial_environment(url, **RULES)()
        for seed in (0, 1):
            pages, rewards, trial = play(remote, seed)
            assert (pages, rewards, trial) == play(inside, seed)
            assert "Invalid move" in pages[1] and "Reflect on this attempt" in pages[2]
            assert pages[-1] == "The trial is over: no more moves."
            assert trial["returns"] == [0.0, 1.0]  # -1 (invalid) + 1 (bet), then bet: +1
            assert rewards[-1] == sum(trial["returns"]) and rewards[1] == -2.0


def test_the_openenv_door_and_the_in_process_door_train_the_same_weights(tmp_path):
    torch.set_num_threads(1)
    inside = trial_environment(KUHN, **RULES, **TRIAL)
    logs_in, envs_in, weights_in = train_two_steps(inside, tmp_path / "in")
    assert all(isinstance(env, TrialEnvironment) for env in envs_in)
    check_a_door(logs_in, envs_in)
    settings = [f"--set={key}={value}" for key, value in TRIAL.items()]
    with served(KUHN, *settings, "--max-sessions", "40") as url:
        remote = openenv_trial_environment(url, **RULES)
        logs_out, envs_out, weights_out = train_two_steps(remote, tmp_path / "out")
        assert all(isinstance(env, OpenEnvTrialEnvironment) for env in envs_out)
        check_a_door(logs_out, envs_out)
    for key in ("reward", "reward_std", "loss", "grad_norm"):
        assert [e[key] for e in logs_out] == pytest.approx([e[key] for e in logs_in]), key
    assert all(torch.equal(a, b) for a, b in zip(weights_in, weights_out, strict=True))


def test_the_openenv_door_offers_only_move_as_a_tool():
    import inspect

    # as TRL lists them: the class's functions, inherited ones included
    public = [
        n
        for n, _ in inspect.getmembers(OpenEnvTrialEnvironment, predicate=inspect.isfunction)
        if not n.startswith("_")
    ]
    assert sorted(public) == ["get_reward", "move", "reset"]


def test_an_unreachable_server_or_a_bad_setting_fails_when_the_factory_is_made():
    with pytest.raises(ConnectionError):
        openenv_trial_environment("http://127.0.0.1:9")
    with served(KUHN) as url:
        with pytest.raises(RuntimeError, match="cannot be chosen by a client"):
            openenv_trial_environment(url, reward_scale=2)
