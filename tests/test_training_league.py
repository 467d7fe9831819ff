"""A league of past selves: snapshots saved every K steps, kept last N, met as agent opponents."""

import json
from pathlib import Path
from types import SimpleNamespace

import gymnasium as gym
import numpy as np
import pytest

import baselines  # noqa: F401  (registers the league: opponents the trainer plays)
from mage_agents.rollout import TrialPlanner
from mage_agents.training.league import League, draw_opponents, snapshot_name

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

from mage_agents.tiny_model import build_tiny_model  # noqa: E402
from mage_agents.training import MetaRLTrainer  # noqa: E402
from mage_envs.games.views import render_view  # noqa: E402
from tests.tiny_training import tiny_config  # noqa: E402

KUHN = "mage/KuhnPoker-v0"
CARD = {0: "J", 1: "Q", 2: "K"}


def league_config(tmp_path, **overrides):
    settings = dict(
        estimator="mage",
        env_kwargs={"seat": "random", "max_invalid_actions": 1},
        opponent="mage-kuhn-train",
        action_choice="legal",
        beta=0.0,
        max_steps=3,
        num_tasks=64,
        seed=3,
        league_every=1,
        league_size=2,
        league_weight=1.0,
    )
    return tiny_config(tmp_path, **settings | overrides)


def train(tmp_path, resume=None, **overrides):
    torch.set_num_threads(1)
    model, tokenizer = build_tiny_model(seed=0, init_std=0.125)
    trainer = MetaRLTrainer(model, league_config(tmp_path, **overrides), processing_class=tokenizer)
    trainer.met = []  # the opponents of each training step's trials
    play = trainer.play

    def recorded(plans):
        trajectories = play(plans)
        trainer.met.append([t.result.opponents[0] for t in trajectories])
        return trajectories

    trainer.play = recorded
    trainer.train(resume_from_checkpoint=resume)
    return trainer


def test_uniform_and_winrate_weights_by_hand():
    league = League(
        ["league:/r/league/step-2", "league:/r/league/step-4", "league:/r/league/step-6"],
        {"league:step-2": [6, 0, 8], "league:step-4": [0, 4, 8]},  # step-6 has not played yet
    )
    assert league.weights("uniform") == pytest.approx([1 / 3] * 3)
    # PFSP, Laplace-smoothed, a tie worth half a win: step-4 drew 4 of 8
    raw = [(6 + 1) / (8 + 2), (0 + 2 + 1) / (8 + 2), (0 + 1) / (0 + 2)]
    assert league.weights("winrate") == pytest.approx([w / sum(raw) for w in raw])
    old = League(["league:/r/league/step-2"], {"league:step-2": [6, 8]})  # an older checkpoint
    assert old.tally("league:step-2") == (6, 0, 8)


def test_a_tie_counts_half_a_win_for_each_side():
    def met(*returns):
        trial = SimpleNamespace(returns=list(returns), opponents=["league:step-1"] * len(returns))
        return SimpleNamespace(result=trial)

    league = League(["league:/r/league/step-1", "league:/r/league/step-2"])
    league.count([met(-2.0, 0.0, 1.0), met(0.0)])  # the snapshot won 1, tied 2, lost 1
    assert league.record == {"league:step-1": [1, 2, 4]}
    weights = league.weights("winrate")  # (1 + 2/2 + 1) / (4 + 2) = 1/2, as a new snapshot's
    assert weights == pytest.approx([0.5, 0.5])
    league.count([met(0.0, 0.0)])  # two more ties keep its score at one half
    assert league.weights("winrate") == pytest.approx([0.5, 0.5])


def test_a_league_keeps_the_last_n_and_forgets_the_records_of_dropped_snapshots():
    league = League()
    assert league.add("league:/r/league/step-1", 2) == []
    league.record["league:step-1"] = [1, 2]
    league.add("league:/r/league/step-2", 2)
    assert league.add("league:/r/league/step-3", 2) == ["league:/r/league/step-1"]
    assert [snapshot_name(s) for s in league.specs] == ["league:step-2", "league:step-3"]
    assert league.record == {}
    assert League.from_json(league.to_json()) == league


def test_draws_are_per_group_seeded_and_follow_the_weights():
    plans = [
        TrialPlanner(KUHN, "aggressive").plan(seed, repeat)
        for seed in range(400)
        for repeat in range(2)
    ]
    league = League(["league:/r/league/step-1", "league:/r/league/step-2"], {})
    league.record = {"league:step-1": [8, 0, 8], "league:step-2": [0, 0, 8]}  # weights 0.9, 0.1

    def draw(seed, weight=0.5):
        return draw_opponents(plans, 2, league, weight, "winrate", np.random.default_rng(seed))

    drawn = draw(0)
    assert [p.opponent for p in drawn] == [p.opponent for p in draw(0)]  # its own stream
    assert [p.opponent for p in drawn] != [p.opponent for p in draw(1)]
    groups = [drawn[i : i + 2] for i in range(0, len(drawn), 2)]
    assert all(a.opponent == b.opponent and a.group_id == b.group_id for a, b in groups)
    met = [a.opponent for a, _ in groups]
    assert 0.4 < sum(o != "aggressive" for o in met) / len(met) < 0.6  # league_weight 0.5
    first = sum(o == "league:/r/league/step-1" for o in met)
    assert 0.8 < first / sum(o != "aggressive" for o in met) < 0.97  # winrate weight 0.9
    second = next(p for p in drawn if p.opponent == "league:/r/league/step-2")
    assert "|league:/r/league/step-2|" in second.group_id  # the group is named by its opponent
    assert [p.opponent for p in draw(0, weight=1.0)].count("aggressive") == 0


def test_a_snapshot_loads_as_an_opponent_plays_legal_moves_and_reads_only_its_seat(tmp_path):
    train(tmp_path, max_steps=2)
    folder = tmp_path / "league" / "step-1"
    assert (folder / "config.json").is_file() and (folder / "league.json").is_file()
    env = gym.make(KUHN, opponent=f"league:{folder.resolve()}", seat="random")
    opponent, text_game = env.unwrapped.opponent, env.unwrapped.text_game
    seen = []
    act = opponent.player.act

    def spied(observation, info):
        state = env.unwrapped.state
        seat = info["player"]
        seen.append((observation, info, state.history(), render_view(text_game, state, seat)))
        return act(observation, info)

    opponent.player.act = spied
    for seed in range(12):
        _, info = env.reset(seed=seed)
        assert info["opponent"] == "league:step-1"
        done = False
        while not done:
            _, _, done, _, info = env.step(info["legal_actions"][seed % 2])
        assert not info.get("opponent_forfeit")  # it chose a legal move every time
    assert len(seen) >= 12
    for observation, info, history, view in seen:
        seat = info["player"]
        mine, theirs = CARD[history[seat]], CARD[history[1 - seat]]
        assert observation == view.text and f"Your card: {mine}." in observation
        if mine != theirs:  # the learner's card is never on its page
            assert f"Your card: {theirs}" not in observation and f"'s {theirs}" not in observation
    # greedy: the same page gives the same move, whatever was played before
    assert [act(o, i) for o, i, _, _ in seen] == [act(o, i) for o, i, _, _ in seen]


def test_the_league_grows_every_k_steps_keeps_the_last_n_and_trials_record_the_snapshot(tmp_path):
    trainer = train(tmp_path, max_steps=4, league_every=1, league_size=2)
    assert [snapshot_name(s) for s in trainer.league.specs] == ["league:step-2", "league:step-3"]
    assert sorted(p.name for p in (tmp_path / "league").iterdir()) == ["step-1", "step-2", "step-3"]
    assert set(trainer.met[0]) <= {"conservative", "aggressive", "balanced"}  # no snapshot yet
    assert set(trainer.met[1]) == {"league:step-1"}  # league_weight 1: every group meets one
    assert set(trainer.met[3]) <= {"league:step-2", "league:step-3"}
    # each kept snapshot's record counts the games it played (step-1's left with it)
    for name, (wins, ties, games) in trainer.league.record.items():
        assert games == sum(met.count(name) for met in trainer.met) and 0 <= wins + ties <= games
    every_two = train(tmp_path / "k2", max_steps=4, league_every=2, league_weight=0.5)
    assert [snapshot_name(s) for s in every_two.league.specs] == ["league:step-2"]


def test_bad_league_settings_are_refused_with_the_reason(tmp_path):
    with pytest.raises(ValueError, match="league_weight"):
        league_config(tmp_path, league_weight=0.0)
    with pytest.raises(ValueError, match="league_sampling"):
        league_config(tmp_path, league_sampling="elo")
    with pytest.raises(ValueError, match="league_size"):
        league_config(tmp_path, league_size=0)
    with pytest.raises(ValueError, match="self_play"):
        league_config(tmp_path, opponent="self", env_kwargs={})
    with pytest.raises(ValueError, match="no snapshot there"):
        gym.make(KUHN, opponent=f"league:{tmp_path}")


def test_the_league_state_is_a_json_file_of_each_checkpoint(tmp_path):
    train(tmp_path, max_steps=2, save_strategy="steps", save_steps=2)
    state = json.loads((tmp_path / "checkpoint-2" / "league_state_0.json").read_text())
    assert [snapshot_name(s) for s in state["specs"]] == ["league:step-1"]
    assert SimpleNamespace(**state).record["league:step-1"][2] > 0


def test_the_league_state_names_its_snapshots_relative_to_the_run_folder(tmp_path):
    league = League([f"league:{tmp_path / 'run' / 'league' / 'step-2'}", "league:/elsewhere/x"])
    state = json.loads(league.to_json(tmp_path / "run"))
    assert state["specs"] == ["league:league/step-2", "league:/elsewhere/x"]
    moved = League.from_json(json.dumps(state), tmp_path / "moved")
    assert moved.specs[0] == f"league:{tmp_path / 'moved' / 'league' / 'step-2'}"
    # an earlier version's absolute paths: inside the folder as they are, outside it (the
    # folder moved or was copied since) the snapshot of that name in the folder's league/
    old = {"specs": [f"league:{tmp_path / 'run' / 'league' / 'step-1'}", "league:/a/league/step-3"]}
    read = League.from_json(json.dumps({**old, "record": {}}), tmp_path / "run")
    assert read.specs == [f"league:{tmp_path / 'run' / 'league' / f'step-{n}'}" for n in (1, 3)]


def test_a_moved_run_resumes_and_a_copied_one_from_its_own_snapshots(tmp_path):
    import shutil

    saved = dict(max_steps=3, save_strategy="steps", save_steps=2, league_size=3)
    whole = train(tmp_path / "a", **saved)
    state = json.loads((tmp_path / "a" / "checkpoint-2" / "league_state_0.json").read_text())
    assert state["specs"] == ["league:league/step-1"]  # no absolute path in the run folder
    (tmp_path / "a").rename(tmp_path / "renamed")
    shutil.copytree(tmp_path / "renamed", tmp_path / "copy")
    for folder in ("renamed", "copy"):
        resumed = train(tmp_path / folder, resume=str(tmp_path / folder / "checkpoint-2"), **saved)
        assert resumed.met == whole.met[2:] and resumed.league.record == whole.league.record
        root = str((tmp_path / folder).resolve())
        assert resumed.league.specs and all(
            s.startswith(f"league:{root}/") for s in resumed.league.specs
        )
        shutil.rmtree(tmp_path / folder / "league")  # the copy must not read the original's


def test_a_lora_run_snapshots_its_adapter_which_loads_on_the_base_and_plays(tmp_path):
    peft = pytest.importorskip("peft")
    torch.set_num_threads(1)
    model, tokenizer = build_tiny_model(seed=0, init_std=0.125)
    base = tmp_path / "base"
    model.save_pretrained(base)
    tokenizer.save_pretrained(base)
    lora = peft.LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"])
    config = league_config(tmp_path / "run", max_steps=2)
    MetaRLTrainer(str(base), config, peft_config=lora).train()
    folder = tmp_path / "run" / "league" / "step-1"
    assert (folder / "adapter_config.json").is_file() and not (folder / "config.json").exists()
    assert json.loads((folder / "league.json").read_text())["base_model"] == str(base.resolve())
    env = gym.make(KUHN, opponent=f"league:{folder.resolve()}", seat="first")
    _, info = env.reset(seed=0)
    _, _, _, _, info = env.step(info["legal_actions"][0])
    assert info["opponent"] == "league:step-1" and info["opponent_moves"]
    with pytest.raises(ValueError, match="no local model folder"):
        MetaRLTrainer(
            model, league_config(tmp_path / "x"), processing_class=tokenizer, peft_config=lora
        )


def test_the_gpu_league_config_is_mage_tictactoe_with_a_league_of_adapters(tmp_path):
    from baselines.train.command import _read_config, build_config

    settings = _read_config(Path("league_tictactoe_qwen3_4b"))
    config = build_config(settings | {"out": str(tmp_path), "use_vllm": False, "bf16": False})
    paper = build_config(
        _read_config(Path("mage_tictactoe_qwen3_4b"))
        | {"out": str(tmp_path), "use_vllm": False, "bf16": False}
    )
    assert (config.league_every, config.league_size, config.league_weight) == (160, 4, 0.25)
    assert config.league_sampling == "winrate" and config.opponent == "mage-ttt-train"
    assert (config.max_steps, config.env_kwargs) == (paper.max_steps, paper.env_kwargs)


def test_the_tiny_league_config_trains_from_the_command_line(tmp_path, capsys):
    from baselines.run import main

    out = tmp_path / "run"
    argv = ["train", "--config", "league_kuhn_tiny", "--max-steps", "2", "--out", str(out)]
    argv += ["--set", "league_every=1", "--set", "per_device_train_batch_size=8"]
    argv += ["--set", "save_steps=2", "--set", "evaluation_steps=0"]
    assert main(argv) == 0
    assert (out / "league" / "step-1" / "league.json").is_file()
    state = json.loads((out / "checkpoint-2" / "league_state_0.json").read_text())
    assert [snapshot_name(s) for s in state["specs"]] == ["league:step-1"]
