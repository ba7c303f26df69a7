"""Certifying Goofspiel solutions (``hiddenhand.solvers.goofspiel.certificate``), with and without the
stored optimal bases, and the bulk strategy table, held to the reference dynamic programme
over hands, to the simplex and to per-position queries."""

import itertools
import re

import numpy as np
import pytest

from hiddenhand.agents.goofspiel_equilibrium import GoofspielEquilibriumAgent
from hiddenhand.cli import main
from hiddenhand.solvers.goofspiel import PointsSolution, solve
from hiddenhand.solvers.goofspiel.certificate import certify
from hiddenhand.solvers.goofspiel.histories import exploitability
from hiddenhand.solvers.goofspiel.patterns import pattern_of
from hiddenhand.solvers.goofspiel.storage import save_level
from hiddenhand.solvers.matrix_game import solve_game, strategies_from_basis, value_and_basis


@pytest.fixture(scope="module")
def solutions():
    return {n: solve(n, progress=False) for n in range(2, 9)}


def noised(solution: PointsSolution, k: int, seed: int = 0) -> PointsSolution:
    """``solution`` with the values of level ``k`` disturbed: the strategies of level k + 1 change."""
    levels = [level.copy() for level in solution.levels]
    levels[k] = levels[k] + np.random.default_rng(seed).normal(0.0, 1.0, levels[k].shape)
    return PointsSolution(solution.num_cards, levels)


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
        exploitability(GoofspielEquilibriumAgent(n, exact), n), abs=1e-9
    )
    bad = noised(exact, n - 2)
    found = certify(bad, progress=False)
    assert found.exploitability > 0.01
    assert found.exploitability == pytest.approx(exploitability(GoofspielEquilibriumAgent(n, bad), n), abs=1e-9)
    assert found.residual > 0.01  # level n - 2 no longer follows from level n - 3


def test_the_residual_catches_values_that_keep_the_strategies(solutions):
    """Adding a constant to every value of a level moves no strategy above it (every game
    there shifts by that constant), so only the residual notices."""
    levels = [level.copy() for level in solutions[6].levels]
    levels[3] += 0.25
    found = certify(PointsSolution(6, levels), progress=False)
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
    assert f"loaded from {path}" in out
    # Mirrored states are stored negated, not re-solved: their own games agree to round-off.
    assert float(re.search(r"fixed-point residual of the values: (\S+) ", out).group(1)) < 1e-12
    with pytest.raises(SystemExit):
        main(["solve", "goofspiel", "--cards", "5", "--load", path])
    assert "pass --cards 4" in capsys.readouterr().err


def rebuilt(m: np.ndarray, mask: int):
    k = m.shape[0]
    x = np.empty(k)
    ok, lower, upper = strategies_from_basis(
        m, mask, x, np.empty((k, k)), np.empty(k), np.empty(k), np.empty(3 * k, dtype=np.int64)
    )
    return ok, lower, upper, x


def test_a_stored_basis_gives_back_the_simplex_strategy(rng):
    """Random square games, many with tied rows and columns (degenerate bases): the value
    is the simplex's to the bit, the strategy rebuilt from the basis is the simplex's row
    strategy, and the bracket it proves holds the value."""
    for _ in range(400):
        k = int(rng.integers(1, 10))
        m = rng.integers(-3, 4, size=(k, k)) * rng.choice([1.0, 0.37, 13.0]) + rng.choice([0.0, 1e-13], size=(k, k))
        value, mask = value_and_basis(m, np.empty((k + 1, 2 * k + 1)), np.empty(k, dtype=np.int64))
        expected, x0, _ = solve_game(m)
        assert value == expected
        assert bin(mask).count("1") % 2 == 0 and mask < 1 << (2 * k)
        ok, lower, upper, x = rebuilt(m, mask)
        assert ok and lower - 1e-12 <= value <= upper + 1e-12
        np.testing.assert_allclose(x, np.maximum(x0, 0) / np.maximum(x0, 0).sum(), rtol=0, atol=1e-9)


def test_a_wrong_basis_is_not_trusted():
    """Matching pennies: its only equilibrium mixes both rows, so neither pure basis nor a
    mask with unequal sides proves anything; the full basis does."""
    m = np.array([[1.0, -1.0], [-1.0, 1.0]])
    assert not rebuilt(m, 0b0101)[0]  # row 0 against column 0: a pure "saddle" it is not
    assert not rebuilt(m, 0b0111)[0]  # two rows, one column
    assert not rebuilt(m, 0)[0]
    ok, lower, upper, x = rebuilt(m, 0b1111)
    assert ok and lower == pytest.approx(0.0) and upper == pytest.approx(0.0)
    np.testing.assert_allclose(x, [0.5, 0.5])


@pytest.fixture(scope="module")
def with_bases(tmp_path_factory):
    """Solutions of 2 to 8 cards solved again, writing their bases: ``{n: (solution, folder)}``."""
    out = {}
    for n in range(2, 9):
        folder = tmp_path_factory.mktemp(f"bases{n}")
        out[n] = (solve(n, progress=False, bases=folder), folder)
    return out


@pytest.mark.parametrize("n", range(2, 9))
def test_certifying_from_bases_is_certifying_by_the_simplex(n, solutions, with_bases):
    solution, folder = with_bases[n]
    for mine, theirs in zip(solution.levels, solutions[n].levels):
        # Recording the simplex's own bases (no warm starts) changes no value beyond round-off.
        np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-12)
    found = certify(solution, progress=False, bases=folder)
    assert found.levels_from_bases == tuple(range(1, n + 1)) and found.re_solved == 0
    assert found.exploitability == pytest.approx(certify(solution, progress=False).exploitability, abs=1e-12)
    assert abs(found.exploitability) < 1e-9 and found.residual < 1e-12


def test_damaged_bases_cost_time_not_correctness(solutions, with_bases, tmp_path):
    """Random masks in place of level 6's: the games whose mask proves nothing are
    re-solved, and the certificate is the simplex's, on the exact and on a disturbed
    solution alike."""
    solution, folder = with_bases[7]
    file = folder / "bases_06.npy"
    masks = np.load(file)
    np.save(file, np.random.default_rng(1).integers(0, 1 << 12, masks.shape, dtype=np.uint32))
    try:
        found = certify(solution, progress=False, bases=folder)
    finally:
        np.save(file, masks)
    assert found.re_solved > masks.size // 2
    assert abs(found.exploitability) < 1e-9 and found.residual < 1e-12


def test_bases_of_another_solution_are_refused(solutions, with_bases, tmp_path):
    _, folder = with_bases[6]
    with pytest.raises(ValueError, match="another solve"):
        certify(noised(solutions[6], 3), progress=False, bases=folder)
    with pytest.raises(ValueError, match="6-card solve"):
        certify(solutions[5], progress=False, bases=folder)
    with pytest.raises(ValueError, match="does not exist"):
        certify(solutions[5], progress=False, bases=tmp_path / "nowhere")


def test_levels_resumed_from_a_checkpoint_have_no_bases(tmp_path):
    """A solve interrupted after level 4 (its checkpoint holds levels 1 to 4) and resumed
    with bases writes them for levels 5 and 6 only; the certificate re-solves the first
    four and is still exact."""
    full = solve(6, progress=False)
    ckpt = tmp_path / "resume"
    ckpt.mkdir()
    for k in range(1, 5):
        save_level(ckpt, k, full.levels[k], 6)
    resumed = solve(6, progress=False, checkpoint=ckpt, bases=tmp_path / "b")
    found = certify(resumed, progress=False, bases=tmp_path / "b")
    assert found.levels_from_bases == (5, 6) and found.re_solved == 0
    assert abs(found.exploitability) < 1e-9


def test_certify_command_with_bases(capsys, tmp_path):
    path, folder = str(tmp_path / "g5.npz"), str(tmp_path / "bases")
    assert main(["solve", "goofspiel", "--cards", "5", "--bases", folder, "--out", path]) == 0
    capsys.readouterr()
    assert main(["solve", "goofspiel", "--cards", "5", "--load", path, "--bases", folder, "--certify"]) == 0
    out = capsys.readouterr().out
    assert "rebuilt from the stored bases of 5 of 5 levels, 0 games re-solved" in out


def test_a_game_the_simplex_gets_wrong_is_solved_from_the_other_seat():
    """A 13-card level-7 game (identical rows and columns up to 1e-7) on which every retry
    of the simplex stopped 4e-8 from the value, and so did the solve's value for its
    state. ``value_and_basis`` then solves the same game from the other seat (``-M'``),
    exact here: its value is the other seat's to round-off, and its basis proves it."""
    # Its distinct rows and columns (the hands' cards that tie in every way), spread out.
    distinct = np.array(
        [
            [-33.48163398710398, -40.175710568907256, -38.52489721263477, -35.54524065715455],
            [-26.481633987103983, -40.175710568907256, -38.52489721263477, -35.54524073697844],
            [-26.876484830408913, -33.175710568907256, -39.00132568080905, -36.187659021341716],
            [-27.28402645633644, -26.175710568907256, -39.448130234371575, -36.83596419176237],
            [-28.542302918308373, -28.0, -25.448130234371575, -39.448130234371575],
        ]
    )
    m = distinct[[0, 1, 1, 1, 2, 3, 4]][:, [0, 1, 2, 3, 3, 3, 3]]
    k = len(m)
    value, mask = value_and_basis(m, np.empty((k + 1, 2 * k + 1)), np.empty(k, dtype=np.int64))
    other, _ = value_and_basis(-m.T, np.empty((k + 1, 2 * k + 1)), np.empty(k, dtype=np.int64))
    ok, lower, upper, _ = rebuilt(m, mask)
    assert ok and lower - 1e-12 <= value <= upper + 1e-12 and upper - lower < 1e-12
    assert value == pytest.approx(-other, abs=1e-12)
