"""``mage/ShopSim-v0`` and its out-of-domain variant: generated, deterministic, solvable."""

import json

import gymnasium as gym
import pytest

import mage_envs
from mage_envs.shopsim.env import IN_DOMAIN_CATEGORIES, build_shop
from mage_envs.shopsim.generator import SHOP_FILES, generate_shop, write_shop_files
from mage_envs.shopsim.kinds import HELD_OUT_CATEGORIES
from mage_envs.webshop.expert import expert_move


def play_expert(env, seed):
    obs, info = env.reset(seed=seed)
    while True:
        obs, reward, terminated, truncated, info = env.step(expert_move(env))
        if terminated or truncated:
            return reward, info


@pytest.mark.parametrize("env_id", ["mage/ShopSim-v0", "mage/ShopSimOOD-v0"])
def test_the_scripted_expert_solves_generated_tasks(env_id):
    env = gym.make(env_id)
    for seed in range(40):
        reward, info = play_expert(env, seed)
        assert reward == 1.0 and info["success"] and info["turn"] <= 6, (seed, info)


def test_a_random_purchase_is_rarely_perfect():
    env = gym.make("mage/ShopSim-v0")
    scores = []
    for seed in range(30):
        obs, info = env.reset(seed=seed)
        env.step("search[" + info["instruction"] + "]")
        product = env.unwrapped.session.shown_results()[-1]
        env.step(f"click[{env.unwrapped.catalogue.products[product].asin.lower()}]")
        *_, info = env.step("click[buy now]")
        scores.append(info["score"])
    assert sum(s == 1.0 for s in scores) < 10 and 0 < sum(scores) / len(scores) < 1


def test_out_of_domain_goals_come_from_held_out_categories_of_the_same_shop():
    inside = gym.make("mage/ShopSim-v0").unwrapped
    outside = gym.make("mage/ShopSimOOD-v0").unwrapped
    assert {g.category for g in inside.goals} == set(IN_DOMAIN_CATEGORIES)
    assert {g.category for g in outside.goals} == set(HELD_OUT_CATEGORIES)
    assert inside.catalogue is outside.catalogue  # one shop, searched for new kinds of request


def test_train_and_test_splits_partition_the_goals():
    def goals(split):
        return gym.make("mage/ShopSim-v0", split=split).unwrapped.goals

    train, test, every = goals("train"), goals("test"), goals("all")
    assert len(train) + len(test) == len(every) and not set(train) & set(test)
    with pytest.raises(ValueError, match="split must be one of"):
        gym.make("mage/ShopSim-v0", split="dev")
    with pytest.raises(ValueError, match="Unknown categories"):
        gym.make("mage/ShopSim-v0", categories=["cars"])


def test_generation_is_deterministic_by_seed():
    assert json.dumps(generate_shop(7, 60)) == json.dumps(generate_shop(7, 60))
    assert json.dumps(generate_shop(7, 60)) != json.dumps(generate_shop(8, 60))


def test_instructions_are_paraphrased():
    catalogue, goals = build_shop(0, 500)
    openings = {" ".join(g.instruction.split()[:2]) for g in goals}
    assert len(openings) >= 5  # several sentence templates
    assert any(" in " in g.instruction for g in goals) and any(": " in g.instruction for g in goals)
    nouns = {g.instruction for g in goals if "jogging sneakers" in g.instruction}
    assert nouns  # synonyms of the product's noun


def test_search_returns_every_product_for_its_own_title():
    catalogue, _ = build_shop(0, 500)
    for i, product in enumerate(catalogue.products):
        assert catalogue.index.search(product.title)[0] == i, product.title


def test_written_files_run_through_the_real_data_path(tmp_path):
    folder = write_shop_files(tmp_path, seed=3, num_products=48)
    assert sorted(p.name for p in folder.iterdir()) == sorted(SHOP_FILES)
    env = gym.make("mage/WebShop-v0", data_path=folder, split="all")
    assert len(env.unwrapped.catalogue.products) == 48 and len(env.unwrapped.goals) == 96
    reward, info = play_expert(env, 5)
    assert reward == 1.0


def test_same_task_trials_replay_the_goal_and_pass_at_k():
    env = mage_envs.make_trial("mage/ShopSim-v0", num_episodes=3)
    obs, info = env.reset(seed=11)
    instructions, episode = [], -1
    while True:
        if info["phase"] == "play":
            if info["episode_index"] != episode:
                episode = info["episode_index"]
                instructions.append(env.unwrapped.goal.instruction)
            # fail the first two attempts by buying nothing; the third buys as the expert does
            move = expert_move(env) if episode == 2 else "search[anything]"
        else:
            move = "Next time search the exact product name."
        obs, reward, terminated, truncated, info = env.step(move)
        if terminated or truncated:
            break
    assert len(set(instructions)) == 1 and len(instructions) == 3
    assert info["trial"]["successes"] == [False, False, True]
    assert info["trial"]["pass_at_k"] == [0.0, 0.0, 1.0]


@pytest.mark.parametrize("config", ["lamer_webshop", "mage_webshop"])
def test_webshop_configs_run_on_the_generated_shop(config, tmp_path, capsys, monkeypatch):
    from baselines import run

    monkeypatch.delenv("MAGE_WEBSHOP_DATA", raising=False)
    settings = run.load_settings(["--config", config])
    assert settings.env_kwargs["mage/WebShop-v0"] == {
        "catalogue": "small",
        "goals": "synthetic",
        "split": "test",
    }
    assert settings.env_kwargs["*"]["max_steps"] == 12 and settings.tasks == 128
    argv = ["--config", config, "--tasks", "2", "--out", str(tmp_path), "--no-plots"]
    assert run.main(argv + ["--env", "mage/ShopSim-v0"]) == 0
    assert "mage/ShopSim-v0" in capsys.readouterr().out
    assert run.main(argv) == 2  # no data: WebShop is skipped with the files named
    assert "items_shuffle_1000.json" in capsys.readouterr().err


def test_webshop_config_plays_real_format_files(tmp_path, capsys, monkeypatch):
    from baselines import run

    monkeypatch.setenv("MAGE_WEBSHOP_DATA", str(write_shop_files(tmp_path / "data", 1, 60)))
    # the generated files carry human instructions only: play those, on every goal
    argv = ["--config", "lamer_webshop", "--tasks", "3", "--no-plots"]
    argv += ["--env-kwargs", '{"goals": "human", "split": "all"}']
    assert run.main(argv) == 0
    assert "mage/WebShop-v0" in capsys.readouterr().out


def test_no_two_option_values_of_a_product_match_each_other():
    # WebShop's option matching is lenient ("small" matches "x-small"): two such values on one
    # product would let a wrong pick score as the right one.
    from mage_envs.shopsim.generator import generate_shop
    from mage_envs.webshop.reward import options_match

    products, _, _ = generate_shop(seed=3, num_products=300)
    for product in products:
        for name, values in product["customization_options"].items():
            texts = [v["value"] for v in values]
            assert len(texts) >= 2, (product["asin"], name)
            for i, a in enumerate(texts):
                for b in texts[i + 1 :]:
                    assert not options_match(a, b), (product["asin"], name, a, b)


def test_every_option_value_has_a_value_it_can_be_told_apart_from():
    from mage_envs.shopsim.kinds import KINDS
    from mage_envs.webshop.reward import options_match

    for kind in KINDS:
        for name, pool in kind.options.items():
            for value in pool:
                assert any(not options_match(value, other) for other in pool if other != value), (
                    kind.noun,
                    name,
                    value,
                )
