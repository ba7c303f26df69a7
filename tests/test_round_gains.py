"""benchmarks/round_gains.py: where in a whole game of rounds an agent can be beaten."""

from __future__ import annotations

import numpy as np
import pytest
from round_gains import GAMES, equilibrium_values, game_gains, round_gains

from hiddenhand.agents import load_agent
from hiddenhand.registry import get

SMALL = {
    "spoof": {"matches": 2, "observation": "markov"},
    "bid_spoof": {"num_players": 2, "coins": 2, "observation": "markov"},
}


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_equilibrium_gives_nothing_away_anywhere_and_random_play_gives_the_exploitability(game):
    rules = get(game).rules(**SMALL[game])
    equilibrium = GAMES[game][0](rules, load_agent(game, "equilibrium", rules.params))
    values = equilibrium_values(game, rules, equilibrium)
    # The solver's values are the equilibrium agent's own values, found by another method.
    assert np.allclose(values, equilibrium.values(None), atol=1e-7)
    assert np.abs(round_gains(equilibrium, values)).max() < 1e-7
    assert np.abs(game_gains(equilibrium)).max() < 1e-7

    random = GAMES[game][0](rules, load_agent(game, "random", rules.params, seed=0))
    rounds, whole = round_gains(random, values), game_gains(random)
    assert (rounds > 1e-3).all() and (whole > 1e-3).all()  # uniform play gives something away in every round
    opening = random.index[random.opening]
    assert whole[opening] == pytest.approx(random.exploitability().per_seat, abs=1e-9)
