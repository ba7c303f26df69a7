"""Sampled regret matching: a table of regrets over the observations that self-play meets,
learnt from games played many at a time in the batched env (:mod:`hiddenhand.vector`).

Why: the tabular control of :mod:`.markov_table` reaches the equilibrium with exact values,
and the network learners stall on their update; this learner keeps the table and learns only
from sampled play, with regret matching, whose average policy converges from samples. Each
iteration plays a collection of games (step 1: one exploring seat a game), credits every
decision with a variance-reduced sample of the return still to come (step 2: baselines, the
explored action reweighted, and with ``bootstrap`` the learnt value of the round-state it
leads to), turns the credits into per-action estimates (step 3) and updates each touched row
by predictive regret matching+ with linear averaging (step 4). The algorithm in full, the
sources of each part and the runs behind each setting: ``docs/training.md``, "Sampled regret
matching" (its steps are those the docstrings here number).

The compiled steps it calls are in :mod:`.regret_kernels`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from numba import types
from numba.typed import Dict

from hiddenhand.agents.policy_agent import PolicyAgent
from hiddenhand.core import Rules, State, check_rules
from hiddenhand.registry import game_of, get
from hiddenhand.training import regret_kernels as kernels
from hiddenhand.training.run import Point, Run, exact_measure
from hiddenhand.validation import check_bool, check_int, check_number
from hiddenhand.vector import MAX_ENVS, vector_env


@dataclass(frozen=True)
class RegretSettings:
    """The learner's settings; what each does in the algorithm: ``docs/training.md``, "The algorithm"."""

    games: int = 8192
    """Games played at once (one compiled step serves them all)."""
    window: int = 0
    """Env steps per collection (an iteration); 0: four times the longest game, at most 64."""
    least: int = 1
    """Estimates a row gathers (over as many collections as it takes) before it is updated:
    more make each update less noisy; the rows met rarely are then updated rarely."""
    plus: bool = True
    """Regret matching+ (regrets floored at 0) rather than plain regret matching."""
    foresight: float = 1.0
    """How much of a row's last advantages the policy adds to its regrets (predictive regret
    matching+, Farina et al., AAAI 2021; 0 is plain regret matching+)."""
    baseline_rate: float = 0.05
    """The baselines are running means until an action has been seen ``1/baseline_rate``
    times, then move by this share towards each new return (they follow the policy)."""
    exploration: float = 0.6
    """Share of uniform play mixed into the explorer's policy at each of its decisions:
    more reaches rare positions more often, at the price of noisier credits (one over a
    smaller probability)."""
    probe: bool = False
    """Explore at one decision a game instead of at every decision of the exploring seat
    (less noisy credit in long games learnt without bootstrap); ``exploration`` is then unused."""
    canonical: bool = True
    """Key the table by the game's canonical observation where it declares one
    (``Rules.canonical``: Goofspiel's Markov observation, by its interleaving pattern), so
    that positions that are the same game with the cards renamed share one row (and, with
    ``bootstrap``, one round value); the saved agent then looks its rows up the same way."""
    bootstrap: bool = False
    """Credit a round's decisions with the learnt value of the round-state the round leads
    to rather than with the rest of the game as sampled;
    only for games that mark their round-states (``State.round_state``: Goofspiel, Spoof,
    Bid Spoof). It changes nothing in a configuration that marks none (Goofspiel with
    hidden bids or win/loss scoring, where the rest of the game depends on more than the
    position)."""

    def check(self) -> None:
        """Refuse a setting out of its range, naming it and what is allowed."""
        check_int("games", self.games, 1, MAX_ENVS)
        check_int("window", self.window, 0, 10**6)
        check_int("least", self.least, 1, 10**9)
        check_bool("plus", self.plus)
        check_bool("probe", self.probe)
        check_bool("bootstrap", self.bootstrap)
        check_bool("canonical", self.canonical)
        for name, fits, allowed in (
            ("foresight", lambda x: 0.0 <= x <= 10.0, "0 to 10"),
            ("baseline_rate", lambda x: 0.0 < x <= 1.0, "more than 0, at most 1"),
            ("exploration", lambda x: 0.0 < x <= 1.0, "more than 0, at most 1"),
        ):
            check_number(name, getattr(self, name), fits, allowed)


SETTINGS = {
    "goofspiel": RegretSettings(bootstrap=True),
    "spoof": RegretSettings(games=128, bootstrap=True),
    "bid_spoof": RegretSettings(games=256, bootstrap=True),
}
"""Per game, settings that differ from the defaults: every game with a batched env learns
each round against the learnt values of the round-states it leads to (Goofspiel's rounds
are its turns), and the whole games of Spoof and Bid Spoof then learn fastest with more,
smaller updates (docs/training.md, "Bootstrapped round values")."""


def regret_settings_for(game: str) -> RegretSettings:
    """The settings :func:`train_regret` uses on ``game`` (a registered name) unless given others."""
    return SETTINGS.get(get(game).name, RegretSettings())


def settings_for_rules(rules: Rules) -> RegretSettings:
    """The learner's settings for ``rules`` (its declaration, training/learners.py)."""
    return regret_settings_for(rules.name)


class SampledRegret:
    """The learner's state: the batched env, the table (grown as observations are met) and
    the decisions still waiting for their game's end. :meth:`iterate` runs one collection
    and its update; :meth:`agent` is the average policy as a saveable agent."""

    FIELDS = ("regrets", "predicted", "baseline", "seen", "average", "delta")

    def __init__(self, rules: Rules, settings: RegretSettings, seed: int) -> None:
        settings.check()
        self.game, self.settings = rules.name, settings
        self.envs = vector_env(rules, settings.games)
        self.rules = self.envs.rules
        if settings.bootstrap and type(self.rules.new_initial_state()).round_state is State.round_state:
            raise ValueError(
                f"bootstrap=True is not allowed on {self.game}: its states mark no round-states "
                "(State.round_state); allowed: bootstrap=False, or a game that marks them "
                "(goofspiel, spoof, bid_spoof)"
            )
        self.zero_sum = self.rules.num_players == 2 and self.rules.utility_sum == 0
        self.rng = np.random.default_rng(seed)
        self.obs, self.info = self.envs.reset(seed=int(self.rng.integers(2**63)))
        # Keyed by the canonical observation where asked and the configuration declares one.
        self.reduced = settings.canonical and (
            self.rules.canonical(self.obs["observation"][:1], self.obs["action_mask"][:1]) is not None
        )
        longest = max(1, self.rules.max_game_length)
        self.window = settings.window or min(4 * longest, 64)
        shape = (longest + self.window, settings.games)
        # Per step and game (rows of steps, kept until the game ends): see regret_kernels.credit and .learn.
        self.steps = (
            np.zeros(shape, dtype=np.int64),  # rows
            np.zeros(shape, dtype=np.int64),  # actions
            np.ones(shape),  # taken: the probability the action was drawn with
            np.zeros(shape, dtype=np.int64),  # players
            np.zeros(shape, dtype=np.int64),  # explorers
            np.zeros(shape, dtype=np.int8),  # role
            np.zeros(shape + (self.rules.num_players,)),  # banked, every seat's
            np.zeros(shape, dtype=bool),  # ended
            np.zeros(shape + (self.rules.num_players,)),  # rewards
            np.full(shape, -1, dtype=np.int64),  # round rows: the round value of a round's start (bootstrap)
        )
        self.kept = 0  # steps carried from the last collection
        # Per game: its explorer, which of the explorer's decisions is the probe, how many it has made.
        self.probes = tuple(np.zeros(settings.games, dtype=np.int64) for _ in range(3))
        self.typical: float | None = None
        self._restart(np.ones(settings.games, dtype=bool))
        self.index = Dict.empty(key_type=types.uint64, value_type=types.int64)
        # Bootstrap: each round-state's value to every seat (a running mean), and its weight.
        self.round_index = Dict.empty(key_type=types.int64, value_type=types.int64)
        self.round_values = np.zeros((0, self.rules.num_players))
        self.round_weights = np.zeros((0, self.rules.num_players))
        self.round_size = 0
        self.iterations = 0
        self.size, self.capacity = 0, 0
        self.waiting = 0  # rows with estimates waiting for more (the first of self.touched)
        self._grow(max(4 * settings.games, 1 << 14))

    def _restart(self, ended: np.ndarray) -> None:
        """New explorers and probes for the games that ended. The probe is drawn uniformly
        over the explorer's typical number of decisions (a running mean over finished games):
        games whose longest possible length is far beyond their usual one (Spoof's 50
        rounds) would otherwise seldom reach their probe."""
        made = self.probes[2][ended]
        if self.typical is None:
            self.typical = max(1, self.rules.max_game_length) / self.rules.num_players
        elif len(made):
            self.typical += 0.05 * (made.mean() - self.typical)
        spread = max(1, int(np.ceil(self.typical)))
        kernels.restart_probes(ended, self.probes, self.rules.num_players, spread, self.rng.random((len(ended), 2)))

    def _grow(self, capacity: int) -> None:
        """Make room for ``capacity`` rows, keeping the rows there are."""
        a, size = self.rules.num_actions, self.size
        fresh = {name: np.zeros((capacity, a)) for name in self.FIELDS}
        fresh["legal"] = np.zeros((capacity, a), dtype=np.bool_)
        fresh["shown"] = np.zeros((capacity, self.rules.observation_size), dtype=np.float32)
        fresh["hits"] = np.zeros(capacity, dtype=np.int64)
        fresh["touched"] = np.zeros(capacity, dtype=np.int64)
        fresh["updates"] = np.zeros(capacity, dtype=np.int64)
        for name, array in fresh.items():
            if self.capacity:
                array[:size] = getattr(self, name)[:size]
            setattr(self, name, array)
        self.capacity = capacity

    def iterate(self, going: Callable[[], bool] = lambda: True) -> tuple[int, int]:
        """One collection of ``window`` steps of every game, then the update. Returns the
        decisions played and the games finished. The collection ends early, after the step
        where ``going()`` turns false (a budget of seconds spent, a Ctrl-C): a collection
        can take seconds, and the update credits whatever steps were taken, keeping the
        unfinished games for the next one as it always does."""
        n = self.settings.games
        rows, actions, taken, players, explorers, role, banked, ended, rewards, round_rows = self.steps
        s = self.settings
        start, stop = self.kept, self.kept + self.window
        games = 0
        for t in range(start, stop):
            obs, info = self.obs, self.info
            if self.size + n > self.capacity:
                self._grow(2 * self.capacity)
            view, mask, order = obs["observation"], obs["action_mask"], None
            if self.reduced:
                view, mask, order = self.rules.canonical(view, mask)
            keys = kernels.hash_observations(view)
            rows[t], self.size = kernels.find_rows(keys, mask, view, self.index, self.legal, self.shown, self.size)
            players[t], banked[t], explorers[t] = info["player"], info["banked"], self.probes[0]
            if s.bootstrap:
                round_rows[t] = self._round_rows(self._round_keys(info["round_state"], keys))
            kernels.act(
                rows[t], players[t], self.probes, s.probe, s.exploration, self.regrets, self.predicted,
                self.legal, self.rng.random(n), actions[t], taken[t], role[t],
            )  # fmt: skip
            played = actions[t] if order is None else order[np.arange(n), actions[t]]
            self.obs, rewards[t], terminated, truncated, self.info = self.envs.step(played)
            ended[t] = terminated | truncated
            self._restart(ended[t])
            games += int(ended[t].sum())
            if not going():
                stop = t + 1
                break
        self.iterations += 1
        credit = np.full(rows.shape, np.nan)
        table = (self.regrets, self.predicted, self.legal, self.baseline)
        rounds = (self.round_values, self.round_weights)
        keep = kernels.credit(stop, self.steps, table, rounds, float(self.iterations), self.zero_sum, credit)
        table += (self.seen, self.average, self.delta, self.hits, self.touched, self.updates)
        floor = 0.0 if s.plus else -np.inf
        _, self.waiting = kernels.learn(
            stop, self.steps, credit, table, self.waiting, s.least, s.baseline_rate, self.zero_sum, s.foresight, floor
        )
        for array in self.steps:
            array[: stop - keep] = array[keep:stop]
        role[stop - keep :] = 0
        self.kept = stop - keep
        return stop - start, games

    def _round_rows(self, keys: np.ndarray) -> np.ndarray:
        """The round-value rows of a step's ``info["round_state"]``, the table grown for new
        keys (doubled, as the policy table is: 8-card Goofspiel meets a million round-states)."""
        known = len(self.round_values)
        rows, self.round_size = kernels.find_round_rows(keys, self.round_index, self.round_size)
        if self.round_size > known:
            capacity = max(2 * known, self.round_size, 1024)
            for name in ("round_values", "round_weights"):
                grown = np.zeros((capacity, self.rules.num_players))
                grown[:known] = getattr(self, name)
                setattr(self, name, grown)
        return rows

    def _round_keys(self, starts: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """The round-value keys of a step's round-states (``starts``, -1 where a step starts
        no round) given its table keys: the round-state itself, or with the canonical
        observation the mover's canonical one (``Rules.canonical``), so that rounds the
        reduction merges share their value. Both are at least 0."""
        if not self.reduced:
            return starts
        return np.where(starts >= 0, (keys >> np.uint64(1)).astype(np.int64), -1)

    def round_value(self, state: State) -> np.ndarray:
        """The learnt value (return to come, to each seat) of the round-state ``state`` is
        at (``State.round_state``; ``bootstrap``), NaN for a seat that never learnt it and
        where ``state`` starts no round."""
        key = np.array([state.round_state()])
        if self.reduced:
            shown = state.observation(state.current_player())
            view = self.rules.canonical(shown["observation"][None], shown["action_mask"][None])[0]
            key = self._round_keys(key, kernels.hash_observations(view))
        r = self.round_index.get(int(key[0]), -1) if key[0] >= 0 else -1
        if r < 0:
            return np.full(self.rules.num_players, np.nan)
        return np.where(self.round_weights[r] > 0, self.round_values[r], np.nan)

    def average_policy(self) -> np.ndarray:
        """The average policy of every row (uniform over the legal actions where it has no weight)."""
        size = self.size
        weights = self.average[:size] * self.legal[:size]
        totals = weights.sum(axis=1, keepdims=True)
        uniform = self.legal[:size] / self.legal[:size].sum(axis=1, keepdims=True)
        return np.where(totals > 0, weights / np.where(totals > 0, totals, 1.0), uniform)

    def current_policy(self) -> np.ndarray:
        """Every row's policy of the last iteration (what the next collection plays, before
        exploration): regret matching's iterate, which need not converge where the average does."""
        policy = np.zeros((self.size, self.rules.num_actions))
        for r in range(self.size):
            kernels.current_policy(self.regrets, self.predicted, self.legal, r, policy[r])
        return policy

    def agent(self, seed: int | None = None, current: bool = False) -> PolicyAgent:
        """The average policy (or with ``current`` the last iteration's) as a
        :class:`~hiddenhand.agents.PolicyAgent` keyed by the observation, playing uniformly
        where the table has no row."""
        policy = self.current_policy() if current else self.average_policy()
        table = {self.shown[r].tobytes(): policy[r] for r in range(self.size)}
        keyed_by = "canonical_observation" if self.reduced else "observation"
        return PolicyAgent(self.game, self.rules.params, table, seed=seed, keyed_by=keyed_by, unseen="uniform")


def train_regret(
    rules: Rules,
    *,
    steps: int,
    out: str | Path,
    seed: int = 0,
    eval_every: int = 1_000_000,
    settings: RegretSettings | None = None,
    progress: bool = True,
    seconds: float | None = None,
    device: str = "auto",
) -> list[Point]:
    """Train sampled regret matching on ``rules`` for ``steps`` decisions
    (every seat's; whole collections, so a little more) or, with ``seconds``, until that many
    seconds of training have passed if that comes first, measuring the exact exploitability
    of the average policy every ``eval_every`` decisions where the game declares a measure
    that covers it. Writes ``curve.csv``, ``curve.png``, ``run.json`` and ``policy.npz`` (an
    agent: ``hiddenhand.agents.load_agent``) into ``out``; returns the curve. Ctrl-C
    saves, measures (a second Ctrl-C skips that) and raises
    :class:`~hiddenhand.interrupt.Interrupted`. ``device`` is unused: the learner is a table
    (the learner interface, training/learners.py, passes it to every learner)."""
    declared = game_of(check_rules(rules, "train_regret"))
    steps = check_int("steps", steps, 1, 10**12)
    eval_every = check_int("eval_every", eval_every, 1, 10**12)
    s = settings or settings_for_rules(rules)
    learner = SampledRegret(rules, s, seed)
    run = Run("sampled regret", rules, out, total=steps, progress=progress, seconds=seconds)

    def measure() -> tuple[float | None, dict]:
        return exact_measure(declared, rules, learner.agent()), {}

    with run.training():
        while run.going():
            if run.due(eval_every):
                run.measure(measure)
            steps_played, games = learner.iterate(run.going)
            run.advance(steps_played * s.games, games)
    record = {"settings": asdict(s), "seed": seed, "rows": learner.size}
    return run.finish(lambda: learner.agent().save(run.out), measure, record)


__all__ = ["SETTINGS", "RegretSettings", "SampledRegret", "regret_settings_for", "settings_for_rules", "train_regret"]
