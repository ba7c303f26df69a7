"""What holds self-play MMD with a critic back on Markov Goofspiel: its critic's error against
the exact Q-values of the policy it is learning, beside the policy's exact exploitability.

The learner (``hiddenhand.training.critic_mmd.CriticMMD``) is driven update by update; every
``--measure-every`` updates its policy network is read at every decision position (the rows
the exact measure queries, ``Positions`` of ``diagnose_selfplay.py``) into a table, whose
exact Q-values (``markov_table.exact_q``: the other seat playing the same table) are what the
critic should output. Printed per measure: the exact exploitability (NashConv / 2) of the
policy network, the critic's error in points, root mean square over the positions as often
as self-play reaches them, on the actions the policy plays (weighted by their
probabilities) and on every legal action alike, and the probability of the least likely
legal action (mean over the positions, as reached): how far the exploration still covers.

Seconds are of learning (the measures off the clock); torch on one thread. Settings are the
learner's defaults, changed with ``--set NAME=VALUE`` (repeatable; ``--set hidden=64,64``).
Example: ``NUMBA_NUM_THREADS=1 python benchmarks/diagnose_critic.py --cards 4 --updates 600
--set anneal=True``. ``--set learning_rate=1e-12`` freezes the policy, so that the critic's
error is its own (noise and bias), not its lag behind a moving policy.

``--fit-exact STEPS`` is the capacity control: at the end, a fresh network of the critic's
size is fitted by full-batch Adam to the exact Q-values themselves at every position, and
its error (every legal action alike, as reached) is printed: what the network could hold
without sampling noise.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import time

import numpy as np
from diagnose_selfplay import Positions, largest_payoff, rules_of
from markov_table import exact_q, measure, reach

from hiddenhand.training.critic_mmd import CriticMMD, CriticSettings


def settings_from(pairs: list[str], base: CriticSettings | None = None) -> CriticSettings:
    """``base`` (the learner's defaults if ``None``) with each ``NAME=VALUE`` of ``pairs``
    applied (values as Python literals)."""
    names = {f.name for f in dataclasses.fields(CriticSettings)}
    changes = {}
    for pair in pairs:
        name, _, text = pair.partition("=")
        if name not in names:
            raise SystemExit(f"--set {pair}: {name!r} is not a setting; the settings: {', '.join(sorted(names))}")
        value = ast.literal_eval(text)
        changes[name] = tuple(value) if isinstance(value, (list, tuple)) else value
    return dataclasses.replace(base or CriticSettings(), **changes)


def exact_values(learner: CriticMMD, where: Positions):
    """At every position: the observations, the legal actions, the policy's log-probabilities,
    the exact Q-values of the policy (points) and how often self-play reaches the position
    (weights summing to 1); with the policy's table for :func:`markov_table.measure`."""
    import torch

    obs, legal = torch.as_tensor(where.obs).float(), torch.as_tensor(where.masks)
    with torch.no_grad():
        logp = torch.log_softmax(learner.policy(obs).masked_fill(~legal, -torch.inf), dim=1).double()
    table = where.to_table(logp.numpy())
    exact = torch.as_tensor(where.rows_of(exact_q(table)[0]))
    reached = reach(table)
    weights = np.concatenate([(reached[k][a, b, p] + reached[k][b, a, p]) / (2 * k) for k, a, b, p, _ in where.levels])
    return obs, legal, logp, exact, torch.as_tensor(weights / weights.sum()), table


def mean_square(gap, legal, weights):
    """Mean square of ``gap`` over the legal actions alike, the positions weighted as reached."""
    return (weights * (gap.masked_fill(~legal, 0.0) ** 2).sum(dim=1) / legal.sum(dim=1)).sum()


def errors(learner: CriticMMD, where: Positions, scale: float) -> tuple[float, float, float, float]:
    """Exploitability, the critic's error on played and on all legal actions (points), and the
    least likely legal action's probability, as the module docstring says."""
    import torch

    obs, legal, logp, exact, weights, table = exact_values(learner, where)
    with torch.no_grad():
        gap = (learner.critic(obs).double() / scale - exact).masked_fill(~legal, 0.0)
    probs = logp.exp()
    played = (weights * (probs * gap**2).sum(dim=1)).sum().sqrt().item()
    rarest = (weights * probs.masked_fill(~legal, 1.0).min(dim=1).values).sum().item()
    return measure(table), played, mean_square(gap, legal, weights).sqrt().item(), rarest


def fit_exact(learner: CriticMMD, where: Positions, scale: float, steps: int) -> float:
    """The error (points, every legal action alike, as reached) of a fresh network of the
    critic's size after ``steps`` full-batch Adam steps on the exact Q-values of the learner's policy."""
    import torch

    from hiddenhand.agents.network import mlp

    obs, legal, _, exact, weights, _ = exact_values(learner, where)
    exact, weights = exact.float() * scale, weights.float()
    net = mlp(obs.shape[1], learner.s.hidden, exact.shape[1])
    optimizer = torch.optim.Adam(net.parameters(), lr=learner.s.critic_learning_rate)
    for _ in range(steps):
        loss = mean_square(net(obs) - exact, legal, weights)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        return mean_square((net(obs) - exact) / scale, legal, weights).sqrt().item()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cards", type=int, default=4, help="Goofspiel cards (default 4)")
    parser.add_argument("--updates", type=int, default=600, help="updates of the learner (default 600)")
    parser.add_argument("--measure-every", type=int, help="updates between measures (default a tenth)")
    parser.add_argument("--seed", type=int, default=0, help="the learner's seed (default 0)")
    parser.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE", help="change one of the learner's settings"
    )
    parser.add_argument(
        "--fit-exact",
        type=int,
        default=0,
        metavar="STEPS",
        help="at the end, fit a fresh network of the critic's size to the exact Q-values (module docstring)",
    )
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    s = settings_from(args.set)
    every = args.measure_every or max(1, args.updates // 10)
    rules, where, scale = rules_of(args.cards), Positions(args.cards), 1.0 / largest_payoff(args.cards)
    learner = CriticMMD(rules, s, args.seed, "cpu")
    changed = ", ".join(args.set) or "defaults"
    print(f"{args.cards}-card Markov Goofspiel, self-play MMD with a critic ({changed}), seed {args.seed}")
    print("| update | decisions | seconds | exploitability | critic error, played (points) | all actions | rarest |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    decisions, seconds = 0, 0.0
    for update in range(args.updates + 1):
        if update % every == 0 or update == args.updates:
            figures = errors(learner, where, scale)
            print(f"| {update} | {decisions:,} | {seconds:.1f} | " + " | ".join(f"{x:.4f}" for x in figures) + " |")
        if update == args.updates:
            if args.fit_exact:
                print(
                    f"a fresh network fitted to the exact Q-values in {args.fit_exact} steps: error "
                    f"{fit_exact(learner, where, scale, args.fit_exact):.4f} points (every legal action)"
                )
            break
        start = time.perf_counter()
        decisions += learner.update(1 - update / args.updates)[0]
        seconds += time.perf_counter() - start


if __name__ == "__main__":
    main()
