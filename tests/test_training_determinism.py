"""Same seed, same model: the weights do not depend on evaluation, logging or resume points."""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

from transformers import TrainerCallback  # noqa: E402

import baselines  # noqa: E402, F401  (registers the league: opponents the league test plays)
from mage_agents.tiny_model import build_tiny_model  # noqa: E402
from mage_agents.training import MetaRLTrainer  # noqa: E402
from tests.tiny_training import tiny_config  # noqa: E402

CHOICES = {
    "generate": {"action_choice": "generate", "max_completion_length": 6},
    "legal": {"action_choice": "legal", "exploration_floor": 0.2, "move_entropy_bonus": 0.3},
}


def config(tmp_path, choice, **overrides):
    settings = dict(
        estimator="grpo",
        opponent="aggressive",
        invalid_action_penalty=1.0,
        max_steps=4,
        num_tasks=64,
        evaluation_tasks=4,
        seed=7,
    )
    return tiny_config(tmp_path, **settings | CHOICES[choice] | overrides)


def train(tmp_path, choice, resume=None, callbacks=(), **overrides):
    torch.set_num_threads(1)
    model, tokenizer = build_tiny_model(seed=0, init_std=0.125)
    trainer = MetaRLTrainer(
        model,
        config(tmp_path, choice, **overrides),
        processing_class=tokenizer,
        callbacks=list(callbacks),
    )
    trainer.sampled = []  # what each training step's rollouts wrote (evaluation plays too)
    trainer.met = []  # and whom each training step's trials met
    play = trainer.play

    def recorded(plans):
        trajectories = play(plans)
        if trainer.model.training:
            trainer.sampled.append([t.completion_ids for tr in trajectories for t in tr.turns])
            trainer.met.append([tr.result.opponents[0] for tr in trajectories])
        return trajectories

    trainer.play = recorded
    trainer.train(resume_from_checkpoint=resume)
    return trainer


def same_weights(a, b):
    return all(
        torch.equal(p, q) for p, q in zip(a.model.parameters(), b.model.parameters(), strict=True)
    )


def same_run(a, b):
    """Same rollouts (the free-text tiny model's are all invalid: no gradient) and weights."""
    return a.sampled == b.sampled and same_weights(a, b)


@pytest.mark.parametrize("choice", sorted(CHOICES))
def test_evaluation_cadence_and_logging_steps_do_not_change_the_trained_weights(tmp_path, choice):
    quiet = train(tmp_path / "quiet", choice, evaluation_steps=0, logging_steps=4)
    busy = train(tmp_path / "busy", choice, evaluation_steps=1, logging_steps=1)
    evaluated = [e for e in busy.state.log_history if "eval/exact/mean_value" in e]
    assert len(evaluated) == 4  # the busy run sampled evaluation trials at every step
    assert len(quiet.sampled) == 4 and same_run(quiet, busy)
    other_seed = train(tmp_path / "seed", choice, evaluation_steps=0, logging_steps=4, seed=8)
    assert not same_run(quiet, other_seed)  # the run does depend on the seed
    if choice == "legal":
        assert not same_weights(quiet, other_seed)


class Killed(Exception):
    """Stands for a kill -9 in the middle of a step."""


class KillAt(TrainerCallback):
    def __init__(self, step):
        self.step = step

    def on_step_begin(self, args, state, control, **kwargs):
        if state.global_step == self.step:
            raise Killed


@pytest.mark.parametrize("choice", sorted(CHOICES))
def test_a_killed_and_resumed_run_ends_with_the_weights_of_an_uninterrupted_one(tmp_path, choice):
    settings = dict(save_strategy="steps", save_steps=2, evaluation_steps=1)
    whole = train(tmp_path / "whole", choice, **settings)
    with pytest.raises(Killed):
        train(tmp_path / "killed", choice, callbacks=[KillAt(3)], **settings)
    assert (tmp_path / "killed" / "checkpoint-2").is_dir()
    resumed = train(tmp_path / "killed", choice, resume=True, **settings)
    assert resumed.state.global_step == 4
    assert resumed.sampled == whole.sampled[2:] and same_weights(whole, resumed)


def test_each_generation_of_an_accumulated_step_samples_from_its_own_stream(tmp_path, monkeypatch):
    # gradient accumulation over two generations a step: the second must not replay the first's
    # random draws (the same stream would sample the same moves wherever the tasks allow)
    from mage_agents.training import trainer as trainer_module

    seeds = []
    stream_seed = trainer_module.stream_seed
    monkeypatch.setattr(
        trainer_module, "stream_seed", lambda *path: seeds.append(stream_seed(*path)) or seeds[-1]
    )
    run = train(
        tmp_path, "legal", max_steps=2, gradient_accumulation_steps=2, steps_per_generation=1
    )
    assert run.state.global_step == 2 and len(run.sampled) == 4
    assert len(seeds) == 4 and len(set(seeds)) == 4  # two steps, two generations each


def test_a_run_resumed_between_two_generations_ends_with_the_uninterrupted_weights(tmp_path):
    # steps_per_generation 2: one generation trains two steps; checkpoint-3 falls between the
    # second generation's steps, so the resumed step 4 must train on the rest of that generation
    settings = dict(
        save_strategy="steps", save_steps=3, max_steps=4, steps_per_generation=2, num_tasks=64
    )
    whole = train(tmp_path / "whole", "legal", **settings)
    assert len(whole.sampled) == 2
    with pytest.raises(Killed):
        train(tmp_path / "killed", "legal", callbacks=[KillAt(3)], **settings)
    resumed = train(tmp_path / "killed", "legal", resume=True, **settings)
    assert resumed.state.global_step == 4
    assert resumed.sampled == [] and same_weights(whole, resumed)


def test_rae_baselines_are_checkpointed_so_a_resumed_run_ends_with_the_same_weights(tmp_path):
    import shutil

    settings = dict(
        save_strategy="steps",
        save_steps=2,
        estimator="rae",
        env_kwargs={"seat": "random", "max_invalid_actions": 1},
    )
    whole = train(tmp_path / "whole", "legal", **settings)
    assert set(whole.estimator_state) == {"first", "second"}  # one baseline per seat
    with pytest.raises(Killed):
        train(tmp_path / "killed", "legal", callbacks=[KillAt(3)], **settings)
    saved = tmp_path / "killed" / "checkpoint-2" / "estimator_state_0.json"
    assert saved.is_file()
    shutil.copytree(tmp_path / "killed", tmp_path / "forgot")
    resumed = train(tmp_path / "killed", "legal", resume=True, **settings)
    assert resumed.estimator_state == whole.estimator_state and same_weights(whole, resumed)
    # the check can fail: a resume that starts the baselines again from 0 trains other weights
    (tmp_path / "forgot" / "checkpoint-2" / "estimator_state_0.json").unlink()
    forgot = train(tmp_path / "forgot", "legal", resume=True, **settings)
    assert forgot.estimator_state != whole.estimator_state and not same_weights(whole, forgot)


def test_the_league_is_checkpointed_so_a_resumed_run_ends_with_the_same_weights(tmp_path):
    import shutil

    settings = dict(
        save_strategy="steps",
        save_steps=2,
        league_every=1,
        league_size=3,
        league_weight=0.75,
        league_sampling="winrate",
        env_kwargs={"seat": "random", "max_invalid_actions": 1},
    )
    whole = train(tmp_path / "whole", "legal", **settings)
    assert len(whole.league.specs) == 3 and whole.league.record  # snapshots played and counted
    with pytest.raises(Killed):
        train(tmp_path / "killed", "legal", callbacks=[KillAt(3)], **settings)
    saved = tmp_path / "killed" / "checkpoint-2" / "league_state_0.json"
    assert saved.is_file()
    shutil.copytree(tmp_path / "killed", tmp_path / "forgot")
    resumed = train(tmp_path / "killed", "legal", resume=True, **settings)
    assert resumed.met == whole.met[2:] and resumed.league.record == whole.league.record
    assert same_weights(whole, resumed)
    # the check can fail: a resume that starts the league again meets other snapshots (the
    # tiny model's snapshots a step apart play the same greedy moves, so weights may agree)
    (tmp_path / "forgot" / "checkpoint-2" / "league_state_0.json").unlink()
    forgot = train(tmp_path / "forgot", "legal", resume=True, **settings)
    assert forgot.met != whole.met[2:] and forgot.league.record != whole.league.record


TIMING = {"step_time", "train_runtime", "train_samples_per_second", "train_steps_per_second"}
"""Logged timings: they differ between any two runs."""


def resumed_rows(tmp_path, logging_steps):
    """Per logged row of an uninterrupted run, the keys a run killed at step 3 and resumed from
    checkpoint-2 logs differently (timings aside)."""
    settings = dict(save_strategy="steps", save_steps=2, logging_steps=logging_steps)
    whole = train(tmp_path / "whole", "legal", evaluation_steps=0, **settings)
    with pytest.raises(Killed):
        train(tmp_path / "killed", "legal", callbacks=[KillAt(3)], evaluation_steps=0, **settings)
    resumed = train(tmp_path / "killed", "legal", resume=True, evaluation_steps=0, **settings)
    rows = zip(whole.state.log_history, resumed.state.log_history, strict=True)
    return [(a.get("step"), {k for k in a.keys() | b.keys() if a.get(k) != b.get(k)} - TIMING)
            for a, b in rows]  # fmt: skip


def test_a_resumed_runs_logged_rows_are_the_uninterrupted_ones_but_where_docs_say(tmp_path):
    # checkpoint-2 closes a logging window: every row equal but the summary's train_loss, which
    # Trainer averages over the steps this process ran (docs/training.md, "Resume and metrics")
    aligned = resumed_rows(tmp_path / "aligned", logging_steps=2)
    assert aligned == [(2, set()), (4, set()), (4, {"train_loss"})]
    # a window of 3 steps spans the resume at 2: its row averages the resumed run's step 3 only
    spanning = resumed_rows(tmp_path / "spanning", logging_steps=3)
    assert spanning[0][0] == 3 and {"loss", "trial/pass@1", "advantages/std"} <= spanning[0][1]
    assert not spanning[0][1] & {"grad_norm", "learning_rate", "epoch"}  # the last step's own
    assert spanning[1:] == [(4, {"train_loss"})]
