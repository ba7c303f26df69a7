"""Why self-play stalls on Markov Goofspiel: the controls, one mode each (docs/training.md).

Every mode measures with the project's exact measure over positions
(``hiddenhand.solvers.goofspiel.positions.exploitability``: NashConv / 2; uniform play concedes 2.5
at 4 cards, 5.83 at 6) and prints a curve (iteration, decisions, seconds of learning with the
measures off the clock, exploitability) and a summary row.

Modes:

- ``exact``: the tabular control. One row of logits per Markov position, magnetic mirror
  descent (MMD) with exact Q at every position (``markov_table``, beside this script). If it
  converges, the game, the measure and the update are sound.
- ``temperature``: the fixed points the self-play loss can reach. Its entropy bonus is a
  temperature in points (the coefficient times the scale the advantages are divided by);
  the tabular learner is run to its fixed point at the temperatures of ``training/policy_gradient.py``'s
  settings (constant, as ``OURS`` keeps it, and annealed to 0, as it did before).
- ``sampled``: the tabular learner with Q estimated from self-play episodes through the rules
  engine: from the start of the game (what self-play sees) or from a random position
  (exploring starts, every position covered): sampling and coverage.
- ``network``: the MaskablePPO policy network of ``training/policy_gradient.py`` with exact Q at every
  position, fitted either to the closed-form MMD target or by the self-play loss's policy
  gradient (entropy, KL to a magnet, Adam or SGD), positions weighted uniformly or as often
  as self-play visits them: function approximation and optimisation.
- ``distil``: the tabular control's policy (``exact`` with the same options) fitted into that
  network (or, with ``--learner-view``, the critic learner's, reading the observation or its
  canonical view) by cross-entropy: whether the network can hold near-equilibrium play at all.
- ``observations``: the observation a network is trained on (the PettingZoo env's, and the
  rules engine's at every position, both seats) against the one the exact measure queries.

Set ``NUMBA_NUM_THREADS=1`` on a shared machine; torch runs on one thread.
Example: ``python benchmarks/diagnose_selfplay.py exact --cards 4 6``.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field
from math import comb

import numpy as np
from markov_table import Table, exact_q, measure, mmd_step, reach
from tqdm.auto import tqdm

from hiddenhand.envs.goofspiel import GoofspielRules
from hiddenhand.envs.goofspiel_observation import position_observations
from hiddenhand.solvers.goofspiel import positions
from hiddenhand.solvers.goofspiel.patterns import Sets

STUDY_ENT, OURS_ENT = 0.1, 0.05
"""The entropy coefficients of ``training/policy_gradient.py``'s ``STUDY`` and ``OURS`` settings when
the diagnosis was made (as are the network options' defaults): pinned here, not read from
there, so that the figures in docs/training.md reproduce after the learners change."""


def rules_of(n: int) -> GoofspielRules:
    return GoofspielRules(num_cards=n, observation="markov")


def largest_payoff(n: int) -> float:
    """What ``OURS`` divides returns by (the game's largest payoff: n(n+1)/2 points)."""
    return float(max(abs(x) for x in rules_of(n).utility_range))


@dataclass
class Row:
    """One run's summary line."""

    mode: str
    cards: int
    config: str
    iterations: int
    decisions: int
    seconds: float
    exploitability: float
    best: float
    table: Table | None = field(default=None, repr=False)
    """The table a tabular run ended with."""


def print_curve(title: str, points: list[tuple]) -> None:
    print(f"\n{title}\n| iteration | decisions | seconds | exploitability |\n|---|---|---|---|")
    for iteration, decisions, seconds, value in points:
        print(f"| {iteration} | {decisions} | {seconds:.1f} | {value:.4f} |")


def schedule(args, t: int) -> float:
    """The temperature at iteration ``t`` (1-based): constant, or annealed linearly to 0."""
    return args.alpha * (1 - (t - 1) / args.iterations) if args.anneal else args.alpha


def mmd_config(args) -> str:
    magnet = f"magnet moved every {args.magnet_every}" if args.magnet_every else "uniform magnet"
    return f"eta {args.eta:g}, alpha {args.alpha:.3g}{' annealed' if args.anneal else ''}, {magnet}"


def run_table(args, n: int, label: str, update) -> Row:
    """Iterate ``update(table, t, magnet)`` (which returns the decisions it sampled) from the
    uniform table, moving the magnet as told, measuring every ``--measure-every``."""
    table, magnet = Table(n), None
    points = [(0, 0, 0.0, measure(table))]
    seconds, decisions = 0.0, 0
    with tqdm(total=args.iterations, desc=f"{label}, {n} cards", unit="it", leave=False) as bar:
        for t in range(1, args.iterations + 1):
            start = time.perf_counter()
            if args.magnet_every and (t - 1) % args.magnet_every == 0:
                magnet = table.copy()
            decisions += update(table, t, magnet)
            seconds += time.perf_counter() - start
            if t == args.iterations or t % args.measure_every == 0:
                points.append((t, decisions, seconds, measure(table)))
                bar.set_postfix(exploitability=f"{points[-1][3]:.4g}")
            bar.update(1)
    print_curve(f"{label}, {n} cards ({mmd_config(args)})", points)
    values = [p[3] for p in points]
    return Row(label, n, mmd_config(args), args.iterations, decisions, seconds, values[-1], min(values), table)


# ------------------------------------------------------------------ exact and temperature
def exact_update(args):
    def update(table, t, magnet):
        q, _ = exact_q(table)
        mmd_step(table, q, args.eta, schedule(args, t), magnet)
        return 0

    return update


def mode_exact(args) -> list[Row]:
    return [run_table(args, n, "exact", exact_update(args)) for n in args.cards]


def mode_temperature(args) -> list[Row]:
    """The tabular learner at the entropy temperatures of the self-play settings."""
    rows = []
    for n in args.cards:
        scale = largest_payoff(n)
        spread = advantage_spread(n, args)
        print(
            f"\n{n} cards: OURS divides returns by {scale:g} (entropy {OURS_ENT}: temperature "
            f"{OURS_ENT * scale:.3g} points, kept; below also annealed to 0); STUDY normalises advantages, "
            f"whose std under uniform play is {spread['sampled']:.3g} points sampled with a perfect critic "
            f"({spread['exact']:.3g} exact), so entropy {STUDY_ENT} is a temperature of "
            f"{STUDY_ENT * spread['sampled']:.3g} points"
        )
        study = STUDY_ENT * spread["sampled"]
        for alpha, anneal in ((OURS_ENT * scale, False), (OURS_ENT * scale, True), (study, False)):
            local = argparse.Namespace(**{**vars(args), "alpha": alpha, "anneal": anneal, "magnet_every": 0})
            rows.append(run_table(local, n, "temperature", exact_update(local)))
    return rows


def advantage_spread(n: int, args) -> dict[str, float]:
    """The std of the advantages self-play computes under uniform play: sampled (the return
    still to come minus the exact value of the position, i.e. a perfect critic) and exact
    (Q minus the value), in points, over the decisions self-play makes."""
    table = Table(n)
    q, _ = exact_q(table)
    games = Episodes(table, args.episodes, "root", np.random.default_rng(args.seed))
    bids = [q[k][a, b, p, u] for k, a, b, p, u in games.where[:5].T]
    value = np.array([row.mean() for row in bids])  # uniform play's value of the position
    chosen = np.array([row[i] for row, i in zip(bids, games.where[5])])
    return {"sampled": float(np.std(games.to_come - value)), "exact": float(np.std(chosen - value))}


# ------------------------------------------------------------------ sampled returns
class Episodes:
    """``count`` self-play episodes of a table through the rules engine, in lockstep (one
    batched table look-up per bid for all of them): from the start of the game (``starts=
    "root"``) or from a position drawn at random (level uniform, then hands and prizes,
    reached through the engine by a random history of the spent cards: ``"every"``).
    ``where`` holds each decision's level, hand, other hand, prizes, upcard and bid (the
    bidder's i-th card), ``to_come`` the points it went on to win (return minus the score
    difference at the time)."""

    def __init__(self, table: Table, count: int, starts: str, rng: np.random.Generator) -> None:
        n = table.n
        rules = rules_of(n)
        states = [self._start(rules, table.sets, starts, rng) for _ in range(count)]
        rows, games, players, diffs = [], [], [], []
        live = list(range(count))
        while live:
            for g in live:
                if states[g].is_chance_node():
                    outcomes = states[g].chance_outcomes()
                    states[g].apply(outcomes[rng.integers(len(outcomes))][0])
            live = [g for g in live if not states[g].is_terminal()]
            for player in (0, 1):
                if not live:
                    break
                obs = np.stack([states[g].observation_tensor(player) for g in live])
                level, a, b, p, u = table.positions(obs)
                bid = np.empty(len(live), dtype=np.int64)
                for k in np.unique(level):
                    at = np.flatnonzero(level == k)
                    cumulative = np.cumsum(table.policy(k)[a[at], b[at], p[at], u[at]], axis=1)
                    drawn = (rng.random(len(at))[:, None] * cumulative[:, -1:] > cumulative).sum(axis=1)
                    bid[at] = np.minimum(drawn, k - 1)
                rows.append(np.stack([level, a, b, p, u, bid]))
                for row, g in enumerate(live):
                    state = states[g]
                    diffs.append(state.points[player] - state.points[1 - player])
                    state.apply(int(table.sets.cards[level[row]][a[row], bid[row]]))
                games += live
                players += [player] * len(live)
            live = [g for g in live if not states[g].is_terminal()]
        self.where = np.concatenate(rows, axis=1) if rows else np.zeros((6, 0), dtype=np.int64)
        finals = np.array([states[g].returns()[pl] for g, pl in zip(games, players)])
        self.to_come = finals - np.array(diffs, dtype=float)

    @staticmethod
    def _start(rules: GoofspielRules, sets: Sets, starts: str, rng: np.random.Generator):
        if starts == "root":
            return rules.new_initial_state()
        k = int(rng.integers(2, rules.num_cards + 1))
        a, b, p = rng.integers(comb(rules.num_cards, k), size=3)
        return through_engine(rules, sets, k, a, b, p, rng)

    def __len__(self) -> int:
        return self.where.shape[1]


def sampled_q(table: Table, games: Episodes) -> tuple[list, float]:
    """Q estimated from ``games``: a bid's mean points to come where it was sampled, the
    position's mean over its samples for the bids not sampled there, 0 at positions not
    visited (the update then only pulls them towards the magnet). Returns the estimates and
    the share of positions (with upcard) visited."""
    q: list = [None] * (table.n + 1)
    visited, total = 0, 0
    for k in range(2, table.n + 1):
        shape = table.logp[k].shape
        sums, counts = np.zeros(shape), np.zeros(shape)
        at = games.where[0] == k
        index = tuple(games.where[1:, at])
        np.add.at(sums, index, games.to_come[at])
        np.add.at(counts, index, 1.0)
        seen = counts.sum(axis=-1, keepdims=True)
        state_mean = np.divide(sums.sum(axis=-1, keepdims=True), seen, out=np.zeros(seen.shape), where=seen > 0)
        q[k] = np.where(counts > 0, sums / np.maximum(counts, 1.0), state_mean)
        visited += int((seen > 0).sum())
        total += seen.size
    return q, visited / total


def mode_sampled(args) -> list[Row]:
    rng = np.random.default_rng(args.seed)
    coverage = []

    def update(table, t, magnet):
        games = Episodes(table, args.episodes, args.starts, rng)
        q, share = sampled_q(table, games)
        coverage.append(share)
        mmd_step(table, q, args.eta, schedule(args, t), magnet)
        return len(games)

    rows = []
    for n in args.cards:
        coverage.clear()
        row = run_table(args, n, f"sampled ({args.starts} starts, {args.episodes} episodes/it)", update)
        print(f"positions (with upcard) visited per iteration: {np.mean(coverage):.1%} on average")
        rows.append(row)
    return rows


# ------------------------------------------------------------------ the network with exact Q
class Positions:
    """Every decision position of levels 2..n as Markov observations (the rows the exact
    measure queries), in the order of the table's arrays, with the bid columns of each row."""

    def __init__(self, n: int) -> None:
        self.table = Table(n)
        sets, rules = self.table.sets, rules_of(n)
        obs, masks, self.cols, self.levels = [], [], [], []
        for k in range(2, n + 1):
            count = comb(n, k)
            a, b, p, u = (x.ravel() for x in np.meshgrid(*(np.arange(count),) * 3, np.arange(k), indexing="ij"))
            upcard = sets.cards[k][p, u]
            shown = position_observations(
                rules, sets.masks[k][a], sets.masks[k][b], sets.masks[k][p] ^ (1 << upcard), upcard, 0
            )
            obs.append(shown["observation"])
            masks.append(shown["action_mask"])
            self.cols.append(sets.cards[k][a])
            self.levels.append((k, a, b, p, u))
        self.obs, self.masks = np.concatenate(obs), np.concatenate(masks).astype(bool)
        self.splits = np.cumsum([len(c) for c in self.cols])[:-1]

    def to_table(self, logp: np.ndarray) -> Table:
        """A table from log-probabilities of every row (``(rows, n)``, masked)."""
        table = self.table.copy()
        for (k, *_), cols, part in zip(self.levels, self.cols, np.split(logp, self.splits)):
            table.logp[k] = np.take_along_axis(part, cols, axis=1).reshape(table.logp[k].shape)
        return table

    def rows_of(self, arrays: list, fill: float = 0.0) -> np.ndarray:
        """Per-level arrays shaped like the table's (``[a, b, p, u, i]``) as ``(rows, n)``."""
        out = np.full(self.masks.shape, fill)
        start = 0
        for (k, *_), cols in zip(self.levels, self.cols):
            part = arrays[k].reshape(-1, k)
            np.put_along_axis(out[start : start + len(part)], cols, part, axis=1)
            start += len(part)
        return out

    def weights(self, table: Table, how: str) -> np.ndarray:
        """Each row's weight in the loss: uniform, or as often as self-play with ``table``
        makes that decision (either seat; every level of a game equally)."""
        if how == "uniform":
            return np.full(len(self.obs), 1.0 / len(self.obs))
        probs = reach(table)
        parts = []
        for k, a, b, p, u in self.levels:
            parts.append((probs[k][a, b, p] + probs[k][b, a, p]) / (2 * k))
        w = np.concatenate(parts)
        return w / w.sum()


def build_policy(n: int, hidden: list[int], seed: int):
    """The MaskablePPO model ``training/policy_gradient.py`` trains (same construction and layers)."""
    import torch
    from sb3_contrib import MaskablePPO

    from hiddenhand.agent import RandomAgent
    from hiddenhand.gymnasium_env import SingleAgentEnv

    torch.manual_seed(seed)
    env = SingleAgentEnv("goofspiel", RandomAgent(), num_cards=n, observation="markov")
    net = dict(pi=list(hidden), vf=list(hidden))
    return MaskablePPO("MlpPolicy", env, seed=seed, device="cpu", policy_kwargs=dict(net_arch=net))


def optimizer_of(model, args):
    """The optimiser ``--optimizer`` and ``--lr`` name, over ``model``'s parameters."""
    import torch

    if args.optimizer == "adam":
        return torch.optim.Adam(model.parameters(), lr=args.lr, eps=1e-5)
    return torch.optim.SGD(model.parameters(), lr=args.lr)


class Net:
    """The policy network over every position's observation (:class:`Positions`), with its
    optimiser and the project's exact measure of it (as a ``PPOAgent``, as self-play measures)."""

    def __init__(self, n: int, args) -> None:
        import torch

        torch.set_num_threads(1)
        self.n, self.model = n, build_policy(n, args.hidden, args.seed)
        self.policy = self.model.policy
        self.where = Positions(n)
        self.obs, self.mask = torch.as_tensor(self.where.obs), torch.as_tensor(self.where.masks)
        self.optimizer = optimizer_of(self.policy, args)

    def log_probs(self, rows=slice(None)):
        """Masked log-probabilities (float64) of the rows ``rows``, with gradients."""
        import torch

        policy = self.policy
        features = policy.extract_features(self.obs[rows], policy.pi_features_extractor)
        logits = policy.action_net(policy.mlp_extractor.forward_actor(features)).double()
        return torch.log_softmax(logits.masked_fill(~self.mask[rows], -1e9), dim=1)

    def measured(self) -> float:
        from hiddenhand.agents.ppo import PPOAgent

        agent = PPOAgent(self.model, "goofspiel", rules_of(self.n).params)
        return positions.exploitability(agent, rules_of(self.n), progress=False).value


class LearnerNet:
    """The policy network of ``hiddenhand train mmd-critic`` (``hiddenhand.agents.network.network``,
    reading the observation or its canonical view as ``view`` says) over every position, with
    :class:`Net`'s interface for ``distil``, measured as the learner's saved agent is."""

    def __init__(self, n: int, args) -> None:
        import torch

        from hiddenhand.agents.network import network

        torch.set_num_threads(1)
        torch.manual_seed(args.seed)
        self.n, self.hidden, self.view = n, args.hidden, args.learner_view
        self.where = Positions(n)
        self.obs, self.mask = torch.as_tensor(self.where.obs), torch.as_tensor(self.where.masks)
        rules = rules_of(n) if self.view == "canonical" else None
        self.policy = network(self.obs.shape[1], self.hidden, n, rules)
        self.optimizer = optimizer_of(self.policy, args)

    def log_probs(self, rows=slice(None)):
        """Masked log-probabilities (float64) of the rows ``rows``, with gradients."""
        import torch

        logits = self.policy(self.obs[rows]).double()
        return torch.log_softmax(logits.masked_fill(~self.mask[rows], -1e9), dim=1)

    def measured(self) -> float:
        from hiddenhand.agents.network import Member, NetworkAgent

        weights = {name: value.detach().clone() for name, value in self.policy.state_dict().items()}
        size, rules = self.obs.shape[1], rules_of(self.n)
        member = Member("logits", 1.0, weights)
        agent = NetworkAgent(
            "goofspiel", rules.params, "distilled", size, self.hidden, self.n, [member], view=self.view
        )
        return positions.exploitability(agent, rules, progress=False).value


def mode_network(args) -> list[Row]:
    import torch

    rows = []
    for n in args.cards:
        net = Net(n, args)
        policy, where, obs, mask, optimizer = net.policy, net.where, net.obs, net.mask, net.optimizer
        log_probs, measured = net.log_probs, net.measured

        scale = largest_payoff(n)
        config = (
            f"fit {args.fit}, {args.optimizer} lr {args.lr}, {args.epochs} steps/it, {args.weight} weights"
            + (
                f", entropy {args.ent_coef}{' annealed' if args.anneal else ''}, kl {args.kl_coef} "
                f"(magnet every {args.magnet_every or 1}), advantages / {args.scale}"
                if args.fit == "pg"
                else f", target {mmd_config(args)}"
            )
            + (f", value loss {args.vf_coef}" if args.vf_coef else "")
            + (f", grad norm {args.max_grad_norm}" if args.max_grad_norm else "")
        )
        points = [(0, 0, 0.0, measured())]
        seconds = 0.0
        with tqdm(total=args.iterations, desc=f"network ({args.fit}), {n} cards", unit="it", leave=False) as bar:
            for t in range(1, args.iterations + 1):
                start = time.perf_counter()
                left = 1 - (t - 1) / args.iterations
                with torch.no_grad():
                    current = log_probs()
                table = where.to_table(current.numpy())
                if t == 1 or (args.magnet_every and (t - 1) % args.magnet_every == 0):
                    magnet, magnet_table = current, table
                q, v = exact_q(table)
                weights = torch.as_tensor(where.weights(table, args.weight))
                q_rows = torch.as_tensor(where.rows_of(q))
                value = (current.exp() * q_rows).sum(dim=1, keepdim=True)
                if args.fit == "target":
                    target = table.copy()
                    mmd_step(target, q, args.eta, schedule(args, t), magnet_table if args.magnet_every else None)
                    goal = torch.as_tensor(where.rows_of(target.logp, fill=-np.inf)).exp()
                else:
                    gains = torch.where(mask, q_rows - value, torch.zeros_like(q_rows))
                    if args.scale == "std":
                        spread = ((current.exp() * gains**2).sum(dim=1) * weights).sum().sqrt()
                    else:
                        spread = torch.tensor(scale)
                    gains = gains / (spread + 1e-8)
                for group in optimizer.param_groups:
                    group["lr"] = args.lr * (left if args.anneal else 1.0)
                for _ in range(args.epochs):
                    logp = log_probs()
                    probs = logp.exp()
                    if args.fit == "target":
                        loss = -(weights * (goal * logp.masked_fill(~mask, 0.0)).sum(dim=1)).sum()
                    else:
                        entropy = -(probs * logp).sum(dim=1)
                        kl = (probs * (logp - magnet)).sum(dim=1)
                        ent = args.ent_coef * (left if args.anneal else 1.0)
                        per_row = -(probs * gains).sum(dim=1) - ent * entropy + args.kl_coef * kl
                        loss = (weights * per_row).sum()
                    if args.vf_coef:
                        values = policy.predict_values(obs).ravel().double()
                        goal_v = value.ravel() / (scale if args.scale == "max" else 1.0)
                        loss = loss + args.vf_coef * 0.5 * (weights * (values - goal_v) ** 2).sum()
                    optimizer.zero_grad()
                    loss.backward()
                    if args.max_grad_norm:
                        torch.nn.utils.clip_grad_norm_(policy.parameters(), args.max_grad_norm)
                    optimizer.step()
                seconds += time.perf_counter() - start
                if t == args.iterations or t % args.measure_every == 0:
                    points.append((t, 0, seconds, measured()))
                    bar.set_postfix(exploitability=f"{points[-1][3]:.4g}")
                bar.update(1)
        print_curve(f"network, {n} cards ({config})", points)
        values = [p[3] for p in points]
        rows.append(Row("network", n, config, args.iterations, 0, seconds, values[-1], min(values)))
    return rows


def mode_distil(args) -> list[Row]:
    """The tabular control's policy (``exact`` with the same options), then the network fitted
    to it by cross-entropy on minibatches of positions: can the network hold that policy?"""
    import torch

    rows = []
    for n in args.cards:
        table_row = run_table(args, n, "exact (to distil)", exact_update(args))
        net = LearnerNet(n, args) if args.learner_view else Net(n, args)
        goal = torch.as_tensor(net.where.rows_of(table_row.table.logp, fill=-np.inf)).exp()
        rng = np.random.default_rng(args.seed)
        every = max(1, args.steps // 10)
        points, seconds = [(0, 0, 0.0, net.measured())], 0.0
        with tqdm(total=args.steps, desc=f"distil, {n} cards", unit="step", leave=False) as bar:
            for step in range(1, args.steps + 1):
                start = time.perf_counter()
                batch = torch.as_tensor(rng.integers(len(goal), size=min(args.batch, len(goal))))
                logp = net.log_probs(batch)
                loss = -(goal[batch] * logp.masked_fill(~net.mask[batch], 0.0)).sum(dim=1).mean()
                net.optimizer.zero_grad()
                loss.backward()
                net.optimizer.step()
                seconds += time.perf_counter() - start
                if step == args.steps or step % every == 0:
                    points.append((step, 0, seconds, net.measured()))
                    bar.set_postfix(exploitability=f"{points[-1][3]:.4g}")
                bar.update(1)
        config = f"table ({mmd_config(args)}, {table_row.exploitability:.4f}) fitted by {args.optimizer} lr {args.lr}"
        if args.learner_view:
            config += f" into the critic learner's {args.hidden} network reading the {args.learner_view}"
        print_curve(f"distil, {n} cards ({config}, batches of {args.batch})", points)
        values = [p[3] for p in points]
        rows.append(table_row)
        rows.append(Row("distil", n, config, args.steps, 0, seconds, values[-1], min(values)))
    return rows


# ------------------------------------------------------------------ observations
def mode_observations(args) -> list[Row]:
    """Compare, for every position and both seats, the rules engine's Markov observation
    (reached by a random history) with the exact measure's, and every observation of random
    PettingZoo games with the measure's observation of the position the engine holds."""
    from hiddenhand.pettingzoo_env import env_factories
    from hiddenhand.registry import get

    rng = np.random.default_rng(args.seed)
    rows = []
    for n in args.cards:
        rules, sets = rules_of(n), Sets(n)
        checked = wrong = 0
        total = sum(comb(n, k) ** 3 * k for k in range(2, n + 1))
        with tqdm(total=total, desc=f"observations at every position, {n} cards", unit="pos", leave=False) as bar:
            for k in range(2, n + 1):
                for a, b, p in np.ndindex(*(comb(n, k),) * 3):
                    for u in range(k):
                        state = through_engine(rules, sets, k, a, b, p, rng)
                        upcard = int(sets.cards[k][p, u])
                        state.apply(upcard)
                        prizes = int(sets.masks[k][p]) ^ (1 << upcard)
                        hands = [int(sets.masks[k][a]), int(sets.masks[k][b])]
                        seen0 = state.observation_tensor(0)
                        state.apply(int(sets.cards[k][a, rng.integers(k)]))  # player 0 bids; player 1 must not see it
                        seen1 = state.observation_tensor(1)
                        for seat, seen in ((0, seen0), (1, seen1)):
                            want = measured_observation(rules, hands[seat], hands[1 - seat], prizes, upcard, seat)
                            checked += 1
                            wrong += int(not np.array_equal(seen, want["observation"]))
                        bar.update(1)
        env = env_factories(get("goofspiel").env)[0](num_cards=n, observation="markov")
        env_checked = env_wrong = 0
        for game in range(args.episodes):
            env.reset(seed=args.seed + game)
            for agent in env.agent_iter():
                observation, _, terminated, truncated, _ = env.last()
                if terminated or truncated:
                    env.step(None)
                    continue
                state = env.unwrapped.game_state
                seat = int(agent.split("_")[1])
                hands = [sum(1 << int(c) for c in np.flatnonzero(h)) for h in state.hands]
                for other_seat, card in enumerate(state.bids):  # a bid this round is still in the hand shown
                    hands[other_seat] |= 1 << (card - 1)
                prizes = sum(1 << (c - 1) for c in state.prizes_left)
                want = measured_observation(rules, hands[seat], hands[1 - seat], prizes, state.prize - 1, seat)
                env_checked += 1
                env_wrong += int(any(not np.array_equal(observation[key], want[key]) for key in want))
                env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
        print(
            f"\n{n} cards: rules engine at every position, both seats: {wrong} of {checked} observations differ "
            f"from the exact measure's; PettingZoo env, {args.episodes} random games: {env_wrong} of {env_checked}"
        )
        differ = f"{wrong + env_wrong} of {checked + env_checked} observations differ from the measure's"
        rows.append(Row("observations", n, differ, 0, checked + env_checked, 0.0, float("nan"), float("nan")))
    return rows


def measured_observation(rules: GoofspielRules, hand: int, other: int, prizes: int, upcard: int, seat: int) -> dict:
    """The observation the exact measure queries at one position (bitmasks, upcard index)."""
    shown = position_observations(
        rules, np.array([hand]), np.array([other]), np.array([prizes]), np.array([upcard]), seat
    )
    return {key: value[0] for key, value in shown.items()}


def through_engine(rules, sets, k, a, b, p, rng):
    """A rules-engine state at the position (hands ``a``, ``b``, prizes ``p`` of level ``k``,
    before the upcard), reached by a random history of the spent cards."""
    n = rules.num_cards
    state = rules.new_initial_state()
    spent = [np.setdiff1d(np.arange(n), sets.cards[k][x]) for x in (p, a, b)]
    for cards in spent:
        rng.shuffle(cards)
    for prize, mine, theirs in zip(*spent):
        if state.is_chance_node():
            state.apply(int(prize))
        state.apply(int(mine))
        state.apply(int(theirs))
    return state


DEFAULT_ITERATIONS = {
    "exact": 3000,
    "temperature": 1000,
    "sampled": 100,
    "network": 300,
    "distil": 3000,
    "observations": 1,
}
"""Each mode's default budget: a few minutes on one core at 4 cards."""

MODES = {
    "exact": mode_exact,
    "temperature": mode_temperature,
    "sampled": mode_sampled,
    "network": mode_network,
    "distil": mode_distil,
    "observations": mode_observations,
}


def main(argv: list[str] | None = None) -> list[Row]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=MODES, help="which control to run (see above)")
    parser.add_argument("--cards", type=int, nargs="+", default=[4], help="Goofspiel cards, one run each (default 4)")
    parser.add_argument(
        "--iterations",
        type=int,
        help=f"updates (of every position; network: of the loss); default per mode: {DEFAULT_ITERATIONS}",
    )
    parser.add_argument("--measure-every", type=int, help="iterations between exact measures (default a tenth)")
    parser.add_argument("--eta", type=float, default=0.02, help="MMD step size, per point of Q (default 0.02)")
    parser.add_argument(
        "--alpha", type=float, default=0.5, help="MMD temperature in points (the magnet's pull; default 0.5)"
    )
    parser.add_argument(
        "--magnet-every",
        type=int,
        default=300,
        help="iterations between moves of the magnet to the current policy; 0 keeps it uniform (network pg: "
        "the KL term's magnet, which training/policy_gradient.py moves every update: 1) (default 300)",
    )
    parser.add_argument("--anneal", action="store_true", help="decay alpha (and, network, the entropy and lr) to 0")
    parser.add_argument("--seed", type=int, default=0, help="seed of the episodes and the network (default 0)")
    parser.add_argument(
        "--episodes",
        type=int,
        default=500,
        help="sampled: episodes per iteration; temperature: episodes for the advantages' spread; "
        "observations: random PettingZoo games (default 500)",
    )
    parser.add_argument(
        "--starts",
        choices=("root", "every"),
        default="root",
        help="sampled: episodes from the start of the game, or from a random position (default root)",
    )
    parser.add_argument(
        "--fit",
        choices=("target", "pg"),
        default="pg",
        help="network: fit the closed-form MMD target, or follow the self-play loss's policy gradient (default pg)",
    )
    parser.add_argument("--optimizer", choices=("adam", "sgd"), default="adam", help="network: optimiser (adam)")
    parser.add_argument("--lr", type=float, default=1e-3, help="network: learning rate (default 1e-3, OURS')")
    parser.add_argument("--epochs", type=int, default=8, help="network: gradient steps per iteration (default 8)")
    parser.add_argument(
        "--weight",
        choices=("uniform", "reach"),
        default="uniform",
        help="network: weigh positions equally, or as often as self-play makes each decision (default uniform)",
    )
    parser.add_argument("--ent-coef", type=float, default=0.05, help="network pg: entropy coefficient (default 0.05)")
    parser.add_argument("--kl-coef", type=float, default=0.025, help="network pg: KL to the magnet (default 0.025)")
    parser.add_argument(
        "--scale",
        choices=("max", "std"),
        default="max",
        help="network pg: divide advantages by the largest payoff (OURS) or by their std (STUDY; default max)",
    )
    parser.add_argument("--vf-coef", type=float, default=0.0, help="network: value loss coefficient (default 0)")
    parser.add_argument(
        "--max-grad-norm", type=float, default=0.0, help="network: clip the gradient's norm (0: no clipping, default)"
    )
    parser.add_argument("--steps", type=int, default=3000, help="distil: gradient steps (default 3000)")
    parser.add_argument("--batch", type=int, default=4096, help="distil: positions per step (default 4096)")
    parser.add_argument(
        "--hidden", type=int, nargs="+", default=[128, 128], help="network: hidden layers (default 128 128, OURS')"
    )
    parser.add_argument(
        "--learner-view",
        choices=("observation", "canonical"),
        help="distil: fit the network of hiddenhand train mmd-critic, reading the observation or its canonical "
        "view (Rules.canonical), instead of the MaskablePPO network (the default)",
    )
    args = parser.parse_args(argv)
    if min(args.cards) < 2 or max(args.cards) > positions.MAX_CARDS:
        parser.error(f"--cards {args.cards}: each must be 2 to {positions.MAX_CARDS}")
    args.iterations = args.iterations or DEFAULT_ITERATIONS[args.mode]
    args.measure_every = args.measure_every or max(1, args.iterations // 10)
    if args.iterations < 1 or args.measure_every < 1:
        parser.error(f"--iterations {args.iterations} and --measure-every {args.measure_every}: at least 1 each")
    rows = MODES[args.mode](args)
    print("\n| mode | cards | configuration | iterations | decisions | seconds | exploitability | best |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r.mode} | {r.cards} | {r.config} | {r.iterations} | {r.decisions} | {r.seconds:.1f} | "
            f"{r.exploitability:.4f} | {r.best:.4f} |"
        )
    return rows


if __name__ == "__main__":
    main()
