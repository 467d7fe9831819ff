"""Reports of an evaluation: a console table, ``summary.md``, ``summary.csv`` and plots.

Every rate is written as ``value [low, high]`` with its 95% interval, every mean as
``value ± half-width``; the markdown file adds the per-opponent and per-seat breakdowns and the
diversity figures.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text

from baselines.report.achievable import achievable_interval
from baselines.report.summary import GroupSummary, Interval, summarize
from mage_agents.atomic_file import atomic_writer, write_atomic

__all__ = [
    "rate_text",
    "mean_text",
    "console_table",
    "markdown_report",
    "write_csv",
    "write_plots",
    "plot_images",
    "table_cells",
    "markdown_cell",
    "spreadsheet_cell",
    "BREAKDOWNS",
    "PLOTS",
]


def rate_text(iv: Interval) -> str:
    """Format a rate with its interval.

    Example:
        >>> rate_text(Interval(0.5, 0.25, 0.75, 10))
        '50.0% [25.0, 75.0]'
    """
    if iv.n == 0 or math.isnan(iv.value):
        return "-"
    return f"{iv.value:.1%} [{100 * iv.low:.1f}, {100 * iv.high:.1f}]"


def mean_text(iv: Interval) -> str:
    """Format a mean with its half-width.

    Example:
        >>> mean_text(Interval(1.0, 0.5, 1.5, 4))
        '+1.000 ± 0.500'
    """
    if iv.n == 0 or math.isnan(iv.value):
        return "-"
    if math.isnan(iv.half_width):
        return f"{iv.value:+.3f}"
    return f"{iv.value:+.3f} ± {iv.half_width:.3f}"


def markdown_cell(text: str) -> str:
    r"""Return ``text`` as one cell of a Markdown table, whatever it holds.

    Agent and opponent names are the user's text: a ``|`` would split the cell and a line
    break end the table, so pipes (and the backslashes that could escape them) are escaped
    and line breaks become spaces.

    Example:
        >>> markdown_cell("a|b\nc")
        'a\\|b c'
    """
    escaped = text.replace("\\", "\\\\").replace("|", "\\|")
    return " ".join(escaped.splitlines())


SPREADSHEET_FORMULA = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a CSV cell as a formula."""


def spreadsheet_cell(value: Any) -> Any:
    """Return a CSV value that no spreadsheet runs as a formula (text gets a leading ``'``).

    Example:
        >>> spreadsheet_cell("=HYPERLINK(0)"), spreadsheet_cell("random"), spreadsheet_cell(-1.0)
        ("'=HYPERLINK(0)", 'random', -1.0)
    """
    if isinstance(value, str) and value.startswith(SPREADSHEET_FORMULA):
        return "'" + value
    return value


def _key_text(key: dict[str, Any]) -> list[str]:
    return [str(v) if v is not None else "default" for v in key.values()]


def short_rate_text(iv: Interval) -> str:
    """Format a rate compactly with its (asymmetric) interval, in whole percent.

    Example:
        >>> short_rate_text(Interval(0.5, 0.25, 0.8, 10))
        '50% [25-80]'
    """
    if iv.n == 0 or math.isnan(iv.value):
        return "-"
    return f"{iv.value:.0%} [{100 * iv.low:.0f}-{100 * iv.high:.0f}]"


def _row(s: GroupSummary, compact: bool = False) -> dict[str, str]:
    rate = short_rate_text if compact else rate_text
    row = {name: text for name, text in zip(s.key, _key_text(s.key), strict=True)}
    row["trials"] = str(s.trials)
    for k, iv in enumerate(s.pass_at_k, start=1):
        row[f"pass@{k}"] = rate(iv)
    row["final return"] = mean_text(s.final_return)
    if s.published_final_return is not None:
        row["final return, published scoring"] = mean_text(s.published_final_return)
    if not compact:
        row["mean return"] = mean_text(s.mean_return)
    row["W/D/L"] = f"{s.win.value:.0%}/{s.draw.value:.0%}/{s.loss.value:.0%}" if s.win.n else "-"
    row["invalid"] = rate(s.invalid_rate) if s.play_steps else "-"
    # Format honesty, for model agents (they have token counts) or wherever it is not zero:
    # moves read from answers outside the requested format (strict parsing counts them
    # invalid), and games cut off by invalid answers.
    model = bool(s.tokens_per_trial)
    if not compact or model or s.off_format_rate.value > 0:
        row["off-format"] = rate(s.off_format_rate) if s.play_steps else "-"
    if s.forfeit_rate.n and (not compact or s.forfeit_rate.value > 0):
        row["forfeit"] = rate(s.forfeit_rate)
    if s.achievable is not None:
        row["% of achievable"] = rate(s.achievable)
        row["winnable"] = f"{s.achievable.n}/{s.trials}"
    if not compact or s.failed_steps:
        row["failed steps"] = str(s.failed_steps)
    if not compact or s.tokens_per_trial:
        row["tokens/trial"] = f"{s.tokens_per_trial:,.0f}"
    # a trial's wall time, first answer to last; batched trials overlap, so their sum is more
    # than the run took
    row["wall s/trial"] = f"{s.wall_s / s.trials:.2f}"
    return row


def _rows(
    summaries: Sequence[GroupSummary], compact: bool = False
) -> tuple[list[str], list[dict[str, str]]]:
    rows = [_row(s, compact) for s in summaries]
    columns: list[str] = []
    for row in rows:
        columns.extend(c for c in row if c not in columns)
    return columns, rows


def table_cells(
    summaries: Sequence[GroupSummary], compact: bool = False
) -> tuple[list[str], list[list[str]]]:
    """Return the summary table's columns and its rows as text (as in ``summary.md``).

    The key columns (agent, env, opponent, ...) come first.
    """
    columns, rows = _rows(summaries, compact)
    return columns, [[row.get(c, "-") for c in columns] for row in rows]


def console_table(summaries: Sequence[GroupSummary], title: str) -> Table:
    """Return a rich table of the summaries (pass@k and rates with 95% intervals)."""
    columns, rows = _rows(summaries, compact=True)
    table = Table(  # names and the title are the user's text, never rich markup
        title=Text(title),
        caption="rates: value [95% Wilson interval]; means: value ± 95% t half-width",
    )
    for column in columns:
        key = column in summaries[0].key
        # a name folds onto more lines rather than losing its end (local:smoll…)
        table.add_column(column, justify="left" if key else "right", overflow="fold")
    for row in rows:
        table.add_row(*(Text(row.get(c, "-")) for c in columns))
    return table


def _markdown_table(summaries: Sequence[GroupSummary]) -> str:
    columns, rows = _rows(summaries)
    cells = [[markdown_cell(row.get(c, "-")) for c in columns] for row in rows]
    lines = ["| " + " | ".join(map(markdown_cell, columns)) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(row) + " |" for row in cells]
    return "\n".join(lines)


def _final_seat(record: dict[str, Any]) -> dict[str, Any]:
    seats = record["trial"].get("seats") or [None]
    return {"agent": record["agent"], "env_id": record["env_id"], "seat": seats[-1]}


def _opponent_played(record: dict[str, Any]) -> dict[str, Any]:
    opponents = record["trial"].get("opponents") or [None]
    return {"agent": record["agent"], "env_id": record["env_id"], "opponent": opponents[0]}


BREAKDOWNS = {"per opponent played": _opponent_played, "per seat (final attempt)": _final_seat}
"""Extra groupings of the markdown report: heading -> record -> key."""


def _diversity_lines(summaries: Sequence[GroupSummary]) -> list[str]:
    lines = []
    for s in summaries:
        if s.diversity:
            d = s.diversity
            lines.append(
                f"| {' | '.join(map(markdown_cell, _key_text(s.key)))} | {d['tasks']} | "
                f"{d['distinct_share']:.2f} | "
                f"{d['sequence_entropy']:.2f} | {d['action_entropy']:.2f} |"
            )
    if not lines:
        return []
    keys = " | ".join(summaries[0].key)
    header = (
        f"| {keys} | tasks | distinct sequences | sequence entropy (bits) | action entropy (bits) |"
    )
    rule = "|" + "---|" * (len(summaries[0].key) + 4)
    return ["## Diversity across trials of the same task", "", header, rule, *lines]


def markdown_report(
    summaries: Sequence[GroupSummary], records: Sequence[dict[str, Any]], title: str
) -> str:
    """Return ``summary.md``: the main table, the breakdowns and the diversity figures."""
    heading = " ".join(title.splitlines())  # a line break would end the heading
    parts = [f"# {heading}", "", _markdown_table(summaries), ""]
    for heading, key in BREAKDOWNS.items():
        parts += [
            f"## {heading.capitalize()}",
            "",
            _markdown_table(summarize(records, key, achievable_interval)),
            "",
        ]
    parts += _diversity_lines(summaries)
    parts += [
        "",
        "Rates: value [95% Wilson interval]. Means: value ± 95% Student-t half-width over trials.",
        "pass@k: solved in any of the first k attempts; win/draw/loss: sign of the final attempt.",
        "off-format: moves read from answers without the requested format (no <action> tag, or "
        "other words around the move); forfeit: games cut off by invalid answers, lost in W/D/L "
        "and scored in every return as the env scores a forfeit (by default the game's worst "
        "payoff); final return, published scoring: the published env's figure, a forfeit "
        "scored 0 (published answer rules only). wall s/trial: a trial's wall time, first "
        "answer to last (batched trials overlap).",
    ]
    return "\n".join(parts) + "\n"


def write_csv(summaries: Sequence[GroupSummary], path: Path) -> None:
    """Write one row per group with every figure and its interval bounds as numbers."""
    rows = []
    for s in summaries:
        row: dict[str, Any] = {**s.key, "trials": s.trials}
        intervals = {f"pass@{k}": iv for k, iv in enumerate(s.pass_at_k, start=1)}
        intervals |= {f"success@{k}": iv for k, iv in enumerate(s.success_at, start=1)}
        intervals |= {
            "mean_return": s.mean_return,
            "final_return": s.final_return,
            **(
                {"final_return_published": s.published_final_return}
                if s.published_final_return is not None
                else {}
            ),
            "win": s.win,
            "draw": s.draw,
            "loss": s.loss,
            "invalid_rate": s.invalid_rate,
            "off_format_rate": s.off_format_rate,
        }
        if s.forfeit_rate.n:
            intervals["forfeit_rate"] = s.forfeit_rate
        if s.achievable is not None:
            intervals["achievable"] = s.achievable
            row["winnable_trials"] = s.achievable.n
        for name, iv in intervals.items():
            row |= {name: iv.value, f"{name}_low": iv.low, f"{name}_high": iv.high}
        row |= {"failed_steps": s.failed_steps, "tokens_per_trial": s.tokens_per_trial}
        row |= {"wall_s": s.wall_s, "wall_s_per_trial": s.wall_s / s.trials}  # wall_s: summed
        row |= {f"diversity_{k}": v for k, v in s.diversity.items()}
        rows.append(row)
    fields: list[str] = []
    for row in rows:
        fields.extend(f for f in row if f not in fields)
    with atomic_writer(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows({k: spreadsheet_cell(v) for k, v in row.items()} for row in rows)


def write_plots(
    summaries: Sequence[GroupSummary], records: Sequence[dict[str, Any]], out: Path
) -> list[Path]:
    """Plot pass@k by attempt per group and pass@N per opponent played; return the files."""
    paths = []
    for name, _, png in plot_images(summaries, records):
        paths.append(out / name)
        write_atomic(paths[-1], png)
    return paths


PLOTS = {"pass_at_k.png": "pass@k by attempt", "per_opponent.png": "pass@N per opponent played"}
"""The plots of a run: file name -> title."""


def plot_images(
    summaries: Sequence[GroupSummary], records: Sequence[dict[str, Any]]
) -> list[tuple[str, str, bytes]]:
    """Return the plots as ``(file name, title, PNG bytes)`` (needs matplotlib)."""
    import io

    import matplotlib

    matplotlib.use("Agg")  # files only: no display is needed or wanted
    import matplotlib.pyplot as plt

    images = []
    for (name, title), fig in zip(PLOTS.items(), _figures(summaries, records, plt), strict=True):
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=120)
        plt.close(fig)
        images.append((name, title, buffer.getvalue()))
    return images


def _figures(
    summaries: Sequence[GroupSummary], records: Sequence[dict[str, Any]], plt: Any
) -> list[Any]:
    """The figures of :data:`PLOTS`, in order."""
    fig, ax = plt.subplots(figsize=(6, 4))
    for i, s in enumerate(summaries):
        # Series are nudged apart so equal ones stay visible; attempts sit on whole numbers.
        nudge = (i - (len(summaries) - 1) / 2) * 0.04
        ks = [k + nudge for k in range(1, len(s.pass_at_k) + 1)]
        values = [iv.value for iv in s.pass_at_k]
        errors = [
            [iv.value - iv.low for iv in s.pass_at_k],
            [iv.high - iv.value for iv in s.pass_at_k],
        ]
        ax.errorbar(
            ks, values, yerr=errors, marker="o", capsize=3, label=" / ".join(_key_text(s.key))
        )
    ax.set(xlabel="attempt k", ylabel="pass@k", ylim=(0, 1), title="pass@k by attempt (95% CI)")
    ax.set_xticks(range(1, max((len(s.pass_at_k) for s in summaries), default=1) + 1))
    ax.legend(fontsize=6)
    fig.tight_layout()
    by_opponent = summarize(records, _opponent_played)
    second, ax = plt.subplots(figsize=(max(6, len(by_opponent) * 0.6), 4))
    labels = [" / ".join(_key_text(s.key)) for s in by_opponent]
    finals = [s.pass_at_k[-1] for s in by_opponent]
    errors = [[iv.value - iv.low for iv in finals], [iv.high - iv.value for iv in finals]]
    ax.bar(range(len(finals)), [iv.value for iv in finals], yerr=errors, capsize=3)
    ax.set_xticks(range(len(finals)), labels, rotation=45, ha="right", fontsize=6)
    ax.set(ylabel="pass@N", ylim=(0, 1), title="pass@N per opponent played (95% CI)")
    second.tight_layout()
    return [fig, second]
