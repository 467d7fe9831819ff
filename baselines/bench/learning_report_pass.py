"""Tables and curves of the learning benchmark's part 3: pass@k on Minesweeper, LaMer vs GRPO."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from baselines.bench.learning_common import ATTEMPTS, EVAL_SEEDS, interval95, plot_pairs

__all__ = ["minesweeper", "random_reference", "late_scores"]

LATE = 3
"""Scores averaged for a run's figure: the greedy policy jumps between scores from one step to
the next (its argmax flips), so one score is a noisy reading of where the run ended."""


def late_scores(run: dict[str, Any]) -> dict[str, Any]:
    """Return a run's pass@k and mine repeats, averaged over its last :data:`LATE` scores."""
    points = run["curve"][-LATE:]
    n = len(points)
    return {
        "pass_at_k": [sum(p["pass_at_k"][k] for p in points) / n for k in range(ATTEMPTS)],
        "mine_repeats": sum(p["mine_repeats"] for p in points) / n,
        "steps": [p["step"] for p in points],
    }


REFERENCE_TRIALS = 50
"""Random trials per board of the reference rows."""


def random_reference(
    settings: dict[str, Any], avoid_known: bool, trials: int | None = None
) -> list[float]:
    """Return pass@1..3 on the scored boards of a uniform random legal policy.

    Args:
        settings: A part-3 variant's settings (env and trial shape).
        avoid_known: Never open a cell an earlier attempt lost on (the least use of memory).
        trials: Random trials per board (default :data:`REFERENCE_TRIALS`).
    """
    import mage_envs

    env = mage_envs.make_trial(
        settings["env_id"],
        num_episodes=ATTEMPTS,
        same_task=True,
        stop_on_success=True,
        reflection=False,
        **settings["env_kwargs"],
    )
    rng, passes = random.Random(0), []
    try:
        for seed in EVAL_SEEDS:
            for _ in range(trials or REFERENCE_TRIALS):
                _, info = env.reset(seed=seed)
                known: set[str] = set()
                while "trial" not in info:
                    moves = [m for m in info["legal_actions"] if m not in known] or list(
                        info["legal_actions"]
                    )
                    move = rng.choice(moves)
                    _, _, _, _, info = env.step(move)
                    # a finished episode's own info moves to episode_info when the next starts
                    if avoid_known and info.get("episode_info", info).get("mine_hit"):
                        known.add(move)
                passes.append(info["trial"]["pass_at_k"])
    finally:
        env.close()
    return [sum(p[k] for p in passes) / len(passes) for k in range(ATTEMPTS)]


def minesweeper(variants: dict[str, list[dict]], figures: Path) -> list[str]:
    """Return part 3's Markdown (summary with 95% intervals, per-seed tables); draw its curves.

    A run's figures are its :func:`late_scores`; the intervals are over seeds.
    """
    lines = [
        "| policy | seeds | steps | pass@1 | pass@2 | pass@3 | pass@3 - pass@1 | mine repeats |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, runs in sorted(variants.items()):
        finals = [late_scores(r) for r in runs]
        cells = [interval95([p["pass_at_k"][k] for p in finals]) for k in range(ATTEMPTS)]
        gain = interval95([p["pass_at_k"][-1] - p["pass_at_k"][0] for p in finals])
        repeats = interval95([p["mine_repeats"] for p in finals])
        steps = sorted({r["steps"] for r in runs})
        lines.append(
            f"| {name} | {len(runs)} | {', '.join(map(str, steps))} | "
            + " | ".join(f"{m:.3f} ± {h:.3f}" for m, h in [*cells, gain, repeats])
            + " |"
        )
    settings = next(iter(variants.values()))[0]["settings"]
    for label, avoid in (("random legal", False), ("random legal, avoiding known mines", True)):
        ref = random_reference(settings, avoid)
        lines.append(
            f"| {label} (reference) | - | - | "
            + " | ".join(f"{v:.3f}" for v in ref)
            + f" | {ref[-1] - ref[0]:.3f} | - |"
        )
    plot_pairs(
        variants,
        figures / "minesweeper.png",
        (lambda p: p["pass_at_k"][-1], lambda p: p["pass_at_k"][0]),
        ("pass@3", "pass@1"),
        "greedy pass@k, 64 boards",
    )
    lines.append(f"\n![pass@k curves]({figures.name}/minesweeper.png)")
    for name, runs in sorted(variants.items()):
        lines += ["", f"`{name}`:", ""]
        lines += [
            "| seed | pass@1 | pass@3 | pass@3 - pass@1 | mine repeats | last score: pass@1, "
            "pass@3 | steps | CPU s |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in runs:
            late, last = late_scores(r), r["curve"][-1]["pass_at_k"]
            one, three = late["pass_at_k"][0], late["pass_at_k"][-1]
            lines.append(
                f"| {r['seed']} | {one:.3f} | {three:.3f} | {three - one:+.3f} | "
                f"{late['mine_repeats']:.2f} | {last[0]:.3f}, {last[-1]:.3f} | {r['steps']} | "
                f"{r['cpu_s']:.0f} |"
            )
    return lines
