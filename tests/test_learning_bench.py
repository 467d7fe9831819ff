"""The learning benchmark's building blocks: seeds, deals, intervals, settings, the model's init."""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

from baselines.bench.learning import VARIANTS, parse_seeds  # noqa: E402
from baselines.bench.learning_eval import deal_seeds  # noqa: E402
from baselines.bench.learning_report import interval95, report  # noqa: E402
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
    assert interval95([2.0]) == (2.0, 0.0)


@pytest.mark.parametrize(("part", "variant"), [(p, v) for p in VARIANTS for v in VARIANTS[p]])
def test_every_variant_is_a_valid_trainer_config(tmp_path, part, variant):
    settings = {k: v for k, v in VARIANTS[part][variant].items() if k != "init_std"}
    config = MetaRLConfig(output_dir=str(tmp_path), use_cpu=True, report_to=[], **settings)
    assert config.env_id == "mage/KuhnPoker-v0"


def test_the_init_std_redraws_the_weights_reproducibly():
    default, _ = build_tiny_model(seed=1)
    wide, _ = build_tiny_model(seed=1, init_std=0.125)
    again, _ = build_tiny_model(seed=1, init_std=0.125)
    weight = wide.model.layers[0].self_attn.q_proj.weight
    assert float(weight.std()) == pytest.approx(0.125, rel=0.05)
    assert float(default.model.layers[0].self_attn.q_proj.weight.std()) < 0.03
    for p, q in zip(wide.parameters(), again.parameters(), strict=True):
        assert torch.equal(p, q)


def test_the_report_says_when_there_are_no_records(tmp_path):
    assert "No run records" in report(tmp_path, tmp_path / "figures")
