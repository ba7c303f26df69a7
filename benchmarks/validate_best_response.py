"""Validate the trained best responder against exact exploitability in two-player Goofspiel.

``hiddenhand.training.best_response.approximate_exploitability`` gives a lower bound where no
exact method applies. Here it runs where one does (two players, random prize order, bids
revealed, point difference), and each row compares the two:

- ``exact``: the game's exact exploitability (``Game.measure_exploitability``): over
  positions for Markov agents (the agent's on-policy value computed, not assumed), else the
  dynamic programme over histories (``histories.best_response_value`` per seat; the
  on-policy value is then 0 in each seat, the agents measured so being blind to their seat
  in a symmetric game);
- ``lower bound ± ci``: the trained responders' figure with its 95% interval;
- ``recovered``: lower bound / exact, overall and in the worse seat (the goal is 90%).

Agents: ``random``; the ``medium`` and ``hard`` heuristics (hard reads the score, so its
exact figure walks histories: about a minute at 6 cards); small self-play PPO agents
(``hiddenhand.training.ppo_pool.train_ppo``, ``--ppo-steps``, saved under ``--ppo-dir`` and
loaded with ``PPOAgent.load``): ``ppo`` on the full observation, which shows the history, so
its exact figure walks histories, one network query at a time (minutes at 5 cards, out of
reach at 6), and ``ppo-markov`` on the Markov observation, measured exactly over positions
at any size here; its responder sees only the position too, which is all a best response to
a Markov agent needs. The full observation shows the seat, so ``ppo``'s on-policy value
may differ between seats and its exact per-seat gains are unknown (the overall figure is
exact, the game being zero-sum): its worse-seat column is left empty.

Rows are written to ``--out`` (JSON, atomically) as they finish; a rerun with the same
settings reuses finished rows and saved PPO agents, so an interrupted run resumes.

Run: ``python benchmarks/validate_best_response.py [--sizes 5 6] [--agents random medium hard
ppo] [--steps 100000] [--seeds 0 1 2] [--eval-games 5000]``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from hiddenhand.agents import PPOAgent, RandomAgent, make_agent
from hiddenhand.agents.ppo import is_ppo_dir
from hiddenhand.envs.goofspiel import GoofspielRules
from hiddenhand.files import atomic_write
from hiddenhand.registry import get
from hiddenhand.training.best_response import approximate_exploitability
from hiddenhand.training.ppo_pool import PoolSettings, train_ppo

AGENTS = ("random", "medium", "hard", "ppo", "ppo-markov")
PPO = {"ppo": "full", "ppo-markov": "markov"}
"""The PPO agents and the observation each is trained on."""
GOAL = 0.9
"""The share of the exact exploitability the lower bound must recover."""


def rules_for(agent: str, n: int) -> GoofspielRules:
    """The configuration an agent plays (the Markov PPO agent's observation is the position)."""
    return GoofspielRules(num_cards=n, observation=PPO.get(agent, "full"))


def build_agent(name: str, rules: GoofspielRules, ppo_steps: int, ppo_dir: Path):
    """The agent called ``name``; a PPO agent is trained once per size, observation and budget,
    then loaded."""
    if name == "random":
        return RandomAgent()
    if name not in PPO:
        return make_agent("goofspiel", name, rules)
    directory = ppo_dir / f"goofspiel{rules.num_cards}_{PPO[name]}_{ppo_steps}"
    if not is_ppo_dir(directory):
        settings = PoolSettings(exploitability="never")
        train_ppo(rules, steps=ppo_steps, out=directory, seed=0, eval_every=ppo_steps, settings=settings)
    return PPOAgent.load(directory)


def validate(name: str, n: int, args: argparse.Namespace) -> dict:
    """One row: the exact and the approximate exploitability of agent ``name`` at ``n`` cards."""
    rules = rules_for(name, n)
    agent = build_agent(name, rules, args.ppo_steps, args.ppo_dir)
    start = time.perf_counter()
    exact = get("goofspiel").measure_exploitability(rules, agent)
    exact_seconds = time.perf_counter() - start
    start = time.perf_counter()
    bound = approximate_exploitability(
        rules, agent, steps=args.steps, seeds=args.seeds, eval_games=args.eval_games, progress=True
    )
    return {
        **key_of(name, n, args),
        "exact": exact.to_json(),
        "exact_seconds": exact_seconds,
        "lower_bound": bound.to_json(),
        "seconds": time.perf_counter() - start,
        "recovered": bound.value / exact.value,
        "worst_seat_recovered": None if name == "ppo" else min(g / e for g, e in zip(bound.per_seat, exact.per_seat)),
    }


def key_of(name: str, n: int, args: argparse.Namespace) -> dict:
    """What a row depends on: a saved row with the same key is reused."""
    ppo = {"ppo_steps": args.ppo_steps} if name in PPO else {}
    return {
        "agent": name,
        "cards": n,
        "steps": args.steps,
        "seeds": list(args.seeds),
        "eval_games": args.eval_games,
        **ppo,
    }


def row_text(row: dict) -> str:
    bound = row["lower_bound"]
    # The interval of the mean over seats, as if the seats' estimates were independent. That
    # overstates it: they share the on-policy games, whose noise cancels from the mean.
    ci = sum(c**2 for c in bound["ci95"]) ** 0.5 / len(bound["ci95"])
    worst = row["worst_seat_recovered"]
    return (
        f"| {row['agent']:<10} | {row['cards']:>5} | {row['exact']['exploitability']:>5.3f} "
        f"| {bound['exploitability']:>7.3f} ± {ci:.3f} | {100 * row['recovered']:>8.1f}% "
        f"| {'—' if worst is None else f'{100 * worst:.1f}%':>10} | {row['seconds']:>7.0f} |"
    )


HEADER = (
    "| agent      | cards | exact | lower bound ± ci | recovered | worse seat | seconds |\n"
    "|------------|------:|------:|-----------------:|----------:|-----------:|--------:|"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5, 6], help="numbers of cards (default 5 6)")
    parser.add_argument("--agents", nargs="+", choices=AGENTS, default=list(AGENTS), help="agents to measure")
    parser.add_argument("--steps", type=int, default=100_000, help="training steps per responder (default 100000)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="responder seeds (default 0 1 2)")
    parser.add_argument("--eval-games", type=int, default=5000, help="games in each of the selection and test sets")
    parser.add_argument("--ppo-steps", type=int, default=50_000, help="PPO agents' self-play steps (50000)")
    parser.add_argument("--ppo-dir", type=Path, default=Path("/tmp/hiddenhand_validate_ppo"), help="PPO agents' home")
    parser.add_argument("--out", type=Path, default=Path("/tmp/validate_best_response.json"), help="results (JSON)")
    args = parser.parse_args()
    rows = json.loads(args.out.read_text())["rows"] if args.out.exists() else []
    print(HEADER)
    for n in args.sizes:
        for name in args.agents:
            key = key_of(name, n, args)
            row = next((r for r in rows if {k: r.get(k) for k in key} == key), None)
            if row is None:
                row = validate(name, n, args)
                rows.append(row)
                with atomic_write(args.out, "w") as handle:
                    json.dump({"goal": GOAL, "rows": rows}, handle, indent=2)
            print(row_text(row), flush=True)


if __name__ == "__main__":
    main()
