"""``train --check`` on every ready config: no weights, no GPU, nothing written.

Every ready training config passes: its settings build (bf16 checked as off where the machine has
no GPU with bf16, and said so), its env, opponent and one scripted trial play (WebShop and
ALFWorld on their stand-ins, said so), and the paper configs' step fits an 80 GB device by the
memory model, each forward within ``max_tokens_per_forward``.
"""

import pytest

pytest.importorskip("torch")
pytest.importorskip("trl")

from baselines.run import main  # noqa: E402
from baselines.train.check import DEVICE_GIB, check  # noqa: E402
from baselines.train.command import TRAIN_CONFIG_DIR, load_train_settings  # noqa: E402
from mage_agents.training.memory import GIB  # noqa: E402

READY = sorted(path.stem for path in TRAIN_CONFIG_DIR.glob("*.yaml"))


NOT_HERE = ("model: models/Qwen3-4B is not on this machine", "use_vllm: true needs vLLM")
"""What the paper configs may be refused for on a machine without their model or vLLM."""


def test_every_ready_config_passes_the_check():
    assert len(READY) >= 28
    for name in READY:
        report = check(load_train_settings(["--config", name]))
        if name.endswith("_qwen3_4b"):  # the model is not on disk here; vLLM may not be either
            assert report.refusals[0].startswith(NOT_HERE[0]), (name, report.refusals)
            assert all(r.startswith(NOT_HERE) for r in report.refusals), name
        else:
            assert report.refusals == [], (name, report.refusals)
        text = "\n".join(report.lines)
        assert "TRL settings:" in text and "tokens per forward" in text, name
        assert report.figures["rows"] >= report.figures["trials"] >= 1, name
        if name.endswith("_qwen3_4b"):  # paper size: LoRA and vLLM colocate on one GPU
            memory = report.figures["memory"]
            assert memory["total"] < DEVICE_GIB * GIB, (name, memory["total"] / GIB)
            assert report.figures["tokens"] == 32768 and report.figures["widest"] < 32768
            assert "colocate" in text and "LoRA: r 32" in text and "bf16: on" in text
            assert 4.0e9 < memory["weights"] / 2 < 4.1e9  # Qwen3-4B's parameters, in bf16
        if "webshop" in name or ("alfworld" in name and "generated" not in name):
            assert any("data is not on this machine" in w for w in report.warnings), name


def test_the_cli_check_prints_what_would_run_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "run"
    # the model is not on this machine: what would run is printed, then the refusal, exit 2
    assert main(["train", "--config", "lamer_sokoban_qwen3_4b", "--out", str(out), "--check"]) == 2
    printed = capsys.readouterr()
    text = printed.out
    assert "memory of a step, one device" in text and "check passed" not in text
    assert "vLLM: colocate, 35% of the device" in text and "Qwen3-4B" in text
    assert "error: model: models/Qwen3-4B is not on this machine" in printed.err
    assert not out.exists()
    unbounded = ["--set", "max_tokens_per_forward=null"]
    assert main(["train", "--config", "lamer_sokoban_qwen3_4b", "--check", *unbounded]) == 2
    assert "exceeds an 80 GB device: set max_tokens_per_forward" in capsys.readouterr().out
    assert main(["train", "--config", "tiny_kuhn_robust", "--check"]) == 0
    assert "check passed" in capsys.readouterr().out
    assert main(["train", "--config", "tiny_kuhn_robust", "--check", "--set", "traj_gamma=2"]) == 2
    assert "traj_gamma is a discount" in capsys.readouterr().err


def test_the_check_counts_the_generations_a_run_plays(tmp_path, capsys):
    """TRL's max_steps counts optimizer steps: a run plays the generations the check prints."""
    from mage_agents.training import MetaRLTrainer

    given = ["--config", "tiny_kuhn_grpo", "--out", str(tmp_path), "--max-steps", "5"]
    given += ["--set", "steps_per_generation=2", "--set", "gradient_accumulation_steps=2"]
    given += ["--set", "per_device_train_batch_size=4", "--set", "num_generations=4"]
    given += ["--set", "evaluation_steps=0", "--set", "save_strategy=no"]
    settings = load_train_settings(given)
    budget = check(settings).figures["run"]
    # 5 optimizer steps x 2 micro-batches = 10; a generation feeds 2: generations 0, 2, ..., 8
    assert budget["generations"] == 5 and budget["trials_per_generation"] == 8
    assert budget["trials"] == 40 and budget["optimizer_steps"] == 5
    from baselines.train.command import build_config, load_model

    model, tokenizer = load_model(settings)
    trainer = MetaRLTrainer(model, build_config(settings), processing_class=tokenizer)
    played, generate = [], trainer._generate_and_score_completions

    def counted(inputs):
        played.append(len(inputs))
        return generate(inputs)

    trainer._generate_and_score_completions = counted
    trainer.train()
    assert len(played) == budget["generations"] and sum(played) == budget["trials"]
    assert main(["train", *given, "--check"]) == 0
    assert "5 optimizer steps" in capsys.readouterr().out.replace("\n", " ")
