"""``train --check`` refuses what the run would die on here, one line each, exit 2.

Each refusal names the setting and what it accepts; what would run is printed before them. The
machine's part (logging integrations, vLLM, hub kernels) is refused by ``train`` too, before the
model loads. The check never builds weights.
"""

import pytest

pytest.importorskip("torch")
pytest.importorskip("trl")

import baselines.train.refusals as refusals  # noqa: E402
from baselines.run import main  # noqa: E402
from baselines.train import command as train  # noqa: E402
from baselines.train.check import check  # noqa: E402
from baselines.train.command import load_train_settings  # noqa: E402
from mage_agents.tiny_model import build_tiny_model  # noqa: E402

TINY = ["train", "--config", "tiny_kuhn_robust", "--check"]


def _refused(capsys, argv):
    """The exit code and the error lines of ``argv``."""
    code = main(argv)
    err = capsys.readouterr().err
    return code, [line for line in err.splitlines() if line.startswith("error:")]


@pytest.fixture
def nothing_installed(monkeypatch):
    """No logging integration, no vLLM, no kernels package: as a bare machine."""
    import transformers.integrations as integrations

    monkeypatch.setattr(integrations, "get_available_reporting_integrations", lambda: [])
    find = refusals.importlib.util.find_spec
    installed = {"vllm": False, "kernels": False}  # a test installs one by setting it True

    def find_spec(name, *args):
        if name in installed:
            return object() if installed[name] else None
        return find(name, *args)

    monkeypatch.setattr(refusals.importlib.util, "find_spec", find_spec)
    return installed


def test_a_tiny_config_passes(capsys):
    assert _refused(capsys, TINY) == (0, [])


def test_report_to_an_integration_that_is_not_installed_is_refused(
    capsys, nothing_installed, monkeypatch, tmp_path
):
    code, lines = _refused(capsys, [*TINY, "--report-to", "tensorboard"])
    assert code == 2 and len(lines) == 1
    assert "report_to: tensorboard is not installed here: give report_to: []" in lines[0]
    import transformers.integrations as integrations

    installed = ["tensorboard"]
    monkeypatch.setattr(integrations, "get_available_reporting_integrations", lambda: installed)
    assert _refused(capsys, [*TINY, "--report-to", "tensorboard"]) == (0, [])
    monkeypatch.setattr(integrations, "get_available_reporting_integrations", lambda: [])

    def never(settings):
        raise AssertionError("the model loaded before the refusal")

    monkeypatch.setattr(train, "load_model", never)
    run = ["train", "--config", "tiny_kuhn_robust", "--out", str(tmp_path / "r")]
    code, lines = _refused(capsys, [*run, "--report-to", "tensorboard"])
    assert code == 2 and "report_to: tensorboard" in lines[0]


def test_the_ready_configs_log_to_what_the_project_installs(nothing_installed):
    for name in ("lamer_sokoban_qwen3_4b", "lamer_webshop_qwen3_4b", "lamer_alfworld_qwen3_4b"):
        report = check(load_train_settings(["--config", name]))
        assert not any(r.startswith("report_to") for r in report.refusals), name


def test_a_model_that_is_not_there_or_not_whole_is_refused(capsys, tmp_path):
    code, lines = _refused(capsys, [*TINY, "--model", "/nonexistent"])
    assert code == 2 and lines == [lines[0]]
    assert "model: /nonexistent is not on this machine: give a folder saved" in lines[0]
    folder = tmp_path / "model"
    build_tiny_model(folder)
    assert _refused(capsys, [*TINY, "--model", str(folder)]) == (0, [])
    (folder / "model.safetensors").unlink()
    code, lines = _refused(capsys, [*TINY, "--model", str(folder)])
    assert code == 2 and "holds config.json but no weights" in lines[0]


def test_a_tokenizer_without_a_chat_template_is_refused(capsys, tmp_path):
    model, tokenizer = build_tiny_model()
    tokenizer.chat_template = None
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    code, lines = _refused(capsys, [*TINY, "--model", str(tmp_path)])
    assert code == 2 and len(lines) == 1 and "tokenizer has no chat template" in lines[0]


def test_vllm_asked_for_but_not_installed_is_refused(capsys, nothing_installed):
    code, lines = _refused(capsys, [*TINY, "--set", "use_vllm=true"])
    assert code == 2 and len(lines) == 1
    assert "use_vllm: true needs vLLM, which is not installed here" in lines[0]
    nothing_installed["vllm"] = True
    assert _refused(capsys, [*TINY, "--set", "use_vllm=true"]) == (0, [])


def test_hub_kernels_that_cannot_be_had_are_refused(capsys, nothing_installed, monkeypatch):
    code, lines = _refused(capsys, [*TINY, "--set", "hub_kernels=true"])
    assert code == 2 and "hub_kernels: true needs the kernels package" in lines[0]
    nothing_installed["kernels"] = True
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    gpu = ["--set", "hub_kernels=true", "--set", "use_cpu=false"]
    code, lines = _refused(capsys, [*TINY, *gpu])
    assert code == 2 and "this machine is offline (HF_HUB_OFFLINE=1)" in lines[0]
    cpu = ["--set", "hub_kernels=true", "--set", "use_cpu=true"]
    assert _refused(capsys, [*TINY, *cpu]) == (0, [])  # on the CPU nothing is fetched
    monkeypatch.delenv("HF_HUB_OFFLINE")
    assert _refused(capsys, [*TINY, *gpu]) == (0, [])


def test_an_empty_config_is_refused(capsys, tmp_path):
    for text in ("", "{}\n", "# only a comment\n"):
        empty = tmp_path / "empty.yaml"
        empty.write_text(text)
        code, lines = _refused(capsys, ["train", "--config", str(empty), "--check"])
        assert code == 2 and "the training config is empty" in lines[0], text


def test_the_check_of_a_large_tiny_model_builds_no_weights(monkeypatch, tmp_path):
    import transformers

    def never(self, *args, **kwargs):
        raise AssertionError("the check built weights")

    monkeypatch.setattr(transformers.LlamaForCausalLM, "__init__", never)
    settings = load_train_settings(["--config", "tiny_kuhn_robust"])
    settings["tiny_model"] = {"layers": 40, "hidden": 4096}
    report = check(settings)
    weights = report.figures["memory"]["weights"]  # float32 on this machine: 4 bytes each
    assert 6.5e9 < weights / 4 < 7.0e9 and report.refusals == []
    settings["tiny_model"] = {"layers": 2, "width": 64}
    with pytest.raises(ValueError, match="tiny_model: .*width.*it takes layers, hidden"):
        check(settings)
