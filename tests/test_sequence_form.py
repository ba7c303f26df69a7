"""The sequence-form LP against known values and OpenSpiel's own sequence-form LP."""

import pyspiel
import pytest
from open_spiel.python.algorithms import sequence_form_lp

import hiddenhand.openspiel as ho
from hiddenhand.solvers.sequence_form import solve


def test_kuhn_poker_value_and_equilibrium():
    game = pyspiel.load_game("kuhn_poker")
    solution = solve(game)
    assert solution.value == pytest.approx(-1 / 18, abs=1e-9)  # the known value of Kuhn poker
    assert solution.value == pytest.approx(sequence_form_lp.solve_zero_sum_game(game)[0], abs=1e-6)
    assert pyspiel.nash_conv(game, solution.tabular_policy()) < 1e-9


@pytest.mark.parametrize("params", ["num_cards=3", "num_cards=3,reveal_bids=false", "num_cards=4,scoring=win_loss"])
def test_goofspiel_through_the_adapter(params):
    game = pyspiel.load_game(f"hiddenhand_goofspiel({params})")
    solution = solve(game)
    assert solution.value == pytest.approx(0.0, abs=1e-9)  # symmetric game
    assert pyspiel.nash_conv(ho.cached_tree(game), solution.tabular_policy()) < 1e-9


def test_refuses_games_it_cannot_solve():
    with pytest.raises(ValueError, match="not a two-player zero-sum or constant-sum game"):
        solve(pyspiel.load_game("hiddenhand_goofspiel(num_cards=3,num_players=3)"))


def test_agrees_with_openspiel_lp_on_goofspiel_through_the_adapter():
    game = pyspiel.load_game("hiddenhand_goofspiel(num_cards=3,prize_order=descending,scoring=win_loss)")
    value = sequence_form_lp.solve_zero_sum_game(game)[0]
    assert solve(game).value == pytest.approx(value, abs=1e-6)
