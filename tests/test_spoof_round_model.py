"""Spoof's round model (hiddenhand.envs.spoof_round_model): its expectation of a hand's or a
bid's value is the value a walk of the rules engine's round gives (every hand and bid of the
other player weighted by the policy, the positions the reader's hand could be in weighted by
how likely the other's play makes them); where it applies; and the critic that uses it."""

from dataclasses import replace

import numpy as np
import pytest
import torch

from hiddenhand.core import TERMINAL
from hiddenhand.envs.spoof_round_model import RoundModel, covers, round_model
from hiddenhand.registry import get
from hiddenhand.training.critic_mmd import (
    SPOOF_MODELLED,
    CriticMMD,
    distinct_observations,
    masked_log_softmax,
    settings_for_rules,
)


def _networks(rules, seed):
    """A random policy and a random value function of the observation, both seats alike."""
    generator = torch.Generator().manual_seed(seed)
    width, actions = rules.layout.size, rules.actions.size
    logits = torch.randn(width, actions, generator=generator) * 2
    values = torch.randn(width, actions, generator=generator)

    def probs(x, legal):
        return torch.softmax((x @ logits).masked_fill(~legal, -torch.inf), dim=1)

    def q(x):
        return torch.tanh(x @ values)

    return probs, q


def _engine_q(rules, probs, q, scale):
    """Every decision's observation (as bytes) with its legal actions' values, by walking each
    round of the engine from every round-state: the other's moves weighted by ``probs``, each
    of the reader's positions in an observation by the other's moves that led there."""

    def view(state, player):
        x = torch.as_tensor(state.observation_tensor(player))[None]
        legal = torch.zeros(1, rules.actions.size, dtype=torch.bool)
        legal[0, state.legal_actions(player)] = True
        return x, legal

    def after(state, reader):
        """The reader's value of ``state``: the game's payoff, or V at its next decision."""
        mover = state.current_player()
        if mover == TERMINAL:
            return state.returns()[reader] * scale
        x, legal = view(state, mover)
        p = probs(x, legal)[0]
        if mover == reader:
            return float((p * q(x)[0]).sum())
        total = 0.0
        for action in state.legal_actions(mover):
            child = state.clone()
            child.apply(action)
            total += float(p[action]) * after(child, reader)
        return total

    sums: dict[bytes, tuple[np.ndarray, float]] = {}

    def walk(state, weight):
        """Record ``state``'s decision, ``weight`` the chance of the round's moves so far (the
        reader's own share is the same at every position of its observation, and cancels)."""
        mover = state.current_player()
        x, legal = view(state, mover)
        row = np.zeros(rules.actions.size)
        p = probs(x, legal)[0]
        for action in state.legal_actions(mover):
            child = state.clone()
            child.apply(action)
            row[action] = after(child, mover)
            if child.current_player() != TERMINAL and child.round_state() < 0:  # the round goes on
                walk(child, weight * float(p[action]))
        key = x.numpy().tobytes()
        mass, total = sums.get(key, (0.0, 0.0))
        sums[key] = (mass + weight, total + weight * row)

    for m0 in range(1, rules.matches[0] + 1):
        for m1 in range(1, rules.matches[1] + 1):
            for first in (0, 1):
                walk(rules.new_round_state((m0, m1), first), 1.0)
    return {key: total / mass for key, (mass, total) in sums.items()}


@pytest.mark.parametrize("matches", [2, 3, (1, 3)])
def test_an_action_s_expected_value_over_the_round_is_the_engine_s(matches):
    """A random policy in both seats and random values at the next decisions: at every
    decision of every round-state the model's value of every legal hand and bid is the
    engine walk's (hands shown nowhere but in the weights, so Bayes' rule is checked too)."""
    rules = get("spoof").rules(matches=matches, observation="markov")
    probs, q = _networks(rules, seed=5)
    scale = 0.5  # not 1, so that a payoff left unscaled shows
    walked = _engine_q(rules, probs, q, scale)
    obs = torch.as_tensor(np.stack([np.frombuffer(key, dtype=np.float32) for key in walked]))
    model = RoundModel(rules)
    with torch.no_grad():
        expected = model.expected_q(obs, probs, q, scale).double().numpy()
    legal = model.legal(obs).numpy()
    exact = np.stack(list(walked.values()))
    assert np.abs(expected - exact).max() < 1e-5
    assert (expected[~legal] == 0).all() and (exact[~legal] == 0).all()
    assert np.abs(exact).max() > 0.1 and np.ptp(exact[legal]) > 0.1  # values that differ: the check could fail
    # Every kind of decision was met: a hand and a bid, first and second to bid.
    kinds = {(bool(r[model.cut["hold"]].any()), bool(r[model.cut["first"]][0])) for r in obs.numpy()}
    assert len(kinds) == 4


def test_the_legal_actions_it_reads_from_an_observation_are_the_engine_s():
    rules = get("spoof").rules(matches=(2, 3), observation="markov")
    model = RoundModel(rules)
    walked = _engine_q(rules, *_networks(rules, seed=1), 1.0)
    assert len(walked) > 50
    state = rules.new_round_state((2, 3), 1)
    rng = np.random.default_rng(0)
    for _ in range(200):
        if state.current_player() == TERMINAL:
            state = rules.new_round_state((int(rng.integers(1, 3)), int(rng.integers(1, 4))), int(rng.integers(2)))
        player = state.current_player()
        x = torch.as_tensor(state.observation_tensor(player))[None]
        assert model.legal(x)[0].nonzero().ravel().tolist() == sorted(state.legal_actions(player))
        state.apply(int(rng.choice(state.legal_actions(player))))


def test_it_covers_the_whole_game_on_the_markov_observation_only():
    spoof = get("spoof")
    assert covers(spoof.rules(matches=3, observation="markov"))
    for other in (dict(matches=3), dict(matches=3, observation="markov", objective="round")):
        rules = spoof.rules(**other)
        assert not covers(rules) and round_model(rules) is None
        with pytest.raises(ValueError, match="round model needs the Markov observation"):
            RoundModel(rules)


def test_the_learner_s_critic_takes_its_targets_from_the_model_on_the_whole_markov_game():
    """``hiddenhand train mmd-critic spoof --observation markov`` finds the model through the
    game's declaration and takes its settings; its critic's targets for a collection are the
    model's expectation with the policy and the critic as they were before the fit."""
    spoof = get("spoof")
    rules = spoof.rules(matches=2, observation="markov")
    assert settings_for_rules(rules) is SPOOF_MODELLED
    learner = CriticMMD(rules, replace(SPOOF_MODELLED, games=64, batch=512), seed=0, device="cpu")
    batch = learner.collector.collect(learner.policy, 0.0, learner.scale)[0]
    while not len(batch.actions):  # the first collections hold no finished game yet
        batch = learner.collector.collect(learner.policy, 0.0, learner.scale)[0]
    seen = torch.as_tensor(distinct_observations(batch)[0])

    def probs(x, legal):
        return torch.softmax(masked_log_softmax(learner.policy(x), legal), dim=1)

    with torch.no_grad():
        reference = RoundModel(rules).expected_q(seen, probs, learner.critic, learner.scale)
    targets = learner.critic.fit(batch)
    assert torch.allclose(targets, reference, atol=1e-6)
    assert reference.abs().max() > 0.01
