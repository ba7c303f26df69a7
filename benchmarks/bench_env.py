"""Random-play decisions per second: our AEC Goofspiel against OpenSpiel's C++ Goofspiel.

Both sides play the same game (13 cards by default, two players, random prize order,
bids revealed) with uniformly random legal moves, each side choosing its move the same
way (one generator draw over the legal actions the env reports). OpenSpiel's
simultaneous-move game is made turn-based (``turn_based_simultaneous_game``) and driven
through ``open_spiel.python.rl_environment``, which, like our env, hands the mover an
observation (its information-state tensor) and the legal actions every step. A decision
is one player's bid.

Run: ``python benchmarks/bench_env.py [--cards 13] [--decisions 200000] [--repeats 5]``.
It alternates the contenders, prints the median of the repeats for each and the ratio
ours / OpenSpiel (above 1 means we are faster).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import pyspiel
from open_spiel.python import rl_environment

from hiddenhand.envs import goofspiel_v0


def ours(make_env, cards: int, decisions: int, seed: int) -> float:
    env = make_env(num_cards=cards)
    rng = np.random.default_rng(seed)
    done = 0
    start = time.perf_counter()
    episode = 0
    while done < decisions:
        env.reset(seed=seed + episode)
        episode += 1
        for agent in env.agent_iter():
            obs, reward, term, trunc, info = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            done += 1
    return done / (time.perf_counter() - start)


def openspiel(cards: int, decisions: int, seed: int) -> float:
    game = pyspiel.load_game(
        f"turn_based_simultaneous_game(game=goofspiel(num_cards={cards},points_order=random,"
        "returns_type=point_difference,imp_info=False))"
    )
    env = rl_environment.Environment(game, seed=seed)
    rng = np.random.default_rng(seed)
    done = 0
    start = time.perf_counter()
    while done < decisions:
        step = env.reset()
        while not step.last():
            player = step.observations["current_player"]
            legal = step.observations["legal_actions"][player]
            step = env.step([legal[rng.integers(len(legal))]])
            done += 1
    return done / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cards", type=int, default=13, help="cards per hand (default 13)")
    parser.add_argument("--decisions", type=int, default=100_000, help="decisions per timed run (default 100000)")
    parser.add_argument(
        "--repeats", type=int, default=5, help="timed runs per contender; medians are reported (default 5)"
    )
    args = parser.parse_args()

    contenders = {
        "hiddenhand env() (wrapped AEC)": lambda s: ours(goofspiel_v0.env, args.cards, args.decisions, s),
        "hiddenhand raw_env (AEC)": lambda s: ours(goofspiel_v0.raw_env, args.cards, args.decisions, s),
        "OpenSpiel C++ via rl_environment": lambda s: openspiel(args.cards, args.decisions, s),
    }
    rates: dict[str, list[float]] = {name: [] for name in contenders}
    for r in range(args.repeats):
        for name, run in contenders.items():
            rates[name].append(run(r))
    medians = {name: statistics.median(v) for name, v in rates.items()}
    peer = medians["OpenSpiel C++ via rl_environment"]
    print(f"Goofspiel, {args.cards} cards, random play, median of {args.repeats} runs of {args.decisions} decisions")
    for name, rate in medians.items():
        print(f"  {name:34s} {rate:10,.0f} decisions/s   ratio to OpenSpiel {rate / peer:5.2f}")


if __name__ == "__main__":
    main()
