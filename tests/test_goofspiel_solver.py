"""The exact Goofspiel solver against independent computations: the published 5-card
table, a plain recursion with HiGHS over unreduced states, OpenSpiel's best response."""

import itertools
import json
from pathlib import Path

import numpy as np
import pyspiel
import pytest
from goofspiel_reference import highs_value, plain_values

import hiddenhand.openspiel as ho
from hiddenhand.agents import GoofspielHeuristic, RandomAgent, load_agent
from hiddenhand.agents.goofspiel_equilibrium import GoofspielEquilibriumAgent
from hiddenhand.cli import main
from hiddenhand.envs import goofspiel_v0
from hiddenhand.envs.goofspiel import GoofspielRules
from hiddenhand.files import load_npz, save_npz
from hiddenhand.solvers.goofspiel import PointsSolution, exploitability, solve
from hiddenhand.solvers.goofspiel.patterns import level_patterns
from hiddenhand.solvers.matrix_game import solve_game
from hiddenhand.solvers.simplex import _error, _rebuild

REFERENCE = Path(__file__).resolve().parent / "data" / "goofspiel_first_move_n5.csv"


@pytest.fixture(scope="module")
def solutions():
    return {n: solve(n, progress=False) for n in range(1, 8)}


def test_matrix_games_against_highs(rng):
    for _ in range(400):
        rows, cols = rng.integers(1, 8, size=2)
        m = rng.integers(-3, 4, size=(rows, cols)) * rng.choice([1.0, 0.37, 13.0]) + rng.choice(
            [0.0, 1e-13], size=(rows, cols)
        )
        value, x, y = solve_game(m)
        assert value == pytest.approx(highs_value(m), abs=1e-9)
        assert x.sum() == pytest.approx(1) and y.sum() == pytest.approx(1) and x.min() >= -1e-12 and y.min() >= -1e-12
        assert (x @ m).min() >= value - 1e-9 and (m @ y).max() <= value + 1e-9


def test_round_off_regression():
    """A 13-card level-6 game whose rows differ by 1e-14: a naive simplex saw an unbounded
    column here and divided by zero."""
    m = np.array(
        [
            [
                -29.241046706453282,
                -32.64953286290237,
                -28.547991911808538,
                -26.31763363906149,
                -24.095185404793938,
                -24.095185404793938,
            ],
            [
                -24.241046706453282,
                -32.64953286290236,
                -28.54799191180854,
                -26.31763363906149,
                -24.095197328265606,
                -24.095197328265606,
            ],
            [
                -24.241046706453282,
                -32.64953286290236,
                -28.54799191180854,
                -26.31763363906149,
                -24.095197328265606,
                -24.095197328265606,
            ],
            [
                -24.241046706453282,
                -32.64953286290236,
                -28.54799191180854,
                -26.31763363906149,
                -24.095197328265606,
                -24.095197328265606,
            ],
            [
                -26.224776765701087,
                -22.649532862902362,
                -32.64953286290236,
                -30.33319196692819,
                -28.248864562676694,
                -28.248864562676694,
            ],
            [
                -30.921649484536083,
                -29.0,
                -24.768413398985142,
                -29.768413398985142,
                -34.768413398985146,
                -34.768413398985146,
            ],
        ]
    )
    assert solve_game(m)[0] == pytest.approx(highs_value(m), abs=1e-9)


def test_a_wrecked_tableau_has_an_infinite_error():
    """Round-off can leave a tableau whose row strategy (the slacks' reduced costs) is all
    negative, or whose objective is not positive: the check must call that answer
    infinitely wrong, so that the simplex tries again, rather than divide by zero (which
    stopped a 13-card solve at level 8)."""
    m = np.array([[1.0, -1.0], [-1.0, 1.0]])
    tableau = np.zeros((3, 5))
    basis = np.array([0, 1])
    tableau[:2, 4] = 0.25
    tableau[2, 4] = 0.5
    tableau[2, 2:4] = [-0.1, -0.2]  # no row strategy
    assert _error(m, 2.0, tableau, basis) == np.inf
    tableau[2, 2:4] = [0.25, 0.25]
    assert _error(m, 2.0, tableau, basis) < 1e-12  # the true answer: both players mix evenly
    tableau[2, 4] = 0.0
    assert _error(m, 2.0, tableau, basis) == np.inf


def test_a_singular_basis_is_not_rebuilt():
    """Pivots on round-off can reach a basis whose matrix is singular (an 11-card win/loss
    game did, where numpy's solve raised and stopped the solve): the rebuild declines it and
    leaves the tableau, so that the simplex tries its stricter tolerances instead."""
    m = np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 1.0, 1.0]])  # columns 0 and 1 equal
    tableau = np.full((4, 7), 7.0)
    assert not _rebuild(m, 1.0, tableau, np.array([0, 1, 5]))  # y_0 and y_1 basic: singular
    assert (tableau == 7.0).all()
    assert _rebuild(m, 1.0, tableau, np.array([0, 4, 5]))  # y_0 and two slacks: invertible
    assert tableau[:3, 0] == pytest.approx([1.0, 0.0, 0.0])  # y_0's column, pivoted
    assert solve_game(m)[0] == pytest.approx(highs_value(m), abs=1e-12)


def test_published_five_card_table(solutions):
    published = np.loadtxt(REFERENCE, delimiter=",", comments="#", skiprows=5)[:, 1:]
    table = solutions[5].first_move_table()
    assert np.abs(table - published).max() <= 5e-5
    assert np.allclose(table.sum(axis=0), 1.0)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_every_state_matches_a_plain_recursion(n, solutions):
    solution = solutions[n] if n in solutions else solve(n, progress=False)
    for (a, b, p), expected in plain_values(n).items():
        assert solution.value(a, b, p) == pytest.approx(expected, abs=1e-9)


def test_pattern_counts_and_antisymmetry(solutions):
    assert [len(level_patterns(k, 13)) for k in range(14)] == [
        1,
        3,
        13,
        63,
        321,
        1683,
        8989,
        45207,
        117295,
        110641,
        37401,
        4423,
        157,
        1,
    ]
    solution = solutions[7]
    cards = range(1, 8)
    for a in itertools.combinations(cards, 3):
        for b in itertools.combinations(cards, 3):
            for p in [(1, 2, 3), (2, 5, 7), (4, 6, 7)]:
                assert solution.value(a, b, p) == pytest.approx(-solution.value(b, a, p), abs=1e-12)
    full = tuple(cards)
    assert solution.value(full, full, full) == pytest.approx(0.0, abs=1e-12)


def test_shortcuts_change_no_value(solutions):
    """One pattern of each mirror pair is solved and the other copied, and each game starts
    from its neighbour's basis: every value is the plain solver's (every pattern, the
    simplex from scratch) to 1e-12, mirrors are exactly negated, and identical hands, the
    one pattern a level has that is its own mirror, are worth exactly 0."""
    solution = solutions[7]
    plain = solve(7, progress=False, shortcuts=False)
    for k, (mine, theirs) in enumerate(zip(solution.levels, plain.levels)):
        np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-12)
        kept, copies = solution.indexer.halves(k)
        mirror = solution.indexer.mirrors(k)
        assert np.array_equal(mine[copies], -mine[mirror[copies]])
        (same,) = kept[mirror[kept] == kept]
        assert solution.indexer.patterns(k)[(2,) * k] == same and not mine[same].any()
    with pytest.raises(ValueError, match="shortcuts=False"):
        solve(4, progress=False, scoring="win_loss", shortcuts=False)


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_equilibrium_is_unexploitable(n, solutions):
    assert abs(exploitability(GoofspielEquilibriumAgent(n, solutions[n]), n)) < 1e-9


def test_exploitability_agrees_with_openspiel_best_response():
    game = pyspiel.load_game("hiddenhand_goofspiel(num_cards=4)")
    for agent in (RandomAgent(), GoofspielHeuristic("easy"), GoofspielHeuristic("medium"), GoofspielHeuristic("hard")):
        assert exploitability(agent, 4) == pytest.approx(ho.nash_conv(game, agent) / 2, abs=1e-9)
    assert exploitability(RandomAgent(), 4) == pytest.approx(2.5)  # OpenSpiel's uniform NashConv at 4 cards: 2.5


def test_strategies_are_equilibria_of_their_matrix_games(solutions):
    solution = solutions[6]
    a, b, p = (1, 3, 4, 6), (2, 3, 5, 6), (1, 2, 5, 6)
    for upcard in p:
        mine, theirs = solution.strategy(a, b, p, upcard)
        rest = [c for c in p if c != upcard]
        m = np.array(
            [[((x > y) - (x < y)) * upcard + solution.value(set(a) - {x}, set(b) - {y}, rest) for y in b] for x in a]
        )
        x = np.array([mine.get(c, 0.0) for c in a])
        y = np.array([theirs.get(c, 0.0) for c in b])
        value = highs_value(m)
        assert (x @ m).min() >= value - 1e-9 and (m @ y).max() <= value + 1e-9


def test_bad_queries(solutions):
    s = solutions[5]
    with pytest.raises(ValueError, match="equal sizes"):
        s.value([1, 2], [3], [4])
    with pytest.raises(ValueError, match=r"hand_a=\[1, 9\] must be distinct cards from 1 to 5"):
        s.value([1, 9], [2, 3], [4, 5])
    with pytest.raises(ValueError, match="upcard=1 is not among the prizes"):
        s.strategy([1, 2], [1, 2], [4, 5], 1)
    with pytest.raises(ValueError, match="num_cards=14 is out of range"):
        solve(14)


def test_save_load_and_damaged_files(solutions, tmp_path):
    path = solutions[6].save(tmp_path / "g6.npz")
    loaded = PointsSolution.load(path)
    for mine, theirs in zip(loaded.levels, solutions[6].levels):
        assert np.array_equal(mine, theirs)
    # The file keeps one pattern of each mirror pair (format 2); format-1 files, which
    # keep every pattern, still load.
    meta, arrays = load_npz(path, "test")
    assert meta["format"] == 2 and len(arrays["level_6"]) == len(solutions[6].indexer.halves(6)[0])
    levels = {f"level_{k}": np.asarray(level) for k, level in enumerate(solutions[6].levels)}
    old = save_npz(tmp_path / "format1.npz", {"format": 1, "num_cards": 6}, levels)
    assert all(np.array_equal(a, b) for a, b in zip(PointsSolution.load(old).levels, solutions[6].levels))
    assert old.stat().st_size > 1.5 * path.stat().st_size  # headers aside, twice
    with pytest.raises(ValueError, match="solves 6 cards, not 7"):
        PointsSolution.load(path, num_cards=7)
    data = path.read_bytes()
    (tmp_path / "short.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="truncated, corrupt"):
        PointsSolution.load(tmp_path / "short.npz")
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0xFF  # one byte inside a level's data
    (tmp_path / "flipped.npz").write_bytes(bytes(flipped))
    with pytest.raises(ValueError, match="checksum|corrupt"):
        PointsSolution.load(tmp_path / "flipped.npz")


def test_checkpoint_resumes_after_the_last_complete_level(tmp_path, solutions):
    folder = tmp_path / "levels"
    solve(6, progress=False, checkpoint=folder)
    # As if interrupted during level 5, after its file was written but before the manifest
    # recorded it: a recorded level is whole (a damaged one is refused: test_files.py).
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["sha256"] = {k: v for k, v in manifest["sha256"].items() if int(k) < 5}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    (folder / "level_06.npy").unlink()
    (folder / "level_05.npy").write_bytes(b"garbage")  # not recorded: overwritten
    resumed = solve(6, progress=False, checkpoint=folder)
    for k in range(7):
        assert np.array_equal(np.asarray(resumed.levels[k]), np.asarray(solutions[6].levels[k]))
    with pytest.raises(ValueError, match="belongs to another solve"):
        solve(5, progress=False, checkpoint=folder)


def test_equilibrium_agent_plays_and_refuses_other_games(solutions, tmp_path):
    agent = GoofspielEquilibriumAgent(5, solutions[5], seed=0)
    env = goofspiel_v0.env(num_cards=5)
    env.reset(seed=3)
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else agent.act(obs))
    hidden = GoofspielRules(num_cards=5, reveal_bids=False).new_initial_state()
    hidden.apply(0)
    with pytest.raises(ValueError, match="revealed bids"):
        agent.policy(hidden.observation(0))
    with pytest.raises(ValueError, match="exact equilibrium is of the game"):
        load_agent("goofspiel", "equilibrium", GoofspielRules(num_cards=5, prize_order="descending").params)
    with pytest.raises(ValueError, match="hiddenhand solve goofspiel --cards 12"):
        load_agent("goofspiel", "equilibrium", GoofspielRules(num_cards=12).params)
    path = solutions[5].save(tmp_path / "g5.npz")
    from_file = load_agent("goofspiel", str(path), GoofspielRules(num_cards=5).params)
    state = GoofspielRules(num_cards=5).new_initial_state()
    state.apply(0)
    assert np.allclose(from_file.policy(state.observation(0)), solutions[5].first_move_table()[:, 0])


def test_solve_command(capsys, tmp_path):
    assert main(["solve", "goofspiel", "--cards", "5", "--out", str(tmp_path / "g5.npz")]) == 0
    out = capsys.readouterr().out
    assert "  2  0.8327" in out and "odd " in out and "*" in out and "saved to" in out
    assert main(["solve", "goofspiel", "--cards", "3", "--csv"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "bid,upcard_1,upcard_2,upcard_3" and len(lines) == 4
