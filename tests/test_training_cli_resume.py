"""python -m baselines.run train reruns honestly: finished, refused, extended, restarted."""

import shutil

import pytest
import yaml

pytest.importorskip("torch")
pytest.importorskip("trl")

from baselines.run import main  # noqa: E402

TINY = [
    "--config",
    "tiny_kuhn_grpo",
    "--max-steps",
    "2",
    *("--set", "logging_steps=1", "--set", "save_steps=5", "--set", "num_generations=2"),
    *("--set", "per_device_train_batch_size=4", "--set", "max_completion_length=4"),
    "--no-plots",
]


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished 2-step run (save_steps 5: only the last step is checkpointed)."""
    out = tmp_path_factory.mktemp("finished") / "run"
    assert main(["train", *TINY, "--out", str(out)]) == 0
    return out


def copy_of(finished, tmp_path):
    out = tmp_path / "run"
    shutil.copytree(finished, out)
    return out


def test_the_last_step_is_checkpointed_and_a_finished_run_rerun_does_nothing(
    finished, tmp_path, capsys
):
    out = copy_of(finished, tmp_path)
    assert sorted(p.name for p in out.glob("checkpoint-*")) == ["checkpoint-2"]
    assert main(["train", *TINY, "--out", str(out)]) == 0
    assert "already holds the finished run (2 steps): nothing to train" in capsys.readouterr().out
    assert sorted(p.name for p in out.glob("checkpoint-*")) == ["checkpoint-2"]


def test_a_rerun_with_other_settings_is_refused_with_the_keys_named(finished, tmp_path, capsys):
    out = copy_of(finished, tmp_path)
    saved = (out / "config.yaml").read_text()
    other = ["--estimator", "rloo", "--set", "learning_rate=0.05"]
    assert main(["train", *TINY, *other, "--out", str(out)]) == 2
    text = capsys.readouterr().err
    assert "holds a run with other settings" in text
    assert "estimator ('grpo' -> 'rloo')" in text and "learning_rate (0.01 -> 0.05)" in text
    assert (out / "config.yaml").read_text() == saved  # still the settings of the run there
    # --extend changes max_steps only
    assert main(["train", *TINY, *other, "--extend", "--out", str(out)]) == 2
    assert "--extend only changes max_steps" in capsys.readouterr().err


def test_extend_trains_a_finished_run_further_and_config_yaml_follows(finished, tmp_path, capsys):
    out = copy_of(finished, tmp_path)
    longer = [*TINY[:2], "--max-steps", "3", *TINY[4:]]
    assert main(["train", *longer, "--out", str(out)]) == 2  # not without --extend
    assert "max_steps (2 -> 3)" in capsys.readouterr().err
    assert main(["train", *longer, "--extend", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Extending the run to 3 steps: resuming from" in text and "step 3/3" in text
    assert "schedule was made for 2 steps" in text  # tiny_kuhn_grpo decays its rate
    assert yaml.safe_load((out / "config.yaml").read_text())["max_steps"] == 3
    assert yaml.safe_load((out / "resolved.yaml").read_text())["max_steps"] == 3
    assert (out / "checkpoint-3").is_dir()


def test_restart_replaces_the_run(finished, tmp_path, capsys):
    out = copy_of(finished, tmp_path)
    other = ["--set", "learning_rate=0.05", "--restart"]
    assert main(["train", *TINY, *other, "--out", str(out)]) == 0
    assert "--restart removed the old one" in capsys.readouterr().out
    assert yaml.safe_load((out / "config.yaml").read_text())["learning_rate"] == 0.05


def test_a_run_stopped_before_it_wrote_final_gets_final_from_its_last_checkpoint(
    finished, tmp_path, capsys
):
    out = copy_of(finished, tmp_path)
    # killed after the last step's checkpoint, while final/ was being written
    (out / "final" / "trainer_state.json").unlink()
    (out / "metrics.jsonl").unlink()
    assert main(["train", *TINY, "--out", str(out)]) == 0
    assert "stopped before it wrote final/: writing final/ from checkpoint-2" in (
        capsys.readouterr().out
    )
    assert sorted(p.name for p in out.glob("checkpoint-*")) == ["checkpoint-2"]  # no step 3
    final = out / "final"
    weights = (out / "checkpoint-2" / "model.safetensors").read_bytes()
    assert (final / "model.safetensors").read_bytes() == weights
    assert (final / "trainer_state.json").is_file() and not (final / "optimizer.pt").exists()
    assert (out / "metrics.jsonl").read_text().count('"step": 2') >= 1
    assert main(["train", *TINY, "--out", str(out)]) == 0  # now it is the finished run
    assert "already holds the finished run (2 steps)" in capsys.readouterr().out


def test_an_extended_run_stopped_before_its_new_last_step_resumes_to_it(finished, tmp_path, capsys):
    out = copy_of(finished, tmp_path)
    longer = [*TINY[:2], "--max-steps", "3", *TINY[4:], "--extend", "--out", str(out)]
    config = yaml.safe_load((out / "config.yaml").read_text())
    # as `--extend --max-steps 3` leaves the folder when it is killed during step 3
    (out / "config.yaml").write_text(yaml.safe_dump({**config, "max_steps": 3}, sort_keys=False))
    assert main(["train", *longer]) == 0
    text = capsys.readouterr().out
    assert "Resuming from" in text and "step 3/3" in text
    assert (out / "checkpoint-3").is_dir()


def test_restart_also_removes_a_half_written_checkpoint(finished, tmp_path, capsys):
    out = copy_of(finished, tmp_path)
    (out / "checkpoint-7").mkdir()  # killed while saving: no trainer_state.json
    (out / "checkpoint-7" / "model.safetensors").write_bytes(b"half")
    assert main(["train", *TINY, "--restart", "--out", str(out)]) == 0
    assert sorted(p.name for p in out.glob("checkpoint-*")) == ["checkpoint-2"]


@pytest.mark.parametrize(
    ("flags", "reason"),
    [
        (["--max-steps", "-1"], "--max-steps counts optimizer steps: give >= 1, not -1"),
        (["--max-steps", "0"], "give >= 1, not 0"),
        (["--set", "save_steps=0"], "save_steps counts optimizer steps"),
        (["--set", "max_steps=-1"], "max_steps counts optimizer steps"),
        (["--set", "env_id=mage/NoSuchGame-v0"], "env_id 'mage/NoSuchGame-v0'"),
        (["--set", "opponent=nobody"], "Unknown opponent 'nobody'"),
        (["--set", "env_kwargs={seet: first}"], "keyword argument 'seet'"),
    ],
)
def test_bad_step_counts_and_trial_settings_are_refused_before_the_model_loads(
    tmp_path, capsys, monkeypatch, flags, reason
):
    import baselines.train.command

    def no_model(settings):
        raise AssertionError("the model was loaded before the settings were checked")

    monkeypatch.setattr(baselines.train.command, "load_model", no_model)
    out = tmp_path / "run"
    assert main(["train", "--config", "tiny_kuhn_grpo", *flags, "--out", str(out)]) == 2
    assert reason in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize(
    ("name", "damage"),
    [
        ("model.safetensors", "cut"),
        ("optimizer.pt", "cut"),
        ("trainer_state.json", "garbage"),
    ],
)
def test_a_damaged_checkpoint_is_named_with_what_to_do(finished, tmp_path, capsys, name, damage):
    out = copy_of(finished, tmp_path)
    path = out / "checkpoint-2" / name
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2] if damage == "cut" else b"{not json")
    longer = [*TINY[:2], "--max-steps", "3", *TINY[4:], "--extend"]
    assert main(["train", *longer, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith(f"error: {path} is damaged (")
    assert "Delete" in err and "--restart" in err and "Traceback" not in err


def test_a_damaged_final_state_is_named(finished, tmp_path, capsys):
    out = copy_of(finished, tmp_path)
    (out / "final" / "trainer_state.json").write_text("")
    assert main(["train", *TINY, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{out / 'final' / 'trainer_state.json'} is damaged" in err and "--restart" in err


def test_a_resume_without_rng_state_says_what_it_changes(finished, tmp_path, capsys):
    out = copy_of(finished, tmp_path)
    (out / "checkpoint-2" / "rng_state.pth").unlink()
    longer = [*TINY[:2], "--max-steps", "3", *TINY[4:], "--extend"]
    assert main(["train", *longer, "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "has no rng_state.pth" in err and "weights and figures will differ" in err
