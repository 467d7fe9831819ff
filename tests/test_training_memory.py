"""The memory model against transformers' and PEFT's own models, and autograd's saved tensors."""

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from mage_agents.training.memory import (  # noqa: E402
    Architecture,
    TrainingShape,
    activation_bytes_per_token,
    estimate_memory,
)

QWEN3_4B = Path(__file__).parents[1] / "baselines" / "configs" / "models" / "qwen3-4b.json"


def small(kind, h=80, mlp=304, heads=8, kv=2, head_dim=16, layers=2):
    config_class = transformers.Qwen3Config if kind == "qwen3" else transformers.LlamaConfig
    return config_class(
        vocab_size=512,
        hidden_size=h,
        intermediate_size=mlp,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv,
        head_dim=head_dim,
        max_position_embeddings=1024,
        attn_implementation="sdpa",
    )


def test_the_parameter_count_is_transformers_own_qwen3_4b_included():
    config = transformers.AutoConfig.for_model(**json.loads(QWEN3_4B.read_text()))
    with torch.device("meta"):  # the architecture only: no memory, no weights
        model = transformers.AutoModelForCausalLM.from_config(config)
    arch = Architecture.from_config(json.loads(QWEN3_4B.read_text()))
    assert arch.parameters() == sum(p.numel() for p in model.parameters())
    assert round(arch.parameters() / 1e9, 1) == 4.0  # the model card: 4.0B
    for kind in ("qwen3", "llama"):
        config = small(kind)
        model = transformers.AutoModelForCausalLM.from_config(config)
        assert Architecture.from_config(config.to_dict()).parameters() == sum(
            p.numel() for p in model.parameters()
        )


def test_the_lora_parameter_count_is_peft_own():
    peft = pytest.importorskip("peft")
    model = transformers.AutoModelForCausalLM.from_config(small("qwen3"))
    adapted = peft.get_peft_model(
        model, peft.LoraConfig(r=4, target_modules="all-linear", task_type="CAUSAL_LM")
    )
    trainable = sum(p.numel() for p in adapted.parameters() if p.requires_grad)
    arch = Architecture.from_config(small("qwen3").to_dict())
    assert arch.lora_parameters(4, "all-linear") == trainable
    assert arch.lora_parameters(4, ["q_proj", "v_proj"]) == 2 * 4 * (80 + 128 + 80 + 32)


def saved_bytes_per_token_and_layer(config, dtype, rows=4, width=64):
    """The bytes autograd keeps for the backward of the decoder layers, parameters excluded."""
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(config).to(dtype)
    model.train()
    ids = torch.randint(0, config.vocab_size, (rows, width))
    mask = torch.ones_like(ids)
    mask[0, : width // 4] = 0  # padding, as a batch of turns has
    seen = {}

    def pack(tensor):
        storage = tensor.untyped_storage()
        seen[(storage.data_ptr(), storage.nbytes())] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        model.model(input_ids=ids, attention_mask=mask)
    weights = {p.untyped_storage().data_ptr() for p in model.parameters()}
    kept = sum(n for (pointer, _), n in seen.items() if pointer not in weights)
    return kept / (rows * width * config.num_hidden_layers)


@pytest.mark.parametrize(
    "kind,shape,dtype",
    [
        ("qwen3", {"h": 128, "mlp": 480, "heads": 8, "kv": 2, "head_dim": 32}, torch.float32),
        ("llama", {"h": 48, "mlp": 400, "heads": 6, "kv": 3, "head_dim": 8}, torch.float32),
        ("qwen3", {"h": 96, "mlp": 320, "heads": 6, "kv": 2, "head_dim": 16}, torch.bfloat16),
    ],
)
def test_activation_bytes_match_autograds_saved_tensors_on_unseen_shapes(kind, shape, dtype):
    config = small(kind, **shape)
    measured = saved_bytes_per_token_and_layer(config, dtype)
    bytes_ = 4 if dtype == torch.float32 else 2
    predicted = activation_bytes_per_token(Architecture.from_config(config.to_dict()), bytes_, 64)
    assert predicted == pytest.approx(measured, rel=0.05)


def test_the_estimate_adds_up_and_follows_the_settings():
    arch = Architecture.from_config(json.loads(QWEN3_4B.read_text()))
    lora = TrainingShape(tokens=16384, width=2048, scored=4096, lora_rank=32)
    parts = estimate_memory(arch, lora)
    assert parts["total"] == pytest.approx(sum(v for k, v in parts.items() if k != "total"))
    double = estimate_memory(
        arch, TrainingShape(tokens=32768, width=2048, scored=4096, lora_rank=32)
    )
    assert double["activations"] == pytest.approx(2 * parts["activations"])
    full = estimate_memory(arch, TrainingShape(tokens=16384, width=2048, scored=4096))
    assert full["trainable state"] == pytest.approx(3 * parts["weights"])  # bf16 grad + AdamW
    plain = TrainingShape(16384, 2048, 4096, lora_rank=32, gradient_checkpointing=False)
    assert estimate_memory(arch, plain)["activations"] > 10 * parts["activations"]
