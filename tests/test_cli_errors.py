"""What the command line says when the settings are wrong: one line on stderr that names them."""

import json
import os
import subprocess
import sys

import pytest

from baselines import run
from mage_agents.advantages import ESTIMATORS
from mage_agents.prompting import STRATEGIES
from mage_envs.meta.memory import MEMORY_MODES
from mage_envs.meta.presets import TEMPLATE_PRESETS

KUHN = ["--env", "mage/KuhnPoker-v0", "--tasks", "1", "--no-plots"]


def _one_error_line(capsys, code, argv):
    assert run.main(argv) == code
    printed = capsys.readouterr()
    lines = printed.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), printed.err
    return lines[0]


def test_an_unknown_trial_key_is_named_as_a_trial_setting(tmp_path, capsys):
    config = tmp_path / "c.yaml"
    config.write_text("envs: [mage/KuhnPoker-v0]\ntasks: 1\ntrial: {memroy: history_only}\n")
    line = _one_error_line(capsys, 2, ["--config", str(config)])
    assert "trial: unknown trial setting 'memroy'; the trial settings are" in line
    assert "memory" in line and "unexpected keyword" not in line


def test_a_key_of_an_earlier_version_says_where_it_went(tmp_path, capsys):
    config = tmp_path / "c.yaml"
    config.write_text("envs: [mage/KuhnPoker-v0]\nepisodes: 2\n")
    assert "write trial: {num_episodes: N}" in _one_error_line(capsys, 2, ["--config", str(config)])


@pytest.mark.parametrize("twist", ["file", "parent"])
def test_an_out_folder_that_cannot_be_made_is_said_in_words(twist, tmp_path, capsys):
    blocker = tmp_path / "taken"
    blocker.write_text("not a folder")
    out = blocker if twist == "file" else blocker / "run"
    line = _one_error_line(capsys, 2, [*KUHN, "--out", str(out)])
    assert line.startswith(f"error: --out {out}: ") and "Errno" not in line
    assert "is a file, where a folder should be" in line or "a file is in the way" in line


def test_a_training_value_of_the_wrong_type_names_the_field_and_its_type(capsys):
    pytest.importorskip("trl")
    argv = ["train", "--config", "tiny_kuhn_grpo", "--set", "traj_gamma=abc"]
    line = _one_error_line(capsys, 2, argv)
    assert "traj_gamma takes a number, not 'abc'" in line
    argv = ["train", "--config", "tiny_kuhn_grpo", "--set", "trial={num_episodes: two}"]
    assert "num_episodes must be an int >= 1, not 'two'" in _one_error_line(capsys, 2, argv)


def test_an_old_training_config_says_where_the_trial_settings_went(tmp_path, capsys):
    pytest.importorskip("trl")
    old = tmp_path / "old.yaml"
    old.write_text("base: tiny_kuhn_grpo\nnum_episodes: 3\nreflection: true\n")
    line = _one_error_line(capsys, 2, ["train", "--config", str(old)])
    assert "num_episodes, reflection belong under trial: now" in line


def test_a_config_error_is_printed_alone_without_library_warnings(tmp_path):
    pytest.importorskip("trl")
    # TRL warns about a deprecated field before it refuses this group size: the warning is not
    # the user's, and it must not bury the one line that says what to change
    command = [sys.executable, "-m", "baselines.run", "train", "--config", "tiny_kuhn_grpo"]
    command += ["--set", "num_generations=3", "--out", str(tmp_path / "run")]
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "error: generation_batch_size (16) must be divisible by num_generations (3)."
    ]


def test_the_docs_list_every_built_in_name_of_each_registry():
    # a fresh interpreter: other tests (and the docs' recipes) register names of their own
    code = (
        "import json; from mage_agents.advantages import ESTIMATORS; "
        "from mage_agents.prompting import STRATEGIES; "
        "from mage_envs.meta.memory import MEMORY_MODES; "
        "from mage_envs.meta.presets import TEMPLATE_PRESETS; "
        "print(json.dumps([list(r) for r in (ESTIMATORS, STRATEGIES, MEMORY_MODES, "
        "TEMPLATE_PRESETS)]))"
    )
    built_in = json.loads(
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    )
    assert built_in[0] == list(ESTIMATORS)[: len(built_in[0])]  # the same order here
    docs = {
        "advantages.md": [f"`{name}`" for name in built_in[0]],
        "agents.md": [f"`{name}`" for name in built_in[1]],
        "meta_episodes.md": [f"`{name}`" for name in built_in[2]]
        + [f'templates="{name}"' for name in built_in[3]],
    }
    root = os.path.join(os.path.dirname(__file__), "..", "docs")
    for page, names in docs.items():
        text = open(os.path.join(root, page)).read()
        missing = [name for name in names if name not in text]
        assert not missing, f"docs/{page} does not name {missing}"
    assert {*built_in[1]} <= set(STRATEGIES) and {*built_in[2]} <= set(MEMORY_MODES)
    assert {*built_in[3]} <= set(TEMPLATE_PRESETS)


def test_set_null_gives_none_to_a_field_that_takes_it_only():
    pytest.importorskip("trl")
    from baselines.train.flags import set_values

    values = set_values(["max_tokens_per_forward=null", "invalid_action_penalty=~"])
    assert values == {"max_tokens_per_forward": None, "invalid_action_penalty": None}
    with pytest.raises(ValueError, match="learning_rate takes a number, not 'null'"):
        set_values(["learning_rate=null"])
