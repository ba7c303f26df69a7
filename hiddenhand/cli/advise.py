"""``hiddenhand advise spoof``: what each choice is worth in a position, as the Hugin Spoof
models' influence diagrams show it (Spoof is the one game with an advisor)."""

from __future__ import annotations

import argparse

from hiddenhand.cli.common import count


def add_parser(commands: argparse._SubParsersAction) -> None:
    from hiddenhand.envs.spoof import MAX_MATCHES, OBJECTIVES

    advise = commands.add_parser(
        "advise",
        help="expected utility of each choice in a position (spoof)",
        description="Show what each choice is worth, as the Hugin Spoof models' influence diagrams do.",
    )
    games = advise.add_subparsers(dest="game", required=True, metavar="GAME")
    p = games.add_parser(
        "spoof",
        help="Spoof: each hand to hold, then each bid",
        description="The expected utility of each number of matches to hold and, once --hold is given, of each "
        "bid, (a) against an opponent whose hand is uniformly random (the Hugin models' opponent: it bids "
        "uniformly among the totals its hand makes possible) and (b) against the equilibrium opponent. A choice's "
        "utility assumes you bid as well as possible afterwards. Forbidden choices are marked, the best choice per "
        "column starred.",
    )
    p.add_argument("--mine", type=count(1, MAX_MATCHES), required=True, help=f"your matches left, 1 to {MAX_MATCHES}")
    p.add_argument(
        "--theirs", type=count(1, MAX_MATCHES), required=True, help=f"your opponent's matches left, 1 to {MAX_MATCHES}"
    )
    p.add_argument(
        "--seat", choices=("first", "second"), default="first", help="whether you bid first this round (default first)"
    )
    p.add_argument("--hold", type=count(0), help="the matches you hold: show the bids instead of the hands")
    p.add_argument("--their-bid", type=count(0), help="bidding second: the first bid, which yours must differ from")
    p.add_argument(
        "--objective",
        choices=OBJECTIVES,
        default="round",
        help="round: utilities 1 / 0 / 0.5 as in the diagrams; game: probabilities of winning the whole "
        "game, against the whole game's equilibrium (default round)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from hiddenhand.solvers.spoof_advisor import advise

    advice = advise(args.mine, args.theirs, args.seat, args.hold, args.their_bid, args.objective)
    print(format_advice(advice, args))
    return 0


def format_advice(advice, args: argparse.Namespace) -> str:
    """The advisor's table: one row per choice, one column per opponent model, best starred."""
    from hiddenhand.solvers.spoof_advisor import MODELS

    unit = (
        "utility (1 right, 0 opponent right, 0.5 neither)"
        if args.objective == "round"
        else "probability of winning the game"
    )
    where = f"you {args.mine} matches, opponent {args.theirs}, you bid {args.seat}"
    if advice.kind == "hold":
        lines = [f"Spoof, {where}: expected {unit} of each hand"]
    else:
        seen = f", their bid {args.their_bid}" if args.their_bid is not None else ""
        lines = [f"Spoof, {where}, you hold {args.hold}{seen}: expected {unit} of each bid"]
    headers = {"uniform": "uniform opponent", "equilibrium": "equilibrium opponent"}
    lines.append(f"{advice.kind:>5}" + "".join(f"{headers[m]:>24}" for m in MODELS))
    best = {m: advice.best(m) for m in MODELS}
    for choice, allowed in enumerate(advice.allowed):
        cells = [
            f"{advice.utilities[m][choice]:.4f}" + (" *" if choice in best[m] else "  ") if allowed else "forbidden  "
            for m in MODELS
        ]
        lines.append(f"{choice:>5}" + "".join(f"{c:>24}" for c in cells))
    lines += [f"note: {note}" for note in advice.notes]
    return "\n".join(lines)
