"""Exact Goofspiel solve: time and peak memory per size, against a plain recursion.

For each size, ``hiddenhand.solvers.goofspiel.solve`` runs in a fresh process (so that its
peak memory is its own), and, for the sizes it can do, so does the plain reference that the
tests check the solver against (``goofspiel_reference.py``: HiGHS on every matrix game of a
recursion over unreduced states). Times are medians of ``--repeats`` runs; the ratio is plain / ours.
The per-level table of the largest size gives the scaling used to extrapolate to 13. Each
process first solves 3 cards, which compiles the kernels (a few seconds, printed apart),
so that the times are the solves'.

Points only: beside each size, the solver as it was before antisymmetry (``solve(n,
shortcuts=False)``: every pattern solved, every state stored) in its own process, the
ratio of its time to ours, the largest difference between the two solutions' values
(computed after its timing) and the size of the values each file holds.

``--scoring win_loss`` runs the win/loss solve (:mod:`hiddenhand.solvers.goofspiel.winloss`)
against the plain win/loss recursion, which also checks every state's value (the largest
difference is printed), and prints beside each size the time matttang27/GOPSsolver
reports for the same game (C++ and GLPK: 41 s at 8 cards, 582 s at 9). Its per-level table
adds the stored states and their memory, and the extrapolation to 13 cards: the exact
count of stored states per level (one pattern of each mirror pair, as the solve keeps
them), the matrix games and seconds scaled by what the largest size solved per stored
state and per game, and the memory of the two levels held at once.

``--head-to-head N`` adds the win/loss equilibrium against the points equilibrium, exactly
(:func:`hiddenhand.solvers.goofspiel.winloss.head_to_head`), from 2 to N cards.

Run: ``python benchmarks/bench_goofspiel.py [--scoring point_difference|win_loss] [--min-cards 4]
[--max-cards 10] [--plain-max 5] [--repeats 3] [--head-to-head 7]``.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time

PUBLISHED_WIN_LOSS = {8: 41.0, 9: 582.0}
"""Seconds matttang27/GOPSsolver reports for win/loss Goofspiel (a tie discards the prize, as here)."""


def _child(kind: str, n: int, scoring: str) -> None:
    """Run one solve in this (fresh) process and print its figures as JSON."""
    from hiddenhand.solvers.goofspiel import solve

    compiling = time.perf_counter()
    solve(3, progress=False, scoring=scoring)  # numba compiles the kernels on their first call
    start = time.perf_counter()
    error = None
    if kind == "before":
        solution = solve(n, progress=False, shortcuts=False)
        levels = {k: (solution.indexer.lps(k), s) for k, s in solution.level_seconds.items()}
    elif kind == "ours":
        solution = solve(n, progress=False, scoring=scoring)
        solved = {k: len(solution.indexer.halves(k)[0]) * solution.indexer.shape(k)[1] * k for k in range(n + 1)}
        if scoring == "win_loss":  # games solved, seconds, stored states, bytes
            levels = {
                k: (solution.level_games[k], s, solution.levels[k].size, solution.levels[k].nbytes)
                for k, s in solution.level_seconds.items()
            }
        else:
            levels = {k: (solved[k], s) for k, s in solution.level_seconds.items()}
    else:
        from goofspiel_reference import plain_values, plain_winloss_values

        plain = plain_winloss_values(n) if scoring == "win_loss" else plain_values(n)
        levels = {}
        if scoring == "win_loss":
            ours = solve(n, progress=False, scoring=scoring)
            error = max(abs(ours.value(a, b, p, d) - v) for (a, b, p, d), v in plain.items())
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB
    stored = None
    if kind == "before":  # after the timing: ours, to compare every value and the files' sizes
        ours = solve(n, progress=False)
        error = max(float(abs(a - b).max()) for a, b in zip(ours.levels, solution.levels))
        kept = [ours.indexer.halves(k)[0] for k in range(n + 1)]
        stored = (sum(a.nbytes for a in solution.levels), sum(a[rows].nbytes for a, rows in zip(ours.levels, kept)))
    report = {"seconds": seconds, "compile": start - compiling, "peak_gib": peak, "levels": levels, "error": error}
    report["stored"] = stored
    print(json.dumps(report))


def run(kind: str, n: int, scoring: str) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(n), scoring], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def extrapolate(n: int, ours: list[dict], target: int = 13) -> None:
    """What a ``target``-card win/loss solve needs, from the runs at ``n`` cards."""
    from hiddenhand.solvers.goofspiel.patterns import Differences, Indexer

    levels = ours[0]["levels"]
    games = sum(levels[k][0] for k in levels)
    stored = sum(levels[k][2] for k in levels)
    seconds = sum(statistics.median(r["levels"][k][1] for r in ours) for k in levels)
    indexer = Indexer(target)
    sizes = [len(indexer.halves(k)[0]) * Differences.of(indexer, k).width for k in range(target + 1)]
    total = sum(sizes)
    held = max(a + b for a, b in zip(sizes, sizes[1:])) * 8 / 1e9
    print(f"\n{target}-card win/loss, extrapolated from {n} cards ({games / stored:.2f} games per stored state, ")
    print(f"{1e6 * seconds / games:.3f} us per game on this machine):")
    print(f"  stored states {total:.3g} ({total * 8 / 1e9:.0f} GB of values on disk), two levels held {held:.0f} GB")
    print(f"  matrix games about {total * games / stored:.3g}, time about {total * seconds / stored / 3600:.0f} hours")
    for k, size in enumerate(sizes):
        print(f"  level {k:>2}: {size:>15,} stored states {size * 8 / 1e9:>8.2f} GB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--min-cards", type=int, default=4, help="first size (default 4)")
    parser.add_argument("--max-cards", type=int, default=10, help="last size (default 10)")
    parser.add_argument("--plain-max", type=int, default=5, help="largest size for the plain recursion (default 5)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per size; medians are reported (default 3)")
    parser.add_argument(
        "--scoring", default="point_difference", choices=("point_difference", "win_loss"), help="which solve"
    )
    parser.add_argument(
        "--head-to-head",
        type=int,
        default=0,
        metavar="N",
        help="with --scoring win_loss: also the win/loss equilibrium against the points one, exactly, 2 to N cards",
    )
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], int(args.child[1]), args.child[2])
        return

    win_loss = args.scoring == "win_loss"
    header = f"{'cards':>5} {'ours s':>9} {'ours GiB':>9} {'plain s':>9} {'plain GiB':>9} {'ratio':>7}"
    if win_loss:
        header += f" {'max diff':>9} {'GOPSsolver s':>12} {'ratio':>7}"
    else:
        header += f" {'before s':>9} {'bef. GiB':>9} {'ratio':>7} {'max diff':>9} {'file MB':>9} {'before MB':>9}"
    print(header)
    last = None
    for n in range(args.min_cards, args.max_cards + 1):
        ours = [run("ours", n, args.scoring) for _ in range(args.repeats)]
        mine = statistics.median(r["seconds"] for r in ours)
        row = f"{n:>5} {mine:>9.3f} {max(r['peak_gib'] for r in ours):>9.3f}"
        if n <= args.plain_max:
            plain = [run("plain", n, args.scoring) for _ in range(args.repeats)]
            theirs = statistics.median(r["seconds"] for r in plain)
            row += f" {theirs:>9.3f} {max(r['peak_gib'] for r in plain):>9.3f} {theirs / mine:>7.0f}"
            if win_loss:
                row += f" {max(r['error'] for r in plain):>9.1e}"
        elif win_loss:
            row += f" {'':>9} {'':>9} {'':>7} {'':>9}"
        else:
            row += f" {'':>9} {'':>9} {'':>7}"
        if not win_loss:
            before = [run("before", n, args.scoring) for _ in range(args.repeats)]
            theirs = statistics.median(r["seconds"] for r in before)
            full, half = before[0]["stored"]
            row += f" {theirs:>9.3f} {max(r['peak_gib'] for r in before):>9.3f} {theirs / mine:>7.2f}"
            row += f" {max(r['error'] for r in before):>9.1e} {half / 1e6:>9.1f} {full / 1e6:>9.1f}"
        if win_loss and n in PUBLISHED_WIN_LOSS:
            row += f" {PUBLISHED_WIN_LOSS[n]:>12.0f} {PUBLISHED_WIN_LOSS[n] / mine:>7.0f}"
        print(row, flush=True)
        last = (n, ours)
    print(f"(compiling the kernels, before each solve: {statistics.median(r['compile'] for r in ours):.1f} s)")
    n, ours = last
    print(f"\nPer level at {n} cards (median of {len(ours)} runs): matrix games, seconds, microseconds per game")
    for k in sorted(ours[0]["levels"], key=int):
        lps = ours[0]["levels"][k][0]
        secs = statistics.median(r["levels"][k][1] for r in ours)
        row = f"  level {int(k):>2}: {lps:>12,} games {secs:>9.3f} s {1e6 * secs / max(lps, 1):>8.3f} us/game"
        if win_loss:
            states, size = ours[0]["levels"][k][2:]
            row += f" {states:>13,} stored states {size / 1e6:>9.1f} MB"
        print(row)
    if win_loss:
        extrapolate(n, ours)
        head_to_head(args.head_to_head)


def head_to_head(max_cards: int) -> None:
    """The win/loss equilibrium against the points equilibrium (exact, from the win/loss one's
    side) under both scorings, 2 to ``max_cards`` cards."""
    from hiddenhand.solvers.goofspiel import solve
    from hiddenhand.solvers.goofspiel.winloss import head_to_head as exact

    if max_cards < 2:
        return
    print("\nwin/loss equilibrium against the points equilibrium: cards, under win/loss, under point difference")
    for n in range(2, max_cards + 1):
        result, difference = exact(solve(n, progress=False, scoring="win_loss"), solve(n, progress=False))
        print(f"{n:>5} {result:>+9.4f} {difference:>+9.4f}", flush=True)


if __name__ == "__main__":
    main()
