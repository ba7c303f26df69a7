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
from hiddenhand.envs.bid_spoof import ZERO_CALLS, BidSpoofRules
from hiddenhand.envs.bid_spoof import OBJECTIVES as BID_SPOOF_OBJECTIVES
from hiddenhand.envs.egghead import MODERATORS, EggHeadRules
from hiddenhand.envs.spoof import OBJECTIVES, SpoofRules
from hiddenhand.training.cfr import ALGORITHMS

_GOOFSPIEL = GoofspielRules.param_defaults()
_SPOOF = SpoofRules.param_defaults()
_EGGHEAD = EggHeadRules.param_defaults()
_BID_SPOOF = BidSpoofRules.param_defaults()


def _matches(text: str) -> int | tuple[int, int]:
    """``--matches``: ``3`` for both players, or ``2,3`` for player_0's and player_1's."""
    try:
        counts = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a count or a pair of counts such as 2,3") from None
    if len(counts) not in (1, 2):
        raise argparse.ArgumentTypeError(f"{text!r} is not a count or a pair of counts such as 2,3")
    return counts[0] if len(counts) == 1 else tuple(counts)

GAME_OPTIONS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "goofspiel": [
        ("--cards", dict(dest="num_cards", type=int, default=_GOOFSPIEL["num_cards"], help="cards per hand and in the prize deck, 2 to 13 (default %(default)s)")),
        ("--players", dict(dest="num_players", type=int, default=_GOOFSPIEL["num_players"], help="number of players, 2 to 6 (default %(default)s)")),
        ("--prize-order", dict(dest="prize_order", choices=PRIZE_ORDERS, default=_GOOFSPIEL["prize_order"], help="order in which prizes are turned (default %(default)s)")),
        ("--scoring", dict(dest="scoring", choices=SCORINGS, default=_GOOFSPIEL["scoring"], help="returns: own points minus the others' mean, +1/-1 for most points, or own points (default %(default)s)")),
        ("--hidden-bids", dict(dest="reveal_bids", action="store_false", help="reveal only who won each round, not the bids (OpenSpiel's imp_info)")),
    ],
    "spoof": [
        ("--matches", dict(dest="matches", type=_matches, default=_SPOOF["matches"], help="starting matches, 1 to 9, of both players (3) or of player_0 and player_1 (2,3) (default %(default)s)")),
        ("--objective", dict(dest="objective", choices=OBJECTIVES, default=_SPOOF["objective"], help="play the whole game (+1/-1) or one round (1 right, 0 opponent right, 0.5 neither) (default %(default)s)")),
        ("--max-rounds", dict(dest="max_rounds", type=int, default=_SPOOF["max_rounds"], help="stop the game as a draw after this many rounds (default %(default)s)")),
    ],
    "bid_spoof": [
        ("--players", dict(dest="num_players", type=int, default=_BID_SPOOF["num_players"], help="number of players, 2 to 8 (default %(default)s)")),
        ("--coins", dict(dest="coins", type=int, default=_BID_SPOOF["coins"], help="starting coins, also the most after a cliff, 1 to 5 (default %(default)s)")),
        ("--zero-call", dict(dest="zero_call", choices=ZERO_CALLS, default=_BID_SPOOF["zero_call"], help="when zero may be said: only to open a round, or by anyone who has not bid in it (default %(default)s)")),
        ("--objective", dict(dest="objective", choices=BID_SPOOF_OBJECTIVES, default=_BID_SPOOF["objective"], help="the whole game, or one round scored by the coins it moves (default %(default)s)")),
        ("--max-rounds", dict(dest="max_rounds", type=int, default=_BID_SPOOF["max_rounds"], help="stop the game as a draw after this many rounds (default %(default)s)")),
    ],
    "egghead": [
        ("--players", dict(dest="num_players", type=int, default=_EGGHEAD["num_players"], help="number of players, 3 to 5 (default %(default)s)")),
        ("--cards", dict(dest="cards_per_player", type=int, default=_EGGHEAD["cards_per_player"], help="cards per player (default %(default)s)")),
        ("--values", dict(dest="num_values", type=int, default=_EGGHEAD["num_values"], help="card values 1..VALUES (default %(default)s)")),
        ("--target", dict(dest="target_score", type=int, default=_EGGHEAD["target_score"], help="points that win (default %(default)s)")),
        ("--moderator", dict(dest="moderator", choices=MODERATORS, default=_EGGHEAD["moderator"], help="a non-playing moderator, or the players in turn (default %(default)s)")),
        ("--deck", dict(dest="deck", default=_EGGHEAD["deck"], help="'standard' or comma-separated question ids (default %(default)s)")),
        ("--max-questions", dict(dest="max_questions", type=int, default=_EGGHEAD["max_questions"], help="stop the game as a draw after this many questions (default %(default)s)")),
        ("--no-valids", dict(dest="valids_in_observation", action="store_false", help="leave the valids masks out of the observation (the computer players need them, so they are on here)")),
        ("--analysts", dict(dest="analysts", default=_EGGHEAD["analysts"], help="players the public model treats as behavioural analysts: all, none or ids such as 0,2 (default %(default)s)")),
    ],
}
"""Per game: the command-line flags of its keyword arguments (``dest`` is the keyword)."""


PLAY_OPPONENT = {"goofspiel": "medium", "spoof": "equilibrium", "egghead": "analyst", "bid_spoof": "heuristic"}
"""The computer player ``hiddenhand play`` fields by default."""


def _command_name(game: str) -> str:
    """How the command line spells a game: ``bid_spoof`` is ``bid-spoof``."""
    return game.replace("_", "-")


def _add_game_parsers(sub: argparse._SubParsersAction, help_fmt: str) -> dict[str, argparse.ArgumentParser]:
    parsers = {}
    for game in ENV_MODULES:
        shown = _command_name(game)
        p = sub.add_parser(shown, help=help_fmt.format(game=shown), description=help_fmt.format(game=shown))
        group = p.add_argument_group(f"{game} rules")
        for flag, kwargs in GAME_OPTIONS[game]:
            group.add_argument(flag, **kwargs)
        parsers[game] = p
    return parsers


def _game_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    return {kwargs["dest"]: getattr(args, kwargs["dest"]) for _, kwargs in GAME_OPTIONS[args.game]}


def _rules(args: argparse.Namespace):
    return ENV_MODULES[args.game].raw_env.rules_class(**_game_kwargs(args))


def _add_training_game(p: argparse.ArgumentParser) -> None:
    """The game options every training method takes (read by :func:`_cmd_train`)."""
    p.add_argument("--game", choices=[_command_name(g) for g in ENV_MODULES], default="goofspiel", help="the game (default goofspiel)")
    p.add_argument("--cards", type=int, default=4, help="Goofspiel's num_cards (default 4)")
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any other game argument, repeatable, e.g. --param reveal_bids=false --param prize_order=descending",
    )


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
            default=PLAY_OPPONENT[game],
            help=f"the computer player in every other seat: one of {', '.join(AGENTS[game])}, a directory "
            "(or .npz file) holding a saved policy such as the output of `hiddenhand train cfr`"
            + (", or a solution file of `hiddenhand solve goofspiel --out`" if game == "goofspiel" else "")
            + " (default %(default)s)",
        )
        p.add_argument("--seat", type=int, default=0, help="your seat, 0 = player_0 (default 0)")
        p.add_argument("--seed", type=int, default=None, help="seed for the deal and the computer's choices (default: fresh each run)")

    tour = commands.add_parser(
        "tournament",
        help="round robin between computer players, with 95%% intervals",
        description="Two players: every pair of the chosen agents plays GAMES games with seats alternating; "
        "prints each row agent's mean return against each column agent, with a 95% interval. Three or more "
        "players (Bid Spoof): the agents fill the seats in turn and every distinct seating plays GAMES games; "
        "prints each agent's mean return with a 95% interval.",
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
        help="train agents (cfr: OpenSpiel's CFR solvers through the adapter; ppo: self-play MaskablePPO)",
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
        "(5 takes minutes and gigabytes), and for Spoof's single round (--param objective=round) or a short "
        "game (--param matches=1 --param max_rounds=3); the full Spoof game is solved exactly by "
        "`hiddenhand solve spoof` instead.",
    )
    _add_training_game(cfr)
    cfr.add_argument("--algorithm", choices=ALGORITHMS, default="cfr+", help="solver (default cfr+)")
    cfr.add_argument("--iterations", type=int, default=1000, help="iterations to run (default 1000)")
    cfr.add_argument("--eval-every", type=int, default=50, help="measure NashConv every K iterations (default 50)")
    cfr.add_argument("--out", required=True, help="output directory (created if missing)")
    cfr.add_argument("--seed", type=int, default=0, help="seed of the sampling solvers (default 0)")
    ppo = methods.add_parser(
        "ppo",
        help="self-play MaskablePPO (sb3-contrib) on one seat, against snapshots of itself and the heuristics",
        description="Train sb3-contrib's MaskablePPO by self-play: the learner takes a random seat each episode; the "
        "other seats are snapshots of it (one added every SNAPSHOT_EVERY steps) or the game's rule-based agents. "
        "Every EVAL_EVERY steps it writes curve.csv and curve.png into OUT: exploitability against the exact "
        "equilibrium (two-player Goofspiel with the default rules; one round of two-player Spoof or Bid Spoof, "
        "--param objective=round) and the mean return against each heuristic. The model is saved to OUT: play it "
        "with `hiddenhand play GAME --opponent OUT`. Ctrl-C stops early and still saves.",
    )
    _add_training_game(ppo)
    ppo.add_argument("--timesteps", type=int, default=50_000, help="learner moves to train for, rounded up to whole rollouts of 512 (default 50000)")
    ppo.add_argument("--snapshot-every", type=int, default=2048, help="add a snapshot to the pool every K steps (default 2048)")
    ppo.add_argument("--eval-every", type=int, default=4096, help="evaluate every K steps (default 4096)")
    ppo.add_argument("--eval-games", type=int, default=200, help="games against each heuristic per evaluation (default 200)")
    ppo.add_argument(
        "--exploitability",
        choices=("every", "final", "never"),
        default="every",
        help="when to measure exploitability exactly: at every evaluation, only the final one, or never "
        "(about two minutes per measure at 5 Goofspiel cards; default every)",
    )
    ppo.add_argument("--out", required=True, help="output directory (created if missing)")
    ppo.add_argument("--seed", type=int, default=0, help="seed of the run (default 0)")
    solve = commands.add_parser(
        "solve",
        help="exact equilibria (goofspiel: LP backward induction; spoof: value iteration over round LPs)",
        description="Solve a game exactly and print its opening strategy.",
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
    spoof = solve_games.add_parser(
        "spoof",
        help="two-player Spoof, every round-state, by value iteration over exact round LPs",
        description="Solve Spoof exactly for every round-state (matches of the first bidder, matches of the "
        "other) up to MATCHES each, and print the first bidder's probability of winning the game from each, "
        "then the equilibrium's opening round from MATCHES each. With --objective round: the value of a single "
        "round (1 right, 0 opponent right, 0.5 neither) instead. Under a second at 3 matches, about a minute at 9.",
    )
    spoof.add_argument("--matches", type=int, default=3, help="most matches of either player, 1 to 9 (default 3)")
    spoof.add_argument("--objective", choices=OBJECTIVES, default="game", help="the whole game or one round (default game)")
    bid = solve_games.add_parser(
        "bid-spoof",
        help="two-player Bid Spoof, every round-state, by value iteration over exact round LPs",
        description="Solve two-player Bid Spoof exactly for every round-state (coins of the round's starter, coins "
        "of the other) up to COINS each, and print the starter's probability of winning the game from each, then "
        "the starter's equilibrium opening from COINS each: the hand held, and for each hand the opening move. "
        "A few seconds at 3 coins.",
    )
    bid.add_argument("--coins", type=int, default=3, help="starting coins, also the most after a cliff, 1 to 5 (default 3)")
    bid.add_argument("--zero-call", choices=ZERO_CALLS, default="round_start", help="when zero may be said (default round_start)")

    advise = commands.add_parser(
        "advise",
        help="expected utility of each choice in a position (spoof: the seed's influence diagrams)",
        description="Show what each choice is worth, as the seed's influence diagrams do.",
    )
    advise_games = advise.add_subparsers(dest="game", required=True, metavar="GAME")
    adv = advise_games.add_parser(
        "spoof",
        help="Spoof: each hand to hold, then each bid",
        description="The expected utility of each number of matches to hold and, once --hold is given, of each "
        "bid, (a) against an opponent whose hand is uniformly random (the seed's diagrams: it bids uniformly among "
        "the totals its hand makes possible) and (b) against the equilibrium opponent. A choice's utility assumes "
        "you bid as well as possible afterwards. Forbidden choices are marked, the best choice per column starred.",
    )
    adv.add_argument("--mine", type=int, required=True, help="your matches left, 1 to 9")
    adv.add_argument("--theirs", type=int, required=True, help="your opponent's matches left, 1 to 9")
    adv.add_argument("--seat", choices=("first", "second"), default="first", help="whether you bid first this round (default first)")
    adv.add_argument("--hold", type=int, help="the matches you hold: show the bids instead of the hands")
    adv.add_argument("--their-bid", type=int, help="bidding second: the first bid, which yours must differ from")
    adv.add_argument(
        "--objective",
        choices=OBJECTIVES,
        default="round",
        help="round: utilities 1 / 0 / 0.5 as in the diagrams; game: probabilities of winning the whole game, "
        "against the whole game's equilibrium (default round)",
    )
    bench = commands.add_parser(
        "benchmark",
        help="the main job: train CFR+, MCCFR and PPO and measure them against the exact equilibria",
        description="Train CFR+, external-sampling MCCFR and self-play PPO on every two-player game with an exact "
        "solution where CFR is affordable (4-card Goofspiel; one round of Spoof and of two-player Bid Spoof), report "
        "each agent's exploitability against the exact equilibrium and its head-to-head results (95% intervals) "
        "against the equilibrium and the heuristics, then every-seating tournaments for three-player Bid Spoof "
        "(one round, with CFR+) and EggHead. Writes REPORT.md, one PNG per game (exploitability against wall-clock "
        "time, every method) and summary.json into OUT, and prints the report. The small budget takes a few "
        "minutes on two cores; full trains ten times longer and plays five times more games.",
    )
    bench.add_argument("--budget", choices=("small", "full"), default="small", help="how long to train (default small)")
    bench.add_argument("--out", default="runs/benchmark", help="output directory (default runs/benchmark)")
    bench.add_argument("--seed", type=int, default=0, help="seed of every run (default 0)")
    egg = commands.add_parser(
        "egghead",
        help="EggHead tools (simulate: the study's experiment)",
        description="EggHead tools beyond play: the behavioural-analysis study's experiment.",
    )
    egg_tools = egg.add_subparsers(dest="tool", required=True, metavar="TOOL")
    sim = egg_tools.add_parser(
        "simulate",
        help="rounds needed to score, naive deducers against behavioural analysts",
        description="The study's experiment: one game of ROUNDS questions without a score cap, every player calling "
        "exactly when they know; players 0..ANALYSTS-1 analyse behaviour, the others deduce from answers alone. "
        "Prints the mean and variance of the rounds needed to score one point for each kind of player and every "
        "player's chance of reaching 10 points first (from the ten-fold convolution of the one-point distribution); "
        "writes summary.json and cdf.png (CDFs for 1 and 10 points, winning chances) into OUT. Four players "
        "take about 30 s for 1000 rounds; five players take seconds per round.",
    )
    sim.add_argument("--players", type=int, default=4, help="players, 3 to 5 (default 4)")
    sim.add_argument("--analysts", type=int, default=0, help="how many players analyse behaviour (default 0)")
    sim.add_argument("--rounds", type=int, default=1000, help="questions to play (default 1000)")
    sim.add_argument("--seed", type=int, default=0, help="seed of the deal and the questions (default 0)")
    sim.add_argument("--moderator", choices=MODERATORS, default="external", help="external (the study's setup) or rotating")
    sim.add_argument("--deck", default="standard", help="'standard' or comma-separated question ids (default standard)")
    sim.add_argument("--out", default="runs/egghead", help="output directory (default runs/egghead)")
    return parser


def _cmd_benchmark(args: argparse.Namespace) -> int:
    from hiddenhand.training.benchmark import run_benchmark

    print(run_benchmark(args.budget, args.out, args.seed))
    return 0


def _cmd_egghead(args: argparse.Namespace) -> int:
    from hiddenhand.training.egghead_experiment import simulate, write_report

    result = simulate(args.players, args.analysts, args.rounds, args.seed, args.moderator, args.deck)
    summary = write_report(result, args.out)
    print(f"EggHead, {args.players} players, {args.analysts} analysing, {args.rounds} rounds, seed {args.seed}")
    print(f"{'kind':<10}{'points':>8}{'mean rounds':>14}{'variance':>10}")
    for kind, row in summary["rounds_to_score"].items():
        print(f"{kind:<10}{row['points']:>8}{row['mean']:>14.2f}{row['variance']:>10.2f}")
    wins = summary["win_probability_to_10"]
    if wins is None:
        print("chance of reaching 10 points first: not estimated, some kind of player has not scored yet (play more rounds)")
    else:
        print("chance of reaching 10 points first (ties count for each): " + ", ".join(
            f"player_{p} ({result.kind(p)}) {w:.3f}" for p, w in enumerate(wins)
        ))
    print(f"the study (another deck of 23 questions): naive 9.78 (variance 29.3), analyst 6.16 (variance 14); results in {args.out}")
    return 0


def _cmd_advise(args: argparse.Namespace) -> int:
    from hiddenhand.spoof_advisor import MODELS, advise

    advice = advise(args.mine, args.theirs, args.seat, args.hold, args.their_bid, args.objective)
    unit = "utility (1 right, 0 opponent right, 0.5 neither)" if args.objective == "round" else "probability of winning the game"
    where = f"you {args.mine} matches, opponent {args.theirs}, you bid {args.seat}"
    if advice.kind == "hold":
        print(f"Spoof, {where}: expected {unit} of each hand")
    else:
        seen = f", their bid {args.their_bid}" if args.their_bid is not None else ""
        print(f"Spoof, {where}, you hold {args.hold}{seen}: expected {unit} of each bid")
    headers = {"uniform": "uniform opponent", "equilibrium": "equilibrium opponent"}
    print(f"{advice.kind:>5}" + "".join(f"{headers[m]:>24}" for m in MODELS))
    best = {m: advice.best(m) for m in MODELS}
    for choice, allowed in enumerate(advice.allowed):
        cells = [
            f"{advice.utilities[m][choice]:.4f}" + (" *" if choice in best[m] else "  ") if allowed else "forbidden  "
            for m in MODELS
        ]
        print(f"{choice:>5}" + "".join(f"{c:>24}" for c in cells))
    for note in advice.notes:
        print(f"note: {note}")
    return 0


def _cmd_solve(args: argparse.Namespace) -> int:
    return {"spoof": _solve_spoof, "bid_spoof": _solve_bid_spoof}.get(args.game, _solve_goofspiel)(args)


def _solve_bid_spoof(args: argparse.Namespace) -> int:
    from hiddenhand.solvers.bid_spoof import solve

    c = args.coins
    start = time.perf_counter()
    solution = solve(c, args.zero_call)
    print(f"Bid Spoof, two players, zero_call={args.zero_call}: probability that the round's starter wins the game, "
          f"solved in {time.perf_counter() - start:.2f} s ({solution.stochastic.sweeps} sweeps)")
    print("rows: the starter's coins; columns: the other player's")
    print("     " + "".join(f"{s:>8}" for s in range(1, c + 1)))
    for f in range(1, c + 1):
        print(f"{f:>4} " + "".join(f"{solution.starter_win_probability(f, s):>8.4f}" for s in range(1, c + 1)))
    hands, openings = solution.opening(c, c)
    print(f"\nThe starter's opening from {c} coins each (an equilibrium; others may exist):")
    print("holds: " + _distribution(hands))
    for hold, moves in sorted(openings.items()):
        if hands[hold] > 5e-4:
            print(f"holding {hold}, opens: " + ", ".join(f"{m} {p:.3f}" for m, p in moves.items()))
    return 0


def _solve_spoof(args: argparse.Namespace) -> int:
    from hiddenhand.solvers.spoof import solve, solve_round

    m = args.matches
    start = time.perf_counter()
    if args.objective == "round":
        cells = {(f, s): solve_round(f, s)[0] for f in range(1, m + 1) for s in range(1, m + 1)}
        print(f"Spoof, one round: value to the first bidder (1 right, 0 opponent right, 0.5 neither), "
              f"solved in {time.perf_counter() - start:.2f} s")
        strategy = solve_round(m, m)[1]
    else:
        solution = solve(m)
        cells = {(f, s): solution.first_bidder_win_probability(f, s) for f in range(1, m + 1) for s in range(1, m + 1)}
        print(f"Spoof: probability that the first bidder wins the game, solved in {time.perf_counter() - start:.2f} s")
        strategy = solution.strategy(m, m)
    print("rows: the first bidder's matches; columns: the other player's")
    print("     " + "".join(f"{s:>8}" for s in range(1, m + 1)))
    for f in range(1, m + 1):
        print(f"{f:>4} " + "".join(f"{cells[f, s]:>8.4f}" for s in range(1, m + 1)))
    print(f"\nOpening round from {m} matches each (an equilibrium; others may exist):")
    print("first bidder holds:  " + _distribution(strategy.first_hold))
    print("second bidder holds: " + _distribution(strategy.second_hold))
    for hold in range(m + 1):
        print(f"first bidder holding {hold} bids: " + _distribution(strategy.first_bid[hold]))
    return 0


def _distribution(probs) -> str:
    return ", ".join(f"{k}: {p:.3f}" for k, p in enumerate(probs) if p > 5e-4)


def _solve_goofspiel(args: argparse.Namespace) -> int:
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
    if args.method == "ppo":
        from hiddenhand.training.ppo import train_ppo

        curve = train_ppo(
            args.game, kwargs, args.timesteps, args.out, seed=args.seed, snapshot_every=args.snapshot_every,
            eval_every=args.eval_every, eval_games=args.eval_games, exploitability=args.exploitability,
        )
        last = curve[-1]
        exploit = "n/a" if last.exploitability is None else f"{last.exploitability:.4g}"
        against = ", ".join(f"{k} {v:+.3f}" for k, v in last.against.items())
        print(f"PPO on {rules!r}: {last.steps} steps, {last.seconds:.1f} s of training; exploitability {exploit}; "
              f"mean return against {against}; saved to {args.out}")
        return 0
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
    if args.games < 1:
        raise ValueError(f"--games={args.games} must be at least 1")
    if rules.num_players > 2:
        return _table_tournament(args, rules)
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


def _table_tournament(args: argparse.Namespace, rules) -> int:
    """Three or more players: one table, every seating of the named agents."""
    from hiddenhand.training.evaluation import seatings, tournament

    names = [n.strip() for n in args.agents.split(",") if n.strip()]
    n = rules.num_players
    if not names or len(names) > n:
        raise ValueError(f"--agents={args.agents!r}: name 1 to {n} agents for the {n} seats (repeats allowed)")
    field_names = [names[i % len(names)] for i in range(n)]  # fill the table in turn
    field = [(name, load_agent(args.game, name, rules.params, seed=i)) for i, name in enumerate(field_names)]
    results = tournament(rules, field, args.games, seed=args.seed)
    print(f"{rules!r}: seats {', '.join(field_names)}; every seating ({len(seatings(field_names))}) plays {args.games} games")
    print(f"{'agent':<24}{'mean return':>16}{'games':>8}{'best in':>9}   (mean over the seats an agent holds)")
    for name, r in sorted(results.items(), key=lambda kv: -kv[1].mean):
        print(f"{name:<24}{f'{r.mean:+.3f} ± {r.ci95:.3f}':>16}{r.games:>8}{r.wins / r.games:>9.1%}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "game", None):
        args.game = args.game.replace("-", "_")
    handler = {
        "play": _cmd_play,
        "tournament": _cmd_tournament,
        "train": _cmd_train,
        "solve": _cmd_solve,
        "advise": _cmd_advise,
        "egghead": _cmd_egghead,
        "benchmark": _cmd_benchmark,
    }[args.command]
    try:
        return handler(args)
    except (ValueError, OSError) as err:  # bad input or an unusable path: one clear line
        parser.exit(2, f"hiddenhand: error: {err}\n")


if __name__ == "__main__":
    sys.exit(main())
