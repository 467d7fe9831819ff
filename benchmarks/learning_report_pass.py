"""Tables and curves of the learning benchmark's part 3: pass@k on Minesweeper, LaMer vs GRPO."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from benchmarks.learning_common import ATTEMPTS, EVAL_SEEDS, interval95, plot_pairs

__all__ = ["minesweeper", "random_reference", "late_scores", "comparisons", "headroom_confound"]
__all__ += ["parent_variant"]

LATE = 3
"""Scores averaged for a run's figure: the greedy policy jumps between scores from one step to
the next (its argmax flips), so one score is a noisy reading of where the run ended."""


def late_scores(run: dict[str, Any]) -> dict[str, Any]:
    """Return a run's pass@k and mine repeats, averaged over its last :data:`LATE` scores.

    ``known_mine_repeats`` (the share of later attempts with a known mine that reopen it) is
    ``None`` in records made before it was scored.
    """
    points = run["curve"][-LATE:]
    n = len(points)
    known = [p.get("known_mine_repeats") for p in points]
    return {
        "pass_at_k": [sum(p["pass_at_k"][k] for p in points) / n for k in range(ATTEMPTS)],
        "mine_repeats": sum(p["mine_repeats"] for p in points) / n,
        "known_mine_repeats": None if None in known else sum(known) / n,
        "steps": [p["step"] for p in points],
    }


def _retry_gain(scores: dict[str, Any]) -> float:
    return scores["pass_at_k"][-1] - scores["pass_at_k"][0]


def headroom_confound(pass1_diffs: list[float], gain_diff: float) -> str | None:
    """Return why a retry-gain comparison is confounded by pass@1, or ``None`` when it is not.

    pass@3 - pass@1 can only grow into what pass@1 leaves unsolved: a policy whose pass@1 is
    lower has more to gain by retrying, memory or not. The comparison is confounded when the
    policies' pass@1 differ (95% interval away from 0) in the direction that alone would
    explain the gain's difference: the compared policy lower and its gain larger, or higher and
    its gain not larger.

    Args:
        pass1_diffs: The compared policy's pass@1 minus the other's, one per seed.
        gain_diff: The mean of its retry gain minus the other's.

    Example:
        >>> headroom_confound([-0.2, -0.25, -0.3], 0.1)
        'its pass@1 is lower by 0.250, more to gain by retrying'
        >>> headroom_confound([0.2, 0.25, 0.3], 0.1) is None  # gained more despite less headroom
        True
    """
    m, h = interval95(pass1_diffs)
    if m + h < 0 and gain_diff > 0:
        return f"its pass@1 is lower by {-m:.3f}, more to gain by retrying"
    if m - h > 0 and gain_diff <= 0:
        return f"its pass@1 is higher by {m:.3f}, less to gain by retrying"
    return None


def comparisons(variants: dict[str, list[dict]], reference: list[float]) -> list[str]:
    """Return part 3's verdicts, one row per comparison (a Markdown table).

    Each variant's retry gain (pass@3 - pass@1) above GRPO's, paired by seed (the same seed
    builds the same initial model), above its :func:`parent_variant`'s (``lamer-board`` against
    ``lamer``: the rendering alone; also which reopens fewer known mines), and above the
    memoryless random policy's (``reference``, its pass@1..3), each checked for
    :func:`headroom_confound`; and whether the share of known mines reopened falls from the
    first score (the untrained model) to the late scores.
    """
    from benchmarks.learning_common import verdict

    lines = [
        "| variant | seeds | comparison | difference | verdict |",
        "|---|---|---|---|---|",
    ]
    base = {r["seed"]: late_scores(r) for r in variants.get("grpo", [])}
    random_gain = reference[-1] - reference[0]
    for name, runs in sorted(variants.items()):
        late = {r["seed"]: late_scores(r) for r in runs}
        rows = []
        paired = [s for s in late if s in base]
        if name != "grpo" and paired:
            gains = [_retry_gain(late[s]) - _retry_gain(base[s]) for s in paired]
            pass1 = [late[s]["pass_at_k"][0] - base[s]["pass_at_k"][0] for s in paired]
            rows.append(("pass@3 - pass@1, minus grpo's (paired by seed)", gains, pass1))
        rows += _against_parent(name, late, variants)
        gains = [_retry_gain(x) - random_gain for x in late.values()]
        pass1 = [x["pass_at_k"][0] - reference[0] for x in late.values()]
        rows.append(("pass@3 - pass@1, minus random legal's", gains, pass1))
        drops = [
            r["curve"][0]["known_mine_repeats"] - late[r["seed"]]["known_mine_repeats"]
            for r in runs
            if late[r["seed"]]["known_mine_repeats"] is not None
        ]
        if drops:
            rows.append(("known-mine repeats, first score minus late", drops, None))
        for label, values, pass1 in rows:
            m, h = interval95(values)
            why = headroom_confound(pass1, m) if pass1 is not None and len(pass1) > 1 else None
            lines.append(
                f"| {name} | {len(values)} | {label} | {m:+.3f} ± {h:.3f} | {verdict(m, h, why)} |"
            )
    return lines


def parent_variant(name: str, variants: dict[str, list[dict]]) -> str | None:
    """The variant ``name`` changes one thing of (``lamer`` for ``lamer-board``), or ``None``.

    The longest dash-cut prefix of ``name`` that is another recorded variant, other than
    ``grpo`` (every variant is compared with it already).

    Example:
        >>> parent_variant("lamer-board", {"lamer": [], "lamer-board": [], "grpo": []})
        'lamer'
        >>> parent_variant("grpo-trials", {"grpo": [], "grpo-trials": []}) is None
        True
    """
    cuts = [k for k in range(len(name) - 1, 0, -1) if name[k] == "-"]
    found = next((name[:k] for k in cuts if name[:k] in variants), None)
    return None if found in (None, "grpo") else found


def _against_parent(
    name: str, late: dict[int, dict[str, Any]], variants: dict[str, list[dict]]
) -> list[tuple[str, list[float], list[float] | None]]:
    """The rows comparing a variant with its :func:`parent_variant`, paired by seed."""
    parent = parent_variant(name, variants)
    if parent is None:
        return []
    base = {r["seed"]: late_scores(r) for r in variants[parent]}
    paired = [s for s in late if s in base]
    if not paired:
        return []
    gains = [_retry_gain(late[s]) - _retry_gain(base[s]) for s in paired]
    pass1 = [late[s]["pass_at_k"][0] - base[s]["pass_at_k"][0] for s in paired]
    rows = [(f"pass@3 - pass@1, minus {parent}'s (paired by seed)", gains, pass1)]
    known = [(base[s]["known_mine_repeats"], late[s]["known_mine_repeats"]) for s in paired]
    if all(None not in pair for pair in known):
        fewer = [b - a for b, a in known]
        rows.append((f"known-mine repeats, {parent}'s minus this one's (paired)", fewer, None))
    return rows


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
        "| policy | seeds | steps | pass@1 | pass@2 | pass@3 | pass@3 - pass@1 | mine repeats | "
        "known-mine repeats: first score, late |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, runs in sorted(variants.items()):
        finals = [late_scores(r) for r in runs]
        cells = [interval95([p["pass_at_k"][k] for p in finals]) for k in range(ATTEMPTS)]
        gain = interval95([_retry_gain(p) for p in finals])
        repeats = interval95([p["mine_repeats"] for p in finals])
        known = "-"
        if all(p["known_mine_repeats"] is not None for p in finals):
            early = interval95([r["curve"][0]["known_mine_repeats"] for r in runs])
            late = interval95([p["known_mine_repeats"] for p in finals])
            known = ", ".join(f"{m:.2f} ± {h:.2f}" for m, h in (early, late))
        steps = sorted({r["steps"] for r in runs})
        lines.append(
            f"| {name} | {len(runs)} | {', '.join(map(str, steps))} | "
            + " | ".join(f"{m:.3f} ± {h:.3f}" for m, h in [*cells, gain, repeats])
            + f" | {known} |"
        )
    settings = next(iter(variants.values()))[0]["settings"]
    references = {}
    for label, avoid in (("random legal", False), ("random legal, avoiding known mines", True)):
        ref = references[avoid] = random_reference(settings, avoid)
        lines.append(
            f"| {label} (reference) | - | - | "
            + " | ".join(f"{v:.3f}" for v in ref)
            + f" | {ref[-1] - ref[0]:.3f} | - | - |"
        )
    lines += ["", *comparisons(variants, references[False])]
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
