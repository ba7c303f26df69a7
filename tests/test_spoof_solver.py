"""Exact Spoof: the round's equilibrium by OpenSpiel's best response, the game's values by
their fixed-point equations, a second method (normal-form matrix games) and the whole
truncated game solved at once by OpenSpiel's own LP."""

import itertools
import math

import numpy as np
import pyspiel
import pytest
from conftest import finite_horizon_values
from open_spiel.python.algorithms import sequence_form_lp

import hiddenhand.openspiel as ho
from hiddenhand.agents import make_agent
from hiddenhand.agents.spoof import SpoofEquilibriumAgent, cached_solution
from hiddenhand.envs.spoof import SpoofRules
from hiddenhand.solvers.matrix_game import solve_game
from hiddenhand.solvers.sequence_form import solve as solve_sequence_form
from hiddenhand.solvers.spoof import SpoofRounds, exploitability, solve, solve_round
from hiddenhand.solvers.stochastic import LoopEnding
from hiddenhand.training import play_games


@pytest.fixture(scope="module")
def solution():
    return cached_solution(3)


@pytest.mark.parametrize("first, second", list(itertools.product((1, 2, 3), repeat=2)))
def test_round_equilibrium_has_no_best_response_gain(first, second):
    game = pyspiel.load_game(f"hiddenhand_spoof(matches={first},matches_p1={second},objective=round)")
    value, _ = solve_round(first, second)
    agent = SpoofEquilibriumAgent(SpoofRules(matches=(first, second), objective="round"))
    assert ho.nash_conv(game, agent) < 1e-8  # OpenSpiel's exact best response, the agent in both seats
    assert value == pytest.approx(solve_sequence_form(game).value, abs=1e-9)


def test_game_values_are_a_fixed_point_and_each_round_an_equilibrium(solution):
    assert solution.stochastic.residual() < 1e-9
    for key, r in solution.stochastic.rounds.items():
        gains = r.best_response_gains()
        assert max(gains) < 1e-9, key
        assert min(gains) > -1e-9, key  # the equilibrium itself is a best response
        # The strategies played (cleaned, the ender's mixed with weight 1e-10) are still
        # optimal in each round to within 1e-9.
        assert max(abs(g) for g in r.best_response_gains(r.strategy)) < 1e-9, key


def least_ending_probability(strategy, ender_first):
    """The least probability, over every pure reply of the player who is not the ender in
    this round-state, that the round ends (somebody is right), read off the per-role arrays
    of a :class:`RoundStrategy` (the first bidder picks a hand and a bid; the second a hand
    and an answer to each first bid, never that bid)."""
    f, s = strategy.first_matches, strategy.second_matches
    total = f + s
    if not ender_first:  # the first bidder stalls: hand h, bid b
        return min(
            sum(
                q * (1.0 if b == h + k else strategy.second_bid[k, b, h + k])
                for k, q in enumerate(strategy.second_hold)
            )
            for h in range(f + 1)
            for b in range(total + 1)
        )
    least = np.inf
    for k in range(s + 1):  # the second bidder stalls: hand k, then each first bid's least ending answer
        ends = 0.0
        for b in range(total + 1):
            weight = strategy.first_hold * strategy.first_bid[:, b]  # by the first bidder's hand h
            right = sum(w for h, w in enumerate(weight) if b == h + k)
            answers = [sum(w for h, w in enumerate(weight) if d == h + k) for d in range(total + 1) if d != b]
            ends += right + min(answers)
        least = min(least, ends)
    return least


def test_the_strategies_end_every_round_the_loser_could_stall(solution):
    """Where a round-state is not a draw, the player it favours ends the round with positive
    probability against every reply of the other (so no stall is worth a draw); the
    stationary round equilibria do not, from (2, 1) on (LoopEnding(weight=0))."""
    stationary = solve(3, progress=False, ending=LoopEnding(weight=0.0))
    stalled = set()
    for key, value in solution.values.items():
        if abs(value) < 1e-9:
            continue
        assert least_ending_probability(solution.strategy(*key), value > 0) > 0.0, key
        if least_ending_probability(stationary.strategy(*key), value > 0) == 0.0:
            stalled.add(key)
    assert {(2, 1), (3, 1), (3, 2)} <= stalled
    assert stationary.values == solution.values


def test_the_gain_from_a_stall_scales_with_the_ending_weight():
    """The ender's strategy is its round equilibrium mixed, with weight ``w``, with a plan
    that ends every stall at a loss to the staller, so what a staller can still gain is
    about ``w`` times a constant (the price of the mixture against replies that do end the
    round): the whole-game exploitability at 3 matches is linear in ``w``."""
    rules = SpoofRules(matches=3)
    figures = []
    for weight in (1e-4, 1e-6):
        mixed = solve(3, progress=False, ending=LoopEnding(weight=weight))
        figures.append(exploitability(rules, SpoofEquilibriumAgent(rules, solution=mixed)).value)
    assert 1e-9 < figures[1] < 1e-7 and figures[0] / figures[1] == pytest.approx(100, rel=0.05)


def _normal_form_round(f, s, outcome_value):
    """The round at (f, s) as a matrix game over reduced pure strategies: the first bidder
    picks (hand, bid), the second a hand and an answer to every first bid. Independent of
    the sequence form and its LP."""
    total = f + s
    rows = list(itertools.product(range(f + 1), range(total + 1)))
    answers = [[d for d in range(total + 1) if d != b] for b in range(total + 1)]
    cols = [(k, reply) for k in range(s + 1) for reply in itertools.product(*answers)]
    m = np.empty((len(rows), len(cols)))
    for i, (h, b) in enumerate(rows):
        for j, (k, reply) in enumerate(cols):
            d = reply[b]
            m[i, j] = outcome_value("first" if b == h + k else "second" if d == h + k else "neither")
    return m


def test_values_agree_with_normal_form_matrix_games(solution):
    values = {}
    for f, s in sorted(itertools.product((1, 2), repeat=2), key=sum):

        def outcome(kind, v):
            if kind == "first":
                return 1.0 if f == 1 else values[(f - 1, s)]
            if kind == "second":
                return -1.0 if s == 1 else -values[(s - 1, f)]
            return v

        v = 0.0
        for _ in range(200):  # the "nobody right" loop: iterate to its fixed point
            new = solve_game(_normal_form_round(f, s, lambda kind: outcome(kind, v)))[0]
            if abs(new - v) < 1e-13:
                break
            v = new
        values[(f, s)] = new
        assert new == pytest.approx(solution.values[(f, s)], abs=1e-9), (f, s)
    # The first bidder with 1 match against 2 wins with probability (1 + 1/phi^2) / 2 (phi the golden ratio).
    phi = (1 + math.sqrt(5)) / 2
    assert solution.first_bidder_win_probability(1, 2) == pytest.approx((1 + phi**-2) / 2, abs=1e-9)


def test_truncated_game_matches_openspiel_lp_on_the_whole_tree():
    """Two rounds then a draw: OpenSpiel's sequence-form LP on the whole tree against two
    steps of value iteration over our round-states, with the same leaf bookkeeping the
    stochastic solver uses."""
    game = pyspiel.load_game("hiddenhand_spoof(matches=1,matches_p1=2,max_rounds=2)")
    whole = sequence_form_lp.solve_zero_sum_game(game)[0]
    values = finite_horizon_values(SpoofRounds(2), 2)
    assert values[(1, 2)] == pytest.approx(whole, abs=1e-6)
    assert values[(1, 2)] == pytest.approx(solve_sequence_form(game).value, abs=1e-9)


def test_solution_queries(solution):
    assert solution.first_bidder_win_probability(3, 3) == pytest.approx(0.5, abs=1e-9)
    assert solution.unfinished_probability(3, 3, 0) == 1.0
    # From (1, 2) the game ends at once if the first bidder is right; otherwise it goes on.
    _, second_right, neither = solution.outcomes[(1, 2)]
    assert solution.unfinished_probability(1, 2, 1) == pytest.approx(second_right + neither, abs=1e-12)
    tail = [solution.unfinished_probability(3, 3, n) for n in (10, 20, 50)]
    assert tail[0] > tail[1] > tail[2] and tail[2] < 1e-7
    strategy = solution.strategy(3, 2)
    assert strategy.first_hold.sum() == pytest.approx(1)
    with pytest.raises(ValueError, match="first_matches=4 is out of range; allowed: 1 to 3"):
        solution.first_bidder_win_probability(4, 1)


def test_equilibrium_agent_in_play_wins_as_predicted():
    """From (1, 2) the first bidder should win 69.1% of equilibrium-against-equilibrium games."""
    rules = SpoofRules(matches=(1, 2))
    agents = [make_agent("spoof", "equilibrium", rules.params, seed=s) for s in (1, 2)]
    results = play_games(rules, agents, 4000, seed=7)
    first_seat_wins = np.mean([results[g, g % 2] > 0 for g in range(len(results))])
    expected = cached_solution(2).first_bidder_win_probability(1, 2)
    assert abs(first_seat_wins - expected) < 4 * math.sqrt(expected * (1 - expected) / 4000)


def test_the_equilibrium_agents_share_one_cache_of_solutions():
    """Every agent module's ``cached_solution`` is a door to the one cache
    (:func:`hiddenhand.solvers.cache.solved`): asked again, it answers from it."""
    from hiddenhand.solvers.cache import solved

    first = cached_solution(2)
    hits = solved.cache_info().hits
    assert cached_solution(2) is first and solved.cache_info().hits == hits + 1
