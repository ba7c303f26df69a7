"""The win/loss Goofspiel solver against independent computations: a plain recursion with
HiGHS over unreduced states (hands, prizes, score difference), OpenSpiel's exact best
response, and the game's symmetries."""

import itertools
import json

import numpy as np
import pyspiel
import pytest
from goofspiel_reference import plain_winloss_values
from open_spiel.python.algorithms.expected_game_score import policy_value

import hiddenhand.openspiel as ho
from hiddenhand.agents import GoofspielHeuristic, RandomAgent, load_agent
from hiddenhand.agents.goofspiel_equilibrium import GoofspielEquilibriumAgent
from hiddenhand.cli import main
from hiddenhand.envs import goofspiel_v0
from hiddenhand.envs.goofspiel import GoofspielRules
from hiddenhand.files import save_npz
from hiddenhand.registry import get
from hiddenhand.solvers.goofspiel import GoofspielSolution, WinLossSolution, solve
from hiddenhand.solvers.goofspiel.certificate import certify
from hiddenhand.solvers.goofspiel.histories import best_response_value
from hiddenhand.solvers.goofspiel.patterns import card_positions
from hiddenhand.solvers.goofspiel.winloss import head_to_head


def win_loss(n):
    return GoofspielRules(num_cards=n, scoring="win_loss")


@pytest.fixture(scope="module")
def solutions():
    return {n: solve(n, progress=False, scoring="win_loss") for n in range(1, 8)}


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_every_state_matches_a_plain_recursion(n, solutions):
    reference = plain_winloss_values(n)
    assert len(reference) > 0
    for (a, b, p, d), expected in reference.items():
        assert solutions[n].value(a, b, p, d) == pytest.approx(expected, abs=1e-9)


def test_six_cards_against_the_plain_recursion_up_to_two_cards_a_hand():
    """At 6 cards the recursion over every state takes many minutes (the benchmark runs it
    whole: ``benchmarks/bench_goofspiel_winloss.py --check 6``); here the states with up to two
    cards a hand, whose differences reach further than at 5 cards."""
    solution = solve(6, progress=False, scoring="win_loss")
    reference = plain_winloss_values(6, max_hand=2)
    assert {len(a) for a, _, _, _ in reference} == {0, 1, 2}
    for (a, b, p, d), expected in reference.items():
        assert solution.value(a, b, p, d) == pytest.approx(expected, abs=1e-9)


def test_the_game_is_worth_zero_and_the_symmetries_hold(solutions):
    for n, solution in solutions.items():
        full = tuple(range(1, n + 1))
        assert solution.value(full, full, full) == pytest.approx(0.0, abs=1e-12)
    solution, cards = solutions[7], range(1, 8)
    for a, b in itertools.product(itertools.combinations(cards, 3), repeat=2):
        for p in [(1, 2, 3), (2, 5, 7), (4, 6, 7)]:
            reach = min(28 - sum(p), sum(p))
            values = [solution.value(a, b, p, d) for d in range(-reach, reach + 1)]
            assert np.all(np.diff(values) >= -1e-12)  # more points never hurt
            mirrored = [-solution.value(b, a, p, -d) for d in range(-reach, reach + 1)]
            assert values == pytest.approx(mirrored, abs=1e-12)
    assert solution.value((1, 2), (3, 4), (1, 2), 3) == 0.0  # B takes both: 3 points, a tie
    assert solution.value((1, 2), (3, 4), (1, 2), 4) == 1.0  # decided: more than 3 points lead
    assert solution.value((3, 4), (1, 2), (5, 6), -10) == 1.0  # A takes 11 points


def test_equilibrium_is_unexploitable_by_openspiel_best_response(solutions):
    game = pyspiel.load_game("hiddenhand_goofspiel(num_cards=4,scoring=win_loss)")
    agent = GoofspielEquilibriumAgent(win_loss(4), solutions[4])
    assert agent.uses_score
    assert abs(ho.nash_conv(game, agent)) < 1e-9


def test_best_response_over_histories_agrees_with_openspiel_under_win_loss():
    rules = win_loss(4)
    game = pyspiel.load_game("hiddenhand_goofspiel(num_cards=4,scoring=win_loss)")
    for agent in (RandomAgent(), GoofspielHeuristic("easy"), GoofspielHeuristic("hard")):
        ours = best_response_value(agent, rules, 0) + best_response_value(agent, rules, 1)
        assert ours == pytest.approx(ho.nash_conv(game, agent), abs=1e-9)
        assert ours > 0.1


@pytest.mark.parametrize("n", [3, 5])
def test_the_exploitability_command_measures_the_win_loss_equilibrium(n, solutions):
    measured = get("goofspiel").measure_exploitability(
        win_loss(n), GoofspielEquilibriumAgent(win_loss(n), solutions[n])
    )
    assert measured.exact and abs(measured.nash_conv) < 1e-9
    assert measured.method == "dynamic programme over histories"


def test_files_checkpoints_and_scorings_kept_apart(solutions, tmp_path):
    path = solutions[5].save(tmp_path / "wl5.npz")
    loaded = GoofspielSolution.load(path)
    assert isinstance(loaded, WinLossSolution)
    assert np.array_equal(loaded.first_move_table(), solutions[5].first_move_table())
    points = solve(5, progress=False).save(tmp_path / "p5.npz")
    with pytest.raises(ValueError, match="holds a point_difference solution, not a win_loss one"):
        WinLossSolution.load(points)
    folder = tmp_path / "levels"
    solve(6, progress=False, checkpoint=folder, scoring="win_loss")
    (folder / "level_06.npy").unlink()  # interrupted during the last level, before the manifest recorded it
    manifest = json.loads((folder / "manifest.json").read_text())
    del manifest["sha256"]["6"]
    (folder / "manifest.json").write_text(json.dumps(manifest))
    resumed = solve(6, progress=False, checkpoint=folder, scoring="win_loss")
    again = solve(6, progress=False, scoring="win_loss")
    for k in range(7):
        assert np.array_equal(np.asarray(resumed.levels[k]), again.levels[k], equal_nan=True)
    with pytest.raises(ValueError, match="belongs to another solve"):
        solve(6, progress=False, checkpoint=folder)  # points from a win/loss checkpoint
    with pytest.raises(ValueError, match="apply to point-difference solves"):
        solve(4, scoring="win_loss", bases=tmp_path / "b")
    with pytest.raises(ValueError, match="certify covers point-difference solutions, not win_loss"):
        certify(solutions[4])


def test_a_format_1_file_with_every_patterns_row_still_loads(solutions, tmp_path):
    """Win/loss files written before levels kept one pattern of each mirror pair (format 1)
    hold a row for every pattern; one is written here from the values the solution answers
    for every pair of hands, and reads back the same answers, mirrored patterns included."""
    solution = solutions[4]
    indexer, levels, states = solution.indexer, {}, []
    for k in range(5):
        diffs = solution.differences[k]
        rows = np.full((len(indexer.patterns(k)), diffs.width), np.nan)
        for pattern, index in indexer.patterns(k).items():
            hand_a, hand_b = ([i + 1 for i in seat] for seat in card_positions(pattern))
            for prizes, q in indexer.prizes(k).items():
                for d in range(-diffs.radius[q], diffs.radius[q] + 1):
                    if diffs.reachable[diffs.offset[q] + diffs.radius[q] + d]:
                        value = solution.value(hand_a, hand_b, prizes, d)
                        rows[index, diffs.offset[q] + diffs.radius[q] + d] = value
                        states.append((hand_a, hand_b, prizes, d, value))
        levels[f"level_{k}"] = rows
    path = save_npz(tmp_path / "old.npz", {"format": 1, "num_cards": 4, "scoring": "win_loss"}, levels)
    loaded = GoofspielSolution.load(path)
    assert len(states) > 500 and {len(a) for a, _, _, _, _ in states} == {0, 1, 2, 3, 4}
    assert all(loaded.value(a, b, p, d) == value for a, b, p, d, value in states)
    assert np.array_equal(loaded.first_move_table(), solution.first_move_table())


def test_queries(solutions):
    s = solutions[5]
    assert s.value((1, 2), (3, 4), (1, 2), 9) == 1.0  # decided: a lead above the 3 points left
    with pytest.raises(ValueError, match="diff=6 cannot happen"):
        s.value((1, 2, 3, 4), (2, 3, 4, 5), (1, 2, 3, 4), 6)  # only the 5 was played
    # Both holding 1 and 2, prizes 1 and 2 left: a tie keeps the score, and a split gives
    # d + 1 or d - 1 (the 2 bid takes the 2 prize or loses the 1 prize), so by hand the
    # leader wins, the trailer loses and a level score stays level. With 3, 4 and 5 played,
    # every difference up to 3 is reachable (1 = 4 - 3, 2 = 5 - 3).
    assert [s.value((1, 2), (1, 2), (1, 2), d) for d in range(-3, 4)] == [-1, -1, -1, 0, 1, 1, 1]
    # With only 4 and 5 played, 0, 1, 4, 5 and 9 are reachable, and 2, 3 and 6 are not.
    for d in (2, -3, 6):
        with pytest.raises(ValueError, match=rf"diff={d} cannot happen .* played, \[4, 5\], .* never add up to {d}"):
            s.value((1, 2, 3), (1, 2, 3), (1, 2, 3), d)
    assert s.value((1, 2, 3), (1, 2, 3), (1, 2, 3), 1) > 0.0
    assert not hasattr(s, "strategy_table")  # a sibling of the points solution, not a subclass refusing its tables
    # Level, both holding 1 and 2, the 2 turned: bidding the 2 strictly dominates for both
    # (the matrix by hand is [[0, -1], [1, 0]]), and so does the value 0.
    mine, theirs = s.strategy((1, 2), (1, 2), (1, 2), 2, diff=0)
    assert mine == theirs == {2: 1.0}


def test_equilibrium_agent_plays_win_loss(solutions, tmp_path):
    rules = win_loss(5)
    agent = GoofspielEquilibriumAgent(rules, solutions[5], seed=0)
    env = goofspiel_v0.env(num_cards=5, scoring="win_loss")
    env.reset(seed=3)
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else agent.act(obs))
    with pytest.raises(ValueError, match="the solution is scored win_loss; the game is scored point_difference"):
        GoofspielEquilibriumAgent(5, solutions[5])
    path = solutions[5].save(tmp_path / "wl5.npz")
    from_file = load_agent("goofspiel", str(path), rules.params)
    state = rules.new_initial_state()
    state.apply(0)
    assert np.allclose(from_file.policy(state.observation(0)), solutions[5].first_move_table()[:, 0])


def test_solve_command(capsys, tmp_path):
    assert main(["solve", "goofspiel", "--cards", "4", "--scoring", "win_loss", "--out", str(tmp_path / "w.npz")]) == 0
    out = capsys.readouterr().out
    assert "Goofspiel, 4 cards, scored win_loss" in out and "saved to" in out
    for args, message in [
        (["--load", str(tmp_path / "w.npz")], "pass --scoring win_loss"),
        (["--scoring", "win_loss", "--certify"], "--certify covers point-difference solutions"),
    ]:
        with pytest.raises(SystemExit) as stop:
            main(["solve", "goofspiel", "--cards", "4", *args])
        assert stop.value.code == 2 and message in capsys.readouterr().err


def test_head_to_head_against_the_points_equilibrium_equals_openspiel(solutions):
    """The exact recursion along both strategies against OpenSpiel's expected returns of the
    two agents, in both seats and under both scorings."""
    points = solve(4, progress=False)
    result, difference = head_to_head(solutions[4], points)
    assert result > 0.01 and difference < -0.01  # it wins more often, by fewer points
    for scoring, expected in (("win_loss", result), ("point_difference", difference)):
        game = pyspiel.load_game(f"hiddenhand_goofspiel(num_cards=4,scoring={scoring})")
        ours = ho.agent_policy(game, GoofspielEquilibriumAgent(win_loss(4), solutions[4]))
        theirs = ho.agent_policy(game, GoofspielEquilibriumAgent(4, points))
        assert policy_value(game.new_initial_state(), [ours, theirs])[0] == pytest.approx(expected, abs=1e-12)
        assert policy_value(game.new_initial_state(), [theirs, ours])[1] == pytest.approx(expected, abs=1e-12)
