"""Choosing among legal moves (action_choice="legal"): sampling, weights, a real step, seeds."""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

from mage_agents.base import Reply  # noqa: E402
from mage_agents.prompting import STRATEGIES  # noqa: E402
from mage_agents.tiny_model import build_tiny_model  # noqa: E402
from mage_agents.training import MetaRLTrainer  # noqa: E402
from mage_agents.training.legal import (  # noqa: E402
    LegalMoveAgent,
    LegalMoveBackend,
    MoveChat,
    mixed_choice,
)
from tests.tiny_training import LEGAL_CHOICE, tiny_config  # noqa: E402


def config(tmp_path, **overrides):
    settings = dict(
        estimator="grpo",
        opponent="aggressive",
        **LEGAL_CHOICE,
        max_completion_length=4,
        max_steps=2,
        num_tasks=16,
    )
    return tiny_config(tmp_path, **settings | overrides)


def test_the_floor_keeps_every_move_sampled_and_the_weight_corrects_it():
    torch.manual_seed(0)
    scores = torch.tensor([0.0, -30.0])  # the model all but never picks the second move
    draws = [mixed_choice(scores, 0.2) for _ in range(2000)]
    second = [d for d in draws if d[0] == 1]
    assert 0.07 < len(second) / len(draws) < 0.13  # the floor's 0.2 / 2 moves
    q = float(torch.softmax(scores.double(), 0)[1])
    assert second[0][2] == pytest.approx(q / (0.8 * q + 0.1))  # q / mix
    assert mixed_choice(scores, 0.0)[2] == pytest.approx(1.0)
    assert mixed_choice(torch.tensor([-1.0, 2.0, 0.0]), 0.5, greedy=True)[0] == 1


def test_answers_scored_from_the_prompt_cache_match_a_full_forward_each():
    from types import SimpleNamespace

    model, tokenizer = build_tiny_model(seed=3, init_std=0.125)
    model.train()  # the rollout's mode: scoring must not depend on it, nor leave it changed
    trainer = SimpleNamespace(
        accelerator=SimpleNamespace(unwrap_model=lambda m: m), model=model, args=None
    )
    backend = LegalMoveBackend.__new__(LegalMoveBackend)
    backend.trainer, backend.tokenizer = trainer, tokenizer
    long_prompt, short_prompt = list(range(5, 45)), [7, 8, 9]
    pairs = [(long_prompt, [11]), (long_prompt, [12, 13, 14]), (short_prompt, [15, 16])]
    pairs.append((short_prompt, [11, 12, 13, 14, 15]))
    scored = backend._score(pairs, temperature=0.7)
    assert model.training
    with torch.no_grad():
        for (prompt, answer), got in zip(pairs, scored, strict=True):
            logits = model(input_ids=torch.tensor([prompt + answer])).logits[0] / 0.7
            rows = torch.log_softmax(logits[len(prompt) - 1 : -1], dim=-1)
            want = rows.gather(1, torch.tensor(answer)[:, None])[:, 0].tolist()
            assert got == pytest.approx(want, abs=1e-4)


def test_the_agent_hands_the_legal_moves_to_the_backend_but_not_for_reflections():
    seen = []

    class Backend:
        name = "fake"

        def generate(self, chats):
            seen.extend(chats)
            return [Reply("<action>bet</action>") for _ in chats]

    agent = LegalMoveAgent(Backend(), "terse")
    agent.act("Your card: K.", {"legal_actions": ["check", "bet"], "phase": "play"})
    agent.act("Reflect.", {"legal_actions": [], "phase": "reflect"})
    assert isinstance(seen[0], MoveChat) and seen[0].moves == ("check", "bet")
    assert seen[1].moves == ()


def test_the_terse_strategy_shows_the_observation_alone():
    chat = STRATEGIES["terse"]().chat("Your card: K.", {"legal_actions": ["check"]}, [])
    assert chat == [{"role": "user", "content": "Your card: K."}]


def test_bad_choice_settings_are_refused(tmp_path):
    with pytest.raises(ValueError, match="action_choice"):
        config(tmp_path, action_choice="sample")
    with pytest.raises(ValueError, match="exploration_floor"):
        config(tmp_path, exploration_floor=1.0)


def train_once(tmp_path, seed):
    torch.set_num_threads(1)
    model, tokenizer = build_tiny_model(seed=0)
    trainer = MetaRLTrainer(model, config(tmp_path, seed=seed), processing_class=tokenizer)
    played = []
    play = trainer.play
    trainer.play = lambda plans: played.extend(play(plans)) or played[-len(plans) :]
    trainer.train()
    return trainer, played


def test_a_legal_choice_run_plays_only_legal_template_answers_and_repeats_with_its_seed(
    tmp_path,
):
    trainer, played = train_once(tmp_path / "a", seed=3)
    template = {
        tuple(
            trainer.processing_class(f"<action>{m}</action>", add_special_tokens=False)["input_ids"]
        )
        for m in ("check", "bet", "call", "fold")
    }
    turns = [turn for trajectory in played for turn in trajectory.turns]
    assert turns and not any(turn.invalid for turn in turns)
    assert {tuple(turn.completion_ids) for turn in turns} <= template
    again, played_again = train_once(tmp_path / "b", seed=3)
    assert [t.action for tr in played for t in tr.turns] == [
        t.action for tr in played_again for t in tr.turns
    ]
    for p, q in zip(trainer.model.parameters(), again.model.parameters(), strict=True):
        assert torch.equal(p, q)


def test_adjust_applies_the_weight_and_a_centred_entropy_bonus():
    from dataclasses import replace
    from types import SimpleNamespace

    from mage_agents.rollout import Trajectory
    from mage_agents.training.legal import LegalMoveBackend, MoveSample

    args = SimpleNamespace(move_entropy_bonus=0.5, exploration_correction=True)
    backend = LegalMoveBackend(SimpleNamespace(processing_class=None, args=args), None)
    trajectory = Trajectory.from_rewards([[1.0, 0.0, 0.0]], group_id="g")
    first, second, free = trajectory.turns
    turns = [
        replace(first, prompt_ids=[1], completion_ids=[7]),
        replace(second, prompt_ids=[1], completion_ids=[8]),
        replace(free, prompt_ids=[2], completion_ids=[9]),  # not chosen: left alone
    ]
    answers = ((7,), (8,))
    backend.samples = {
        ((1,), (7,)): MoveSample(0.5, 1.0, answers, 0, 0.5, 0.0),
        ((1,), (8,)): MoveSample(1.0, 3.0, answers, 1, 0.5, 0.0),
    }
    (adjusted,) = backend.adjust([replace(trajectory, turns=turns)], [[2.0, 2.0, 2.0]])
    # mean surprise 2.0: A * w + 0.5 * (s - 2)
    assert adjusted.tolist() == pytest.approx([2.0 * 0.5 - 0.5, 2.0 + 0.5, 2.0])


def test_the_legal_choice_reads_prompts_rendered_with_the_chat_template_kwargs(tmp_path):
    model, tokenizer = build_tiny_model(seed=0)
    # Qwen3's thinking switch, in miniature: TRL's chat_template_kwargs must reach the prompt.
    tokenizer.chat_template += (
        "{% if enable_thinking is defined and not enable_thinking %}<think></think>{% endif %}"
    )
    settings = config(tmp_path, chat_template_kwargs={"enable_thinking": False})
    trainer = MetaRLTrainer(model, settings, processing_class=tokenizer)
    chat = MoveChat([{"role": "user", "content": "Your card: J."}])
    chat.moves = ("check", "bet")
    (reply,) = trainer.backend.generate([chat])
    assert tokenizer.decode(reply.prompt_ids).endswith("<|assistant|><think></think>")


def test_in_a_scoring_pass_a_page_gets_one_move_however_it_is_batched(tmp_path, monkeypatch):
    model, tokenizer = build_tiny_model(seed=0)
    trainer = MetaRLTrainer(model, config(tmp_path), processing_class=tokenizer)
    backend = trainer.backend
    score = backend._score
    calls = []

    def drifting(pairs, temperature):
        # the same page scores a near-tie differently in each batch, as padding can make it
        calls.append(len(pairs))
        rows = score(pairs, temperature)
        return [[row[0] + (-1.0) ** len(calls) * 1e-3, *row[1:]] for row in rows]

    monkeypatch.setattr(backend, "_score", drifting)

    def page(card, moves=("check", "bet")):
        chat = MoveChat([{"role": "user", "content": f"Your card: {card}."}])
        chat.moves = moves
        return chat

    def move(chats):
        return [reply.text for reply in backend.generate(chats)]

    trainer.model.eval()
    with backend.scoring():
        assert backend.greedy
        first = move([page("J"), page("J"), page("Q")])
        assert calls == [4]  # two distinct pages, two answers each
        assert move([page("K"), page("J")])[1] == first[0] and calls == [4, 2]
        assert move([page("J", ("fold", "call"))]) and calls == [4, 2, 2]  # other moves
    assert not backend.greedy and backend._pages is None
    move([page("J"), page("J")])
    assert calls[-1] == 4  # training keeps every row of the batch, as it was
