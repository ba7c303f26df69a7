"""Bid Spoof's round model (hiddenhand.envs.bid_spoof_round_model): its expectation of a
hand's, a bid's or a call's value is the value a walk of the rules engine's round gives
(every hand and answer of the other player weighted by the policy, the positions the
reader's hand could be in weighted by how likely the other's bids make them); where it
applies; and the critic that uses it."""

import numpy as np
import pytest
import torch
from round_walk import assert_legal_as_engine, engine_q, random_networks, stacked

from hiddenhand.envs.bid_spoof_round_model import RoundModel, covers, round_model
from hiddenhand.registry import get


def _starts(rules, most):
    """Every round-state with up to ``most`` coins each (the cap stays ``rules.coins``)."""
    counts = range(1, most + 1)
    return [rules.new_round_state((a, b), starter) for a in counts for b in counts for starter in (0, 1)]


@pytest.mark.parametrize(
    "coins, most, zero_call",
    [(2, 2, "round_start"), (2, 2, "before_own_bid"), (3, 2, "round_start"), (3, 3, "before_own_bid")],
)
def test_an_action_s_expected_value_over_the_round_is_the_engine_s(coins, most, zero_call):
    """A random policy in both seats and random values at the next decisions: at every
    decision of every round-state the model's value of every legal hand, bid and call is
    the engine walk's (hands shown nowhere but in the weights, so Bayes' rule over the
    other's bids is checked too). Round-states with one coin and with two let a right cliff
    win a coin below the cap and change nothing at it; three each reach the largest bids."""
    rules = get("bid_spoof").rules(num_players=2, coins=coins, zero_call=zero_call, observation="markov")
    probs, q = random_networks(rules, seed=3)
    scale = 0.5  # not 1, so that a payoff left unscaled shows
    obs, exact = stacked(engine_q(rules, _starts(rules, most), probs, q, scale))
    model = RoundModel(rules)
    with torch.no_grad():
        expected = model.expected_q(obs, probs, q, scale).double().numpy()
    legal = model.legal(obs).numpy()
    assert np.abs(expected - exact).max() < 1e-5
    assert (expected[~legal] == 0).all() and (exact[~legal] == 0).all()
    assert np.abs(exact).max() > 0.1 and np.ptp(exact[legal]) > 0.1  # values that differ: the check could fail
    # Every kind of decision was met: a hand and a bid, as the starter and not, and bids
    # answering two of the other's (the belief multiplies over them).
    _, _, _, starts, hold, owners = model._read(obs)
    kinds = {(bool(h >= 0), bool(s)) for h, s in zip(hold, starts)}
    assert len(kinds) == 4
    assert ((owners == 1).sum(1) >= 2).any()


def test_the_legal_actions_it_reads_from_an_observation_are_the_engine_s():
    for zero_call in ("round_start", "before_own_bid"):
        rules = get("bid_spoof").rules(num_players=2, coins=3, zero_call=zero_call, observation="markov")
        rng = np.random.default_rng(0)
        assert_legal_as_engine(RoundModel(rules), rules.new_initial_state(), rules.new_initial_state, 400, rng)


def test_it_covers_the_whole_two_player_game_on_the_markov_observation_only():
    bid_spoof = get("bid_spoof")
    assert covers(bid_spoof.rules(num_players=2, observation="markov"))
    for other in (
        dict(num_players=2),
        dict(num_players=3, observation="markov"),
        dict(num_players=2, observation="markov", objective="round"),
    ):
        rules = bid_spoof.rules(**other)
        assert not covers(rules) and round_model(rules) is None
        with pytest.raises(ValueError, match="round model needs two players, the Markov observation"):
            RoundModel(rules)
