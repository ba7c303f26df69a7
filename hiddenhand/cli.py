"""The ``hiddenhand`` command (also ``python -m hiddenhand``).

Each subcommand takes the game as its own sub-subcommand, so ``hiddenhand play goofspiel
--help`` lists exactly the options of that game.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Sequence

from hiddenhand.agents import AGENTS, HEURISTICS, load_agent
from hiddenhand.envs import ENV_MODULES
from hiddenhand.envs.goofspiel import PRIZE_ORDERS, SCORINGS, GoofspielRules
from hiddenhand.training.cfr import ALGORITHMS

_GOOFSPIEL = GoofspielRules.param_defaults()
GAME_OPTIONS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "goofspiel": [
        ("--cards", dict(dest="num_cards", type=int, default=_GOOFSPIEL["num_cards"], help="cards per hand and in the prize deck, 1 to 13 (default %(default)s)")),
        ("--players", dict(dest="num_players", type=int, default=_GOOFSPIEL["num_players"], help="number of players, 2 to 6 (default %(default)s)")),
        ("--prize-order", dict(dest="prize_order", choices=PRIZE_ORDERS, default=_GOOFSPIEL["prize_order"], help="order in which prizes are turned (default %(default)s)")),
        ("--scoring", dict(dest="scoring", choices=SCORINGS, default=_GOOFSPIEL["scoring"], help="returns: own points minus the others' mean, +1/-1 for most points, or own points (default %(default)s)")),
        ("--hidden-bids", dict(dest="reveal_bids", action="store_false", help="reveal only who won each round, not the bids (OpenSpiel's imp_info)")),
    ],
}
"""Per game: the command-line flags of its keyword arguments (``dest`` is the keyword)."""


def _add_game_parsers(sub: argparse._SubParsersAction, help_fmt: str) -> dict[str, argparse.ArgumentParser]:
    parsers = {}
    for game in ENV_MODULES:
        p = sub.add_parser(game, help=help_fmt.format(game=game), description=help_fmt.format(game=game))
        group = p.add_argument_group(f"{game} rules")
        for flag, kwargs in GAME_OPTIONS[game]:
            group.add_argument(flag, **kwargs)
        parsers[game] = p
    return parsers


def _game_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    return {kwargs["dest"]: getattr(args, kwargs["dest"]) for _, kwargs in GAME_OPTIONS[args.game]}


def _rules(args: argparse.Namespace):
    return ENV_MODULES[args.game].raw_env.rules_class(**_game_kwargs(args))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hiddenhand",
        description="Imperfect-information games for RL and game theory: play them, pit agents against "
        "each other, train CFR agents, solve them exactly. Each command has its own --help.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    play = commands.add_parser(
        "play",
        help="play a game in the terminal against a computer player",
        description="Play a full game in the terminal against a computer player; you are offered another game at the end.",
    )
    play_games = play.add_subparsers(dest="game", required=True, metavar="GAME")
    for game, p in _add_game_parsers(play_games, "play {game} against a computer player").items():
        p.add_argument(
            "--opponent",
            default="medium",
            help=f"the computer player in every other seat: one of {', '.join(AGENTS[game])}, a directory "
            "(or .npz file) holding a saved policy such as the output of `hiddenhand train cfr`, or a solution "
            "file of `hiddenhand solve` (default medium)",
        )
        p.add_argument("--seat", type=int, default=0, help="your seat, 0 = player_0 (default 0)")
        p.add_argument("--seed", type=int, default=None, help="seed for the deal and the computer's choices (default: fresh each run)")

    tour = commands.add_parser(
        "tournament",
        help="round robin between computer players, with 95%% intervals",
        description="Every pair of the chosen agents plays GAMES two-player games with seats alternating; "
        "prints each row agent's mean return against each column agent, with a 95%% interval.",
    )
    tour_games = tour.add_subparsers(dest="game", required=True, metavar="GAME")
    for game, p in _add_game_parsers(tour_games, "round robin of {game} agents").items():
        p.add_argument(
            "--agents",
            default=",".join(HEURISTICS[game]),
            help=f"comma-separated agents: {', '.join(AGENTS[game])}, saved-policy directories or solution files "
            f"(default: {','.join(HEURISTICS[game])})",
        )
        p.add_argument("--games", type=int, default=400, help="games per pair of agents (default 400)")
        p.add_argument("--seed", type=int, default=0, help="seed of the whole tournament (default 0)")
    train = commands.add_parser(
        "train",
        help="train agents (cfr: OpenSpiel's CFR solvers through the adapter)",
        description="Train agents and measure them against exact best responses while they learn.",
    )
    methods = train.add_subparsers(dest="method", required=True, metavar="METHOD")
    cfr = methods.add_parser(
        "cfr",
        help="CFR, CFR+ or MCCFR (OpenSpiel's C++ solvers on the cached game tree)",
        description="Run one of OpenSpiel's C++ CFR solvers on the game's cached tree, measuring NashConv "
        "(exact best responses) every EVAL_EVERY iterations. Writes curve.csv, curve.png, policy.npz "
        "(play it: hiddenhand play GAME --opponent OUT) and run.json into OUT. Ctrl-C stops early and "
        "still writes them. The whole game tree is enumerated: affordable for Goofspiel up to 4 cards "
        "(5 takes minutes and gigabytes).",
    )
    cfr.add_argument("--game", choices=list(ENV_MODULES), default="goofspiel", help="the game (default goofspiel)")
    cfr.add_argument("--cards", type=int, default=4, help="Goofspiel's num_cards (default 4)")
    cfr.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any other game argument, repeatable, e.g. --param reveal_bids=false --param prize_order=descending",
    )
    cfr.add_argument("--algorithm", choices=ALGORITHMS, default="cfr+", help="solver (default cfr+)")
    cfr.add_argument("--iterations", type=int, default=1000, help="iterations to run (default 1000)")
    cfr.add_argument("--eval-every", type=int, default=50, help="measure NashConv every K iterations (default 50)")
    cfr.add_argument("--out", required=True, help="output directory (created if missing)")
    cfr.add_argument("--seed", type=int, default=0, help="seed of the sampling solvers (default 0)")
    solve = commands.add_parser(
        "solve",
        help="exact equilibria (goofspiel: the LP backward induction)",
        description="Solve a game exactly and print its first-move strategy.",
    )
    solve_games = solve.add_subparsers(dest="game", required=True, metavar="GAME")
    gops = solve_games.add_parser(
        "goofspiel",
        help="two-player Goofspiel, point difference, random prize order, bids revealed",
        description="Solve two-player Goofspiel (point difference, random prize order, bids revealed) by LP "
        "backward induction and print the first-move table as the published solution does: rows are bids, "
        "columns upcards; * marks, in each column, the parity (odd or even bids) that carries more probability. "
        "Seconds up to 10 cards; about 6 times longer per extra card.",
    )
    gops.add_argument("--cards", type=int, default=5, help="cards per hand, 1 to 13 (default 5)")
    gops.add_argument("--out", help="save the solution here (.npz; usable as --opponent FILE)")
    gops.add_argument("--csv", action="store_true", help="print the table as CSV (bid,upcard_1..upcard_n)")
    gops.add_argument("--workers", type=int, default=None, help="threads (default: every core)")
    gops.add_argument(
        "--checkpoint",
        help="directory for completed levels: an interrupted solve resumes from it (use it for 11 cards and more)",
    )
    return parser


def _cmd_solve(args: argparse.Namespace) -> int:
    from hiddenhand.solvers.gops import solve

    start = time.perf_counter()
    solution = solve(args.cards, workers=args.workers, checkpoint=args.checkpoint)
    seconds = time.perf_counter() - start
    table = solution.first_move_table()
    n = args.cards
    if args.csv:
        print("bid," + ",".join(f"upcard_{u}" for u in range(1, n + 1)))
        for bid in range(n):
            print(f"{bid + 1}," + ",".join(f"{p:.6f}" for p in table[bid]))
    else:
        print(f"Goofspiel, {n} cards: optimal first bid (rows) for each upcard (columns); solved in {seconds:.2f} s")
        print("bid " + "".join(f"{u:>7}" for u in range(1, n + 1)))
        for bid in range(n):
            print(f"{bid + 1:>3} " + "".join(f"{p:>7.4f}" if p > 5e-5 else f"{'0':>7}" for p in table[bid]))
        odd, even = table[0::2].sum(axis=0), table[1::2].sum(axis=0)
        print("odd " + "".join(f"{p:>6.3f}" + ("*" if p > q else " ") for p, q in zip(odd, even)))
        print("even" + "".join(f"{q:>6.3f}" + ("*" if q > p else " ") for p, q in zip(odd, even)))
    if args.out:
        print(f"saved to {solution.save(args.out)}")
    return 0


def _cmd_train(args: argparse.Namespace) -> int:
    from hiddenhand.training.cfr import train_cfr

    rules_class = ENV_MODULES[args.game].raw_env.rules_class
    kwargs = rules_class.parse_params(args.param)
    if args.game == "goofspiel":
        kwargs.setdefault("num_cards", args.cards)
    rules = rules_class(**kwargs)
    curve = train_cfr(rules, args.algorithm, args.iterations, args.eval_every, args.out, seed=args.seed)
    last = curve[-1]
    print(
        f"{args.algorithm} on {rules!r}: {last.iteration} iterations, {last.seconds:.2f} s of solving, "
        f"NashConv {last.nash_conv:.6g} (exploitability {last.exploitability:.6g}); results in {args.out}"
    )
    return 0


def _cmd_play(args: argparse.Namespace) -> int:
    from hiddenhand.terminal import play_in_terminal

    rules = _rules(args)
    opponents = [load_agent(args.game, args.opponent, rules.params) for _ in range(rules.num_players - 1)]
    play_in_terminal(rules, opponents, seat=args.seat, seed=args.seed)
    return 0


def _cmd_tournament(args: argparse.Namespace) -> int:
    from hiddenhand.training.evaluation import round_robin

    rules = _rules(args)
    if rules.num_players != 2:
        raise ValueError(f"tournaments are two-player matches; --players={rules.num_players} is not supported here")
    if args.games < 1:
        raise ValueError(f"--games={args.games} must be at least 1")
    names = list(dict.fromkeys(n.strip() for n in args.agents.split(",") if n.strip()))
    if len(names) < 2:
        raise ValueError(f"--agents={args.agents!r} names fewer than two different agents")
    agents = {name: load_agent(args.game, name, rules.params) for name in names}
    table = round_robin(rules, agents, args.games, seed=args.seed)
    print(f"{rules!r}: mean return of the row agent against the column agent, ± 95% interval, {args.games} games each")
    width = max(18, *(len(n) + 2 for n in names))
    label = max(map(len, names)) + 1
    print("".ljust(label) + "".join(n.rjust(width) for n in names))
    for a in names:
        cells = ["—" if a == b else f"{table[a, b].mean:+.2f} ± {table[a, b].ci95:.2f}" for b in names]
        print(a.ljust(label) + "".join(c.rjust(width) for c in cells))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = {"play": _cmd_play, "tournament": _cmd_tournament, "train": _cmd_train, "solve": _cmd_solve}[args.command]
    try:
        return handler(args)
    except (ValueError, OSError) as err:  # bad input or an unusable path: one clear line
        parser.exit(2, f"hiddenhand: error: {err}\n")


if __name__ == "__main__":
    sys.exit(main())
