"""The tabular control of the self-play diagnosis (``benchmarks/markov_table.py``): its
exact Q-values against a brute-force walk of the rules engine, its reach probabilities, and
that MMD on exact Q drives the project's exact exploitability far below uniform play's."""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from markov_table import Table, TableAgent, exact_q, measure, mmd_step, reach

from hiddenhand.agents.base import Translated
from hiddenhand.envs.goofspiel import GoofspielRules
from hiddenhand.solvers.goofspiel import positions


def random_table(n, seed):
    table = Table(n)
    rng = np.random.default_rng(seed)
    for k in range(2, n + 1):
        logits = 2.0 * rng.normal(size=table.logp[k].shape)
        table.logp[k] = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
    return table


def shown(state, player):
    return {"observation": state.observation_tensor(player)[None], "action_mask": state.action_mask(player)[None]}


def walk(state, agent, table, found, reached, prob=1.0):
    """Expected returns of both players from ``state`` with ``agent`` in both seats, by the
    rules engine; at every round records each bidder's expected points still to come of each
    bid against the other's mixed bid (``found``, keyed by the position its observation
    shows), and before each upcard the probability of reaching the position (``reached``)."""
    if state.is_terminal():
        return np.array(state.returns())
    if state.is_chance_node():
        masks = [sum(1 << int(c) for c in np.flatnonzero(h)) for h in state.hands]
        prizes = sum(1 << (c - 1) for c in state.prizes_left)
        key = (len(state.prizes_left), *(int(table.rank[m]) for m in (*masks, prizes)))
        reached[key] = reached.get(key, 0.0) + prob
        total = np.zeros(2)
        for action, chance in state.chance_outcomes():
            child = state.clone()
            child.apply(action)
            total += chance * walk(child, agent, table, found, reached, prob * chance)
        return total
    assert state.current_player() == 0
    first = agent.policy_batch(shown(state, 0))[0]
    outcome, second = {}, {}
    for i in np.flatnonzero(first):
        after = state.clone()
        after.apply(int(i))
        second[i] = agent.policy_batch(shown(after, 1))[0]
        view = shown(after, 1)
        for j in np.flatnonzero(second[i]):
            child = after.clone()
            child.apply(int(j))
            outcome[i, j] = walk(child, agent, table, found, reached, prob * first[i] * second[i][j])
    diff = state.points[0] - state.points[1]
    y = second[next(iter(second))]  # player 1's policy does not depend on player 0's hidden bid
    assert all(np.array_equal(s, y) for s in second.values())
    q0 = {i: sum(y[j] * outcome[i, j][0] for j in np.flatnonzero(y)) - diff for i in np.flatnonzero(first)}
    q1 = {j: sum(first[i] * outcome[i, j][1] for i in np.flatnonzero(first)) + diff for j in np.flatnonzero(y)}
    for player, q, obs in ((0, q0, shown(state, 0)), (1, q1, view)):
        position = tuple(int(x[0]) for x in table.positions(obs["observation"]))
        hand = table.sets.cards[position[0]][position[1]]
        found[position] = np.array([q[c] for c in hand])
    return sum(first[i] * y[j] * outcome[i, j] for (i, j) in outcome)


@pytest.mark.parametrize("n", [3])
def test_exact_q_and_reach_equal_a_brute_force_walk_of_the_rules_engine(n):
    table = random_table(n, seed=n)
    found, reached = {}, {}
    state = GoofspielRules(num_cards=n, observation="markov").new_initial_state()
    root = walk(state, TableAgent(table), table, found, reached)
    q, v = exact_q(table)
    assert abs(root[0]) < 1e-9 and abs(v[n][0, 0, 0]) < 1e-9  # one policy in both seats of a symmetric game
    # Every position and upcard of every level is reached (the random policy mixes every bid), in both seats.
    assert len(found) == sum(table.sets.masks[k].size ** 3 * k for k in range(2, n + 1))
    for (k, a, b, p, u), brute in found.items():
        assert np.allclose(q[k][a, b, p, u], brute, atol=1e-9), (k, a, b, p, u)
    probs = reach(table)
    assert len(reached) == sum(probs[k].size for k in range(2, n + 1))
    for (k, a, b, p), prob in reached.items():
        assert probs[k][a, b, p] == pytest.approx(prob, abs=1e-12)


def test_the_values_are_zero_sum_and_the_measure_agrees_for_one_table_in_both_seats():
    table = random_table(4, seed=7)
    _, v = exact_q(table)
    for k in range(1, 5):
        assert np.allclose(v[k], -v[k].transpose(1, 0, 2))
    markov = positions.exploitability(TableAgent(table), GoofspielRules(num_cards=4, observation="markov"), False)
    # The full observation gathers and measures each seat on its own; the table reads the position it shows.
    full_rules = GoofspielRules(num_cards=4)
    full = positions.exploitability(Translated(TableAgent(table), full_rules.markov_observations), full_rules, False)
    assert np.allclose(markov.per_seat, full.per_seat) and np.isclose(markov.per_seat[0], markov.per_seat[1])
    assert markov.value > 0.5


def mmd(n, iterations, eta, alpha, magnet_every=0):
    """Tabular MMD on exact Q from the uniform table; the magnet uniform, or moved to the
    current policy every ``magnet_every`` iterations."""
    table, magnet = Table(n), None
    for t in range(iterations):
        if magnet_every and t % magnet_every == 0:
            magnet = table.copy()
        mmd_step(table, exact_q(table)[0], eta, alpha, magnet)
    return table


def test_tabular_mmd_on_exact_q_converges_far_below_uniform_play():
    uniform = measure(Table(4))
    assert uniform == pytest.approx(2.5)
    assert measure(mmd(4, 1200, eta=0.1, alpha=0.5, magnet_every=100)) < 0.05 * uniform
    # A fixed uniform magnet stops at the regularised game's fixed point instead, well above it.
    assert measure(mmd(4, 400, eta=0.1, alpha=0.5)) > 0.3


def test_the_diagnosis_script_runs_its_table_modes_at_three_cards(capsys, monkeypatch):
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "diagnose_selfplay.py"
    spec = importlib.util.spec_from_file_location("diagnose_selfplay", path)
    script = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, script)  # its dataclasses look their module up
    spec.loader.exec_module(script)
    (exact,) = script.main(["exact", "--cards", "3", "--iterations", "400", "--eta", "0.1", "--magnet-every", "50"])
    assert exact.exploitability < 0.1 * measure(Table(3))
    (sampled,) = script.main(["sampled", "--cards", "3", "--iterations", "5", "--episodes", "20", "--starts", "root"])
    assert sampled.decisions == 5 * 20 * 4  # two rounds with a choice, two bids each
    table, distilled = script.main(
        ["distil", "--cards", "3", "--iterations", "400", "--eta", "0.1", "--magnet-every", "50"]
        + ["--steps", "600", "--batch", "64", "--lr", "0.01", "--hidden", "32", "--learner-view", "canonical"]
    )
    assert distilled.exploitability < table.exploitability + 0.1 * measure(Table(3))
    (seen,) = script.main(["observations", "--cards", "3", "--episodes", "5"])
    assert seen.config.startswith("0 of ") and seen.decisions == 2 * (27 * 2 + 1 * 3) + 5 * 4
    assert "| exact | 3 |" in capsys.readouterr().out
