"""The arena's plot: each player's rating with its 95% bootstrap interval (``ratings.png``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from baselines.arena.ratings import Rating
from mage_agents.atomic_file import atomic_writer

__all__ = ["plot_ratings"]


def plot_ratings(table: Sequence[Rating], anchor: str, path: str | Path, title: str) -> Path:
    """Draw the ratings, best at the top, as points with interval bars; return the file."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display is needed or wanted
    import matplotlib.pyplot as plt

    rows = list(reversed(table))
    figure, axes = plt.subplots(figsize=(6.4, 0.5 * len(rows) + 1.4))
    y = range(len(rows))
    x = [r.rating for r in rows]
    below = [r.rating - r.low for r in rows]
    above = [r.high - r.rating for r in rows]
    axes.errorbar(x, y, xerr=[below, above], fmt="o", capsize=4)
    axes.axvline(0.0, color="grey", linewidth=0.8, linestyle="--")
    axes.set_yticks(list(y), [r.name for r in rows])
    axes.set_xlabel(f"rating (Bradley-Terry, Elo scale, {anchor} = 0; 95% bootstrap)")
    axes.set_title(f"Arena: {title}")
    figure.tight_layout()
    with atomic_writer(path, "wb") as file:  # the old plot stays if drawing fails
        figure.savefig(file, format="png", dpi=120)
    plt.close(figure)
    return Path(path)
