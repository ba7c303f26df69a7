"""How every game reads its configuration's values (issue 27): integral floats are integers,
numbers written as text are ASCII digits, lists written as text have no empty items and no
spaces, and messages name the parameter (as the command line's flag while a command runs)."""

import math
import re

import numpy as np
import pyspiel
import pytest
from conftest import decisions

from hiddenhand.envs.egghead import EggHeadRules
from hiddenhand.envs.goofspiel import GoofspielRules
from hiddenhand.registry import games
from hiddenhand.validation import check_int, integer_text, named, spelled_as, split_items

GAMES = games()
"""Every registered game, ours and the example of a user's (see conftest.py)."""


def tiny(game):
    return dict(GAMES[game].env.configurations["tiny"])


INTEGER_PARAMETERS = [
    pytest.param(game, param, id=f"{game}-{param}")
    for game, declared in GAMES.items()
    for param, default in declared.rules_class.param_defaults().items()
    if isinstance(default, int) and not isinstance(default, bool)
]


def test_every_game_with_parameters_has_integer_ones():
    assert {p.values[0] for p in INTEGER_PARAMETERS} >= {"goofspiel", "spoof", "bid_spoof", "egghead"}


@pytest.mark.parametrize("kind", [float, np.float32, np.float64], ids=["float", "float32", "float64"])
@pytest.mark.parametrize("game, param", INTEGER_PARAMETERS)
def test_an_integral_float_configures_the_integer(game, param, kind):
    rules_class = GAMES[game].rules_class
    base = tiny(game)
    value = base.get(param, rules_class.param_defaults()[param])
    expected = rules_class(**{**base, param: value})
    given = rules_class(**{**base, param: kind(value)})
    assert repr(given.params) == repr(expected.params)  # kept as an int: no 5.0 in params or the repr
    assert type(given.params[param]) is type(expected.params[param])


NOT_INTEGERS = {
    "half": lambda v: v + 0.5,
    "float32-half": lambda v: np.float32(v + 0.5),
    "bool": lambda v: True,
    "numpy-bool": lambda v: np.bool_(True),
    "nan": lambda v: math.nan,
    "inf": lambda v: math.inf,
    "numpy-minus-inf": lambda v: np.float64(-np.inf),
    "text": lambda v: str(v),
}


@pytest.mark.parametrize("make_bad", NOT_INTEGERS.values(), ids=NOT_INTEGERS.keys())
@pytest.mark.parametrize("game, param", INTEGER_PARAMETERS)
def test_a_value_that_is_not_an_integer_is_refused_by_name(game, param, make_bad):
    rules_class = GAMES[game].rules_class
    base = tiny(game)
    bad = make_bad(base.get(param, rules_class.param_defaults()[param]))
    with pytest.raises(
        ValueError, match=rf"^{param}=.* is not (an integer|one count or a pair of counts); allowed: \d"
    ):
        rules_class(**{**base, param: bad})


# --------------------------------------------------------------------------- EggHead's lists

ARABIC_THREE = "\u0663"  # ٣, which Python's int() reads as 3
FULLWIDTH_ONE = "\uff11"  # １


@pytest.mark.parametrize(
    "spec, problem",
    [
        ("0,,1", "has an empty item"),
        (",0", "has an empty item"),
        ("0;;", "has an empty item"),
        (";", "has an empty item"),
        ("", "is empty"),
        (" all", "has spaces around 'all'"),
        ("all ", "has spaces around 'all'"),
        ("0, 1", "has spaces around '1'"),
        (ARABIC_THREE, f"'{ARABIC_THREE}' is not a player id"),
        (f"0,{FULLWIDTH_ONE}", f"'{FULLWIDTH_ONE}' is not a player id"),
        ("1_0", "'1_0' is not a player id"),
        ("+1", "'+1' is not a player id"),
        ("4", "'4' is not a player id"),
        ("all;none", "'all' is not a player id"),
        ([" 0"], "' 0' is not a player id"),
        ([True], "True is not a player id"),
    ],
)
def test_analysts_refuses_what_is_not_a_list_of_player_ids(spec, problem):
    pattern = rf"^analysts={re.escape(repr(spec))}:? {re.escape(problem)}; allowed: 'all', 'none', or player ids "
    with pytest.raises(ValueError, match=pattern):
        EggHeadRules(num_players=4, analysts=spec)


@pytest.mark.parametrize(
    "spec, canonical",
    [("all", "all"), ("none", "none"), ("0,2", "0,2"), ("2;0", "0,2"), ("0;", "0"), ("3,", "3"), (["1"], "1")],
)
def test_analysts_reads_player_ids(spec, canonical):
    assert EggHeadRules(num_players=4, analysts=spec).params["analysts"] == canonical


def test_a_bare_integer_analysts_says_how_openspiel_writes_one_player():
    with pytest.raises(ValueError, match=r"analysts=0 is ambiguous .* in an OpenSpiel game string 0;2, one player 0;"):
        EggHeadRules(num_players=3, analysts=0)


@pytest.mark.parametrize(
    "spec, problem",
    [
        ("total,,lowest", "has an empty item"),
        (" standard", "has spaces around 'standard'"),
        ("total, lowest", "has spaces around 'lowest'"),
        ("", "is empty"),
        ([], "is not a deck"),
    ],
)
def test_deck_refuses_empty_items_and_spaces(spec, problem):
    pattern = rf"^deck={re.escape(repr(spec))} {re.escape(problem)}; allowed: 'standard', or question ids"
    with pytest.raises(ValueError, match=pattern):
        EggHeadRules(num_players=3, deck=spec)


def test_deck_reads_ids_with_either_separator_and_one_trailing():
    assert EggHeadRules(num_players=3, deck="total;lowest;").params["deck"] == "total,lowest"


# --------------------------------------------------------------------------- text typed at the terminal


@pytest.mark.parametrize("game", GAMES)
def test_typed_moves_are_ascii_digits(game, rng):
    """Every game reads a typed number in ASCII digits, and none reads another script's
    digits (Python's int() takes them: "٣" would be 3)."""
    rules = GAMES[game].rules_class(**tiny(game))
    state = next(decisions(rules.new_initial_state(), rng))
    player = state.current_player()

    def reads(text):
        try:
            rules.parse_action(text, state, player)
        except ValueError:
            return False
        return True

    assert any(reads(str(d)) for d in range(10))
    for d in range(10):
        for other in (chr(0x660 + d), chr(0xFF10 + d), chr(0x966 + d)):  # Arabic-Indic, fullwidth, Devanagari
            assert not reads(other), other


# --------------------------------------------------------------------------- OpenSpiel game strings


STRING_CHOICES = [
    pytest.param(game, param, choice, id=f"{game}-{param}-{choice}")
    for game, declared in GAMES.items()
    for param, option in declared.options.items()
    if isinstance(declared.rules_class.param_defaults()[param], str)
    for choice in option.choices or ()
]


@pytest.mark.parametrize("game, param, choice", STRING_CHOICES)
def test_every_string_choice_is_written_bare_in_an_openspiel_game_string(game, param, choice):
    """OpenSpiel reads a value by its look (digits as an int, true as a bool) and checks it
    against the declared type: each declared choice of a string parameter must read as a string."""
    rules_class = GAMES[game].rules_class
    try:
        rules = rules_class(**{**tiny(game), param: choice})
    except ValueError:
        pytest.skip(f"{param}={choice!r} does not combine with the tiny configuration")
    params = rules.to_openspiel()
    text = ",".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in params.items())
    loaded = pyspiel.load_game(f"{GAMES[game].openspiel_name}({text})")
    assert loaded.rules.params == rules.params


# --------------------------------------------------------------------------- the shared helpers


@pytest.mark.parametrize(
    "text, value",
    [("12", 12), ("-3", -3), ("007", 7), (" 12", None), ("1_2", None), ("+1", None), ("", None)]
    + [("1.0", None), (ARABIC_THREE, None), (FULLWIDTH_ONE, None), ("\u00b2", None), (12, None)],
)
def test_integer_text(text, value):
    assert integer_text(text) == value


def test_split_items_keeps_items_as_written():
    assert split_items("x", "a,b;c", "anything", ",;") == ["a", "b", "c"]
    assert split_items("x", "a,b", "anything", ";") == ["a,b"]
    assert split_items("x", "a b", "anything") == ["a b"]  # inner spaces are the item's own business
    assert split_items("x", "a;", "anything", ";", trailing=True) == ["a"]
    with pytest.raises(ValueError, match="^x='a;' has an empty item; allowed: anything$"):
        split_items("x", "a;", "anything", ";")


def test_messages_name_flags_only_inside_spelled_as():
    flags = {"num_cards": ("--cards",), "reveal_bids": ("--reveal-bids", "--no-reveal-bids"), "deck": ("--deck",)}
    with spelled_as(flags):
        assert named("reveal_bids", False) == "--no-reveal-bids" and named("reveal_bids", True) == "--reveal-bids"
        assert named("deck", "total,,x") == "--deck total,,x" and named("deck", " x") == "--deck ' x'"
        assert named("num_cards") == "--cards" and named("num_players", 9) == "num_players=9"
        with pytest.raises(ValueError, match="^--cards 99 is out of range; allowed: 2 to 13$"):
            GoofspielRules(num_cards=99)
    with pytest.raises(ValueError, match="^num_cards=99 is out of range; allowed: 2 to 13$"):
        check_int("num_cards", 99, 2, 13)
