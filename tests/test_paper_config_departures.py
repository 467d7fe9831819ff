"""Every paper training config lists, in its own file, where it departs from the published script.

The published values are the table in docs/published_settings.md ("The training configs against
the published scripts"); each ``*_qwen3_4b`` config is resolved as ``train`` builds it, and every
row whose value it does not have must appear in the file as ``# departs: <setting>: <why>``. A
listed departure that is none (the config has the published value) fails too, so the lists stay
true as configs change.
"""

import math
import re
from pathlib import Path

import pytest
import yaml

pytest.importorskip("trl")

from baselines.train.command import TRAIN_CONFIG_DIR, _read_config, build_config  # noqa: E402

PAGE = Path(__file__).resolve().parents[1] / "docs" / "published_settings.md"
SECTION = "## The training configs against the published scripts"
DEPARTS = re.compile(r"^#\s*departs:\s*([\w.]+)\s*:\s*\S", re.MULTILINE)
CONFIGS = sorted(p.stem for p in Path(TRAIN_CONFIG_DIR).glob("*_qwen3_4b.yaml"))
NO_SETTING = object()


def published_rows():
    """(configs, setting, published value) per row of the page's table."""
    text = PAGE.read_text(encoding="utf-8")
    body = text[text.index(SECTION) :]
    rows = []
    for line in body.splitlines()[1:]:
        if line.startswith("## "):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("| ") or cells[0] in ("configs", "---"):
            continue
        names = [f"{name.strip()}_qwen3_4b" for name in cells[0].split(",")]
        value = re.fullmatch(r"`([^`]*)`(?: \(\*no setting\*\))?", cells[2])
        if "*no setting*" in cells[2]:
            rows.append((names, cells[1], NO_SETTING))
        else:
            assert value, f"published value not in backticks: {cells[2]!r}"
            rows.append((names, cells[1], yaml.safe_load(value.group(1))))
    return rows


def unpublished_configs():
    """The configs the page names as having no published script of their own."""
    text = PAGE.read_text(encoding="utf-8")
    paragraph = text[text.index("Configs with no published script") :].split("\n\n")[0]
    return {f"{name}_qwen3_4b" for name in re.findall(r"\b([a-z]+_[a-z]+)\b(?=[\s,.(])", paragraph)}


def ours(name, setting, tmp_path):
    """The value the config ``name`` gives ``setting``, or ``NO_SETTING``."""
    raw = _read_config(Path(name))
    if setting == "model":
        return raw.get("model", NO_SETTING)
    config = build_config(raw | {"out": str(tmp_path), "use_vllm": False, "bf16": False})
    top, _, key = setting.partition(".")
    value = getattr(config, top, NO_SETTING)
    if key and value is not NO_SETTING:
        value = value.get(key, NO_SETTING) if isinstance(value, dict) else getattr(value, key)
    return value


def same(a, b):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
    return str(getattr(a, "value", a)) == str(b)


def listed(name):
    text = (Path(TRAIN_CONFIG_DIR) / f"{name}.yaml").read_text(encoding="utf-8")
    return set(DEPARTS.findall(text))


def test_every_paper_config_is_in_the_table_or_named_as_having_no_script():
    covered = {name for names, _, _ in published_rows() for name in names}
    assert covered <= set(CONFIGS), sorted(covered - set(CONFIGS))
    assert covered.isdisjoint(unpublished_configs())
    assert set(CONFIGS) == covered | unpublished_configs()


@pytest.mark.parametrize("name", CONFIGS)
def test_each_departure_is_listed_in_the_config_and_each_listed_one_is_real(name, tmp_path):
    rows = [(setting, value) for names, setting, value in published_rows() if name in names]
    departures = set()
    for setting, published in rows:
        value = NO_SETTING if published is NO_SETTING else ours(name, setting, tmp_path)
        if value is NO_SETTING or not same(value, published):
            departures.add(setting)
    assert listed(name) == departures, (
        f"{name}: listed but not departures {sorted(listed(name) - departures)}, "
        f"departures not listed {sorted(departures - listed(name))}"
    )
