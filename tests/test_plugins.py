"""A user's package registers an estimator, a memory mode, a strategy and an opponent: the names
then work from the command line, to evaluate (in worker processes too) and to train."""

import json
import sys
import uuid

import pytest

from baselines import run
from mage_envs import plugins

PLUGIN = '''
"""A user's package: it registers one name of each vocabulary when it is imported."""
import numpy as np

from mage_agents.advantages import register_estimator
from mage_agents.prompting import ZeroShot, register_strategy
from mage_envs.meta.memory import register_memory_mode
from mage_envs.opponents import PolicyOpponent, register_opponent


class CheckCall(PolicyOpponent):
    name = "plug-check-call"

    def action_probabilities(self, view):
        facing_bet = "b" in view.information_state[1:]
        return {0: float(not facing_bet), 1: float(facing_bet)}


def sign(trajectories, *, scale=1.0):
    return [np.full(len(t.turns), scale * np.sign(t.result.final_return)) for t in trajectories]


class Blunt(ZeroShot):
    name = "plug-blunt"
    play_instruction = "Move now: <action>MOVE</action>."


def outcomes(attempt):
    return [f"Earlier, attempt {attempt.number}: {attempt.outcome}."]


register_opponent(
    "plug-check-call",
    lambda game: CheckCall(),
    supports=lambda game: game.get_type().short_name == "kuhn_poker",
    games="Kuhn",
    description="checks, calls every bet",
)
register_estimator("plug-sign", sign, lambda config: {"scale": config.omega})
register_strategy("plug-blunt", Blunt)
register_memory_mode("plug-outcomes", outcomes)
'''

KUHN = ["--env", "mage/KuhnPoker-v0", "--opponent", "plug-check-call"]


@pytest.fixture
def plugin(tmp_path, monkeypatch, scratch_registries):
    """The plug-in's module name, importable here and in spawned processes; forgotten after."""
    name = f"my_plugin_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(plugins, "_LOADED", [])
    yield name
    sys.modules.pop(name, None)


def _records(out):
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_the_names_of_a_plugin_are_unknown_without_it(capsys):
    assert run.main([*KUHN, "--tasks", "1"]) == 2
    assert "Unknown opponent 'plug-check-call'" in capsys.readouterr().err


def test_a_plugins_names_evaluate_from_the_command_line(plugin, tmp_path, capsys):
    from mage_agents.rollout import pages, read_transcripts

    out = tmp_path / "out"
    argv = ["--import", plugin, *KUHN, "--memory", "plug-outcomes", "--agent", "tiny"]
    argv += ["--strategy", "plug-blunt", "--tasks", "2", "--out", str(out), "--no-plots"]
    assert run.main(argv) == 0
    records = _records(out)
    assert {r["opponent"] for r in records} == {"plug-check-call"}
    assert {r["agent"] for r in records} == {"tiny/plug-blunt"}
    later = [
        page
        for t in read_transcripts(out / "transcripts.jsonl.gz")
        for turn, page in zip(t["turns"], pages(t), strict=True)
        if turn["episode"] == 1 and turn["phase"] == "play"
    ]
    assert later and all("Earlier, attempt 1: " in obs for obs in later)  # the plug-in's memory


def test_worker_processes_import_the_plugins_too(plugin, tmp_path):
    out = tmp_path / "out"
    argv = ["--import", plugin, *KUHN, "--memory", "plug-outcomes", "--workers", "2"]
    assert run.main([*argv, "--tasks", "4", "--out", str(out), "--no-plots"]) == 0
    assert len(_records(out)) == 4 and not any(r["incomplete"] for r in _records(out))


def test_a_plugins_names_train_from_the_command_line(plugin, tmp_path, capsys):
    pytest.importorskip("trl")
    out = tmp_path / "run"
    argv = ["train", "--import", plugin, "--config", "tiny_kuhn_grpo", "--out", str(out)]
    argv += ["--estimator", "plug-sign", "--opponent", "plug-check-call", "--omega", "2"]
    argv += ["--strategy", "plug-blunt", "--max-steps", "1", "--no-plots"]
    argv += ["--trial", "{num_episodes: 2, reflection: true, memory: plug-outcomes}"]
    assert run.main(argv) == 0, capsys.readouterr().err
    assert "step 1/1" in capsys.readouterr().out
    import yaml

    saved = yaml.safe_load((out / "config.yaml").read_text())
    assert saved["estimator"] == "plug-sign" and saved["strategy"] == "plug-blunt"
    assert saved["trial"] == {"num_episodes": 2, "reflection": True, "memory": "plug-outcomes"}


def test_a_plugin_that_cannot_be_imported_is_one_line(capsys):
    assert run.main(["--import", "no_such_plugin_26", "--tasks", "1"]) == 2
    err = capsys.readouterr().err
    assert "--import no_such_plugin_26: the module cannot be imported" in err
    assert "Traceback" not in err
