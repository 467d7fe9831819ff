"""The learning benchmark's building blocks: seeds, deals, intervals, settings, the model's init."""

import json
import math
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

from benchmarks.learning import VARIANTS, parse_seeds  # noqa: E402
from benchmarks.learning_eval import deal_seeds  # noqa: E402
from benchmarks.learning_report import interval95, report  # noqa: E402
from mage_agents.tiny_model import build_tiny_model  # noqa: E402
from mage_agents.training import MetaRLConfig  # noqa: E402


def test_seeds_parse_ranges_and_lists_and_refuse_nonsense():
    assert parse_seeds("0-3,7") == [0, 1, 2, 3, 7]
    with pytest.raises(ValueError, match="Seeds"):
        parse_seeds("a-b")


def test_one_seed_per_kuhn_deal():
    import mage_envs

    seeds = deal_seeds()
    env = mage_envs.make_trial("mage/KuhnPoker-v0", num_episodes=1, opponent="aggressive")
    deals = set()
    for seed in seeds:
        env.reset(seed=seed)
        deals.add(tuple(env.unwrapped.state.history()[:2]))
    env.close()
    assert len(seeds) == 6 and len(deals) == 6  # every ordered pair of different cards


def test_interval_is_a_student_t_interval():
    mean, half = interval95([0.0, 1.0])
    assert mean == 0.5 and half == pytest.approx(12.706 * 0.5)
    assert interval95([2.0]) == (2.0, math.inf)  # one seed has no interval


@pytest.mark.parametrize(("part", "variant"), [(p, v) for p in VARIANTS for v in VARIANTS[p]])
def test_every_variant_is_a_valid_trainer_config(tmp_path, part, variant):
    own = (
        "init_std",
        "tokenizer_pages",
        "tokenizer_trial",
    )  # the model's, not the trainer's
    settings = {k: v for k, v in VARIANTS[part][variant].items() if k not in own}
    config = MetaRLConfig(output_dir=str(tmp_path), use_cpu=True, report_to=[], **settings)
    env = "mage/Minesweeper-v0" if part == "minesweeper" else "mage/KuhnPoker-v0"
    assert config.env_id == env


def test_the_init_std_redraws_the_weights_reproducibly():
    default, _ = build_tiny_model(seed=1)
    wide, _ = build_tiny_model(seed=1, init_std=0.125)
    again, _ = build_tiny_model(seed=1, init_std=0.125)
    weight = wide.model.layers[0].self_attn.q_proj.weight
    assert float(weight.std()) == pytest.approx(0.125, rel=0.05)
    assert float(default.model.layers[0].self_attn.q_proj.weight.std()) < 0.03
    for p, q in zip(wide.parameters(), again.parameters(), strict=True):
        assert torch.equal(p, q)


def test_a_report_of_no_records_fails_with_the_reason(tmp_path, capsys):
    from benchmarks.learning import main
    from benchmarks.learning_records import NoRecords

    with pytest.raises(NoRecords, match="No run records under"):
        report(tmp_path, tmp_path / "figures")
    with pytest.raises(SystemExit) as exit_:
        main(["report", "--out", str(tmp_path / "empty")])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("learning report: No run records under") and err.count("\n") == 1
    (tmp_path / "robustness" / "default").mkdir(parents=True)
    (tmp_path / "robustness" / "default" / "seed0.json").write_text("[1, 2]")
    with pytest.raises(SystemExit):
        main(["keep", "--out", str(tmp_path), "--to", str(tmp_path / "kept")])
    assert "seed0.json: not a run record" in capsys.readouterr().err


def test_report_with_no_folder_reports_every_committed_set_beside_its_page(
    tmp_path, monkeypatch, capsys
):
    import shutil

    from benchmarks.learning import main

    root = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        main(["report"])
    assert exit_.value.code == 2 and "No committed record sets" in capsys.readouterr().err
    for folder in ("learning", "learning-150"):
        target = tmp_path / "docs" / folder / "records" / "robustness" / "default"
        target.mkdir(parents=True)
        shutil.copy(root / "docs/learning/records/robustness/default/seed0.json", target)
    main(["report"])
    out = capsys.readouterr().out
    assert out.index("## docs/learning/records") < out.index("## docs/learning-150/records")
    assert out.count("| default | 1/1 |") == 2
    for folder in ("learning", "learning-150"):
        assert (tmp_path / "docs" / folder / "robustness.png").stat().st_size > 0


def test_information_deals_are_where_only_the_opponents_card_tells_the_best_plan():
    from benchmarks.learning_deals import deal_gains, information_deals, plan_returns

    # aggressive bets after a check: a Queen calls a Jack (+2) but must fold to a King (-1)
    assert plan_returns("aggressive")["QJ"][("check", "call")] == 2.0
    assert information_deals("aggressive") == {"QJ": 2.0, "QK": -1.0}
    # conservative folds a Queen to a bet: a Jack bluffs a Queen (+1), folds to a King (-1)
    assert information_deals("conservative") == {"JQ": 1.0, "JK": -1.0}
    flat = {deal: [0.0, 0.0] for deal in ("JQ", "JK", "QJ", "QK", "KJ", "KQ")}
    gains = deal_gains(
        {"aggressive": {**flat, "QJ": [-1.0, 2.0], "QK": [-2.0, -2.0], "KQ": [2.0, 1.0]}}
    )
    assert gains["info_gain"] == pytest.approx(1.5)  # (+3 on QJ, 0 on QK) / 2
    assert gains["other_gain"] == pytest.approx(-0.25)  # -1 on KQ over the 4 others
    assert (gains["info_best_first"], gains["info_best_final"]) == (0.0, 0.5)


def test_mine_repeats_counts_later_attempts_that_open_a_cell_known_to_be_a_mine():
    from types import SimpleNamespace

    from benchmarks.learning_pass import mine_repeats

    def turn(episode, move, reward):
        fields = {"episode": episode, "move": move, "reward": reward, "invalid": False}
        return SimpleNamespace(phase="play", **fields)

    lost_then_repeated = [turn(0, "(1, 1)", 0.5), turn(0, "(2, 2)", -0.1), turn(1, "(2, 2)", -0.1)]
    avoided = [*lost_then_repeated[:2], turn(1, "(3, 3)", 0.5), turn(1, "(1, 2)", -0.1)]
    avoided.append(turn(2, "(1, 2)", -0.1))  # the mine attempt 2 found
    assert mine_repeats(SimpleNamespace(turns=lost_then_repeated)) == (1, 1, 1)
    assert mine_repeats(SimpleNamespace(turns=avoided)) == (1, 2, 2)
    ran_out = [turn(0, "(1, 1)", 0.5), turn(1, "(1, 1)", 0.5), turn(1, "(2, 2)", -0.1)]
    assert mine_repeats(SimpleNamespace(turns=ran_out)) == (0, 1, 0)  # no mine known yet


def test_env_pages_shorten_the_tiny_tokenizers_minesweeper_prompts():
    from benchmarks.learning import env_pages

    pages = env_pages(VARIANTS["minesweeper"]["lamer"], 3)
    for variant in ("grpo", "lamer-board"):  # one tokenizer for the part
        assert pages == env_pages(VARIANTS["minesweeper"][variant], 3)
    _, plain = build_tiny_model(seed=0)
    _, tuned = build_tiny_model(seed=0, extra_corpus=pages)
    assert len(tuned(pages[-1])["input_ids"]) < 0.8 * len(plain(pages[-1])["input_ids"])


def test_pass_scores_play_three_attempts_greedily_and_repeat_exactly(tmp_path):
    from benchmarks.learning import VARIANTS, build_trainer
    from benchmarks.learning_pass import pass_scores

    settings = dict(VARIANTS["minesweeper"]["grpo"])  # trains single attempts, scored on three
    trainer = build_trainer(settings, 0, tmp_path, [])
    boards = (100_000, 100_001, 100_002, 100_003)
    first, again = pass_scores(trainer, boards), pass_scores(trainer, boards)
    assert first == again
    one, two, three = first["pass_at_k"]
    assert 0.0 <= one <= two <= three <= 1.0
    # an unsolved board plays 2 later attempts, one solved at once none (trials stop at a win)
    unsolved, solved_at_once = round((1 - three) * len(boards)), round(one * len(boards))
    assert 2 * unsolved <= first["later_attempts"] <= 2 * (len(boards) - solved_at_once)


def _record(part, variant, seed, budget, points, settings=None):
    curve = [
        {"step": 5 * k, "cpu_s": 10.0 * k, "wall_s": 10.0 * k, **p} for k, p in enumerate(points)
    ]
    record = {"part": part, "variant": variant, "seed": seed, "budget_cpu_s": budget}
    record |= {"settings": settings or {"per_device_train_batch_size": 32}, "curve": curve}
    record["final_returns"] = curve[-1].get("returns")
    return record | {"steps": curve[-1]["step"], "cpu_s": curve[-1]["cpu_s"], "wall_s": 1.0}


def _write(runs, folder, name=None):
    import json

    for r in runs:
        r["variant"] = name or r["variant"]  # a run records its --name as its variant
        path = folder / r["part"] / r["variant"]
        path.mkdir(parents=True, exist_ok=True)
        (path / f"seed{r['seed']}.json").write_text(json.dumps(r))


def test_the_report_compares_at_equal_steps_on_the_late_scores(tmp_path):
    flat = {s: [0.0, 0.0, 0.0] for s in ("conservative", "aggressive", "balanced")}
    gain = {s: [0.0, 0.0, 1.0] for s in flat}
    runs = [
        _record("signature", "short", s, 120, [{"returns": flat}] * 3 + [{"returns": gain}] * 3)
        for s in (0, 1)
    ]
    deals = {s: {d: [0.0, 0.0, 0.0] for d in ("JQ", "JK", "QJ", "QK", "KJ", "KQ")} for s in flat}
    deals["aggressive"]["QJ"] = [-1.0, 0.0, 2.0]  # +3 on one of the six information deals
    held = {**gain, "cfr-argmax": [-1.0, 0.0, 0.5]}  # the held-out opponent, not a style
    late = {"returns": held, "deals": deals}
    runs += [
        _record("signature", "long", s, 300, [{"returns": flat}] * 6 + [late] * 5) for s in (0, 1)
    ]
    runs += [
        _record("signature", "grpo", s, 300, [{"returns": {**flat, "cfr-argmax": [0.0] * 3}}] * 11)
        for s in (0, 1)
    ]
    _write(runs, tmp_path / "runs")
    text = report(tmp_path / "runs", tmp_path / "figures")
    # each budget's last common step and its half: 10 and 25 (120 s), 25 and 50 (300 s)
    assert [line for line in text.splitlines() if line.startswith("At step")] == [
        "At step 10 (320 trials per run):",
        "At step 25 (800 trials per run):",
        "At step 50 (1600 trials per run):",
    ]
    at25, at50 = text.split("At step 25 (800 trials per run):")[1].split("At step 50")
    # a run's figure is the mean of its last three scores up to the step
    assert (
        "| short | 2 | balanced | +0.000 ± 0.000 | +1.000 ± 0.000 | +1.000 ± 0.000 | shown |"
        in at25
    )
    assert (
        "| long | 2 | balanced | +0.000 ± 0.000 | +0.000 ± 0.000 | +0.000 ± 0.000 | not shown |"
        in at25
    )
    assert "| long | 2 | balanced | +0.000 ± 0.000 | +1.000 ± 0.000 |" in at50
    assert "| long | 2 | population | +0.000 ± 0.000 | +1.000 ± 0.000 |" in at50
    assert "| long | 2 | cfr-argmax (held out) | -1.000 ± 0.000 | +0.500 ± 0.000 |" in at50
    assert "short" not in at50.split("`")[0]
    # against GRPO, seed by seed; the per-deal gains count the training styles only
    assert "| long | 2 | cfr-argmax (held out) | +0.500 ± 0.000 | shown |" in at50
    assert "| long | 2 | +0.500 ± 0.000 | +0.000 ± 0.000 | +0.500 ± 0.000 | shown |" in at50
    assert (tmp_path / "figures" / "signature-step50.png").is_file()


def test_the_report_scores_pass_at_k_and_its_verdicts(tmp_path, monkeypatch):
    from benchmarks import learning_report_pass

    settings = VARIANTS["minesweeper"]["lamer"]
    point = {"pass_at_k": [0.25, 0.5, 0.75], "mine_repeats": 0.5, "known_mine_repeats": 1.0}
    scores = [point, {**point, "known_mine_repeats": 0.5}, {**point, "known_mine_repeats": 0.5}]
    scores.append({"pass_at_k": [0.5, 0.5, 0.5], "mine_repeats": 0.0, "known_mine_repeats": 0.5})
    runs = [_record("minesweeper", "lamer", s, 900, scores, settings) for s in (0, 1)]
    flat = [{"pass_at_k": [0.25, 0.25, 0.25], "mine_repeats": 1.0, "known_mine_repeats": 1.0}] * 4
    runs += [_record("minesweeper", "grpo", s, 900, flat, settings) for s in (0, 1)]
    _write(runs, tmp_path / "runs")
    monkeypatch.setattr(learning_report_pass, "REFERENCE_TRIALS", 1)
    text = report(tmp_path / "runs", tmp_path / "figures")
    # the last three scores' mean, (0.25 + 0.25 + 0.5) / 3 for pass@1
    assert "| lamer | 2 | 15 | 0.333 ± 0.000 | 0.500 ± 0.000 | 0.667 ± 0.000 |" in text
    assert "| 1.00 ± 0.00, 0.50 ± 0.00 |" in text  # known-mine repeats: first score, late
    retry = (
        "| lamer | 2 | pass@3 - pass@1, minus grpo's (paired by seed) | +0.333 ± 0.000 | shown |"
    )
    assert retry in text
    assert (
        "| lamer | 2 | known-mine repeats, first score minus late | +0.500 ± 0.000 | shown |"
        in text
    )
    assert (
        "| grpo | 2 | known-mine repeats, first score minus late | +0.000 ± 0.000 | not shown |"
        in text
    )
    assert (tmp_path / "figures" / "minesweeper.png").is_file()
    assert "minus lamer's" not in text  # no rendering variant recorded yet
    # a rendering variant is also compared with the variant it changes, paired by seed
    board = [{**p, "known_mine_repeats": 0.25} for p in scores]
    _write(
        [_record("minesweeper", "lamer-board", s, 900, board, settings) for s in (0, 1)],
        tmp_path / "runs",
    )
    text = report(tmp_path / "runs", tmp_path / "figures")
    rows = [line for line in text.splitlines() if line.startswith("| lamer-board | 2 |")]
    retry = "pass@3 - pass@1, minus lamer's (paired by seed) | +0.000 ± 0.000 | not shown |"
    known = "known-mine repeats, lamer's minus this one's (paired) | +0.250 ± 0.000 | shown |"
    assert f"| lamer-board | 2 | {retry}" in rows and f"| lamer-board | 2 | {known}" in rows


def test_a_retry_gain_bought_by_a_lower_pass_at_1_is_confounded():
    from benchmarks.learning_report_pass import comparisons

    def runs(variant, pass_at_k):
        point = {"pass_at_k": pass_at_k, "mine_repeats": 0.5, "known_mine_repeats": 0.5}
        return [_record("minesweeper", variant, s, 900, [point] * 3) for s in (0, 1, 2)]

    # lamer retries to the same pass@3 from a far lower pass@1: no memory needed to gain more
    rows = comparisons(
        {"lamer": runs("lamer", [0.1, 0.3, 0.5]), "grpo": runs("grpo", [0.4, 0.45, 0.5])},
        reference=[0.125, 0.2, 0.263],
    )
    vs_grpo = next(r for r in rows if r.startswith("| lamer") and "minus grpo's" in r)
    assert "| +0.300 ± 0.000 | confounded: its pass@1 is lower by 0.300" in vs_grpo
    # grpo's pass@1 is above random's and its gain below: less headroom, not a verdict either
    vs_random = next(r for r in rows if r.startswith("| grpo") and "random legal's" in r)
    assert "confounded: its pass@1 is higher by" in vs_random
    # the same gain from the same pass@1 is judged on its interval
    rows = comparisons(
        {"lamer": runs("lamer", [0.4, 0.6, 0.8]), "grpo": runs("grpo", [0.4, 0.45, 0.5])},
        reference=[0.125, 0.2, 0.263],
    )
    assert "| +0.300 ± 0.000 | shown |" in next(r for r in rows if "minus grpo's" in r)


def test_a_final_episode_above_grpos_from_a_better_start_is_confounded(tmp_path):
    styles = ("conservative", "aggressive", "balanced")
    # mage is better in every episode alike: a better policy, no gain within the trial
    better = {s: [0.5, 0.5, 0.5] for s in styles}
    flat = {s: [0.0, 0.0, 0.0] for s in styles}
    runs = [_record("signature", "mage", s, 300, [{"returns": better}] * 4) for s in (0, 1)]
    runs += [_record("signature", "grpo", s, 300, [{"returns": flat}] * 4) for s in (0, 1)]
    _write(runs, tmp_path / "runs")
    text = report(tmp_path / "runs", tmp_path / "figures")
    # the paired table: final episode minus grpo's, then the within-trial gain minus grpo's
    prefix = "| mage | 2 | balanced | +0.500 ± 0.000 | confounded"
    row = next(line for line in text.splitlines() if line.startswith(prefix))
    assert "confounded: its first episode is above grpo's too, by 0.500" in row
    assert row.endswith("| +0.000 ± 0.000 | not shown |")  # the within-trial gain is GRPO's


def test_named_runs_stay_apart_and_pair_with_the_baseline_of_their_budget(tmp_path):
    styles = ("conservative", "aggressive", "balanced")
    flat = {s: [0.0, 0.0, 0.0] for s in styles}
    gain = {s: [0.0, 0.0, 1.0] for s in styles}
    worse = {s: [-1.0, -1.0, -1.0] for s in styles}
    folder = tmp_path / "runs"
    # the variants at 2 steps, and again under other names at 4 steps: the same variant fields
    _write([_record("signature", "mage", s, 300, [{"returns": flat}] * 3) for s in (0, 1)], folder)
    _write([_record("signature", "grpo", s, 300, [{"returns": worse}] * 3) for s in (0, 1)], folder)
    long = [_record("signature", "mage", s, 600, [{"returns": gain}] * 5) for s in (0, 1)]
    _write(long, folder, "mage-long")
    base = [_record("signature", "grpo", s, 600, [{"returns": flat}] * 5) for s in (0, 1)]
    _write(base, folder, "grpo-long")
    # the same budget under another setting: mage-long pairs with its twin grpo-long still
    others = [_record("signature", "grpo", s, 600, [{"returns": worse}] * 5) for s in (0, 1)]
    _write(others, folder, "grpo-fast")
    cosine = [_record("signature", "mage", s, 600, [{"returns": worse}] * 5) for s in (0, 1)]
    _write(cosine, folder, "mage-long-cosine")
    text = report(folder, tmp_path / "figures")
    at20 = text.split("At step 20 (640 trials per run):")[1].split("`mage")[0]
    # paired with grpo-long (final +1 - 0), not with grpo's other budget (+1 - -1)
    assert "| mage-long (against grpo-long) | 2 | balanced | +1.000 ± 0.000 | shown |" in at20
    assert "| mage | 2 |" not in at20  # 2 steps, not scored at step 20
    at10 = text.split("At step 10 (320 trials per run):")[1].split("At step 20")[0]
    assert "| mage | 2 | balanced | +1.000 ± 0.000 | confounded" in at10  # 0 - -1, its budget
    assert "`mage-long` (returns averaged" in text and "`grpo-long` (returns averaged" in text
    # no grpo-long-cosine or grpo-cosine, and grpo has no step 20: nothing to pair it with
    assert "| mage-long-cosine | 2 | balanced |" in at20
    assert "mage-long-cosine (against" not in at20


def test_a_held_out_opponent_that_scores_as_a_style_is_named_so(tmp_path):
    from benchmarks.learning_report_signature import held_out_twin

    styles = {s: [0.0, 0.0, 0.0] for s in ("conservative", "aggressive", "balanced")}
    styles["conservative"] = [-1.0, 0.0, 1.0]
    same = {**styles, "cfr-argmax": [-1.0, 0.0, 1.0]}
    runs = [_record("signature", "mage", s, 300, [{"returns": same}] * 3) for s in (0, 1)]
    assert held_out_twin({"mage": runs}) == "conservative"
    _write(runs, tmp_path / "runs")
    text = report(tmp_path / "runs", tmp_path / "figures")
    assert "cfr-argmax scored the same as conservative in every episode" in text
    runs[1]["curve"][2]["returns"] = {**same, "cfr-argmax": [-1.0, 0.0, 0.5]}
    assert held_out_twin({"mage": runs}) is None


def test_the_report_shows_the_sampled_opponent_only_where_every_run_scored_it(tmp_path):
    styles = {s: [0.0, 0.0, 0.0] for s in ("conservative", "aggressive", "balanced")}
    scored = {**styles, "cfr-argmax": [0.0] * 3, "cfr": [-0.25, 0.0, 0.25]}
    runs = [_record("signature", "mage", s, 300, [{"returns": scored}] * 3) for s in (0, 1)]
    _write(runs, tmp_path / "runs")
    text = report(tmp_path / "runs", tmp_path / "figures")
    assert "| mage | 2 | cfr (held out, sampled) | -0.250 ± 0.000 | +0.250 ± 0.000 |" in text
    assert "| 0 | +0.000 | +0.000 | +0.000, +0.000 | -0.250, +0.250 |" in text
    # above the best a hand can do against CFR without knowing the card: only memory gets there
    from benchmarks.learning_report_signature import blind_best

    assert blind_best() == pytest.approx(-1 / 18, abs=2e-3)  # CFR's 1000 iterations, near Nash
    above = f"| mage | 2 | {0.25 - blind_best():+.3f} ± 0.000 | shown |"
    assert above in text
    older = _record(
        "signature", "mage", 2, 300, [{"returns": {**styles, "cfr-argmax": [0.0] * 3}}] * 3
    )
    _write([older], tmp_path / "runs")
    text = report(tmp_path / "runs", tmp_path / "figures")
    assert "| mage | 3 | cfr-argmax (held out) |" in text and "sampled)" not in text


def test_set_reads_exponent_numbers_as_numbers_and_names_as_names():
    from benchmarks.learning import _overrides

    got = _overrides(["learning_rate=1e-3", "beta=2.5E+1", "opponent=aggressive", "name=1e"])
    assert got == {"learning_rate": 0.001, "beta": 25.0, "opponent": "aggressive", "name": "1e"}
    assert _overrides(["trial={num_episodes: 1}"]) == {"trial": {"num_episodes": 1}}
    with pytest.raises(SystemExit, match="KEY=VALUE"):
        _overrides(["learning_rate"])


def test_keep_commits_compact_records_that_report_as_the_run_folder_does(tmp_path):
    from benchmarks.learning_records import keep

    run = tmp_path / "runs" / "robustness" / "default"
    (run / "trainer-seed0").mkdir(parents=True)  # a run's trainer folder: not a record
    curve = [{"step": 0, "cpu_s": 0.0, "value": -1 / 3}, {"step": 5, "cpu_s": 4.2, "value": 1 / 3}]
    record = {"part": "robustness", "variant": "default", "seed": 0, "curve": curve}
    record |= {"target_step": 5, "target_cpu_s": 4.2, "target_wall_s": 9.0, "best": 1 / 3}
    record |= {"final": 1 / 3, "steps": 5, "cpu_s": 4.2, "wall_s": 9.0, "finished": True}
    (run / "seed0.json").write_text(json.dumps(record, indent=1))
    kept = keep(tmp_path / "runs", tmp_path / "records")
    assert kept == [tmp_path / "records" / "robustness" / "default" / "seed0.json"]
    assert kept[0].read_text().count("\n") == 1 and json.loads(kept[0].read_text()) == record
    table = report(tmp_path / "records", tmp_path / "figures")
    assert table == report(tmp_path / "runs", tmp_path / "figures")
    assert "| default | 1/1 | 4, 4 | 0 |" in table
