"""Goofspiel's round model (hiddenhand.envs.goofspiel_round_model): its expectation of a bid's
value, given the exact values of the positions that follow, is the exact value of the bid
(the Bellman step, checked against the tabular computation of benchmarks/markov_table.py);
where it applies; and the critic's ``targets`` setting that uses it."""

from dataclasses import replace

import numpy as np
import pytest
from diagnose_critic import exact_values
from diagnose_selfplay import Positions, largest_payoff

from hiddenhand.envs.goofspiel_round_model import RoundModel, covers, round_model
from hiddenhand.registry import get
from hiddenhand.training.critic_mmd import CriticMMD, CriticSettings, train_critic_mmd


@pytest.mark.parametrize("cards", [3, 4])
def test_a_bid_s_expected_value_over_the_round_is_its_exact_q_value(cards):
    """A random policy network in both seats; its exact Q-values at every decision position
    (markov_table.exact_q, a tabular walk). Read through the model with those same values at
    the next positions, every legal bid's expectation is its exact Q-value."""
    import torch

    rules = get("goofspiel").rules(num_cards=cards, observation="markov")
    scale = 1.0 / largest_payoff(cards)
    learner = CriticMMD(rules, CriticSettings(), seed=3, device="cpu")
    obs, legal, _, exact, _, _ = exact_values(learner, Positions(cards))
    row_of = {o.numpy().tobytes(): i for i, o in enumerate(obs)}

    def q(x):
        return torch.stack([exact[row_of[r.numpy().tobytes()]] for r in x]).float() * scale

    def probs(x, mask):
        with torch.no_grad():
            return torch.softmax(learner.policy(x).masked_fill(~mask, -torch.inf), dim=1)

    with torch.no_grad():
        expected = RoundModel(rules).expected_q(obs, probs, q, scale) / scale
    gap = (expected.double() - exact).masked_fill(~legal, 0.0)
    assert gap.abs().max() < 1e-4
    assert exact.masked_fill(~legal, 0.0).abs().max() > 1  # values of a few points: the check could fail
    assert (expected.masked_fill(legal, 0.0) == 0).all()


def test_it_covers_two_player_markov_point_difference_with_random_prizes_only():
    goofspiel = get("goofspiel")
    assert covers(goofspiel.rules(num_cards=5, observation="markov"))
    for other in (
        dict(num_cards=5),
        dict(num_cards=5, observation="markov", num_players=3),
        dict(num_cards=5, observation="markov", scoring="total_points"),
        dict(num_cards=5, observation="markov", prize_order="descending"),
    ):
        rules = goofspiel.rules(**other)
        assert not covers(rules) and round_model(rules) is None
        with pytest.raises(ValueError, match="round model needs the Markov observation"):
            RoundModel(rules)


def test_targets_auto_takes_the_model_where_there_is_one_and_expected_elsewhere_is_refused(tmp_path):
    goofspiel = get("goofspiel")
    tiny = dict(games=16, batch=256)
    markov = CriticMMD(goofspiel.rules(num_cards=3, observation="markov"), CriticSettings(**tiny), 0, "cpu")
    full = CriticMMD(goofspiel.rules(num_cards=3), CriticSettings(**tiny), 0, "cpu")
    sampled = CriticMMD(
        goofspiel.rules(num_cards=3, observation="markov"), CriticSettings(targets="sampled", **tiny), 0, "cpu"
    )
    assert isinstance(markov.critic.model, RoundModel)
    assert full.critic.model is None and sampled.critic.model is None
    spoof = get("spoof").rules(matches=2)  # the full observation: no round model
    for rules, change, message in (
        (spoof, {"targets": "expected"}, r"targets='expected' needs a round model, which spoof"),
        (spoof, {"targets": "exact"}, "targets='exact' is not allowed; choose one of: 'auto', 'sampled', 'expected'"),
    ):
        with pytest.raises(ValueError, match=message):
            train_critic_mmd(
                rules, steps=10, out=tmp_path, settings=replace(CriticSettings(), **change), progress=False
            )


def test_the_critic_fits_every_legal_bid_to_the_model_s_targets():
    """One update's rows for the critic: every distinct observation of the batch once, with its
    count, weighted on exactly its legal bids, and targets that are the model's expectation
    under the policy and the critic as they were."""
    import torch

    rules = get("goofspiel").rules(num_cards=4, observation="markov")
    learner = CriticMMD(rules, CriticSettings(games=16, batch=256), 0, "cpu")
    batch = learner.collector.collect(learner.policy, 0.0, learner.scale)[0]
    obs, weights, targets, counts = learner.critic._expected(batch)
    assert counts.sum() == len(batch.actions) and len(np.unique(obs, axis=0)) == len(obs)
    assert ((weights.numpy() > 0) == obs[:, 4:8].astype(bool)).all()  # the legal bids are the hand
    with torch.no_grad():
        again = RoundModel(rules).expected_q(
            torch.as_tensor(obs),
            lambda x, m: torch.softmax(learner.policy(x).masked_fill(~m, -torch.inf), 1),
            learner.critic,
            learner.scale,
        )
    assert torch.allclose(targets, again)


def test_the_learner_s_settings_follow_the_model_and_the_size_of_the_game():
    """Where the round model applies the critic fits harder and the magnet moves (at most
    ``MAGNET_CARDS`` cards; above, the magnet stays uniform at its own temperature); elsewhere the sampled defaults,
    and a game's own settings (Spoof's temperature) first; whole Spoof and whole two-player Bid Spoof on the
    Markov observation, which have models of their own, take those models' settings."""
    from hiddenhand.training.critic_mmd import (
        HELD,
        MAGNET_CARDS,
        MODELLED,
        ROUND_SETTINGS,
        ROUNDS_MODELLED,
        SETTINGS,
        settings_for_rules,
    )

    goofspiel = get("goofspiel")
    small = settings_for_rules(goofspiel.rules(num_cards=MAGNET_CARDS, observation="markov"))
    large = settings_for_rules(goofspiel.rules(num_cards=MAGNET_CARDS + 2, observation="markov"))
    assert small == MODELLED and small.magnet_every > 0 and small.critic_epochs > CriticSettings().critic_epochs
    assert large == HELD and large.magnet_every == 0 and large.canonical and large.targets == MODELLED.targets
    assert settings_for_rules(goofspiel.rules(num_cards=4)) == CriticSettings()  # full observation: no model
    assert settings_for_rules(get("spoof").rules()) == SETTINGS["spoof"]
    spoof = settings_for_rules(get("spoof").rules(observation="markov"))
    assert spoof == ROUND_SETTINGS["spoof"] and spoof.magnet_polyak > 0 and spoof.critic_sweeps > 1
    bid = settings_for_rules(get("bid_spoof").rules(num_players=2, observation="markov"))
    assert bid == ROUND_SETTINGS["bid_spoof"] and bid.magnet_every > ROUNDS_MODELLED.magnet_every
    assert settings_for_rules(get("bid_spoof").rules(observation="markov")) == SETTINGS["bid_spoof"]  # 3 players
