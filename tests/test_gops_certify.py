"""Certifying Goofspiel solutions (``hiddenhand.solvers.gops_certify``) and the bulk strategy
table, held to the reference dynamic programme over hands and to per-position queries."""

import itertools

import numpy as np
import pytest

from hiddenhand.agents.gops_equilibrium import GopsEquilibriumAgent
from hiddenhand.cli import main
from hiddenhand.solvers.gops import GopsSolution, pattern_of, solve
from hiddenhand.solvers.gops_best_response import exploitability
from hiddenhand.solvers.gops_certify import certify
from hiddenhand.solvers.matrix_game import solve_game


@pytest.fixture(scope="module")
def solutions():
    return {n: solve(n, progress=False) for n in range(2, 9)}


def noised(solution: GopsSolution, k: int, seed: int = 0) -> GopsSolution:
    """``solution`` with the values of level ``k`` disturbed: the strategies of level k + 1 change."""
    levels = [level.copy() for level in solution.levels]
    levels[k] = levels[k] + np.random.default_rng(seed).normal(0.0, 1.0, levels[k].shape)
    return GopsSolution(solution.num_cards, levels)


def test_the_row_strategy_survives_a_round_off_pivot():
    """A 9-card level-5 game (three equal rows, two equal columns) that certifying the
    9-card solution exposed: the simplex pivoted on a 1.5e-11 entry that is 0 in exact
    arithmetic, and the row strategy it read off the corrupted tableau summed to 0.976 and
    guaranteed 0.13 points less than the value (exploitability 2e-5 at 9 and 10 cards;
    elsewhere the same flaw put values off by up to 1.1e-6)."""
    m = np.array(
        [
            [-15.897863956468347, -17.38390685233201, -17.38390685233201, -14.872051199593681, -12.593582241832658],
            [-10.897863956468347, -17.38390685233201, -17.38390685233201, -14.872051199593681, -12.59387419548099],
            [-10.897863956468347, -17.38390685233201, -17.38390685233201, -14.872051199593681, -12.59387419548099],
            [-10.897863956468347, -17.38390685233201, -17.38390685233201, -14.872051199593681, -12.59387419548099],
            [-18.0, -14.0, -14.0, -19.0, -24.0],
        ]
    )
    value, x, y = solve_game(m)
    assert value == pytest.approx(-16.287923143673122, abs=1e-12)  # HiGHS
    assert x.sum() == pytest.approx(1.0, abs=1e-12) and y.sum() == pytest.approx(1.0, abs=1e-12)
    assert (x @ m).min() >= value - 1e-12 and (m @ y).max() <= value + 1e-12


@pytest.mark.parametrize("n", range(2, 9))
def test_the_equilibrium_is_certified_unexploitable(n, solutions):
    found = certify(solutions[n], progress=False)
    assert abs(found.exploitability) < 1e-9
    assert found.residual < 1e-12
    assert sorted(found.level_seconds) == list(range(1, n + 1))


@pytest.mark.parametrize("n", [4, 5])
def test_certified_exploitability_is_the_reference_best_response(n, solutions):
    exact = solutions[n]
    assert certify(exact, progress=False).exploitability == pytest.approx(
        exploitability(GopsEquilibriumAgent(n, exact), n), abs=1e-9
    )
    bad = noised(exact, n - 2)
    found = certify(bad, progress=False)
    assert found.exploitability > 0.01
    assert found.exploitability == pytest.approx(exploitability(GopsEquilibriumAgent(n, bad), n), abs=1e-9)
    assert found.residual > 0.01  # level n - 2 no longer follows from level n - 3


def test_the_residual_catches_values_that_keep_the_strategies(solutions):
    """Adding a constant to every value of a level moves no strategy above it (every game
    there shifts by that constant), so only the residual notices."""
    levels = [level.copy() for level in solutions[6].levels]
    levels[3] += 0.25
    found = certify(GopsSolution(6, levels), progress=False)
    assert abs(found.exploitability) < 1e-9
    assert found.residual == pytest.approx(0.25, abs=1e-9)


def test_strategy_table_is_every_position_strategy(solutions):
    solution = solutions[5]
    for k in range(1, 6):
        table = solution.strategy_table(k)
        patterns, prize_sets = solution.indexer.patterns(k), solution.indexer.prizes(k)
        expected = np.full(table.shape, np.nan)
        for hand_a, hand_b in itertools.product(itertools.combinations(range(1, 6), k), repeat=2):
            for prizes in itertools.combinations(range(1, 6), k):
                p, q = patterns[pattern_of(hand_a, hand_b)], prize_sets[prizes]
                for u, upcard in enumerate(prizes):
                    mine, _ = solution.strategy(hand_a, hand_b, prizes, upcard)
                    expected[p, q, u] = [mine.get(card, 0.0) for card in hand_a]
        np.testing.assert_allclose(table, expected, rtol=0, atol=1e-12)  # NaN: a position never visited


def test_strategy_table_on_sampled_positions(solutions, rng):
    solution = solutions[8]
    for k in (2, 5, 7):
        table = solution.strategy_table(k, workers=2)
        patterns, prize_sets = solution.indexer.patterns(k), solution.indexer.prizes(k)
        np.testing.assert_allclose(table.sum(axis=-1), 1.0, atol=1e-9)
        for _ in range(50):
            hand_a, hand_b, prizes = (tuple(sorted(rng.choice(np.arange(1, 9), k, replace=False))) for _ in range(3))
            u = int(rng.integers(k))
            mine, _ = solution.strategy(hand_a, hand_b, prizes, prizes[u])
            row = table[patterns[pattern_of(hand_a, hand_b)], prize_sets[prizes], u]
            np.testing.assert_allclose(row, [mine.get(int(c), 0.0) for c in hand_a], rtol=0, atol=1e-12)


def test_bad_arguments(solutions):
    with pytest.raises(ValueError, match="k=6"):
        solutions[5].strategy_table(6)
    with pytest.raises(ValueError, match="workers=0"):
        certify(solutions[3], workers=0)


def test_certify_command(capsys, tmp_path):
    path = str(tmp_path / "g4.npz")
    assert main(["solve", "goofspiel", "--cards", "4", "--certify", "--out", path]) == 0
    out = capsys.readouterr().out
    assert "exploitability of the equilibrium: " in out and "the solve took" in out and "saved to" in out
    assert main(["solve", "goofspiel", "--cards", "4", "--load", path, "--certify"]) == 0
    out = capsys.readouterr().out
    assert f"loaded from {path}" in out and "fixed-point residual of the values: 0" in out
    with pytest.raises(SystemExit):
        main(["solve", "goofspiel", "--cards", "5", "--load", path])
    assert "pass --cards 4" in capsys.readouterr().err
