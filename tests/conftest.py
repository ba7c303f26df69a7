"""Shared test helpers."""

import numpy as np
import pytest

from hiddenhand.core import CHANCE, sample_chance
from hiddenhand.envs.goofspiel import GoofspielRules


def play_out(state, bids_by_round, prizes=None):
    """Play ``bids_by_round`` (card values, one tuple per round) on ``state``, turning
    ``prizes`` (card values) at the chance nodes; returns the state."""
    prizes = list(prizes or [])
    for bids in bids_by_round:
        if state.is_chance_node():
            state.apply(prizes.pop(0) - 1)
        for card in bids:
            state.apply(card - 1)
    return state


def decisions(state, rng):
    """Yield ``state`` at each decision until the game ends, drawing chance with ``rng``;
    the caller applies the player's action before asking for the next one."""
    while not state.is_terminal():
        if state.current_player() == CHANCE:
            state.apply(sample_chance(state, rng))
        else:
            yield state


@pytest.fixture
def rules5():
    return GoofspielRules(num_cards=5)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
