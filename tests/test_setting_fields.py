"""mage_agents.setting_fields: a settings dataclass's fields make its flags, help and checks."""

import argparse
from dataclasses import dataclass, field, fields
from pathlib import Path

import pytest

from mage_agents.setting_fields import (
    add_setting_flags,
    check_settings,
    config_keys_help,
    given_settings,
    merged_setting,
    setting,
    setting_kind,
)

COLOURS = {"red": 1, "blue": 2}


@dataclass(frozen=True)
class Inner:
    """A nested settings dataclass (as ``TrialConfig`` is the runner's)."""

    rounds: int = 3
    loud: bool = False

    def __post_init__(self):
        if self.rounds < 1:
            raise ValueError(f"rounds must be >= 1, not {self.rounds}.")


@dataclass(frozen=True)
class Settings:
    """One field of each kind the generator reads."""

    names: list[str] = setting(["a"], "a name (repeatable; default: {default})", flag="--name")
    count: int = setting(2, "how many (default {default})", minimum=1, aliases=("--old-count",))
    offset: int = setting(0, "where to start (default {default})", minimum=0)
    scale: float | None = setting(None, "a factor", minimum=0.5)
    colour: str = setting("red", "a colour (default {default})", choices=COLOURS)
    out: Path | None = setting(None, "a folder")
    plots: bool = setting(True, "skip the plots")
    fast: bool = setting(False, "go fast (default: {default})")
    options: dict = setting({}, "options (JSON)", metavar="JSON")
    hidden: dict = setting({}, flag=None, config_help="no flag, a config key only")
    inner: Inner = field(
        default_factory=Inner,
        metadata={"flags": {"rounds": {"flag": "--rounds", "help": "rounds (default {default})"}}},
    )

    def __post_init__(self):
        check_settings(self)


def parser(cls=Settings):
    made = argparse.ArgumentParser(prog="t", formatter_class=argparse.RawDescriptionHelpFormatter)
    add_setting_flags(made.add_argument, cls, mapping_type=lambda text: {"given": text})
    made.epilog = config_keys_help(cls)
    return made


def given(argv, cls=Settings):
    return given_settings(parser(cls).parse_args(argv), cls)


def test_every_field_with_a_flag_is_a_documented_option_with_its_default():
    page = " ".join(parser().format_help().split())
    assert "--name NAME a name (repeatable; default: a)" in page
    assert "--count COUNT how many (default 2)" in page and "--old-count" not in page
    assert "--colour {red,blue} a colour (default red)" in page
    assert (
        "--no-plots skip the plots" in page and "--fast, --no-fast go fast (default: off)" in page
    )
    assert "--rounds ROUNDS rounds (default 3)" in page  # the nested field's own default
    assert "--hidden" not in page and "--inner" not in page
    assert "hidden no flag, a config key only" in page  # config keys: a line each where told
    assert "names, count, offset, scale, colour, out, plots, fast, options" in page


def test_flags_give_only_what_was_given_in_the_fields_types():
    assert given([]) == {}
    values = given(["--name", "x", "--name", "y", "--old-count", "4", "--scale", "0.7"])
    assert values == {"names": ["x", "y"], "count": 4, "scale": 0.7}
    values = given(["--out", "o", "--no-plots", "--fast", "--options", "{}", "--rounds", "5"])
    assert values == {
        "out": Path("o"),
        "plots": False,
        "fast": True,
        "options": {"given": "{}"},
        "inner": {"rounds": 5},
    }
    with pytest.raises(SystemExit):
        parser().parse_args(["--colour", "green"])


def test_a_registry_read_when_the_parser_is_built_gives_the_choices():
    COLOURS["green"] = 3
    try:
        assert given(["--colour", "green"]) == {"colour": "green"}
        assert Settings(colour="green").colour == "green"
    finally:
        del COLOURS["green"]
    with pytest.raises(ValueError, match=r"^colour must be one of red, blue, not 'green'\.$"):
        Settings(colour="green")


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"count": 0}, "count must be a positive integer, not 0."),
        ({"count": True}, "count must be a positive integer, not True."),
        ({"count": "2"}, "count must be a positive integer, not '2'."),
        ({"offset": -1}, "offset must be a non-negative integer, not -1."),
        ({"scale": 0.1}, "scale must be a number >= 0.5, not 0.1."),
        ({"plots": "yes"}, "plots must be true or false, not 'yes'."),
        ({"colour": 3}, "colour must be text, not 3."),
        ({"out": 5}, "out must be text, not 5."),
        ({"names": 5}, "names must be a list, not 5."),
        ({"options": [1]}, "options must be a mapping of keyword arguments, not [1]."),
        ({"inner": 5}, "inner must be a mapping of keyword arguments, not 5."),
        ({"inner": {"rounds": 0}}, "rounds must be >= 1, not 0."),
    ],
)
def test_every_value_is_checked_by_its_field_with_one_line_naming_it(values, message):
    with pytest.raises(ValueError) as error:
        Settings(**values)
    assert str(error.value) == message


def test_values_are_kept_in_their_fields_types():
    made = Settings(names="one", out="runs/x", scale=None, inner={"rounds": 2}, options=None)
    assert made.names == ["one"] and made.out == Path("runs/x") and made.options == {}
    assert made.inner == Inner(rounds=2)
    assert Settings().names == ["a"] and Settings().names is not Settings().names


def test_a_flag_of_a_nested_field_changes_only_what_it_names():
    item = next(f for f in fields(Settings) if f.name == "inner")
    assert merged_setting(item, Inner, {"loud": True}, {"rounds": 5}) == {"loud": True, "rounds": 5}
    assert merged_setting(item, Inner, Inner(loud=True), {"rounds": 5}) == Inner(5, True)


def test_a_subclass_field_is_a_flag_a_key_and_a_check_with_nothing_else_written():
    @dataclass(frozen=True)
    class More(Settings):
        depth: int = setting(1, "how deep (default {default})", minimum=1)

    assert setting_kind(More, "depth") == (int, False)
    assert "--depth DEPTH how deep (default 1)" in " ".join(parser(More).format_help().split())
    assert "depth" in config_keys_help(More) and given(["--depth", "3"], More) == {"depth": 3}
    with pytest.raises(ValueError, match="depth must be a positive integer, not 0"):
        More(depth=0)
