"""Where in a whole game of rounds an agent can be beaten: for saved agents on whole Spoof or
whole two-player Bid Spoof (Markov observation), per position (a round-state and the seat
that starts the round), what a best responder in each seat gains there.

Two gains per position and seat:

- *game*: the whole game's best response from that position on, against the agent's own
  play from there (the exact measure of ``hiddenhand.solvers.round_best_response``, read at
  every position instead of the opening alone). It carries the rounds after the position
  with it, so an error late in the game shows at every position before it as well.
- *round*: one round's best response with every leaf paid the game's exact value of the
  position it leads to (from the solver, not from the agent), against the round's value at
  the equilibrium: what the agent's play in this round alone gives away. This is the one
  that says which rounds a learner has got wrong.

Example: ``python benchmarks/round_gains.py spoof runs/seed0 runs/seed2`` (the directories
``hiddenhand train mmd-critic spoof --matches 3 --observation markov --out DIR`` writes), or
``bid_spoof`` with ``--params '{"num_players": 2, "coins": 3}'``.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from hiddenhand.agents import load_agent
from hiddenhand.registry import get
from hiddenhand.solvers import bid_spoof, spoof
from hiddenhand.solvers.round_best_response import RoundBestResponse
from hiddenhand.solvers.stochastic import solve

GAMES = {
    "spoof": (spoof.game_best_response, spoof.SpoofRounds),
    "bid_spoof": (bid_spoof.game_best_response, bid_spoof.BidSpoofRounds),
}
"""Per game: the whole game's best response against an agent, and its rounds for the solver."""


def equilibrium_values(game: str, rules, measure: RoundBestResponse) -> np.ndarray:
    """The game's value to seat 0 at each of ``measure``'s positions (the last entry, the
    game's end, 0), from the exact solver's values of the round-states (to their first player)."""
    values = solve(GAMES[game][1](**rules.params), progress=False).values
    return np.array([values[key] * (1.0 if seat == 0 else -1.0) for key, seat in measure.positions] + [0.0])


def round_gains(measure: RoundBestResponse, values: np.ndarray) -> np.ndarray:
    """Per position and responder seat, one round's best response against the agent's plan
    in that round, every leaf paid ``values`` (to seat 0) of the position it leads to, minus
    the position's value: what the agent's play in that round alone gives away."""
    gains = np.zeros((len(measure.rounds), 2))
    for i, r in enumerate(measure.rounds):
        leaves = r.payoff + values[r.next]
        for responder, sign in ((0, 1.0), (1, -1.0)):
            best = r.form.best_response_value(responder, r.plans[1 - responder], leaves)
            gains[i, responder] = best - sign * values[i]
    return gains


def game_gains(measure: RoundBestResponse) -> np.ndarray:
    """Per position and responder seat, the whole game's best response from the position
    against the agent's own play from there."""
    own = measure.values(None)[:-1]
    return np.stack([measure.values(0)[:-1] - own, measure.values(1)[:-1] + own], axis=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("game", choices=sorted(GAMES), help="the game the agents were trained on")
    parser.add_argument("agents", nargs="+", help="saved agents (directories), or an agent's name such as equilibrium")
    parser.add_argument(
        "--params",
        default="{}",
        help="the rules as JSON, the Markov observation added (default: the game's defaults, e.g. '{\"matches\": 3}')",
    )
    args = parser.parse_args()
    declared = get(args.game)
    params = {**json.loads(args.params), "observation": "markov"}
    rules = declared.rules(**params)
    values = None
    for spec in args.agents:
        agent = load_agent(args.game, spec, rules.params)
        measure = GAMES[args.game][0](rules, agent)
        if values is None:  # the positions are the game's, whatever the agent: one solve serves all
            values = equilibrium_values(args.game, rules, measure)
        rounds, whole = round_gains(measure, values), game_gains(measure)
        # The exploitability is the seats' mean gain at the opening: read it, not solved again.
        print(f"{spec}: exploitability {whole[measure.index[measure.opening]].mean():.4f}")
        print("  position (round-state, seat first)   equilibrium value   game gain (seat 0, 1)", end="")
        print("   round gain (seat 0, 1)")
        for position, value, g, r in zip(measure.positions, values, whole, rounds):
            print(f"  {position!s:36} {value:+17.4f}   {g[0]:9.4f} {g[1]:9.4f}   {r[0]:10.4f} {r[1]:9.4f}")


if __name__ == "__main__":
    main()
