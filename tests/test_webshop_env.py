"""``mage/WebShop-v0`` over a tiny catalogue that the tests write in WebShop's file format."""

import json

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import mage_envs
from mage_envs.webshop.data import DATA_ENV_VAR, WebShopDataError
from mage_envs.webshop.expert import expert_move
from mage_envs.webshop.goals import SPLITS, shuffled, split_goals

SHIRT = "B000000001"
PRODUCTS = [
    {
        "asin": SHIRT,
        "name": "Men's Cotton Dress Shirt Long Sleeve",
        "category": "fashion",
        "query": "Men Dress Shirts ",
        "product_category": "Clothing, Shoes & Jewelry › Men › Clothing › Shirts",
        "pricing": "$24.99",
        "small_description": ["Machine washable", "Button down collar"],
        "full_description": "A classic shirt for the office.",
        "customization_options": {
            "Color": [{"value": "Navy Blue", "image": None}, {"value": "White", "image": None}],
            "Size": [{"value": "Small"}, {"value": "Medium"}, {"value": "Large"}],
        },
        "images": ["x.jpg"],
    },
    {
        "asin": "B000000002",
        "name": "Slim Fit Dress Shirt for Men",
        "category": "fashion",
        "query": "men dress shirts",
        "product_category": "Clothing, Shoes & Jewelry › Men › Clothing › Shirts",
        "pricing": "$15.00 - $30.00",
        "small_description": "Polyester blend",
        "full_description": "Slim fit.",
        "customization_options": {"Size": [{"value": "M/L"}, {"value": "[2 Pack] Café"}]},
        "images": ["x.jpg"],
    },
    {
        "asin": "B000000003",
        "name": "Organic Green Tea Bags, 100 Count",
        "category": "grocery",
        "query": "green tea",
        "product_category": "Grocery › Beverages › Tea",
        "pricing": "",
        "small_description": ["Caffeine free"],
        "full_description": "Green tea from Japan.",
        "customization_options": None,
        "images": ["x.jpg"],
    },
    {"asin": "nan", "name": "a broken record"},
    {"asin": SHIRT, "name": "a repeated asin"},
]
ATTRIBUTES = {
    SHIRT: {
        "attributes": ["machine washable", "cotton"],
        "instruction": "i want a shirt",
        "instruction_attributes": ["cotton"],
    },
    "B000000002": {},  # no attributes: WebShop's placeholder; no instruction: no synthetic goal
    "B000000003": {"attributes": ["caffeine free", "organic"]},
}
HUMAN = {
    SHIRT: [
        {
            "instruction": "i need a long sleeve cotton dress shirt in navy blue, size medium.",
            "instruction_attributes": ["long sleeve", "cotton"],
            "instruction_options": ["navy blue", "medium"],
        },
        {"instruction": "no attributes: skipped", "instruction_attributes": []},
    ],
    "B000000003": [
        {
            "instruction": "organic green tea that is caffeine free",
            "instruction_attributes": ["organic", "caffeine free"],
            "instruction_options": [],
        }
    ],
}


@pytest.fixture
def data(tmp_path):
    for name, content in [
        ("items_shuffle_1000.json", PRODUCTS),
        ("items_ins_v2_1000.json", ATTRIBUTES),
        ("items_human_ins.json", HUMAN),
    ]:
        (tmp_path / name).write_text(json.dumps(content, ensure_ascii=False))
    return tmp_path


def make(data, **kwargs):
    return gym.make("mage/WebShop-v0", data_path=data, **kwargs)


def goal_of(env, asin):
    return next(i for i, g in enumerate(env.unwrapped.goals) if g.asin == asin)


def test_check_env_on_the_real_file_format(data):
    env = make(data)
    check_env(env.unwrapped, skip_render_check=True)
    assert "mage/WebShop-v0" in gym.registry and "mage/WebShop-v0" in mage_envs.DATA_ENV_IDS


def test_loading_follows_webshop(data):
    shop = make(data).unwrapped
    products = shop.catalogue.products
    assert [p.asin for p in products] == [SHIRT, "B000000002", "B000000003"]
    shirt, slim, tea = products
    assert shirt.options == {"color": ("navy blue", "white"), "size": ("small", "medium", "large")}
    assert slim.options == {"size": ("m | l", "[2 pack] café")}
    assert slim.bullets == ("Polyester blend",)
    assert slim.attributes == ("DUMMY_ATTR",) and shirt.query == "men dress shirts"
    assert tea.price_tag == "$100.0" and shop.catalogue.prices[tea.asin] == 100.0
    assert 15.0 <= shop.catalogue.prices[slim.asin] <= 30.0
    # two human goals (one instruction has no attributes); shuffled with seed 233
    assert len(shop.goals) == 2
    assert all(g.instruction.endswith(" dollars") for g in shop.goals)
    shirt_goal = shop.goals[goal_of(shop, SHIRT)]
    assert shirt_goal.instruction.startswith("i need a long sleeve cotton dress shirt in navy")
    assert shirt_goal.price_upper in (40.0, 50.0, 60.0)


def test_synthetic_goals_are_one_per_option_combination(data):
    shop = make(data, goals="synthetic").unwrapped
    texts = sorted(g.instruction for g in shop.goals)
    assert len(texts) == 6  # 2 colours x 3 sizes; only the shirt has a synthetic instruction
    assert texts[0].startswith("i want a shirt with color: navy blue, and size: large, and price")


def test_the_expert_buys_the_target_with_full_reward(data):
    env = make(data, split="all")
    obs, info = env.reset(options={"goal_index": goal_of(env, SHIRT)})
    moves = []
    while True:
        moves.append(expert_move(env))
        obs, reward, terminated, truncated, info = env.step(moves[-1])
        if terminated or truncated:
            break
    assert moves == [
        "search[Men's Cotton Dress Shirt Long Sleeve]",
        f"click[{SHIRT.lower()}]",
        "click[navy blue]",
        "click[medium]",
        "click[buy now]",
    ]
    assert terminated and reward == 1.0 and info["success"] and info["score"] == 1.0
    assert info["reward_terms"]["r_type"] == 1.0 and info["target_asin"] == SHIRT
    assert "Thank you for shopping with us!" in obs and info["legal_actions"] == []


def test_search_returns_the_target_for_its_own_title(data):
    shop = make(data).unwrapped
    for i, product in enumerate(shop.catalogue.products):
        assert shop.catalogue.index.search(product.title)[0] == i


def test_pages_follow_the_text_protocol(data):
    env = make(data)
    obs, info = env.reset(options={"goal_index": goal_of(env, SHIRT)})
    assert obs.startswith("WebShop [SEP] Instruction: [SEP] i need a long sleeve")
    assert info["legal_actions"][0].startswith("search[i need a long sleeve")
    obs, *_, info = env.step("search[dress shirt]")
    page = obs.splitlines()[0]
    assert "Back to Search [SEP] Page 1 (Total results: 2) [SEP] Next > [SEP] B00000000" in page
    assert info["legal_actions"][:2] == ["click[back to search]", "click[next >]"]
    assert "$15.0 to $30.0" in page and "$24.99" in page
    obs, *_, info = env.step(f"click[{SHIRT.lower()}]")
    assert (
        "< Prev [SEP] color [SEP] navy blue [SEP] white [SEP] size [SEP] small [SEP] medium" in obs
    )
    assert "Price: $24.99 [SEP] Rating: N.A. [SEP] Description [SEP] Features [SEP] Reviews" in obs
    assert "Selected options: none yet." in obs
    obs, *_, info = env.step("Let me pick the colour. click[Navy Blue]")
    assert "Selected options: color: navy blue." in obs
    assert info["selected_options"] == {"color": "navy blue"}
    obs, *_ = env.step("click[features]")
    assert obs.splitlines()[0].endswith("< Prev [SEP] Machine washable [SEP] Button down collar")
    obs, *_ = env.step("click[< prev]")
    assert "Selected options: color: navy blue." in obs  # the selection is kept
    obs, *_, info = env.step("click[< prev]")
    assert info["page"] == "results" and info["selected_options"] == {}
    obs, *_, info = env.step("click[next >]")
    assert "Page 2 (Total results: 2) [SEP] < Prev [SEP] Next >" in obs
    obs, *_, info = env.step("click[back to search]")
    assert info["page"] == "search"


def test_values_with_brackets_and_non_ascii_are_clicked_as_shown(data):
    env = make(data)
    env.reset(seed=0)
    env.step("search[slim fit]")
    obs, *_, info = env.step("click[b000000002]")
    assert "[2 pack] caf?" in obs and "click[[2 pack] caf?]" in info["legal_actions"]
    for move in ["click[[2 pack] caf?]", "I pick CLICK[ [2 Pack]  Café ] now"]:
        obs, reward, terminated, truncated, info = env.step(move)
        assert not info["invalid_action"]
        assert info["selected_options"] == {"size": "[2 pack] café"}


def test_invalid_moves_give_feedback_and_change_nothing(data):
    env = make(data, invalid_action_penalty=0.5, reward_scale=2)
    obs, info = env.reset(seed=0)
    for move in ["buy it now", "click[buy now]", "search[]", "click[b000000001]", ""]:
        before = info
        obs, reward, terminated, truncated, info = env.step(move)
        assert info["invalid_action"] and reward == -1.0 and not terminated
        assert obs.startswith("Invalid move: ") and "Nothing changed." in obs.splitlines()[0]
        assert info["legal_actions"] == before["legal_actions"] and info["page"] == "search"


def test_fifteen_steps_by_default_then_truncated(data):
    env = make(data)
    obs, info = env.reset(seed=0)
    for step in range(15):
        obs, reward, terminated, truncated, info = env.step("search[tea]")
        assert truncated == (step == 14) and not terminated and reward == 0.0
    assert "Out of steps (15)" in obs and info["legal_actions"] == []
    with pytest.raises(RuntimeError):
        env.step("search[tea]")


def test_success_reward_mode_pays_only_a_perfect_purchase(data):
    env = make(data, reward_mode="success", reward_scale=10)
    env.reset(options={"goal_index": goal_of(env, SHIRT)})
    for move in ["search[dress shirt]", f"click[{SHIRT.lower()}]", "click[white]"]:
        env.step(move)
    *_, reward, terminated, _, info = env.step("click[buy now]")
    assert terminated and 0 < info["score"] < 1 and reward == 0.0
    env.reset(options={"goal_index": goal_of(env, SHIRT)})
    while True:
        *_, reward, terminated, truncated, info = env.step(expert_move(env))
        if terminated or truncated:
            break
    assert reward == 10.0


def test_same_seed_same_goal_and_pages(data):
    def trace(seed):
        env = make(data)
        obs, info = env.reset(seed=seed)
        out = [obs]
        for move in ["search[shirt]", "click[b000000002]", "click[m | l]", "click[buy now]"]:
            out.append(env.step(move))
        return repr(out)

    assert trace(3) == trace(3)
    assert {trace(s) for s in range(4)} != {trace(0)}


def test_same_task_trials_replay_the_goal(data):
    env = mage_envs.make_trial("mage/WebShop-v0", num_episodes=3, data_path=data, split="all")
    obs, info = env.reset(seed=1)
    instructions = set()
    while True:
        if info["phase"] == "play":
            instructions.add(env.unwrapped.goal.instruction)
            obs, reward, terminated, truncated, info = env.step("search[]")
            obs, reward, terminated, truncated, info = env.step("click[nothing]")
            for _ in range(13):
                obs, reward, terminated, truncated, info = env.step("search[tea]")
        else:
            obs, reward, terminated, truncated, info = env.step("I will search better.")
        if terminated or truncated:
            break
    assert len(instructions) == 1 and len(info["trial"]["returns"]) == 3


def test_missing_data_names_the_files(tmp_path, monkeypatch):
    monkeypatch.delenv(DATA_ENV_VAR, raising=False)
    with pytest.raises(WebShopDataError, match="items_shuffle_1000.json.*items_human_ins.json"):
        gym.make("mage/WebShop-v0")
    (tmp_path / "items_shuffle_1000.json").write_text("[]")
    with pytest.raises(WebShopDataError, match="missing: items_ins_v2_1000.json, items_human_"):
        gym.make("mage/WebShop-v0", data_path=tmp_path)
    with pytest.raises(WebShopDataError, match=r"missing: items_shuffle\.json, items_ins_v2\.json"):
        gym.make("mage/WebShop-v0", data_path=tmp_path, catalogue="all", goals="synthetic")
    with pytest.raises(ValueError, match="catalogue must be one of"):
        gym.make("mage/WebShop-v0", data_path=tmp_path, catalogue="medium")


def test_the_environment_variable_and_a_webshop_checkout(data, tmp_path, monkeypatch):
    monkeypatch.setenv(DATA_ENV_VAR, str(data))
    assert len(gym.make("mage/WebShop-v0").unwrapped.goals) == 2
    checkout = data.parent / "checkout"
    (checkout / "data").mkdir(parents=True)
    for file in data.iterdir():
        (checkout / "data" / file.name).write_bytes(file.read_bytes())
    assert len(make(checkout).unwrapped.catalogue.products) == 3


def test_splits_are_the_original_index_ranges():
    goals = list(range(1600))
    assert SPLITS["test"] == (0, 500) and SPLITS["eval"] == (500, 1500)
    assert split_goals(goals, "test") == goals[:500]
    assert split_goals(goals, "eval") == goals[500:1500]
    assert split_goals(goals, "train") == goals[1500:]
    assert split_goals(goals, "train_and_eval") == goals[500:]  # LaMer's and MAGE's training goals
    with pytest.raises(ValueError, match="is empty"):
        split_goals(goals[:400], "eval")
    assert shuffled(list(range(10))) == shuffled(list(range(10))) != list(range(10))


def test_a_bad_file_is_a_clear_error(data):
    (data / "items_human_ins.json").write_text("{not json")
    with pytest.raises(ValueError, match="is not valid JSON"):
        make(data)


def test_num_products_must_be_a_positive_count(data):
    assert len(make(data, num_products=2).unwrapped.catalogue.products) == 2
    for bad in (-1, 0, 1.5, True):  # -1 kept all but the last product, silently
        with pytest.raises(ValueError, match="num_products must be None or a positive"):
            make(data, num_products=bad)


def test_the_done_page_prints_the_score_as_webshop_does(data):
    # WebShop's done page renders the reward float as Python prints it: "1.0", "0.8333333333333334"
    env = make(data)
    env.reset(options={"goal_index": goal_of(env, SHIRT)})
    for move in ["search[dress shirt]", f"click[{SHIRT.lower()}]", "click[navy blue]"]:
        env.step(move)
    obs, *_, info = env.step("click[buy now]")
    assert 0 < info["score"] < 1
    assert obs.splitlines()[0].endswith(f"Your score (min 0.0, max 1.0) [SEP] {info['score']}")
    env.reset(options={"goal_index": goal_of(env, SHIRT)})
    while not env.unwrapped.session.done:
        obs, *_ = env.step(expert_move(env))
    assert obs.splitlines()[0].endswith("Your score (min 0.0, max 1.0) [SEP] 1.0")


def _standard_mat_folder(tmp_path):
    """One yoga mat whose size value holds "tan" ("6mm standard"), with a synthetic goal."""
    mat = {
        **PRODUCTS[2],
        "asin": "B000000004",
        "name": "Yoga Mat Non Slip Exercise Mat",
        "customization_options": {
            "Color": [{"value": "Grey"}],
            "Size": [{"value": "6mm Standard"}],
        },
    }
    attributes = {
        "B000000004": {
            "attributes": ["non slip"],
            "instruction": "i want a non slip yoga mat",
            "instruction_attributes": ["non slip"],
        }
    }
    for name, content in [(P_FILE, [mat]), (A_FILE, attributes), (H_FILE, {})]:
        (tmp_path / name).write_text(json.dumps(content))
    return tmp_path


P_FILE, A_FILE, H_FILE = "items_shuffle_1000.json", "items_ins_v2_1000.json", "items_human_ins.json"


@pytest.mark.parametrize(("reward", "score"), [(None, 0.75), ("original", 0.75), ("fixed", 1.0)])
def test_the_default_reward_is_webshops_rule_and_fixed_is_opt_in(tmp_path, reward, score):
    # WebShop matches a synthetic goal's option as its (name, value) pair: the bought
    # "6mm standard" maps to the colour "tan" and no longer matches; the fixed rule compares values
    kwargs = {} if reward is None else {"reward": reward}
    env = gym.make("mage/WebShop-v0", data_path=_standard_mat_folder(tmp_path),
                   goals="synthetic", split="all", **kwargs)  # fmt: skip
    env.reset(seed=0)
    while not env.unwrapped.session.done:
        *_, info = env.step(expert_move(env))
    assert info["selected_options"] == {"color": "grey", "size": "6mm standard"}
    assert info["score"] == score and info["reward_terms"]["rule"] == (reward or "original")
    with pytest.raises(ValueError, match="reward must be one of"):
        gym.make("mage/ShopSim-v0", reward="lenient")


def test_the_reward_rule_is_recorded_in_the_results(tmp_path):
    from baselines import run

    out = tmp_path / "out"
    common = ["--env", "mage/ShopSim-v0", "--agent", "random", "--tasks", "2", "--episodes", "1"]
    assert run.main([*common, "--out", str(out), "--env-kwargs", '{"reward": "fixed"}']) == 0
    assert run.main([*common, "--out", str(out)]) == 0
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    fixed = [r for r in records if r["env_kwargs"].get("reward") == "fixed"]
    default = [r for r in records if "reward" not in r["env_kwargs"]]
    assert len(fixed) == len(default) == 2  # the second run played its own trials
    assert not {r["trial_id"] for r in fixed} & {r["trial_id"] for r in default}
