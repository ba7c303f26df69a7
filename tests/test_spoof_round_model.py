"""Spoof's round model (hiddenhand.envs.spoof_round_model): its expectation of a hand's or a
bid's value is the value a walk of the rules engine's round gives (every hand and bid of the
other player weighted by the policy, the positions the reader's hand could be in weighted by
how likely the other's play makes them); and where it applies. The critic that uses it:
test_critic_mmd.py."""

import numpy as np
import pytest
import torch
from round_walk import assert_legal_as_engine, engine_q, random_networks, stacked

from hiddenhand.envs.spoof_round_model import RoundModel, covers, round_model
from hiddenhand.registry import get


def _starts(rules):
    """Every round-state of ``rules``: both counts of matches, either player first."""
    counts = [range(1, m + 1) for m in rules.matches]
    return [rules.new_round_state((a, b), first) for a in counts[0] for b in counts[1] for first in (0, 1)]


@pytest.mark.parametrize("matches", [2, 3, (1, 3)])
def test_an_action_s_expected_value_over_the_round_is_the_engine_s(matches):
    """A random policy in both seats and random values at the next decisions: at every
    decision of every round-state the model's value of every legal hand and bid is the
    engine walk's (hands shown nowhere but in the weights, so Bayes' rule is checked too)."""
    rules = get("spoof").rules(matches=matches, observation="markov")
    probs, q = random_networks(rules, seed=5)
    scale = 0.5  # not 1, so that a payoff left unscaled shows
    obs, exact = stacked(engine_q(rules, _starts(rules), probs, q, scale))
    model = RoundModel(rules)
    with torch.no_grad():
        expected = model.expected_q(obs, probs, q, scale).double().numpy()
    legal = model.legal(obs).numpy()
    assert np.abs(expected - exact).max() < 1e-5
    assert (expected[~legal] == 0).all() and (exact[~legal] == 0).all()
    assert np.abs(exact).max() > 0.1 and np.ptp(exact[legal]) > 0.1  # values that differ: the check could fail
    # Every kind of decision was met: a hand and a bid, first and second to bid.
    kinds = {(bool(r[model.cut["hold"]].any()), bool(r[model.cut["first"]][0])) for r in obs.numpy()}
    assert len(kinds) == 4


def test_the_legal_actions_it_reads_from_an_observation_are_the_engine_s():
    rules = get("spoof").rules(matches=(2, 3), observation="markov")
    model = RoundModel(rules)
    walked = engine_q(rules, _starts(rules), *random_networks(rules, seed=1), 1.0)
    assert len(walked) > 50
    rng = np.random.default_rng(0)

    def restart():
        return rules.new_round_state((int(rng.integers(1, 3)), int(rng.integers(1, 4))), int(rng.integers(2)))

    assert_legal_as_engine(model, rules.new_round_state((2, 3), 1), restart, 200, rng)


def test_it_covers_the_whole_game_on_the_markov_observation_only():
    spoof = get("spoof")
    assert covers(spoof.rules(matches=3, observation="markov"))
    for other in (dict(matches=3), dict(matches=3, observation="markov", objective="round")):
        rules = spoof.rules(**other)
        assert not covers(rules) and round_model(rules) is None
        with pytest.raises(ValueError, match="round model needs the Markov observation"):
            RoundModel(rules)
