"""``python -m benchmarks gpu`` at its tiniest on the CPU: every figure there and sane.

Timings are not checked (benchmarks measure, tests do not): only that each figure was measured
and that the floors are floors.
"""

import pytest

pytest.importorskip("torch")
pytest.importorskip("trl")

from benchmarks import gpu  # noqa: E402
from benchmarks.__main__ import BENCHMARKS  # noqa: E402
from mage_agents.training.memory import Architecture  # noqa: E402


def test_the_tiny_model_has_qwen3_4b_architecture_but_the_tiny_size():
    model, tokenizer = gpu.bench_model(tiny=True, device="cpu", dtype=None)
    assert model.config.model_type == "qwen3" and model.config.vocab_size == len(tokenizer)
    assert model.config.hidden_size == gpu.TINY_ARCHITECTURE["hidden_size"]
    assert model.config.num_key_value_heads == 2 and model.config.tie_word_embeddings  # qwen3-4b


def test_the_tiniest_run_prints_every_figure_and_the_floors_hold(capsys):
    assert BENCHMARKS["gpu"] == "benchmarks.gpu"
    argv = ["--config", "gigpo_kuhn_qwen3_4b", "--trials", "2", "--tokens", "4", "--tiny"]
    args = gpu.parse(argv)
    figures = gpu.measure(args)
    assert figures["device"] == "cpu" and len(figures["steps"]) == 2
    assert all(seconds > 0 for seconds in figures["steps"])
    model, _ = gpu.bench_model(tiny=True, device="cpu", dtype=None)
    assert figures["parameters"] == Architecture.from_config(model.config.to_dict()).parameters()
    assert figures["weight_bytes"] == 4 * sum(p.numel() for p in model.parameters())
    assert figures["peak"]["allocated"] > 0 and figures["predicted"] > 0
    assert figures["calls"] >= figures["replayed"] >= 1
    assert figures["trainer_step"] > 0 and figures["generate_step"] > 0
    assert 0 < figures["floor_step"] < figures["generate_step"]  # a decode step reads the weights
    assert figures["update_tokens"]["trained"] > 0
    assert 0 < figures["update_flops"] < figures["matmul_flops"]
    lines = gpu.report(figures, args.config)
    text = "\n".join(lines)
    for start in (
        "bench gpu: cpu",
        "model: ",
        "steps: ",
        "memory: peak",
        "decode, a step",
        "update: ",
    ):
        assert any(line.startswith(start) for line in lines), start
    assert "vs predicted" in text and "weight-read floor" in text and "matmul" in text
