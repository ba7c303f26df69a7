"""A brute-force walk of a game's rounds through its rules engine, for checking a round model
(``hiddenhand.envs.*_round_model``): every decision's observation met from the given
round-states, with the value of each legal action when the other player's moves are
weighted by a policy and the reader's next decision (or the game's end) is paid what a
value function says. Nothing in it knows a game's rules: the engine plays them."""

import numpy as np
import torch

from hiddenhand.core import TERMINAL


def random_networks(rules, seed):
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


def engine_q(rules, starts, probs, q, scale):
    """Every decision's observation (as bytes) in the rounds from the states ``starts``, with
    its legal actions' values: the other's moves weighted by ``probs``, each of the reader's
    positions in an observation by the other's moves that led there."""

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

    for state in starts:
        walk(state, 1.0)
    return {key: total / mass for key, (mass, total) in sums.items()}


def stacked(walked):
    """The walk's observations as one tensor, and their values as one array, in the same order."""
    obs = torch.as_tensor(np.stack([np.frombuffer(key, dtype=np.float32) for key in walked]))
    return obs, np.stack(list(walked.values()))


def assert_legal_as_engine(model, state, restart, moves, rng):
    """Over ``moves`` random moves from ``state`` (a fresh one from ``restart()`` whenever a
    game ends), the legal actions ``model.legal`` reads from the mover's observation are the
    engine's."""
    for _ in range(moves):
        if state.current_player() == TERMINAL:
            state = restart()
        player = state.current_player()
        x = torch.as_tensor(state.observation_tensor(player))[None]
        assert model.legal(x)[0].nonzero().ravel().tolist() == sorted(state.legal_actions(player))
        state.apply(int(rng.choice(state.legal_actions(player))))
