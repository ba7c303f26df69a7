"""The trained best responder (``hiddenhand.training.best_response``): a lower bound that
stays below the exact exploitability, recovers most of it on a tiny game, says what it is,
repeats with its seeds, and measures every seat of a three-player game."""

import numpy as np
import pytest

from hiddenhand.agents import RandomAgent
from hiddenhand.envs.goofspiel import GoofspielRules
from hiddenhand.solvers.goofspiel.histories import best_response_value
from hiddenhand.training.best_response import approximate_exploitability

THREE_CARDS = GoofspielRules(num_cards=3)
THREE_HIDDEN = GoofspielRules(num_cards=3, num_players=3, reveal_bids=False)


@pytest.fixture(scope="module")
def against_random():
    return approximate_exploitability(
        THREE_CARDS, RandomAgent(), steps=2048, seeds=(0, 1, 2), eval_games=1200, progress=False
    )


def test_the_lower_bound_recovers_most_of_the_exact_gain_and_never_exceeds_it(against_random):
    # Random play cannot read its seat and the game is symmetric, so its on-policy value is
    # 0 in each seat and the exact gain is the best response's value.
    exact = [best_response_value(RandomAgent(), 3, seat) for seat in (0, 1)]
    for gain, ci, best in zip(against_random.per_seat, against_random.ci95, exact):
        assert 0.0 < ci < 0.25  # 1,200 games of a game worth at most 6 points
        # A figure of a gain that is at most ``best`` exceeds it by two 95% intervals (four
        # standard errors) with probability 3e-5: more would be a figure that is no lower bound.
        assert gain <= best + 2 * ci
        assert gain >= 0.75 * best  # most of it (1.23 and 1.32 of 1.33), from 3 x 2048 moves


def test_the_figure_is_labelled_a_lower_bound(against_random):
    assert against_random.exact is False
    assert len(against_random.ci95) == len(against_random.per_seat) == 2
    assert "lower bound" in against_random.method and "2048 steps × 3 seeds per seat" in against_random.method
    assert "lower bound" in str(against_random)


def test_three_players_hidden_bids_give_three_seats_and_repeat_with_the_seeds():
    agent = RandomAgent(seed=5)
    first = approximate_exploitability(THREE_HIDDEN, agent, steps=512, seeds=(3,), eval_games=200, progress=False)
    again = approximate_exploitability(THREE_HIDDEN, agent, steps=512, seeds=(3,), eval_games=200, progress=False)
    assert len(first.per_seat) == len(first.ci95) == 3
    assert first == again
    assert np.isfinite(first.nash_conv)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(steps=0), "steps=0 is out of range"),
        (dict(eval_games=1), "eval_games=1 is out of range"),
        (dict(seeds=()), "must be one or more distinct integers"),
        (dict(seeds=(1, 1)), "must be one or more distinct integers"),
        (dict(seeds=(-1,)), "seed=-1 is out of range"),
        (dict(seeds="012"), "must be a sequence of integers"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        approximate_exploitability(THREE_CARDS, RandomAgent(), progress=False, **kwargs)
