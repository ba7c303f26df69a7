"""The command line's messages about bad input (issue 27): each names the flag as typed, the
bad value and what is allowed, in every game; and every help text renders as it reads."""

import argparse
import re

import pytest

from hiddenhand.cli import build_parser, main
from hiddenhand.registry import games

GAMES = games()
"""Every registered game, ours and the example of a user's (see conftest.py)."""


def error_line(argv, capsys) -> str:
    """The one line of a command refused with status 2."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


def typed(text: str) -> str:
    """How a message shows a value typed after its flag: as it is, quoted if it is not plain."""
    return text if re.fullmatch(r"[\w.,:/@+=-]+", text, re.ASCII) else repr(text)


# --------------------------------------------------------------------------- game options

INTEGER_OPTIONS = [
    pytest.param(game, declared.options[name].spelling(name), id=f"{game}-{name}")
    for game, declared in GAMES.items()
    for name, default in declared.rules_class.param_defaults().items()
    if isinstance(default, int) and not isinstance(default, bool)
]


@pytest.mark.parametrize("text", ["abc", "\u0663", "5_0", "5.0", " 5", ""])
@pytest.mark.parametrize("game, flag", INTEGER_OPTIONS)
def test_an_integer_option_that_is_not_one_names_the_flag_and_the_range(game, flag, text, capsys):
    line = error_line(["tournament", GAMES[game].command, "--games", "1", flag, text], capsys)
    assert line.startswith(f"hiddenhand: error: {flag} {typed(text)} is not ")
    assert re.search(r"; allowed: \d+ to \d+", line)


@pytest.mark.parametrize("game, flag", INTEGER_OPTIONS)
def test_an_integer_option_out_of_range_names_the_flag(game, flag, capsys):
    line = error_line(["tournament", GAMES[game].command, "--games", "1", flag, str(10**9)], capsys)
    assert re.fullmatch(rf"hiddenhand: error: {flag} 1000000000 is out of range; allowed: \d+ to \d+", line)


def test_messages_naming_several_parameters_name_their_flags(capsys):
    argv = ["play", "goofspiel", "--cards", "4", "--observation", "markov", "--no-reveal-bids"]
    line = error_line(argv, capsys)
    assert "--observation markov needs --reveal-bids" in line and "got --no-reveal-bids, --scoring" in line
    assert "reveal_bids" not in line and "observation=" not in line


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["play", "spoof", "--matches", "2,,3"],
            "--matches 2,,3 is not one count or a pair of counts; allowed: 1 to 9",
        ),
        (
            ["play", "spoof", "--matches", "2,20"],
            "--matches 2,20: player_1's count=20 is out of range; allowed: 1 to 9",
        ),
        (["play", "egghead", "--analysts", "0,,1"], "--analysts 0,,1 has an empty item; allowed: 'all', 'none', or"),
        (["play", "egghead", "--analysts", " all"], "--analysts ' all' has spaces around 'all'; allowed: 'all',"),
        (["play", "egghead", "--analysts", "\u0663"], "--analysts '\u0663': '\u0663' is not a player id; allowed:"),
        (["play", "egghead", "--deck", "total,,lowest"], "--deck total,,lowest has an empty item; allowed: 'standard'"),
        (["simulate", "egghead", "--deck", "total;;"], "--deck 'total;;' has an empty item; allowed: 'standard'"),
        (["advise", "spoof", "--mine", "3", "--theirs", "3", "--their-bid", "2"], "--their-bid 2 is the first bid"),
        (["advise", "spoof", "--mine", "3", "--theirs", "3", "--their-bid", "2"], "give it with --seat second"),
        (["advise", "spoof", "--mine", "3", "--theirs", "3", "--seat", "second", "--hold", "1"], "bid (--their-bid)"),
        (["advise", "spoof", "--mine", "3", "--theirs", "3", "--seat", "second", "--their-bid", "2"], "(--hold)"),
        (["advise", "spoof", "--mine", "3", "--theirs", "3", "--hold", "9"], "--hold 9 is out of range; allowed: 0"),
        (
            ["advise", "spoof", "--mine", "\u0663", "--theirs", "3"],
            "argument --mine: '\u0663' is not an integer; allowed: 1",
        ),
        (["solve", "goofspiel", "--workers", "x"], "--workers x is not an integer; allowed: 1 to 256"),
        (["solve", "goofspiel", "--ray", "--workers", "2"], "--workers 2 sets threads; with --ray, each CPU"),
        (["solve", "goofspiel", "--address", "h:1"], "--address h:1 names a Ray cluster: it needs --ray"),
        (["solve", "goofspiel", "--scoring", "win_loss", "--ray"], "--ray: these apply to point-difference solves"),
        (["tournament", "goofspiel", "--seed", "\u0663"], "argument --seed: '\u0663' is not an integer; allowed: 0 to"),
    ],
)
def test_option_errors_name_the_flag_as_typed(argv, message, capsys):
    assert message in error_line(argv, capsys)


def test_python_spells_parameters_again_after_a_command(capsys):
    error_line(["tournament", "goofspiel", "--cards", "99"], capsys)
    from hiddenhand.envs.goofspiel import GoofspielRules

    with pytest.raises(ValueError, match="^num_cards=99 is out of range"):
        GoofspielRules(num_cards=99)


# --------------------------------------------------------------------------- agents


@pytest.mark.parametrize("bad", ["random,,random", ",random", "random,", "random, random", ""])
@pytest.mark.parametrize("game", GAMES)
def test_an_empty_agent_name_names_the_option_and_the_agents(game, bad, capsys):
    line = error_line(["tournament", GAMES[game].command, "--games", "1", "--agents", bad], capsys)
    assert line.startswith(f"hiddenhand: error: --agents {typed(bad)} ")
    assert re.search(r"(has an empty item|is empty|has spaces around 'random'); allowed: comma-separated agents", line)
    assert f"one of {', '.join(GAMES[game].agent_names)}, or a saved agent's directory or file" in line


@pytest.mark.parametrize(
    "command, flag", [("play", "--opponent"), ("exploitability", "--agent"), ("tournament", "--agents")]
)
@pytest.mark.parametrize("game", GAMES)
def test_a_missing_agent_file_is_said_not_to_exist(game, command, flag, tmp_path, capsys):
    missing = str(tmp_path / "policy.npz")
    given = f"random,{missing}" if flag == "--agents" else missing
    line = error_line([command, GAMES[game].command, flag, given], capsys)
    assert line.startswith(f"hiddenhand: error: {flag} {typed(given)}: ")
    assert f"no file or directory {missing!r} exists" in line
    assert ", ".join(GAMES[game].agent_names) in line


# --------------------------------------------------------------------------- help


def every_parser(parser, path=("hiddenhand",)):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from every_parser(sub, (*path, name))


def test_every_help_renders_as_it_reads():
    """argparse %-formats help strings but not descriptions: a doubled percent in a
    description, or a single one in a help string, shows or breaks in --help."""
    parsers = dict(every_parser(build_parser()))
    assert ("hiddenhand", "exploitability", "goofspiel") in parsers and ("hiddenhand", "benchmark") in parsers
    for game in GAMES.values():
        assert ("hiddenhand", "play", game.command) in parsers
    for path, parser in parsers.items():
        text = parser.format_help()
        assert "%%" not in text and "%(" not in text, " ".join(path)
