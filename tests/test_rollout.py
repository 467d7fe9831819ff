"""The rollout engine and its types: groups, JSON round trips, ids and log-probs, env workers."""

import pytest
import torch

from mage_agents import CallableAgent, RandomLegalAgent, Reply
from mage_agents.local_model import LocalModelBackend
from mage_agents.prompting import LLMAgent
from mage_agents.rollout import (
    LocalEnvs,
    Trajectory,
    Turn,
    collect,
    load_trajectories,
    make_trial_env,
    plan_groups,
    rollout,
    save_trajectories,
)
from mage_agents.tiny_model import build_tiny_model
from mage_envs.meta import TrialResult

torch.set_num_threads(1)

KUHN = "mage/KuhnPoker-v0"


def _plans(**kwargs):
    return plan_groups(KUHN, [0, 1], group_size=3, opponent="aggressive", **kwargs)


def _without_timing(trajectories):
    return [{**t.to_dict(), "wall_s": None, "latency_s": None} for t in trajectories]


def test_groups_share_the_task_seed_and_the_opponent_draw():
    plans = plan_groups(KUHN, [4, 5], group_size=3, opponent="mage-kuhn-train")
    assert [p.group_id for p in plans].count(plans[0].group_id) == 3
    assert len({p.seed for p in plans}) == 6 and len({p.trial_id for p in plans}) == 6
    trajectories = collect(plans, RandomLegalAgent, batch_size=4)
    by_group = {}
    for t in trajectories:
        by_group.setdefault(t.group_id, set()).add((t.result.opponents[0], t.turns[0].anchor))
    assert all(len(seen) == 1 for seen in by_group.values())  # same opponent, same deal


def test_plan_groups_rejects_bad_sizes():
    with pytest.raises(ValueError, match="group_size"):
        plan_groups(KUHN, [0], group_size=0)
    with pytest.raises(ValueError, match="non-negative"):
        plan_groups(KUHN, [-1], group_size=2)


def test_plan_groups_keeps_trials_of_different_settings_apart():
    # the same task seed with other env or trial settings is another task: plans of two calls
    # put together must not share a group (nor trial ids)
    plain = plan_groups(KUHN, [0], group_size=2, opponent="aggressive")
    other = plan_groups(KUHN, [0], 2, opponent="aggressive", env_kwargs={"max_invalid_actions": 1})
    seats = plan_groups(KUHN, [0], 2, opponent="aggressive", trial={"seat_rotation": "trial"})
    groups = {p.group_id for p in plain + other + seats}
    assert len(groups) == 3 and len({p.trial_id for p in plain + other + seats}) == 6
    assert plain[0].group_id == "mage/KuhnPoker-v0|aggressive|task0"  # defaults: the short id
    again = plan_groups(KUHN, [0], 2, opponent="aggressive", env_kwargs={"max_invalid_actions": 1})
    assert [p.group_id for p in again] == [p.group_id for p in other]  # deterministic


def test_collect_refuses_repeated_trial_ids():
    plans = plan_groups(KUHN, [0], group_size=2, opponent="aggressive")
    with pytest.raises(ValueError, match="trial id .*task0.* twice"):
        collect(plans + plans, RandomLegalAgent)


def test_plan_groups_rejects_a_repeated_task_seed():
    # a repeated seed gave the same trial ids and the same agent seeds: identical trials,
    # counted twice in their group, and collect() could not tell them apart
    with pytest.raises(ValueError, match="task seed 3 .*twice"):
        plan_groups(KUHN, [3, 4, 3], group_size=2)


def test_turns_record_phases_rewards_and_anchors():
    (trajectory,) = collect(plan_groups(KUHN, [3], 1, opponent="aggressive"), RandomLegalAgent)
    turns = trajectory.turns
    phases = [t.phase for t in turns]
    assert phases.count("reflect") == 2 and phases[0] == "play" and phases[-1] == "play"
    plays = trajectory.play_turns
    assert sum(t.reward for t in plays) == sum(trajectory.result.returns)
    assert {t.episode for t in plays} == {0, 1, 2}
    assert all(t.anchor and "Attempt" not in t.anchor for t in plays)
    assert all(t.anchor is None and t.move is None for t in turns if t.phase == "reflect")
    assert all(t.move in ("check", "bet", "fold", "call") for t in plays)
    assert plays[0].anchor == next(t for t in plays if t.episode == 1).anchor  # same deal
    assert trajectory.final_info["payoff"] == trajectory.result.final_return


def test_a_move_written_as_an_alias_is_recorded_by_its_legal_name():
    # Kuhn poker reads "pass" for check or fold and "bet" for call, as the env does: the same
    # move under two spellings must not count as two moves in the actions and their diversity
    def alias(observation, info):
        return "<reflection>ok</reflection>" if info.get("phase") == "reflect" else "pass"

    plans = plan_groups(KUHN, [3], 1, opponent="always-bet")
    (trajectory,) = collect(plans, lambda: CallableAgent(alias))
    plays = trajectory.play_turns
    assert plays and all(t.action == "pass" and not t.invalid for t in plays)
    assert {t.move for t in plays} <= {"check", "fold"}


def test_same_seeds_same_trajectories_and_batching_does_not_matter():
    one = collect(_plans(), RandomLegalAgent, batch_size=1)
    four = collect(_plans(), RandomLegalAgent, batch_size=4)
    assert _without_timing(one) == _without_timing(four)


def test_an_env_reused_across_trials_plays_what_a_new_env_plays():
    built = []

    def make_env(plan):
        built.append(plan.trial_id)
        return make_trial_env(plan)

    plans = plan_groups(KUHN, [0, 1, 2], group_size=2, opponent="mage-kuhn-train", seed=5)
    reused = collect(plans, RandomLegalAgent, batch_size=2, make_env=make_env)
    assert len(built) == 2  # one env per slot, reset with each trial's task seed
    fresh = [collect([plan], RandomLegalAgent)[0] for plan in plans]  # a new env for each
    assert _without_timing(reused) == _without_timing(fresh)
    other = plan_groups(KUHN, [0], group_size=2, opponent="random")
    collect([*plans[:2], *other], RandomLegalAgent, batch_size=2, make_env=make_env)
    assert len(built) == 6  # another opponent: other envs


def test_a_local_pool_keeps_the_envs_of_the_settings_it_played_for_the_next_rollout():
    built = []

    def make_env(plan):
        built.append(plan.opponent)
        return make_trial_env(plan)

    plans = plan_groups(KUHN, [0, 1, 2], group_size=2, opponent="mage-kuhn-train")
    other = plan_groups(KUHN, [0], group_size=2, opponent="random")
    pool = LocalEnvs()
    for step, expected in ((plans[:2], 2), (plans[2:4], 2), (other, 4), (plans[4:], 6)):
        collect(step, RandomLegalAgent, batch_size=2, make_env=make_env, env_workers=pool)
        assert len(built) == expected  # a step skipped closes the envs of its settings
    pool.close()


def test_trajectories_survive_a_json_round_trip(tmp_path):
    trajectories = collect(_plans(), RandomLegalAgent, batch_size=2)
    path = tmp_path / "rollout.jsonl"
    assert save_trajectories(path, trajectories) == 6
    again = load_trajectories(path)
    assert again == trajectories
    assert [t.to_json() for t in again] == [t.to_json() for t in trajectories]


def test_loading_a_bad_line_names_it(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"trial_id": "x"}\n')
    with pytest.raises(ValueError, match="bad.jsonl:1"):
        load_trajectories(path)
    with pytest.raises(ValueError, match="no field"):
        Turn.from_dict({"trial_id": "t", "nope": 1})


def test_a_failed_call_is_kept_on_its_turn():
    def flaky(observation, info):
        return Reply("", error="HTTP 500") if info.get("phase") == "play" else "none"

    plans = plan_groups(KUHN, [0], 1, opponent="aggressive", trial={"num_episodes": 1})
    (trajectory,) = collect(plans, lambda: CallableAgent(flaky))
    assert trajectory.turns[0].error == "HTTP 500" and trajectory.turns[0].invalid
    assert trajectory.turns[0].move == "<invalid>"


def test_the_step_limit_stops_a_trial_with_the_episodes_so_far():
    plans = plan_groups(KUHN, [0], 1, opponent="aggressive")
    (trajectory,) = collect(plans, RandomLegalAgent, max_steps=3)
    assert trajectory.step_limit and len(trajectory.turns) == 3
    assert len(trajectory.result.returns) >= 1


def test_a_step_limit_inside_the_first_episode_counts_it_unsolved_with_its_rewards_so_far():
    # Every answer is invalid, so the first Sokoban episode never ends on its own within 2 steps.
    plans = plan_groups("mage/Sokoban-v0", [0], 1)

    def agent():
        return CallableAgent(lambda observation, info: "no move here")

    (trajectory,) = collect(plans, agent, max_steps=2)
    assert trajectory.step_limit and len(trajectory.turns) == 2
    rewards = sum(t.reward for t in trajectory.turns)
    assert trajectory.result.returns == [rewards] and trajectory.result.successes == [False]
    assert trajectory.result.pass_at_k == [0.0, 0.0, 0.0]


def test_not_a_trial_env_is_a_clear_error():
    import gymnasium as gym

    plans = plan_groups("FrozenLake-v1", [0], 1)
    with pytest.raises(RuntimeError, match="MetaEpisodeWrapper"):
        list(rollout(plans, RandomLegalAgent, make_env=lambda p: _OneStep(gym.make(p.env_id))))


class _OneStep:
    """A bare env (no trial wrapper) that ends after one step."""

    def __init__(self, env):
        self.env = env

    def reset(self, seed=None):
        return "obs", {"legal_actions": ["a"]}

    def step(self, action):
        return "obs", 0.0, True, False, {}

    def close(self):
        self.env.close()


@pytest.fixture(scope="module")
def tiny():
    return build_tiny_model()


def test_ids_and_logprobs_equal_a_forward_pass(tiny):
    model, tokenizer = tiny
    backend = LocalModelBackend(
        model, tokenizer, max_new_tokens=6, batch_size=6, temperature=0.7, return_ids=True
    )
    trajectories = collect(_plans(), lambda: LLMAgent(backend, "zero-shot"), batch_size=6)
    turns = [t for traj in trajectories for t in traj.turns]
    lengths = {len(t.prompt_ids) for t in turns}
    assert len(lengths) > 1  # some rows were left-padded in their batch
    for turn in turns[:12]:
        assert turn.completion_ids and len(turn.logprobs) == len(turn.completion_ids)
        assert len(turn.prompt_ids) == turn.prompt_tokens
        ids = torch.tensor([turn.prompt_ids + turn.completion_ids])
        with torch.no_grad():
            logits = model(ids).logits[0].float() / 0.7
        logp = torch.log_softmax(logits, dim=-1)
        start = len(turn.prompt_ids) - 1
        expected = [logp[start + k, tok].item() for k, tok in enumerate(turn.completion_ids)]
        assert turn.logprobs == pytest.approx(expected, abs=1e-4)
        assert tokenizer.decode(turn.prompt_ids).startswith("<|system|>")


def test_ids_are_not_returned_unless_asked(tiny):
    model, tokenizer = tiny
    backend = LocalModelBackend(model, tokenizer, max_new_tokens=4, stop_strings=())
    (reply,) = backend.generate([[{"role": "user", "content": "Your card: K."}]])
    assert reply.prompt_ids is None and reply.logprobs is None


def test_env_workers_give_the_same_bytes_in_the_same_order():
    plans = _plans()
    here = list(rollout(plans, RandomLegalAgent, batch_size=4))
    there = list(rollout(plans, RandomLegalAgent, batch_size=4, env_workers=2))
    assert [t.trial_id for t in here] == [t.trial_id for t in there]
    assert _without_timing(here) == _without_timing(there)


def test_env_workers_refuse_agents_that_read_the_env():
    from mage_agents import PolicyAgent

    plans = plan_groups(KUHN, [0], 1, opponent="aggressive", trial={"num_episodes": 1})
    with pytest.raises(TypeError, match="env_workers"):
        list(rollout(plans, lambda: PolicyAgent("aggressive"), env_workers=1))


def test_a_trajectory_is_plain_json():
    turn = Turn("t", "g", 0, 0, "play", "obs", "bet", "bet", anchor="s", reward=1.0)
    trajectory = Trajectory("t", "g", [turn], TrialResult.from_episodes([1.0], [True], 1))
    assert Trajectory.from_json(trajectory.to_json()).turns[0].anchor_key == "s"


def test_a_worker_pool_outlives_rollouts_and_abandoned_ones():
    from mage_agents.rollout import WorkerEnvs

    plans = _plans()
    here = _without_timing(collect(plans, RandomLegalAgent, batch_size=4))
    with WorkerEnvs(2) as pool:
        first = collect(plans, RandomLegalAgent, batch_size=4, env_workers=pool)
        abandoned = rollout(plans, RandomLegalAgent, batch_size=4, env_workers=pool)
        next(abandoned)
        abandoned.close()  # its envs are closed, the workers stay
        second = collect(plans, RandomLegalAgent, batch_size=4, env_workers=pool)
    assert _without_timing(first) == here == _without_timing(second)
    with pytest.raises(RuntimeError, match="closed"):
        collect(plans, RandomLegalAgent, env_workers=pool)


def test_a_worker_builds_the_schemes_its_parent_registered_by_name(monkeypatch):
    # a spawned worker imports only what unpickling needs: a scheme registered by name in the
    # parent (as `import baselines` registers agent: and league:) must be registered there too
    from mage_envs.opponents import registry

    monkeypatch.setitem(
        registry.OPPONENT_SCHEMES, "replay", "mage_envs.opponents.scripted:scripted_opponent"
    )
    plans = plan_groups(KUHN, [0, 1], group_size=2, opponent="replay:1.0.1")
    here = _without_timing(collect(plans, RandomLegalAgent, batch_size=4))
    there = _without_timing(collect(plans, RandomLegalAgent, batch_size=4, env_workers=1))
    assert there == here
    names = {turn["opponent"] for t in here for turn in t["turns"]}
    assert names == {"script:1.0.1"}  # the scripted opponent, under the name it gives itself


def test_an_env_error_in_a_worker_is_reported():
    plans = plan_groups("mage/NoSuchGame-v0", [0], 1)
    with pytest.raises(RuntimeError, match="worker process: .*NoSuchGame"):
        collect(plans, RandomLegalAgent, env_workers=1)


@pytest.mark.parametrize("reflection", [True, False])
def test_an_invalid_answer_that_ends_an_episode_is_flagged(reflection):
    # one invalid answer ends an episode; without reflections the next episode starts at once,
    # and the info after the step is the new episode's: the flag must still reach the turn
    plans = plan_groups(
        KUHN,
        [0],
        group_size=1,
        opponent="aggressive",
        env_kwargs={"max_invalid_actions": 1},
        trial={"num_episodes": 2, "reflection": reflection},
    )
    (trajectory,) = collect(plans, lambda: CallableAgent(lambda obs, info: "nonsense"))
    plays = trajectory.play_turns
    assert [(t.episode, t.invalid, t.move) for t in plays] == [
        (0, True, "<invalid>"),
        (1, True, "<invalid>"),
    ]
    assert sum(t.invalid for t in plays) == trajectory.result.invalid_actions == 2


def test_a_trial_that_ends_on_its_last_allowed_step_was_not_stopped():
    plans = plan_groups(KUHN, [2], group_size=1, opponent="aggressive")
    (free,) = collect(plans, RandomLegalAgent)
    (tight,) = collect(plans, RandomLegalAgent, max_steps=len(free.turns))
    assert not free.step_limit and not tight.step_limit
    assert _without_timing([tight]) == _without_timing([free])
