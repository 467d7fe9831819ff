"""Loading never needs the network, and models that generate run on CUDA when there is one.

No GPU and no network here: CUDA is a stand-in (``torch.cuda.is_available`` and
``is_bf16_supported`` patched; nothing is moved to a GPU), and loads run with
``HF_HUB_OFFLINE=1`` and transformers' kernel entry point replaced by one that records the call
and fails as an offline machine does, so any kernel lookup shows.
"""

import pytest

torch = pytest.importorskip("torch")

import transformers  # noqa: E402
import transformers.modeling_utils as modeling_utils  # noqa: E402

from baselines.agents import build_agent_factory  # noqa: E402
from mage_agents.local_model import LocalModelBackend  # noqa: E402
from mage_agents.model_files import load_pretrained  # noqa: E402
from mage_agents.placement import choose_device, generation_dtype  # noqa: E402
from mage_agents.tiny_model import build_tiny_model  # noqa: E402

OFFLINE = (
    "Version 2 of 'kernels-community/rotary' is not available in the local cache and Hugging "
    "Face Hub is in offline mode"
)
CHAT = [{"role": "user", "content": "Your card: K. Legal moves: check, bet."}]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny")
    build_tiny_model(path)
    return path


@pytest.fixture
def offline(monkeypatch):
    """No network: a kernel lookup is recorded and fails as it does on an offline GPU machine."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("USE_HUB_KERNELS", raising=False)
    lookups = []

    def kernelize(model, *args, **kwargs):
        lookups.append(type(model).__name__)
        raise OSError(OFFLINE)

    monkeypatch.setattr(modeling_utils, "kernelize", kernelize)
    return lookups


@pytest.fixture
def cuda(monkeypatch):
    """A machine with a CUDA card with bf16, as torch sees it (nothing runs on it)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)


def test_a_model_loads_offline_without_looking_up_a_kernel(model_dir, offline, monkeypatch):
    given = []
    load = transformers.AutoModelForCausalLM.from_pretrained

    def recorded(*args, **kwargs):
        given.append(kwargs)
        return load(*args, **kwargs)

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", recorded)
    model, _ = load_pretrained(model_dir)
    model.train()  # where transformers kernelises again, for training, on the model's device
    model.eval()
    assert offline == [] and given[0]["use_kernels"] is False and given[0]["local_files_only"]


def test_hub_kernels_are_used_when_asked_for_and_a_failed_fetch_says_so(model_dir, offline):
    with pytest.raises(ValueError, match="hub kernel could not be had.*offline mode.*hub_kernels"):
        load_pretrained(model_dir, hub_kernels=True)
    assert offline == ["LlamaForCausalLM"]
    with pytest.raises(ValueError, match="a hub kernel could not be had"):
        LocalModelBackend(model_dir, hub_kernels=True, device="cpu")


def test_without_the_kernels_package_asking_fails_and_the_default_loads(model_dir, monkeypatch):
    monkeypatch.setattr(modeling_utils, "is_kernels_available", lambda: False)
    with pytest.raises(ValueError, match="Kernels are not available"):
        load_pretrained(model_dir, hub_kernels=True)
    model, _ = load_pretrained(model_dir)
    assert not model.use_kernels


def test_load_errors_name_their_cause_not_damage(model_dir, tmp_path, monkeypatch):
    incomplete = tmp_path / "incomplete"
    model, tokenizer = build_tiny_model(incomplete)
    (incomplete / "model.safetensors").unlink()
    with pytest.raises(ValueError, match="a file is missing") as missing:
        load_pretrained(incomplete)
    assert "damaged" not in str(missing.value)

    def no_package(*args, **kwargs):
        raise ImportError("this model needs the package sentencepiece: pip install sentencepiece")

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", no_package)
    with pytest.raises(ValueError, match="a package is missing.*sentencepiece") as absent:
        load_pretrained(model_dir)
    assert "damaged" not in str(absent.value)


def test_the_trainer_loads_its_reference_copy_without_hub_kernels(model_dir, offline, tmp_path):
    pytest.importorskip("trl")
    from mage_agents.training import MetaRLConfig, MetaRLTrainer

    model, tokenizer = load_pretrained(model_dir)
    config = MetaRLConfig(
        output_dir=str(tmp_path),
        beta=0.04,
        use_cpu=True,
        report_to=[],
        num_generations=2,
        per_device_train_batch_size=2,
        max_steps=1,
    )
    trainer = MetaRLTrainer(model, config, processing_class=tokenizer)
    assert trainer.ref_model is not None and offline == []  # TRL loaded it from model_dir
    with pytest.raises(ValueError, match="use_kernels.*hub_kernels.*disagree"):
        MetaRLConfig(output_dir=str(tmp_path), model_init_kwargs={"use_kernels": True})


def test_auto_picks_cuda_in_bf16_when_there_is_one(cuda):
    assert choose_device("auto") == choose_device(None) == "cuda"
    assert generation_dtype("cuda") is torch.bfloat16 and generation_dtype("cpu") is None
    assert choose_device("cpu") == "cpu" and choose_device("cuda:1") == "cuda:1"


def test_auto_is_the_cpu_without_cuda_and_bad_devices_are_explained(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert choose_device("auto") == "cpu"
    with pytest.raises(ValueError, match="no CUDA device"):
        choose_device("cuda")
    with pytest.raises(ValueError, match="give auto, cpu, cuda"):
        choose_device("gpu please")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)
    assert generation_dtype("cuda") is None  # an older card keeps the saved dtype


def _placed(model):
    """Record where ``model.to`` is asked to put the model, and leave it where it is."""
    calls = []

    def to(*args, **kwargs):
        calls.append(kwargs)
        return model

    model.to = to
    return calls


def test_a_local_agent_goes_to_cuda_in_bf16_unless_its_device_option_says_otherwise(cuda):
    model, tokenizer = build_tiny_model()
    calls = _placed(model)
    backend = LocalModelBackend(model, tokenizer)
    assert calls == [{"device": "cuda", "dtype": torch.bfloat16}] and backend.device == "cuda"
    calls.clear()
    LocalModelBackend(model, tokenizer, device="cpu")
    assert calls == [{"device": "cpu", "dtype": None}]


def test_the_agent_option_device_chooses(model_dir, cuda):
    factory = build_agent_factory({"kind": "local", "path": str(model_dir), "device": "cpu"})
    assert factory.backend.device == "cpu"
    assert next(factory.backend.model.parameters()).device.type == "cpu"


def test_a_call_generates_all_its_trials_in_one_batch(model_dir):
    backend = LocalModelBackend(model_dir, max_new_tokens=2, device="cpu")
    calls = []
    generate = backend.model.generate

    def counted(**kwargs):
        calls.append(kwargs["input_ids"].shape[0])
        return generate(**kwargs)

    backend.model.generate = counted
    backend.generate([CHAT] * 24)  # a runner's --batch-size 24: one batch on the device
    assert calls == [24]
    backend.batch_size = 10  # the agent option batch_size caps it
    calls.clear()
    backend.generate([CHAT] * 24)
    assert calls == [10, 10, 4]


def test_the_server_is_started_without_hub_kernels_on_the_chosen_device(monkeypatch, tmp_path):
    import mage_agents.transformers_server as server

    started = []

    class Refused(Exception):
        pass

    def popen(command, env, **kwargs):
        started.append((command, env))
        raise Refused  # nothing is started: what it would have been started with is kept

    monkeypatch.setattr(server, "serve_available", lambda: True)
    monkeypatch.setattr(server.subprocess, "Popen", popen)
    for options, kernels, device in (({}, "0", "auto"), ({"hub_kernels": True}, "1", "auto")):
        with pytest.raises(Refused):
            server.TransformersServer(tmp_path, **options).start()
        command, env = started.pop()
        assert env["USE_HUB_KERNELS"] == kernels and env["HF_HUB_OFFLINE"] == "1"
        assert command[command.index("--device") + 1] == device
    with pytest.raises(Refused):
        server.TransformersServer(tmp_path, device="cpu").start()
    assert started[0][0][started[0][0].index("--device") + 1] == "cpu"
