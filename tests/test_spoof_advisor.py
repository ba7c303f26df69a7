"""The Spoof advisor: hand-computed utilities against the uniform opponent, and against the
equilibrium opponent the values the solvers give."""

import numpy as np
import pytest

from hiddenhand.agents.spoof import cached_solution
from hiddenhand.cli import main
from hiddenhand.solvers.spoof import solve_round
from hiddenhand.solvers.spoof_advisor import advise


def test_uniform_opponent_by_hand():
    # 1 match each, bidding first, holding none. The opponent holds 0 or 1 (half each) and
    # bids uniformly among the totals its hand allows, never our bid. Bid 0: right if they
    # hold 0 (1); if they hold 1 they bid 1 (right, 0) or 2 (nobody, 0.5): (1 + 0.25) / 2.
    # Bid 1: if they hold 0 they must bid 0 and are right (0); if 1 we are right (1).
    # Bid 2: never right; they are right half the time when holding 0, always when holding 1.
    advice = advise(1, 1, "first", hold=0)
    assert advice.kind == "bid"
    assert advice.utilities["uniform"] == pytest.approx([0.625, 0.5, 0.125])
    assert advice.best("uniform") == [0]
    hands = advise(1, 1, "first")
    assert hands.utilities["uniform"] == pytest.approx([0.625, 0.625])  # holding 1 mirrors holding 0


@pytest.mark.parametrize("mine, theirs", [(3, 3), (2, 3), (3, 1)])
def test_against_the_equilibrium_the_best_hand_is_worth_the_round_value(mine, theirs):
    value_first, strategy = solve_round(mine, theirs)
    first = advise(mine, theirs, "first").utilities["equilibrium"]
    assert np.nanmax(first) == pytest.approx(value_first, abs=1e-9)
    # Every hand the equilibrium plays is worth the value (no better deviation, indifference on the support).
    assert first[: mine + 1][strategy.first_hold > 1e-9] == pytest.approx(value_first, abs=1e-9)
    value_second = 1 - solve_round(theirs, mine)[0]
    second = advise(mine, theirs, "second").utilities["equilibrium"]
    assert np.nanmax(second) == pytest.approx(value_second, abs=1e-9)


def test_game_objective_utilities_are_win_probabilities():
    solution = cached_solution(3)
    advice = advise(2, 3, "first", objective="game")
    assert np.nanmax(advice.utilities["equilibrium"]) == pytest.approx(
        solution.first_bidder_win_probability(2, 3), abs=1e-9
    )
    second = advise(2, 3, "second", objective="game")
    assert np.nanmax(second.utilities["equilibrium"]) == pytest.approx(
        1 - solution.first_bidder_win_probability(3, 2), abs=1e-9
    )


def test_forbidden_choices_and_bad_requests():
    hands = advise(2, 3, "first")
    assert list(hands.allowed) == [True, True, True, False]  # holding 3 of 2 matches
    bids = advise(3, 3, "second", hold=1, their_bid=3)
    assert not bids.allowed[3] and bids.allowed.sum() == 6
    with pytest.raises(ValueError, match="first bidder has not seen"):
        advise(3, 3, "first", hold=1, their_bid=2)
    with pytest.raises(ValueError, match="give the first bid"):
        advise(3, 3, "second", hold=1)
    with pytest.raises(ValueError, match="hold=4 is out of range; allowed: 0 to 3"):
        advise(3, 3, "first", hold=4)


def test_cli_solve_and_advise(capsys):
    assert main(["solve", "spoof", "--matches", "2"]) == 0
    out = capsys.readouterr().out
    assert "probability that the first bidder wins" in out and "0.6910" in out
    assert main(["advise", "spoof", "--mine", "3", "--theirs", "2"]) == 0
    out = capsys.readouterr().out
    assert "forbidden" not in out and out.count("*") >= 2
    assert (
        main(["advise", "spoof", "--mine", "3", "--theirs", "3", "--seat", "second", "--hold", "2", "--their-bid", "2"])
        == 0
    )
    assert "forbidden" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["advise", "spoof", "--mine", "0", "--theirs", "3"])
    assert "argument --mine: 0 is out of range" in capsys.readouterr().err


def test_play_spoof_in_the_terminal():
    """One round against the heuristic (with this seed it holds 1 and bids 2): a hand of 5
    and a bid equal to theirs are refused; holding 2 and bidding the total, 3, wins."""
    from hiddenhand.agents import make_agent
    from hiddenhand.envs.spoof import SpoofRules
    from hiddenhand.terminal import play_in_terminal

    rules = SpoofRules(matches=(1, 2), objective="round")
    lines = ["5", "2", "2", "3", "n"]
    seen = []

    def typed(prompt):
        seen.append(prompt)
        return lines.pop(0)

    opponent = make_agent("spoof", "heuristic", rules.params)
    results = play_in_terminal(rules, [opponent], seat=1, seed=0, input_fn=typed, output=seen.append)
    text = "\n".join(seen)
    assert "5 is not allowed; type one of [0, 1, 2]" in text
    assert "2 is your opponent's bid; bid a different total" in text
    assert results == [[0.0, 1.0]] and "You win!" in text
