"""The observations of positions built in bulk, and the measure over positions that reads them,
held to the rules engine and to the measure as it was before they were compiled
(``benchmarks/goofspiel_positions_before.py``)."""

import goofspiel_positions_before as before
import numpy as np
import pytest
from conftest import play_out

from hiddenhand.agent import Agent, RandomAgent, agent_reads
from hiddenhand.agents import GoofspielEquilibriumAgent, make_agent
from hiddenhand.envs.goofspiel import GoofspielRules
from hiddenhand.envs.goofspiel_observation import position_observations
from hiddenhand.solvers.goofspiel import positions
from hiddenhand.solvers.goofspiel.patterns import Sets

FULL = [
    {},
    {"reveal_bids": False},
    {"scoring": "total_points"},
    {"scoring": "win_loss"},
    {"prize_order": "ascending"},
]
"""Settings of the full observation: the history built (each side's lowest spent card on the
lowest spent prize) is the one played, so it is the engine's under random and ascending
prize order, whatever the scoring, bids shown or hidden."""

MARKOV = [{}, {"scoring": "total_points"}, {"prize_order": "descending"}, {"prize_order": "ascending"}]
"""Settings of the Markov observation, which shows no history: any order of play reaches it."""


def _bits(cards) -> int:
    return sum(1 << (c - 1) for c in cards)


def _engine_positions(rules, count, rng):
    """``count`` random decisions of ``rules``' game played on the engine, with each
    position's arguments to ``position_observations`` and the engine's observation and mask.
    Full observations are played in the order the bulk history shows (sorted spent cards,
    round by round); Markov ones in a random order of rounds. Seat 1 is asked after seat 0's
    hidden bid of the round."""
    n = rules.num_cards
    rows = []
    for _ in range(count):
        played = int(rng.integers(0, n - 1))  # a hand of at least 2 cards is a decision
        mine, theirs = (sorted(rng.choice(np.arange(1, n + 1), played, replace=False).tolist()) for _ in range(2))
        prizes = sorted(rng.choice(np.arange(1, n + 1), played, replace=False).tolist())
        if rules.markov:
            rng.shuffle(mine)
            rng.shuffle(prizes)
        state = play_out(rules.new_initial_state(), list(zip(mine, theirs)), prizes=prizes)
        if state.is_chance_node():
            state.apply(int(rng.choice(state.legal_actions())))
        hands = [[c for c in range(1, n + 1) if c not in spent] for spent in (mine, theirs)]
        position = (state.prize - 1, _bits(state.prizes_left))
        seat = int(rng.integers(2))
        if seat == 1:
            state.apply(int(rng.choice(state.legal_actions())))  # seat 0's bid, hidden from seat 1
        own, other = _bits(hands[seat]), _bits(hands[1 - seat])
        rows.append(
            (own, other, position[1], position[0], seat, state.observation_tensor(seat), state.action_mask(seat))
        )
    return rows


@pytest.mark.parametrize("n", range(2, 14))
@pytest.mark.parametrize("observation, settings", [("full", s) for s in FULL] + [("markov", s) for s in MARKOV])
def test_bulk_observations_are_the_engines_own(n, observation, settings):
    """Random positions of every size from 2 to 13 cards, both seats, each setting that
    changes the observation: one batch mixing hand sizes, and each row alone, equal the
    engine's observation and mask bit for bit."""
    rules = GoofspielRules(num_cards=n, observation=observation, **settings)
    rows = _engine_positions(rules, 30, np.random.default_rng([n, len(str(settings))]))
    for seat in (0, 1):
        mine = [row for row in rows if row[4] == seat]
        if not mine:
            continue
        hand, other, prizes, upcard = (np.array([row[i] for row in mine]) for i in range(4))
        built = position_observations(rules, hand, other, prizes, upcard, seat)
        assert built["observation"].dtype == np.float32 and built["action_mask"].dtype == np.int8
        np.testing.assert_array_equal(built["observation"], np.stack([row[5] for row in mine]))
        np.testing.assert_array_equal(built["action_mask"], np.stack([row[6] for row in mine]))


@pytest.mark.parametrize("observation", ["full", "markov"])
@pytest.mark.parametrize("n", [3, 5, 7])
def test_bulk_observations_equal_the_numpy_builders_on_every_position(observation, n):
    """Every decision position of every level, both seats, into a reused buffer: the
    compiled builder writes exactly what the numpy one it replaced wrote."""
    rules, sets = GoofspielRules(num_cards=n, observation=observation), Sets(n)
    size = rules.markov_layout.size if observation == "markov" else rules.information_layout.size
    buffer = {"observation": np.full((5000, size), 7.0, np.float32), "action_mask": np.full((5000, n), 7, np.int8)}
    for k in range(2, n + 1):
        cards, masks = sets.cards[k], sets.masks[k]
        a, b, p, u = (x.ravel() for x in np.meshgrid(*(np.arange(len(masks)),) * 3, np.arange(k), indexing="ij"))
        upcard = cards[p, u]
        for seat in (0, 1):
            args = masks[a], masks[b], masks[p] ^ (1 << upcard), upcard, seat
            old = before.position_observations(rules, *args)
            for start in range(0, len(a), 5000):
                rows = slice(start, start + 5000)
                part = {key: value[: len(a[rows])] for key, value in buffer.items()}
                new = position_observations(rules, *(x[rows] for x in args[:4]), seat, out=part)
                assert new is part
                np.testing.assert_array_equal(new["observation"], old["observation"][rows])
                np.testing.assert_array_equal(new["action_mask"], old["action_mask"][rows])


def test_rows_that_are_not_positions_are_refused_by_number():
    """Hands of different sizes, prizes to come that do not match them, the upcard among
    them or off the cards, a card past the game's: the row is named."""
    rules = GoofspielRules(num_cards=5)
    good = (0b00111, 0b01011, 0b10001, 2)  # hands of 3 cards, prizes 1 and 5 to come, the 3 on the table
    for bad in [(0b00111, 0b00011, 0b10001, 2), (0b00111, 0b01011, 0b10101, 2), (0b00111, 0b01011, 0b10001, 4),
                (0b100111, 0b01011, 0b10001, 2), (0b00111, 0b01011, 0b10001, 5)]:  # fmt: skip
        columns = (np.array([g, b]) for g, b in zip(good, bad))
        with pytest.raises(ValueError, match="row 1 is not a position of 5 cards"):
            position_observations(rules, *columns, 0)
    with pytest.raises(ValueError, match="one entry per position"):
        position_observations(rules, np.array([7]), np.array([11, 7]), np.array([17]), np.array([2]), 0)
    with pytest.raises(ValueError, match="out holds arrays"):
        out = {"observation": np.empty((2, 3), np.float32), "action_mask": np.empty((2, 5), np.int8)}
        position_observations(rules, *(np.array([x]) for x in good), 0, out=out)


# ------------------------------------------------------------------ what an agent reads
def test_agents_declare_what_they_read_and_the_measure_builds_only_that():
    """Random play reads only the mask, so the measure hands it no observation vectors (and
    one policy serves both seats); an agent that says nothing may read anything."""
    assert RandomAgent.reads == {"action_mask"} and not agent_reads(RandomAgent(), "observation")
    assert agent_reads(make_agent("goofspiel", "medium"), "observation") and agent_reads(object(), "observation")

    class Recording(RandomAgent):
        seen: set = set()

        def policy_batch(self, observations):
            self.seen.update(observations)
            return super().policy_batch(observations)

    class Reading(Recording):
        reads = None

    for agent, keys in ((Recording(), {"action_mask"}), (Reading(), {"action_mask", "observation"})):
        agent.seen = set()
        measured = positions.exploitability(agent, GoofspielRules(num_cards=5), progress=False)
        assert agent.seen == keys and measured.per_seat == (4.0, 4.0)
    assert "one policy for both seats" in positions.exploitability(Recording(), 4, progress=False).method
    assert "each seat's policy" in positions.exploitability(Reading(), 4, progress=False).method


# ------------------------------------------------------------------ the measure, before and after
class Softmax(Agent):
    """A linear softmax policy over the whole full observation (seat, score and history
    included), vectorised with numpy in float64. It declares itself Markov although it reads
    the score and the history: what it is measured on is then the history the bulk
    observations show, so any difference between the builders would change its figure."""

    uses_score = uses_history = False

    def __init__(self, rules, seed=0):
        super().__init__(seed)
        self.weights = np.random.default_rng(seed).normal(size=(rules.information_layout.size, rules.num_cards))

    def policy_batch(self, observations):
        logits = np.asarray(observations["observation"], dtype=np.float64) @ self.weights
        logits = np.where(observations["action_mask"] != 0, logits, -np.inf)
        weights = np.exp(logits - logits.max(axis=1, keepdims=True))
        return weights / weights.sum(axis=1, keepdims=True)

    def policy(self, observation):
        return self.policy_batch({key: np.asarray(value)[None] for key, value in observation.items()})[0]


class BySeat(Agent):
    """Plays high cards in seat 0 and low ones in seat 1 (the seat of the full observation),
    through the protocol's default ``policy_batch``, row by row."""

    uses_score = uses_history = False

    def policy(self, observation):
        mask = np.asarray(observation["action_mask"], dtype=float)
        seat = int(np.asarray(observation["observation"])[2])  # the seat one-hot follows the reveal flag
        weights = mask * (np.arange(len(mask)) + 1.0) ** (2 if seat else -2)
        return weights / weights.sum()


@pytest.mark.parametrize("n", [4, 5, 6])
@pytest.mark.parametrize("name", ["softmax", "by_seat", "medium", "equilibrium", "random"])
def test_the_measure_gives_exactly_what_it_gave_before(name, n):
    """Agents on the default (full) observation: the figures per seat equal the numpy
    builder's path, to the last bit or within 1e-12; the seat-dependent ones differ by seat."""
    rules = GoofspielRules(num_cards=n)
    agent = {
        "softmax": lambda: Softmax(rules, seed=n),
        "by_seat": BySeat,
        "equilibrium": lambda: GoofspielEquilibriumAgent(rules),
        "random": RandomAgent,
        "medium": lambda: make_agent("goofspiel", "medium", rules),
    }[name]()
    now = positions.exploitability(agent, rules, progress=False).per_seat
    then = before.exploitability(agent, rules).per_seat
    np.testing.assert_allclose(now, then, rtol=0, atol=1e-12)
    if name in ("softmax", "by_seat"):
        assert abs(now[0] - now[1]) > 0.01


def test_a_networks_thread_count_is_kept_through_the_measure():
    """numba's parallel kernels set the OpenMP thread count that torch shares to their own:
    the agent is asked at its owner's count at every level, and left with it."""
    import torch

    class Counting(RandomAgent):
        reads = None
        counts: list = []

        def policy_batch(self, observations):
            self.counts.append(torch.get_num_threads())
            return super().policy_batch(observations)

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        agent = Counting()
        positions.exploitability(agent, GoofspielRules(num_cards=5), progress=False)
        positions.value(agent, agent, GoofspielRules(num_cards=5), progress=False)
        assert set(agent.counts) == {1} and len(agent.counts) > 8 and torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(threads)
