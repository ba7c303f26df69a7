"""Sampled regret matching (``hiddenhand.training.sampled_regret``): its credits are samples
of the exact values, it learns every game that has a batched env, and it writes what every
run writes."""

from __future__ import annotations

import json
from math import comb

import markov_table
import numpy as np
import pytest

from hiddenhand.agents import load_agent
from hiddenhand.agents.policy_agent import PolicyAgent
from hiddenhand.core import CHANCE, sample_chance
from hiddenhand.registry import games, get
from hiddenhand.training import regret_kernels
from hiddenhand.training.sampled_regret import RegretSettings, SampledRegret, train_regret

BATCHED = sorted(name for name, game in games().items() if game.vector is not None)
SMALL = {
    "goofspiel": {"num_cards": 3, "observation": "markov"},
    "spoof": {"objective": "round", "observation": "markov"},
    "bid_spoof": {"num_players": 2, "objective": "round", "coins": 2, "observation": "markov"},
}
"""Small configurations, each with an exact exploitability the game declares (Bid Spoof's
needs two players)."""
LEARNT = {"goofspiel": 0.005, "spoof": 0.4, "bid_spoof": 0.2}
"""How far below uniform play's exploitability 1.2 million steps of :data:`SMALL` take the
average policy at least. Measured: 0.0013, 0.24 and 0.12 of it; with credits that forget
to divide by the probability of the action drawn, 0.021, 0.89 and 0.27."""


def _policy_table(learner: SampledRegret, n: int) -> markov_table.Table:
    """The learner's current policy as a :class:`markov_table.Table` (positions it never met
    play uniformly, as the learner's rows do before they learn)."""
    table = markov_table.Table(n)
    level, a, b, p, u = table.positions(learner.shown[: learner.size])
    policy = learner.current_policy()
    for k in range(2, n + 1):
        rows = np.flatnonzero(level == k)
        cards = table.sets.cards[k][a[rows]]
        chosen = np.take_along_axis(policy[rows], cards, axis=1)
        table.logp[k][a[rows], b[rows], p[rows], u[rows]] = np.log(np.maximum(chosen, 1e-300))
    return table


@pytest.mark.parametrize("probe", [False, True], ids=["exploring", "probe"])
@pytest.mark.parametrize("zero_sum", [True, False], ids=["other-seat-baselines", "explorer-only"])
def test_credits_are_unbiased_samples_of_the_exact_values(zero_sum, probe, monkeypatch):
    """With a fixed, uneven policy and arbitrary baselines, the mean credit of each position
    and action the explorer learns from equals its exact Q-value (points still to come,
    :func:`markov_table.exact_q`, an independent backward pass), within sampling error,
    whether the explorer explores at every decision or at its probe."""
    n = 3
    settings = RegretSettings(games=2048, probe=probe, canonical=False)  # rows are positions, as the pass reads them
    learner = SampledRegret(get("goofspiel").rules(**{"num_cards": n, "observation": "markov"}), settings, 0)
    learner.zero_sum = zero_sum
    samples: list[tuple[np.ndarray, ...]] = []

    def record_only(length, steps, credit, table, count, *rest):
        rows, actions, _, _, _, role, *_ = steps
        done = ~np.isnan(credit[:length])
        mine = done & (role[:length] == 1)
        samples.append((rows[:length][mine], actions[:length][mine], credit[:length][mine]))
        role[:length][done] = 0
        return 0, 0

    monkeypatch.setattr(regret_kernels, "learn", record_only)
    for _ in range(3):
        learner.iterate()  # meets (nearly) every position
    rng = np.random.default_rng(1)
    size = learner.size
    learner.regrets[:size] = rng.random((size, n)) * learner.legal[:size]
    learner.baseline[:size] = rng.normal(scale=3.0, size=(size, n))
    samples.clear()
    for _ in range(40):
        learner.iterate()
    rows, actions, credit = (np.concatenate(column) for column in zip(*samples))
    table = _policy_table(learner, n)
    q, _ = markov_table.exact_q(table)
    level, a, b, p, u = table.positions(learner.shown[:size])
    keys, inverse, counts = np.unique(rows * n + actions, return_inverse=True, return_counts=True)
    means = np.bincount(inverse, weights=credit) / counts
    variances = np.bincount(inverse, weights=credit**2) / counts - means**2
    scores = []
    for key, mean, count, variance in zip(keys, means, counts, variances):
        r, action = divmod(int(key), n)
        k = level[r]
        if k < 2 or count < 100:
            continue
        exact = q[k][a[r], b[r], p[r], u[r], list(table.sets.cards[k][a[r]]).index(action)]
        scores.append((mean - exact) / np.sqrt(max(variance, 1e-12) / count))
    scores = np.array(scores)
    assert len(scores) > 50
    assert abs(scores.mean()) < 0.3 and 0.7 < scores.std() < 1.3
    assert np.abs(scores).max() < 5.0


def test_it_approaches_the_equilibrium_of_small_goofspiel(tmp_path):
    """Three Markov cards: the exact exploitability of the average policy falls from uniform
    play's to a tenth of it, as measured by the game's own exact measure."""
    params = SMALL["goofspiel"]
    curve = train_regret(
        get("goofspiel").rules(**params), steps=2_000_000, out=tmp_path, eval_every=1_000_000, progress=False
    )
    uniform = get("goofspiel").exact_exploitability(get("goofspiel").rules(**params), load_agent("goofspiel", "random"))
    assert curve[0].exploitability == pytest.approx(uniform)
    assert curve[-1].exploitability < 0.1 * uniform


@pytest.mark.parametrize("game", BATCHED)
def test_every_batched_game_learns_saves_and_loads(game, tmp_path):
    """Each game with a batched env: the run learns, measured by the exact exploitability the
    game declares, from uniform play's to a small part of it (:data:`LEARNT`); it writes its
    curve, record and policy; the policy loads as an agent of that configuration and plays
    legal moves, uniformly where its table has no row."""
    params = SMALL[game]
    curve = train_regret(
        get(game).rules(**params),
        steps=1_200_000,
        out=tmp_path,
        eval_every=600_000,
        settings=RegretSettings(games=256),
        progress=False,
    )
    assert curve[0].steps == 0 and curve[-1].steps >= 1_200_000
    declared = get(game)
    uniform = declared.exact_exploitability(declared.rules(**params), load_agent(game, "random"))
    assert uniform > 0 and curve[0].exploitability == pytest.approx(uniform)
    assert curve[-1].exploitability < LEARNT[game] * uniform
    record = json.loads((tmp_path / "run.json").read_text())
    assert record["learner"] == "sampled regret" and record["rows"] > 0 and not record["interrupted"]
    assert (tmp_path / "curve.csv").read_text().splitlines()[0] == "steps,seconds,exploitability"
    agent = load_agent(game, str(tmp_path), params)
    # Goofspiel's Markov observation declares a canonical one (Rules.canonical), the others none.
    keyed_by = "canonical_observation" if game == "goofspiel" else "observation"
    assert isinstance(agent, PolicyAgent) and agent.keyed_by == keyed_by
    env = get(game).env(**params)
    env.reset(seed=3)
    for name in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        action = None if terminated or truncated else agent.act(observation)
        if action is not None:
            assert observation["action_mask"][action] == 1
        env.step(action)


def test_a_policy_keyed_by_the_observation_plays_uniformly_off_its_rows():
    row = np.array([0.0, 1.0, 0.0], dtype=np.float32)
    agent = PolicyAgent(
        "goofspiel",
        {"num_cards": 3},
        {row.tobytes(): np.array([0.2, 0.0, 0.8])},
        keyed_by="observation",
        unseen="uniform",
    )
    other = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    batch = {"observation": np.stack([row, other]), "action_mask": np.array([[1, 0, 1], [1, 1, 0]], dtype=np.int8)}
    np.testing.assert_allclose(agent.policy_batch(batch), [[0.2, 0.0, 0.8], [0.5, 0.5, 0.0]])
    with pytest.raises(ValueError, match="action_mask"):
        agent.policy({"observation": other})
    strict = PolicyAgent("goofspiel", {"num_cards": 3}, {row.tobytes(): np.ones(3) / 3}, keyed_by="observation")
    with pytest.raises(ValueError, match="not in the policy's table"):
        strict.policy({"observation": other, "action_mask": np.ones(3, dtype=np.int8)})
    with pytest.raises(ValueError, match="keyed_by"):
        PolicyAgent("goofspiel", {}, {}, keyed_by="history")


@pytest.mark.parametrize(
    "name, value",
    [
        ("games", 0),
        ("window", -1),
        ("least", 0),
        ("baseline_rate", 0.0),
        ("exploration", 0.0),
        ("exploration", 1.5),
        ("bootstrap", "yes"),
        ("canonical", "on"),
    ],
)
def test_bad_settings_are_refused_by_name(name, value):
    with pytest.raises(ValueError, match=name):
        SampledRegret(get("goofspiel").rules(**SMALL["goofspiel"]), RegretSettings(**{name: value}), 0)


def test_bootstrap_is_refused_on_a_game_whose_states_mark_no_round_states(monkeypatch):
    """A game (a user's, say) that keeps ``State.round_state``'s default cannot bootstrap."""
    from hiddenhand.core import State
    from hiddenhand.envs.goofspiel import GoofspielState

    monkeypatch.setattr(GoofspielState, "round_state", State.round_state)
    with pytest.raises(ValueError, match=r"bootstrap=True is not allowed on goofspiel.*allowed: bootstrap=False"):
        SampledRegret(get("goofspiel").rules(**SMALL["goofspiel"]), RegretSettings(bootstrap=True), 0)


def test_bootstrapped_round_values_reach_the_exact_solvers_and_the_policy_the_equilibrium():
    """Whole Spoof from 2 matches each, with bootstrapped credit: every round-state that play
    reaches has a learnt value to player 0 that is the exact solver's (Shapley's value iteration over round-states,
    an LP per round: ``hiddenhand.solvers.spoof``), and the average policy's exact
    exploitability falls to a fifth of random play's."""
    from hiddenhand.solvers.spoof import solve

    params = {"matches": 2, "observation": "markov"}
    learner = SampledRegret(get("spoof").rules(**params), RegretSettings(games=128, bootstrap=True), 0)
    for _ in range(600):
        learner.iterate()
    exact = solve(matches=2)
    for f in (1, 2):
        for s in (1, 2):
            win = exact.first_bidder_win_probability(f, s)  # to the round's first bidder
            for first in (0, 1):
                matches = (f, s) if first == 0 else (s, f)
                value = learner.round_value(learner.rules.new_round_state(matches, first))
                if f == 2 and (s == 1 or first == 1):  # after the first round the first bidder was right: 1 left
                    assert np.isnan(value).all()
                    continue
                to_first = 2 * win - 1
                assert value[0] == pytest.approx(to_first if first == 0 else -to_first, abs=0.04), (matches, first)
                assert value[1] == pytest.approx(-value[0])
    spoof = get("spoof")
    rules = spoof.rules(**params)
    random = spoof.exact_exploitability(rules, load_agent("spoof", "random"))
    assert spoof.exact_exploitability(rules, learner.agent()) < 0.2 * random


def test_the_canonical_table_learns_each_pattern_once_and_its_round_values_are_the_solvers():
    """Four Markov cards, bootstrapped. Keyed by the canonical observation the table has one
    row per canonical position: the exact solvers' interleaving patterns times the prize sets
    times the upcards (316), where keyed by the observation it has one per position (628).
    The round value of a canonical round-state, learnt from every position it merges, is the
    exact one (the solver's equilibrium bids at the turned prize, paid by the exact values of
    the positions they lead to) at the round-states random play meets after the first: the
    median error is below 0.02 points. The first round-state is never a next one, so it
    learns no value."""
    from hiddenhand.solvers.goofspiel import solve
    from hiddenhand.solvers.goofspiel.patterns import level_patterns

    n = 4
    learner = SampledRegret(
        get("goofspiel").rules(**{"num_cards": n, "observation": "markov"}), RegretSettings(bootstrap=True), 0
    )
    plain = SampledRegret(
        get("goofspiel").rules(**{"num_cards": n, "observation": "markov"}),
        RegretSettings(bootstrap=True, canonical=False),
        0,
    )
    for _ in range(40):
        learner.iterate()
    for _ in range(5):
        plain.iterate()
    assert learner.size == sum(len(level_patterns(k, n)) * comb(n, k) * k for k in range(2, n + 1)) == 316
    assert plain.size == sum(comb(n, k) ** 3 * k for k in range(2, n + 1)) == 628
    exact = solve(n, progress=False)
    rng = np.random.default_rng(0)
    errors = []
    for _ in range(100):
        state = learner.rules.new_initial_state()
        while not state.is_terminal():
            if state.current_player() == CHANCE:
                state.apply(sample_chance(state, rng))
                continue
            if state.round_state() >= 0:
                mine, theirs = ([c + 1 for c in np.flatnonzero(hand)] for hand in state.hands)
                rest, prize = list(state.prizes_left), state.prize
                value = learner.round_value(state)
                if len(mine) == n:
                    assert np.isnan(value).all()
                elif len(mine) > 1:
                    x, y = exact.strategy(mine, theirs, [*rest, prize], prize)
                    worth = sum(
                        p * q * (np.sign(a - b) * prize + exact.value(set(mine) - {a}, set(theirs) - {b}, rest))
                        for a, p in x.items()
                        for b, q in y.items()
                    )
                    errors.append(abs(value[0] - worth))
                    assert value[1] == pytest.approx(-value[0])
            state.apply(int(rng.choice(state.legal_actions())))
    assert len(errors) > 100 and np.median(errors) < 0.02


def test_the_explorer_draws_from_the_policy_mixed_with_uniform_play_and_records_that_probability():
    """One row whose regrets give the policy (3/4, 1/4, 0) with the third action illegal: the
    explorer draws from 0.4 of it plus 0.6 of uniform play over the two legal actions, so
    (0.6, 0.4, 0); the other seat from the policy itself. ``taken`` is the probability the
    action was drawn with, which the credits divide by. With the probe the explorer plays
    uniformly at the probe and the policy elsewhere, and learns from the probe on."""
    regrets = np.array([[3.0, 1.0, 0.0]])
    predicted = np.zeros((1, 3))
    legal = np.array([[True, True, False]])
    uniforms = np.array([0.1, 0.59, 0.61, 0.99, 0.1, 0.74, 0.76, 0.99])
    players = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    rows, actions, taken, role = (
        np.zeros(8, dtype=np.int64),
        np.zeros(8, dtype=np.int64),
        np.zeros(8),
        np.zeros(8, dtype=np.int8),
    )

    def act(probing, probe, made):
        # seat 0 explores in every game; its probe and its decisions so far as given
        probes = (np.zeros(8, dtype=np.int64), np.full(8, probe), np.full(8, made))
        regret_kernels.act(
            rows, players, probes, probing, 0.6, regrets, predicted, legal, uniforms, actions, taken, role
        )  # fmt: skip
        return probes[2]

    made = act(False, 0, 0)
    np.testing.assert_array_equal(actions, [0, 0, 1, 1, 0, 0, 1, 1])
    np.testing.assert_allclose(taken, [0.6, 0.6, 0.4, 0.4, 0.75, 0.75, 0.25, 0.25])
    np.testing.assert_array_equal(role, [1, 1, 1, 1, 2, 2, 2, 2])
    np.testing.assert_array_equal(made, [1, 1, 1, 1, 0, 0, 0, 0])
    act(True, 2, 2)  # at the probe: uniform over the legal actions; learnt from, the other seat not yet
    np.testing.assert_allclose(taken, [0.5, 0.5, 0.5, 0.5, 0.75, 0.75, 0.25, 0.25])
    np.testing.assert_array_equal(role, [1, 1, 1, 1, 0, 0, 0, 0])
    act(True, 2, 1)  # before it: the policy, not used
    np.testing.assert_allclose(taken, [0.75, 0.75, 0.75, 0.25, 0.75, 0.75, 0.25, 0.25])
    np.testing.assert_array_equal(role, [0, 0, 0, 0, 0, 0, 0, 0])
    act(True, 2, 3)  # after it: the policy, learnt from and credited
    np.testing.assert_allclose(taken, [0.75, 0.75, 0.75, 0.25, 0.75, 0.75, 0.25, 0.25])
    np.testing.assert_array_equal(role, [1, 1, 1, 1, 2, 2, 2, 2])


@pytest.mark.parametrize(
    "game, flag, expected",
    [
        (["bid-spoof", "--coins", "2", "--objective", "round"], [], {"probe": False, "bootstrap": True, "games": 256}),
        (["bid-spoof", "--coins", "2"], ["--probe", "--no-bootstrap"], {"probe": True, "bootstrap": False}),
        (["spoof", "--matches", "2"], ["--games", "64"], {"bootstrap": True, "games": 64}),
        (["goofspiel", "--cards", "3"], [], {"probe": False, "bootstrap": True, "games": 8192, "canonical": True}),
        (["goofspiel", "--cards", "3"], ["--probe", "--no-canonical"], {"probe": True, "canonical": False}),
    ],
    ids=["bid-spoof-default", "bid-spoof-probe", "spoof-games", "goofspiel-default", "goofspiel-probe-plain"],
)
def test_the_command_line_passes_the_learners_settings_and_records_them(tmp_path, capsys, game, flag, expected):
    """``hiddenhand train regret`` passes ``--games``, ``--probe``/``--no-probe``,
    ``--bootstrap``/``--no-bootstrap`` and ``--canonical``/``--no-canonical`` to the learner
    (without them, the game's own settings: Spoof and Bid Spoof bootstrapped, with fewer
    games; Goofspiel keyed by the canonical observation), which writes them into
    ``run.json``, and reports the run."""
    from hiddenhand.cli import main

    args = ["train", "regret", *game, "--observation", "markov", "--steps", "20000", "--eval-every", "10000"]
    main([*args, *flag, "--out", str(tmp_path)])
    settings = json.loads((tmp_path / "run.json").read_text())["settings"]
    assert {name: settings[name] for name in expected} == expected
    assert "regret on" in capsys.readouterr().out


def test_a_budget_of_seconds_ends_the_run_inside_a_collection(tmp_path, monkeypatch):
    """A collection of 64 steps can outlast a short budget: the run stops at the step that
    spends it, not at the end of the collection. The run's clock is made to move
    an eighth of a second at each step of the batched env, so that a budget of 2.5 s is spent at
    its twentieth step (measures, off the clock, are never due here)."""
    from types import SimpleNamespace

    from hiddenhand.training import run as run_module

    clock = SimpleNamespace(now=0.0)
    monkeypatch.setattr(run_module, "time", SimpleNamespace(perf_counter=lambda: clock.now))
    envs = type(SampledRegret(get("goofspiel").rules(**{"num_cards": 4}), RegretSettings(games=32), 0).envs)
    real_step = envs.step

    def step(self, actions):
        clock.now += 0.125
        return real_step(self, actions)

    monkeypatch.setattr(envs, "step", step)
    settings = RegretSettings(games=32, window=64)
    train_regret(
        get("goofspiel").rules(**{"num_cards": 4}),
        steps=10**9,
        out=tmp_path,
        eval_every=10**12,
        settings=settings,
        seconds=2.5,
    )
    record = json.loads((tmp_path / "run.json").read_text())
    assert record["interrupted"] is False
    assert record["steps"] == 20 * 32 and record["seconds"] == 2.5


def test_two_observations_with_one_key_get_a_row_each():
    """The table's index is a 64-bit hash of the observation: where two observations share
    one, each still gets its own row (the second moves on to the next key), both are found
    again, and the keys handed back are the ones used."""
    from numba import types
    from numba.typed import Dict

    index = Dict.empty(key_type=types.uint64, value_type=types.int64)
    a, b = np.zeros(4, dtype=np.float32), np.ones(4, dtype=np.float32)
    obs = np.stack([a, b, a, b])
    masks = np.ones((4, 3), dtype=np.int8)
    legal, shown = np.zeros((8, 3), dtype=np.bool_), np.zeros((8, 4), dtype=np.float32)
    keys = np.full(4, 12345, dtype=np.uint64)  # one key for both, as a collision gives
    rows, size = regret_kernels.find_rows(keys, masks, obs, index, legal, shown, 0)
    assert rows.tolist() == [0, 1, 0, 1] and size == 2
    assert keys[0] == keys[2] == 12345 and keys[1] == keys[3] != 12345
    assert (shown[0] == a).all() and (shown[1] == b).all()


def test_observation_keys_use_every_bit():
    """Observations are mostly 0.0 and 1.0, whose float32 words differ only in bits 23 to
    29: the keys of the distinct observations of random 9-card play must still differ in
    their lowest 20 bits about as often as random numbers do (a hash that never mixed those
    bits gave every key the same low bits, and two observations one key)."""
    from hiddenhand.vector import vector_env

    envs = vector_env("goofspiel", 256, num_cards=9, observation="markov")
    obs, _ = envs.reset(seed=0)
    rng, seen = np.random.default_rng(0), []
    for _ in range(40):
        seen.append(obs["observation"].copy())
        legal = obs["action_mask"].astype(bool)
        obs, *_ = envs.step(np.array([rng.choice(np.flatnonzero(row)) for row in legal]))
    distinct = np.unique(np.concatenate(seen), axis=0)
    keys = regret_kernels.hash_observations(distinct)
    assert len(np.unique(keys)) == len(distinct)
    low = len(np.unique(keys & np.uint64((1 << 20) - 1)))
    assert low > 0.95 * len(distinct) > 5000  # about 0.99 for random 64-bit keys at this count
