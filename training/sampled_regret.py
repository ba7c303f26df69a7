"""Sampled regret matching: a table of regrets over the observations that self-play meets,
learnt from games played many at a time in the batched env (:mod:`hiddenhand.vector`).

(About 630 lines: the compiled kernels are the algorithm's steps and are read beside the
learner that calls them.)

Why a table, and why regrets. The tabular control of ``benchmarks/markov_table.py`` showed that on
the Markov observation the equilibrium is reachable by an update that has every position's
values (exact Q), and that the network learners stall because of their update, not because
of the measure or the observation (``docs/training.md``). This learner keeps the table and
gives up the exact values: everything it knows comes from sampled play, as for the network
learners, so it is a learner in the sense of the benchmark (it could be trained on any env
that gives these observations). Regret matching is the update with a known guarantee from
samples: its average policy converges to an equilibrium of a two-player zero-sum game, and
summing sampled regrets over many games averages their noise away, where a policy-gradient
step follows each batch's noise.

The algorithm (one iteration per collection):

1. Play ``games`` games at once for ``window`` steps. At each decision the row of the
   observation (a hash of its bytes: rows are created the first time an observation is
   met) gives the current policy: predictive regret matching+ of the row's regrets (Farina
   et al., AAAI 2021), uniform over the legal actions while nothing is positive. Each game
   has an *explorer*, a seat drawn when it starts, whose actions are drawn from the policy
   mixed with ``exploration`` of uniform play (outcome sampling's exploration, Lanctot et
   al., NeurIPS 2009); the other seats play the policy. The explorer's decisions are what
   the table learns from; exploring at each of them is what makes every action at every
   position reachable, including the positions a best responder steers into (often after
   several off-policy moves) and self-play alone would rarely visit. With ``probe`` the
   explorer instead plays uniformly at one of its decisions (the probe, drawn when the
   game starts) and the policy everywhere else, and only its decisions from the probe on
   are learnt from: in long games (Bid Spoof's) the weights of step 2 multiply over many
   explored decisions, and one explored decision a game learns faster.
2. When a game ends its decisions are credited backwards from the end with the return
   still to come, in the explorer's terms: the return minus what the game had settled at
   the decision (``info["banked"]``: in Goofspiel the points won before it), and each
   decision's sampled continuation is replaced by its expectation under the decider's
   policy, with a baseline per row and action (a running mean of the returns after it)
   standing in for the actions not taken and the action taken weighted by one over the
   probability it was drawn with (for the explorer, the explored one). That is the
   estimator of VR-MCCFR (Schmid et al., AAAI 2019): an unbiased sample of the current
   policy's value although the explorer explored (without the weighting the returns are
   those of the exploring policy, and the learner converges to a perturbed game's
   equilibrium), and the baselines remove most of the noise of the later moves of both
   seats (the other seat's baselines, in its own terms, are the explorer's with the sign
   changed: this needs a two-player zero-sum game; elsewhere the other seats' moves pass
   their sample through). With ``bootstrap``, in a game played as a chain of rounds whose
   future depends only on the public round-state (``info["round_state"]``: Spoof's and
   Bid Spoof's rounds, Goofspiel's turns), the estimate at each round's start moves that
   round-state's learnt value (a running mean weighted, as the average policy is, by the
   iteration), and the value then stands in for the rest of the game in the credit of the
   round before: each round is learnt as one stage game paid by the values of the
   round-states it leads to, as the exact solver's value iteration does
   (:mod:`hiddenhand.solvers.stochastic`). Without it a round's credit follows the later
   rounds' current policies, which regret matching's iterates cycle through, and the
   average converged slowly (whole Spoof: 0.083 after 1.25 billion decisions, against
   0.024 after 0.2 billion with it; ``docs/training.md``).
3. Each of the explorer's credited decisions gives every action of its row an unbiased
   estimate of its value (the baseline, plus for the action taken the surprise divided by
   the probability of having drawn it) and so of its advantage over the row's policy. Every
   credited decision moves its baseline towards its return.
4. After the collection every touched row takes the mean of its estimates: its regrets
   become ``max(R + mean advantage, 0)`` (regret matching+, each row weighted alike,
   however often it was visited: weighting rows by their visits starves the rare ones) and
   the mean advantage is the prediction added to them when the policy is read; the row's
   policy of this iteration is added to its average with weight the number of the row's own
   updates so far (linear averaging, as CFR+ does). The average policy is what is saved and measured;
   rows never met play uniformly.

Decisions of games still under way when a collection ends are kept and credited in the
next one, with the policy current then: an action of the other seat that the earlier policy
never drew counts at its baseline, a small bias that fades as the policy settles (passing
those moves' samples through instead is unbiased but much noisier: ``docs/training.md``).
The learner works on any game with a batched env; its table is keyed by the observation,
so on Goofspiel the Markov observation (``observation="markov"``) keeps it small and makes
the exact measure apply (the observation is then the position, the same for every history
that reaches it, and one table serves both seats). Where the game declares a canonical
observation (``Rules.canonical``: Goofspiel's Markov one, by the hands' interleaving
pattern) the table is keyed by that instead (``canonical``): the rows are learnt one by
one, so positions that are the same game with the cards renamed learn as one row from all
their visits (8-card Goofspiel: 406,456 rows instead of 2,956,136, and 6 cards' exact
exploitability after the same 160 million decisions halved; docs/training.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit, types
from numba.typed import Dict

from hiddenhand.agents.policy_agent import PolicyAgent
from hiddenhand.core import State
from hiddenhand.registry import get
from hiddenhand.training.run import Point, Run, exact_measure
from hiddenhand.validation import check_bool, check_int, named
from hiddenhand.vector import MAX_ENVS, vector_env


@dataclass(frozen=True)
class RegretSettings:
    """The learner's settings; see the module docstring for what each does."""

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
    """Explore at one decision a game instead (step 1 of the module docstring);
    ``exploration`` is then unused."""
    canonical: bool = True
    """Key the table by the game's canonical observation where it declares one
    (``Rules.canonical``: Goofspiel's Markov observation, by its interleaving pattern), so
    that positions that are the same game with the cards renamed share one row (and, with
    ``bootstrap``, one round value); the saved agent then looks its rows up the same way."""
    bootstrap: bool = False
    """Credit a round's decisions with the learnt value of the round-state the round leads
    to rather than with the rest of the game as sampled (step 2 of the module docstring);
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
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not fits(value):
                raise ValueError(f"{named(name, value)} is not allowed; allowed: a number {allowed}")


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


@njit(cache=True)
def _hash(obs):  # pragma: no cover - compiled
    """A 64-bit FNV-1a hash of each row's bytes (its float32 words): the row's table key."""
    bits = obs.view(np.uint32)
    keys = np.empty(obs.shape[0], dtype=np.uint64)
    for i in range(obs.shape[0]):
        h = np.uint64(14695981039346656037)
        for j in range(bits.shape[1]):
            h = (h ^ np.uint64(bits[i, j])) * np.uint64(1099511628211)
        keys[i] = h
    return keys


@njit(cache=True)
def _row_of(index, key, size):  # pragma: no cover - compiled
    """``key``'s row in ``index``, made the next row (``size``) if the key is new. Returns
    the row and the new number of rows."""
    if key in index:
        return index[key], size
    index[key] = size
    return size, size + 1


@njit(cache=True)
def _rows(keys, masks, obs, index, legal, shown, size):  # pragma: no cover - compiled
    """Each key's row, creating rows (legal actions and observation recorded) for new keys.
    Returns the rows and the new number of rows."""
    rows = np.empty(len(keys), dtype=np.int64)
    for i in range(len(keys)):
        r, grown = _row_of(index, keys[i], size)
        if grown > size:
            legal[r] = masks[i] != 0
            shown[r] = obs[i]
        rows[i], size = r, grown
    return rows, size


@njit(cache=True)
def _round_rows(keys, index, size):  # pragma: no cover - compiled
    """Each round-state key's row in the table of round values (-1 where a step starts no
    round), creating rows for new keys. Returns the rows and the new number of rows."""
    rows = np.full(len(keys), -1, dtype=np.int64)
    for i in range(len(keys)):
        if keys[i] >= 0:
            rows[i], size = _row_of(index, keys[i], size)
    return rows, size


@njit(cache=True)
def _current(regrets, predicted, legal, r, out):  # pragma: no cover - compiled
    """Predictive regret matching+'s policy of row ``r`` into ``out``: proportional to the
    positive part of the regrets plus the last advantages, uniform over the legal actions
    where none is positive."""
    total, count = 0.0, 0
    for x in range(out.shape[0]):
        z = regrets[r, x] + predicted[r, x]
        out[x] = z if legal[r, x] and z > 0.0 else 0.0
        total += out[x]
        count += legal[r, x]
    for x in range(out.shape[0]):
        out[x] = out[x] / total if total > 0.0 else (1.0 / count if legal[r, x] else 0.0)


@njit(cache=True)
def _act(
    rows, players, probes, probing, exploration, regrets, predicted, legal, uniforms, actions, taken, role
):  # pragma: no cover - compiled
    """Each game's action: drawn from the row's policy, mixed at the explorer's decisions
    with ``exploration`` of uniform play, or (``probing``) uniform at its probe. ``taken``
    gets the probability the action was drawn with; ``role`` says what the decision is to
    the learner: 1 the explorer's (learnt from), 2 another seat's (credited: in a
    two-player zero-sum game its baselines learn from it), 0 when probing, before the
    probe (not used)."""
    explorer, probe, made = probes
    sigma = np.empty(regrets.shape[1])
    for i in range(len(rows)):
        r = rows[i]
        mine = players[i] == explorer[i]
        at = made[i]  # the explorer's decisions so far in this game
        _current(regrets, predicted, legal, r, sigma)
        if mine:
            share = (1.0 if at == probe[i] else 0.0) if probing else exploration
            count = 0
            for x in range(regrets.shape[1]):
                count += legal[r, x]
            for x in range(regrets.shape[1]):
                sigma[x] = (1.0 - share) * sigma[x] + share * legal[r, x] / count
            made[i] += 1
        left, chosen = uniforms[i], -1
        for x in range(len(sigma)):
            if sigma[x] > 0.0:
                chosen = x
                if left < sigma[x]:
                    break
                left -= sigma[x]
        actions[i] = chosen
        taken[i] = sigma[chosen]
        if not probing:
            role[i] = 1 if mine else 2
        else:
            role[i] = (1 if at >= probe[i] else 0) if mine else (2 if at > probe[i] else 0)


@njit(cache=True)
def _restart(ended, probes, seats, decisions, uniforms):  # pragma: no cover - compiled
    """Draw the explorer and the probe of the game that replaces each game that ended."""
    explorer, probe, made = probes
    for i in range(len(ended)):
        if ended[i]:
            explorer[i] = int(uniforms[i, 0] * seats)
            probe[i] = int(uniforms[i, 1] * decisions)
            made[i] = 0


@njit(cache=True)
def _credit(length, steps, table, rounds, weight, zero_sum, credit):  # pragma: no cover - compiled
    """Step 2 of the module docstring for the first ``length`` steps: ``credit`` gets, for
    every decision with a role whose game ended within them, the sampled return still to
    come after its action, in the decider's terms. Where a step credited now starts a round
    (its round row >= 0, ``bootstrap``), the explorer's estimate of the return to come from
    there moves that round-state's value to the explorer (a running mean weighted by
    ``weight``, the iteration; in a two-player zero-sum game the other seat's too), which
    then stands in for it. Returns the first step from which some game is still under way
    (what to keep for the next collection)."""
    rows, actions, taken, players, explorers, role, banked, ended, rewards, round_rows = steps
    regrets, predicted, legal, baseline = table
    values, weights = rounds
    sigma = np.empty(regrets.shape[1])
    keep = length
    for i in range(rows.shape[1]):
        last, live = -1, False
        after, settled = 0.0, 0.0  # the explorer's estimated return after a step, and banked there
        for t in range(length - 1, -1, -1):
            e = explorers[t, i]
            if ended[t, i]:
                live = True
                if last < 0:
                    last = t
                after, settled = 0.0, rewards[t, i, e]
            elif live and round_rows[t + 1, i] >= 0 and role[t + 1, i] != 0:  # on into a new round
                k = round_rows[t + 1, i]
                for q in range(values.shape[1]):
                    if q == e or zero_sum:  # in a two-player zero-sum game the other seat's is the opposite
                        weights[k, q] += weight
                        values[k, q] += weight / weights[k, q] * ((after if q == e else -after) - values[k, q])
                after = values[k, e]
            if not live or role[t, i] == 0:
                continue
            here = banked[t, i, e]
            sample = after + settled - here  # the explorer's return to come after this action
            p, r, a = players[t, i], rows[t, i], actions[t, i]
            sign = 1.0 if p == e else -1.0
            credit[t, i] = sign * sample
            if p == e or zero_sum:
                _current(regrets, predicted, legal, r, sigma)
                value = 0.0
                for x in range(len(sigma)):
                    if sigma[x] > 0.0:
                        base = sign * baseline[r, x]
                        value += sigma[x] * (base + ((sample - base) / taken[t, i] if x == a else 0.0))
                after = value
            else:
                after = sample
            settled = here
        keep = min(keep, last + 1)
    return keep


@njit(cache=True)
def _learn(length, steps, credit, table, count, least, rate, zero_sum, foresight, floor):  # pragma: no cover - compiled
    """Steps 3 and 4 of the module docstring for the credited decisions of the first
    ``length`` steps (their role then set to 0: done). The estimates are summed per row
    first (every policy is read before any regret changes); each touched row then takes
    their mean. Returns the number of decisions the regrets learnt from."""
    rows, actions, taken, players, explorers, role = steps[:6]
    regrets, predicted, legal, baseline, seen, average, delta, hits, touched, updates = table
    sigma = np.empty(regrets.shape[1])
    learnt = 0
    for t in range(length):
        for i in range(rows.shape[1]):
            kind = role[t, i]
            if kind == 0 or np.isnan(credit[t, i]):
                continue
            role[t, i] = 0
            r, a, g = rows[t, i], actions[t, i], credit[t, i]
            if kind == 1:
                learnt += 1
                _current(regrets, predicted, legal, r, sigma)
                surprise = (g - baseline[r, a]) / taken[t, i]
                value = sigma[a] * surprise
                for x in range(len(sigma)):
                    value += sigma[x] * baseline[r, x]
                if hits[r] == 0:
                    touched[count] = r
                    count += 1
                hits[r] += 1
                for x in range(len(sigma)):
                    if legal[r, x]:
                        delta[r, x] += baseline[r, x] + (surprise if x == a else 0.0) - value
            if kind == 1 or zero_sum:
                seen[r, a] += 1
                baseline[r, a] += max(1.0 / seen[r, a], rate) * (g - baseline[r, a])
    waiting = 0
    for k in range(count):
        r = touched[k]
        if hits[r] < least:
            touched[waiting] = r
            waiting += 1
            continue
        updates[r] += 1
        _current(regrets, predicted, legal, r, sigma)
        for x in range(regrets.shape[1]):
            average[r, x] += updates[r] * sigma[x]
            mean = delta[r, x] / hits[r]
            regrets[r, x] = max(regrets[r, x] + mean, floor) if legal[r, x] else 0.0
            predicted[r, x] = foresight * mean if legal[r, x] else 0.0
            delta[r, x] = 0.0
        hits[r] = 0
    return learnt, waiting


class SampledRegret:
    """The learner's state: the batched env, the table (grown as observations are met) and
    the decisions still waiting for their game's end. :meth:`iterate` runs one collection
    and its update; :meth:`agent` is the average policy as a saveable agent."""

    FIELDS = ("regrets", "predicted", "baseline", "seen", "average", "delta")

    def __init__(self, game: str, game_kwargs: dict[str, Any], settings: RegretSettings, seed: int) -> None:
        settings.check()
        self.game, self.settings = get(game).name, settings
        self.envs = vector_env(game, settings.games, **game_kwargs)
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
        # Per step and game (rows of steps, kept until the game ends): see _credit and _learn.
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
        _restart(ended, self.probes, self.rules.num_players, spread, self.rng.random((len(ended), 2)))

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
            keys = _hash(view)
            rows[t], self.size = _rows(keys, mask, view, self.index, self.legal, self.shown, self.size)
            players[t], banked[t], explorers[t] = info["player"], info["banked"], self.probes[0]
            if s.bootstrap:
                round_rows[t] = self._round_rows(self._round_keys(info["round_state"], keys))
            _act(
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
        keep = _credit(stop, self.steps, table, rounds, float(self.iterations), self.zero_sum, credit)
        table += (self.seen, self.average, self.delta, self.hits, self.touched, self.updates)
        floor = 0.0 if s.plus else -np.inf
        _, self.waiting = _learn(
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
        rows, self.round_size = _round_rows(keys, self.round_index, self.round_size)
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
            key = self._round_keys(key, _hash(view))
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
            _current(self.regrets, self.predicted, self.legal, r, policy[r])
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
    game: str,
    game_kwargs: dict[str, Any],
    steps: int,
    out_dir: str | Path,
    seed: int = 0,
    eval_every: int = 1_000_000,
    settings: RegretSettings | None = None,
    progress: bool = True,
    seconds: float | None = None,
) -> list[Point]:
    """Train sampled regret matching on ``game`` with ``game_kwargs`` for ``steps`` decisions
    (every seat's; whole collections, so a little more) or, with ``seconds``, until that many
    seconds of training have passed if that comes first, measuring the exact exploitability
    of the average policy every ``eval_every`` decisions where the game declares a measure
    that covers it. Writes ``curve.csv``, ``curve.png``, ``run.json`` and ``policy.npz`` (an
    agent: ``hiddenhand.agents.load_agent``) into ``out_dir``; returns the curve. Ctrl-C
    saves, measures (a second Ctrl-C skips that) and raises
    :class:`~hiddenhand.interrupt.Interrupted`."""
    declared = get(game)
    steps = check_int("steps", steps, 1, 10**12)
    eval_every = check_int("eval_every", eval_every, 1, 10**12)
    s = settings or regret_settings_for(declared.name)
    learner = SampledRegret(declared.name, game_kwargs, s, seed)
    rules = learner.rules
    run = Run("sampled regret", rules, out_dir, total=steps, progress=progress, seconds=seconds)

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


__all__ = ["SETTINGS", "RegretSettings", "SampledRegret", "regret_settings_for", "train_regret"]
