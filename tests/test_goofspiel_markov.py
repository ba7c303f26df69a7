"""The Markov observation, batched policies, and exact exploitability over positions, held to
the dynamic programme over histories and to OpenSpiel's exact best response."""

from math import comb

import numpy as np
import pyspiel
import pytest
from conftest import play_out

import hiddenhand
from hiddenhand.agent import Agent
from hiddenhand.agents import GoofspielEquilibriumAgent, PolicyAgent, PPOAgent, RandomAgent, make_agent
from hiddenhand.core import decision_states
from hiddenhand.envs.goofspiel import GoofspielRules
from hiddenhand.envs.goofspiel_observation import GoofspielView, position_observations
from hiddenhand.openspiel import HiddenhandGame, cached_tree, tabular_policy
from hiddenhand.openspiel import exploitability as openspiel_exploitability
from hiddenhand.solvers.goofspiel import positions
from hiddenhand.solvers.goofspiel.histories import best_response_value
from hiddenhand.solvers.goofspiel.patterns import level_patterns, pattern_of

GOOFSPIEL = hiddenhand.games()["goofspiel"]


def markov(n):
    return GoofspielRules(num_cards=n, observation="markov")


def untrained_ppo(rules, seed=0):
    """A randomly initialised MaskablePPO policy on ``rules``: an arbitrary smooth Markov policy."""
    import torch
    from sb3_contrib import MaskablePPO

    from hiddenhand.gymnasium_env import SingleAgentEnv

    torch.manual_seed(seed)
    env = SingleAgentEnv("goofspiel", lambda rng: [RandomAgent()], **rules.params)
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, seed=seed, device="cpu")
    return PPOAgent(model, "goofspiel", rules.params)


# ------------------------------------------------------------------ the Markov observation
def test_the_markov_observation_is_the_position_and_hides_this_rounds_bids():
    state = play_out(markov(5).new_initial_state(), [(2, 4), (5, 1)], prizes=[3, 1])
    # Round 3: prize 4 on the table; player 0 bids 3, which player 1 must not see.
    state.apply(3)
    state.apply(2)
    view = GoofspielView.decode(state.observation_tensor(1), 5)
    assert view.prize == 4 and view.prizes_to_come == (2, 5)
    assert view.hand == (2, 3, 5) and view.others_hands == ((1, 3, 4),)  # player 0 bid 3: still shown
    assert view.points is None and view.rounds_played == 2
    assert len(state.observation_tensor(0)) == 5 * 4
    # The perfect-recall information state is still the full vector, with the history.
    full = play_out(GoofspielRules(num_cards=5).new_initial_state(), [(2, 4), (5, 1)], prizes=[3, 1])
    full.apply(3)
    full.apply(2)
    assert np.array_equal(state.information_state_tensor(1), full.observation_tensor(1))
    assert not markov(5).observation_is_information_state and GoofspielRules().observation_is_information_state


@pytest.mark.parametrize("bad", [{"scoring": "win_loss"}, {"reveal_bids": False}])
def test_the_markov_observation_is_refused_where_the_position_is_not_enough(bad):
    with pytest.raises(ValueError, match="observation='markov' needs"):
        GoofspielRules(num_cards=4, observation="markov", **bad)
    with pytest.raises(ValueError, match="observation"):
        GoofspielRules(observation="positions")


def test_heuristics_declare_what_they_read_and_hard_refuses_the_markov_observation():
    assert positions.is_markov(make_agent("goofspiel", "medium")) and positions.is_markov(RandomAgent())
    assert not positions.is_markov(make_agent("goofspiel", "hard"))
    state = markov(5).new_initial_state()
    state.apply(4)
    assert make_agent("goofspiel", "medium").policy(state.observation(0)).sum() == pytest.approx(1)
    with pytest.raises(ValueError, match="reads the score"):
        make_agent("goofspiel", "hard").policy(state.observation(0))


@pytest.mark.parametrize("observation", ["full", "markov"])
@pytest.mark.parametrize("n", [3, 6])
def test_position_observations_are_the_engines_own(observation, n):
    """Bulk observations equal those of the engine after the history they stand for (spent
    cards played in increasing order), in both seats."""
    rng = np.random.default_rng(n)
    rules = GoofspielRules(num_cards=n, observation=observation)
    for _ in range(20):
        played = int(rng.integers(0, n - 1))
        spent = [sorted(rng.choice(np.arange(1, n + 1), played, replace=False).tolist()) for _ in range(3)]
        state = play_out(rules.new_initial_state(), list(zip(spent[1], spent[2])), prizes=spent[0])
        upcard = int(rng.choice([c for c in range(1, n + 1) if c not in spent[0]]))
        state.apply(upcard - 1)
        mask = [sum(1 << (c - 1) for c in range(1, n + 1) if c not in cards) for cards in spent]
        prizes = mask[0] & ~(1 << (upcard - 1))
        for seat in (0, 1):
            if seat == 1:
                state.apply(state.legal_actions()[0])  # player 0's hidden bid
            own, other = (mask[1], mask[2]) if seat == 0 else (mask[2], mask[1])
            got = position_observations(
                rules, np.array([own]), np.array([other]), np.array([prizes]), np.array([upcard - 1]), seat
            )
            assert np.array_equal(got["observation"][0], state.observation_tensor(seat))
            assert np.array_equal(got["action_mask"][0], state.action_mask(seat))


# ------------------------------------------------------------------ batched policies
def _observations(rules, count=40, seed=0):
    """Observations (with information states) of random positions of ``rules``."""
    rng = np.random.default_rng(seed)
    agent = RandomAgent(seed)
    rows = []
    while len(rows) < count:
        state = rules.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply(int(rng.choice(state.legal_actions())))
                continue
            player = state.current_player()
            rows.append(state.agent_observation(player))
            state.apply(agent.act(rows[-1]))
    return {key: np.stack([row[key] for row in rows]) for key in ("observation", "action_mask", "information_state")}


class _Loop(Agent):
    """An agent with only ``policy``: the protocol's default ``policy_batch`` loops over it."""

    def policy(self, observation):
        mask = observation["action_mask"].astype(float)
        weights = mask * (1.0 + np.arange(len(mask)))
        return weights / weights.sum()


# ------------------------------------------------------------------ the canonical observation
def _positions(n: int, k: int):
    """Every position with ``k`` cards in each hand of an ``n``-card game, as bitmasks:
    the hand, the other hand, the prizes to come and (an index) the prize on the table."""
    sets = [m for m in range(1 << n) if m.bit_count() == k]
    rows = [(a, b, p ^ (1 << u), u) for a in sets for b in sets for p in sets for u in range(n) if p >> u & 1]
    return tuple(np.array(column) for column in zip(*rows))


def test_the_canonical_observation_drops_the_cards_nobody_holds():
    """Six cards, hand 2, 4, 6 against 1, 4, 5, the 6 on the table and 1 and 3 to come: the
    cards held are 1, 2, 4, 5, 6, renumbered 1 to 5 (so the hand is 2, 3, 5 and the other
    1, 3, 4); the prizes keep their values; canonical card j is the real card order[j]."""
    rules = markov(6)
    shown = position_observations(
        rules, np.array([0b101010]), np.array([0b011001]), np.array([0b101]), np.array([5]), 0
    )
    canonical, masks, order = rules.canonical(shown["observation"], shown["action_mask"])
    views = rules.markov_layout.views(canonical)
    np.testing.assert_array_equal(views["hand"][0], [0, 1, 1, 0, 1, 0])
    np.testing.assert_array_equal(views["others"][0, 0], [1, 0, 1, 1, 0, 0])
    np.testing.assert_array_equal(views["prize"][0], [0, 0, 0, 0, 0, 1])
    np.testing.assert_array_equal(views["prizes_to_come"][0], [1, 0, 1, 0, 0, 0])
    np.testing.assert_array_equal(order[0], [0, 1, 3, 4, 5, -1])
    np.testing.assert_array_equal(masks[0], [0, 1, 1, 0, 1, 0])
    assert GoofspielRules(num_cards=6).canonical(shown["observation"], shown["action_mask"]) is None


@pytest.mark.parametrize("n", [4, 5])
def test_observations_share_a_canonical_one_exactly_where_the_solver_sees_one_pattern(n):
    """Every position of every level: two Markov observations have the same canonical one
    exactly when their hands have the same interleaving pattern (``pattern_of``, the exact
    solvers' reduction, worked out on the card sets) and the prizes are the same, so there
    are as many as the solvers' patterns times the prize sets times the upcards; and the
    renaming keeps the cards' order."""
    rules = markov(n)
    for k in range(2, n + 1):
        hand, other, prizes, upcard = _positions(n, k)
        shown = position_observations(rules, hand, other, prizes, upcard, 0)
        canonical, _, order = rules.canonical(shown["observation"], shown["action_mask"])
        ours = np.unique(canonical, axis=0, return_inverse=True)[1].ravel()

        def cards(mask):
            return [c + 1 for c in range(n) if mask >> c & 1]

        solver = [(pattern_of(cards(a), cards(b)), p, u) for a, b, p, u in zip(hand, other, prizes, upcard)]
        theirs = np.unique([str(key) for key in solver], return_inverse=True)[1].ravel()
        assert len(set(zip(ours, theirs))) == len(set(ours)) == len(set(theirs))
        assert len(set(ours)) == len(level_patterns(k, n)) * comb(n, k) * k
        for row in order:
            named = row[row >= 0]
            assert np.all(np.diff(named) > 0)


def test_a_table_keyed_by_the_canonical_observation_serves_every_position_it_merges(tmp_path):
    """One row for the canonical position of hand 1, 3 against 3, 4 (5 cards): the position
    with the hands 2, 4 against 4, 5 (the same pattern) plays the same row with the cards
    renamed, alone or in a batch, saved and loaded; a position without a row plays
    uniformly; a table without masks, or of a configuration that declares no canonical
    observation, is refused."""
    rules = markov(5)
    shown = position_observations(
        rules, np.array([0b00101, 0b01010, 0b00011]), np.array([0b01100, 0b11000, 0b00011]),
        np.array([0b10000, 0b10000, 0b10000]), np.array([2, 2, 2]), 0,
    )  # fmt: skip
    canonical, _, _ = rules.canonical(shown["observation"], shown["action_mask"])
    row = np.array([0.25, 0.75, 0.0, 0.0, 0.0])  # the canonical hand: 1 and 2 of 1 (A), 2 (both), 3 (B)
    agent = PolicyAgent(
        "goofspiel", rules.params, {canonical[0].tobytes(): row}, keyed_by="canonical_observation", unseen="uniform"
    )
    expected = [[0.25, 0, 0.75, 0, 0], [0, 0.25, 0, 0.75, 0], [0.5, 0.5, 0, 0, 0]]
    np.testing.assert_allclose(agent.policy_batch(shown), expected)
    for i in range(3):
        np.testing.assert_allclose(agent.policy({key: value[i] for key, value in shown.items()}), expected[i])
    loaded = PolicyAgent.load(agent.save(tmp_path))
    assert loaded.keyed_by == "canonical_observation"
    np.testing.assert_allclose(loaded.policy_batch(shown), expected)
    with pytest.raises(ValueError, match="action_mask"):
        agent.policy_batch({"observation": shown["observation"]})
    full = PolicyAgent("goofspiel", {"num_cards": 5}, {}, keyed_by="canonical_observation", unseen="uniform")
    with pytest.raises(ValueError, match="declares no canonical observation"):
        full.policy_batch(position_observations(GoofspielRules(num_cards=5), *(np.array([v]) for v in (3, 3, 8, 2)), 0))


@pytest.mark.parametrize("rules", [markov(5), GoofspielRules(num_cards=4)], ids=["markov", "full"])
def test_batched_policies_equal_one_at_a_time(rules):
    game = HiddenhandGame(GoofspielRules(num_cards=3))
    cfr = pyspiel.CFRSolver(cached_tree(game))
    for _ in range(5):
        cfr.evaluate_and_update_policy()
    table = PolicyAgent.from_openspiel(game, cfr.average_policy())
    agents = [
        untrained_ppo(rules),
        RandomAgent(),
        _Loop(),
        make_agent("goofspiel", "medium"),
        GoofspielEquilibriumAgent(rules),
    ]
    batch = _observations(rules)
    for agent in agents:
        many = agent.policy_batch(batch)
        one = np.stack([agent.policy({k: v[i] for k, v in batch.items()}) for i in range(len(many))])
        np.testing.assert_allclose(many, one, atol=1e-10)
    # Besides each other, the two agents defined by a formula follow it.
    legal = batch["action_mask"].astype(float)
    np.testing.assert_allclose(RandomAgent().policy_batch(batch), legal / legal.sum(axis=1, keepdims=True))
    weighted = legal * (1.0 + np.arange(rules.num_cards))
    np.testing.assert_allclose(_Loop().policy_batch(batch), weighted / weighted.sum(axis=1, keepdims=True))
    tiny = _observations(GoofspielRules(num_cards=3))
    np.testing.assert_array_equal(
        table.policy_batch(tiny), [table.policy({"information_state": row}) for row in tiny["information_state"]]
    )
    # The table is OpenSpiel's average policy at every decision of the game, as OpenSpiel gives it.
    average = cfr.average_policy()
    for state in decision_states(game.rules):
        player = state.current_player()
        expected = np.zeros(game.rules.num_actions)
        for action, prob in average.get_state_policy(state.information_state_string(player)):
            expected[action] = prob
        np.testing.assert_allclose(table.policy(state.agent_observation(player)), expected, atol=1e-12)


def test_ppo_batches_equal_sb3_contribs_own_distribution():
    import torch

    agent = untrained_ppo(markov(6), seed=3)
    batch = _observations(markov(6), count=64)
    with torch.no_grad():
        dist = agent.model.policy.get_distribution(
            torch.as_tensor(batch["observation"]), action_masks=batch["action_mask"].astype(bool)
        )
    np.testing.assert_allclose(agent.policy_batch(batch), dist.distribution.probs.numpy(), atol=1e-6)
    assert positions.is_markov(agent) and not positions.is_markov(untrained_ppo(GoofspielRules(num_cards=4)))


# ------------------------------------------------------------------ exploitability over positions
def _reference(agent, rules):
    """The dynamic programme over histories, per seat (the agents here ignore their seat, so
    their on-policy value is 0 and the best-response values are the gains)."""
    return best_response_value(agent, rules, 0), best_response_value(agent, rules, 1)


@pytest.mark.parametrize("n", [4, 5])
@pytest.mark.parametrize("name", ["random", "easy", "medium", "equilibrium", "ppo"])
def test_positions_equal_the_dynamic_programme_over_histories(name, n):
    # A PPO agent on the full observation reads the history: only its Markov kind is measured here.
    for rules in (markov(n),) if name == "ppo" else (GoofspielRules(num_cards=n), markov(n)):
        agent = untrained_ppo(rules, seed=n) if name == "ppo" else make_agent("goofspiel", name, rules)
        measured = positions.exploitability(agent, rules, progress=False)
        np.testing.assert_allclose(measured.per_seat, _reference(agent, rules), atol=1e-9)
        assert measured.exact and measured.value == pytest.approx(sum(measured.per_seat) / 2)


@pytest.mark.parametrize("name", ["medium", "ppo"])
def test_positions_equal_openspiels_exact_best_response(name):
    rules = markov(4)
    agent = untrained_ppo(rules, seed=7) if name == "ppo" else make_agent("goofspiel", name, rules)
    ours = positions.exploitability(agent, rules, progress=False)
    theirs = openspiel_exploitability(rules, agent)
    np.testing.assert_allclose(ours.per_seat, theirs.per_seat, atol=1e-9)


def test_a_seat_dependent_agent_is_measured_seat_by_seat():
    """An agent that plays differently in each seat (it reads the seat bit of the full
    observation, which is neither score nor history): per-seat gains and on-policy values
    differ, and each matches OpenSpiel."""

    class BySeat(Agent):
        uses_score = uses_history = False

        def policy(self, observation):
            mask = observation["action_mask"].astype(float)
            seat = int(np.asarray(observation["observation"])[2])  # the seat one-hot follows the reveal flag
            weights = mask * (np.arange(len(mask)) + 1.0) ** (3 if seat else -2)
            return weights / weights.sum()

    rules = GoofspielRules(num_cards=4)
    ours = positions.exploitability(BySeat(), rules, progress=False)
    theirs = openspiel_exploitability(rules, BySeat())
    np.testing.assert_allclose(ours.per_seat, theirs.per_seat, atol=1e-9)
    assert abs(ours.per_seat[0] - ours.per_seat[1]) > 0.1


@pytest.mark.parametrize("n", range(2, 9))
def test_the_equilibrium_is_unexploitable_over_positions(n):
    assert positions.exploitability(GoofspielEquilibriumAgent(n), markov(n), progress=False).value < 1e-9


def test_agents_that_read_the_score_are_refused_and_large_games_named():
    with pytest.raises(ValueError, match="may read the score or the history"):
        positions.exploitability(make_agent("goofspiel", "hard"), 4, progress=False)
    with pytest.raises(ValueError, match="up to 10 cards"):
        positions.exploitability(RandomAgent(), 11, progress=False)
    with pytest.raises(ValueError, match="differs in"):
        positions.exploitability(RandomAgent(), GoofspielRules(num_cards=4, num_players=3), progress=False)


def test_the_declared_exploitability_dispatches_on_what_the_agent_reads():
    rules = GoofspielRules(num_cards=4)
    assert "positions" in GOOFSPIEL.measure_exploitability(rules, RandomAgent()).method
    hard = GOOFSPIEL.measure_exploitability(rules, make_agent("goofspiel", "hard"))
    assert "histories" in hard.method
    assert hard.nash_conv == pytest.approx(sum(_reference(make_agent("goofspiel", "hard"), rules)), abs=1e-9)


# ------------------------------------------------------------------ values over positions
@pytest.mark.parametrize("observation", ["full", "markov"])
def test_values_over_positions_equal_openspiels_expected_returns(observation):
    rules = GoofspielRules(num_cards=4, observation=observation)
    agent = untrained_ppo(rules, seed=1) if observation == "markov" else make_agent("goofspiel", "easy")
    opponent = GoofspielEquilibriumAgent(rules)
    game = HiddenhandGame(rules)
    root = cached_tree(game).new_initial_state()
    mine, theirs = tabular_policy(game, agent), tabular_policy(game, opponent)
    seat0 = pyspiel.expected_returns(root, [mine, theirs], -1, True)[0]
    seat1 = pyspiel.expected_returns(root, [theirs, mine], -1, True)[1]
    assert positions.value(agent, opponent, rules, progress=False) == pytest.approx((seat0 + seat1) / 2, abs=1e-9)
    assert positions.value(agent, agent, rules, progress=False) == pytest.approx(0.0, abs=1e-12)


class _BySeat(Agent):
    """A Markov agent that plays differently in each seat (it reads the seat of the full
    observation, which is neither score nor history): ``styles[seat]`` is ``"high"`` or
    ``"low"`` (it favours its high or its low cards: weights the cube of the card or of its
    reverse) or a number, which picks a fixed random table of its hand, the prize and the
    prizes to come."""

    uses_score = uses_history = False

    def __init__(self, rules, styles):
        self.layout, self.styles = rules.information_layout, styles

    def policy(self, observation):
        views = self.layout.views(np.asarray(observation["observation"]))
        mask = np.asarray(observation["action_mask"], dtype=float)
        style = self.styles[int(np.argmax(views["seat"]))]
        if style == "high":
            weights = (np.arange(len(mask)) + 1.0) ** 3
        elif style == "prize":
            weights = np.exp(-2.0 * np.abs(np.arange(len(mask)) - np.argmax(views["prize"])))
        else:
            cards = [np.flatnonzero(views[name]) for name in ("hand", "prize", "prizes_to_come")]
            shown = [int(sum(1 << c for c in chosen)) for chosen in cards]  # as bit sets
            weights = 0.1 + np.random.default_rng([style, *shown]).random(len(mask))
        weights = weights * mask
        return weights / weights.sum()


def test_values_of_seat_dependent_agents_equal_openspiels_expected_returns():
    """Two agents that each play differently in each seat: the value over positions is the
    mean of the agent in seat 0 against the opponent in seat 1 and the reverse, each read in
    its own seat, as OpenSpiel's expected returns on the whole tree give them. The two
    seatings are worth very different amounts, so a value that measured one seat, or that
    asked the opponent in the agent's seat, would be far off; and each agent's best
    responses are OpenSpiel's, seat by seat."""
    rules = GoofspielRules(num_cards=4)
    agent, opponent = _BySeat(rules, ("prize", 1)), _BySeat(rules, (2, "high"))
    game = HiddenhandGame(rules)
    root = cached_tree(game).new_initial_state()
    mine, theirs = tabular_policy(game, agent), tabular_policy(game, opponent)
    seat0 = pyspiel.expected_returns(root, [mine, theirs], -1, True)[0]
    seat1 = pyspiel.expected_returns(root, [theirs, mine], -1, True)[1]
    assert abs(seat0 - seat1) > 1.0
    assert positions.value(agent, opponent, rules, progress=False) == pytest.approx((seat0 + seat1) / 2, abs=1e-9)
    assert positions.value(opponent, agent, rules, progress=False) == pytest.approx(-(seat0 + seat1) / 2, abs=1e-9)
    for who in (agent, opponent):
        ours = positions.exploitability(who, rules, progress=False)
        np.testing.assert_allclose(ours.per_seat, openspiel_exploitability(rules, who).per_seat, atol=1e-9)


# ------------------------------------------------------------------ the command
def test_the_exploitability_command_reports_exact_figures_and_refuses_clearly(capsys):
    import json

    from hiddenhand.cli import main

    assert main(["exploitability", "goofspiel", "--cards", "4", "--agent", "medium", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    rules = GoofspielRules(num_cards=4)
    assert printed["exact"] and "positions" in printed["method"]
    assert printed["per_seat"] == pytest.approx(
        openspiel_exploitability(rules, make_agent("goofspiel", "medium")).per_seat
    )
    assert printed["nash_conv"] == pytest.approx(sum(printed["per_seat"]))
    assert main(["exploitability", "spoof", "--matches", "1", "--agent", "random"]) == 0
    text = capsys.readouterr().out
    assert "exact" in text and "exploitability 0.266667" in text  # seats 1/3 and 1/5, by hand
    with pytest.raises(SystemExit) as stop:
        main(["exploitability", "egghead", "--agent", "random", "--method", "exact"])
    assert stop.value.code == 2
    assert "no exact exploitability" in capsys.readouterr().err
