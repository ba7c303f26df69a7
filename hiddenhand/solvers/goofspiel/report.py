"""``hiddenhand solve goofspiel``: the command's text, apart from the numerics.

The command line (:mod:`hiddenhand.cli`) finds :func:`report` through the Goofspiel env's
declaration and passes it the options as parsed; this module turns them into calls of the
solver's door (:func:`~hiddenhand.solvers.goofspiel.solve`, :func:`~hiddenhand.solvers.goofspiel.load`)
and the certificate, and their results into the first-move table and the lines under it. Its
errors speak of the command's flags (``--load``, ``--checkpoint``, ``--certify``); the
solver's own speak of its arguments.
"""

from __future__ import annotations

import time

from hiddenhand.files import read_npz_meta
from hiddenhand.solvers.goofspiel import certificate, solve
from hiddenhand.solvers.goofspiel import load as load_solution
from hiddenhand.solvers.goofspiel.solution import GoofspielSolution, PointsSolution
from hiddenhand.solvers.goofspiel.storage import POINT_DIFFERENCE, SOLUTION_FILE
from hiddenhand.validation import named


def report(
    rules,
    out: str | None = None,
    csv: bool = False,
    workers: int | None = None,
    checkpoint: str | None = None,
    load: str | None = None,
    certify: bool = False,
    bases: str | None = None,
    ray: bool = False,
    address: str | None = None,
) -> str:
    """``hiddenhand solve goofspiel``: solve ``rules``' number of cards (or ``load`` a saved
    solution of it) and show the first-move table as the published solution does (rows
    bids, columns upcards; ``*`` marks the parity carrying more probability in each column),
    or as CSV; save the solution to ``out``; with ``certify``, add the equilibrium's exact
    exploitability and the values' fixed-point residual
    (:func:`~hiddenhand.solvers.goofspiel.certificate.certify`). ``bases``: a directory the solve
    writes every matrix game's optimal basis to, and the certificate reads them from;
    ``ray``, ``address``: solve on Ray (:func:`~hiddenhand.solvers.goofspiel.points.solve`).
    ``rules``' scoring picks the points or the win/loss solve (:mod:`~hiddenhand.solvers.goofspiel.winloss`)."""
    n, scoring = rules.params["num_cards"], rules.params["scoring"]
    if certify and scoring != POINT_DIFFERENCE:
        raise ValueError(
            f"--certify covers point-difference solutions; for {named('scoring', scoring)} measure the equilibrium "
            f"with `hiddenhand exploitability goofspiel --cards {n} --scoring {scoring} --agent equilibrium`"
        )
    start = time.perf_counter()
    if load is not None:
        solution = _load_for_report(load, n, checkpoint)
        if solution.scoring != scoring:
            raise ValueError(f"--load {load} is a {solution.scoring} solution: pass --scoring {solution.scoring}")
        origin, made = f"loaded from {load}", f"the solution was loaded from {load}"
    else:
        solution = solve(
            n, workers=workers, checkpoint=checkpoint, bases=bases, ray=ray, address=address, scoring=scoring
        )
        seconds = time.perf_counter() - start
        origin, made = f"solved in {seconds:.2f} s", f"the solve took {seconds:.2f} s"
    table = solution.first_move_table()
    if csv:
        lines = ["bid," + ",".join(f"upcard_{u}" for u in range(1, n + 1))]
        lines += [f"{bid + 1}," + ",".join(f"{p:.6f}" for p in table[bid]) for bid in range(n)]
    else:
        scored = "" if scoring == POINT_DIFFERENCE else f", scored {scoring}"
        lines = [f"Goofspiel, {n} cards{scored}: optimal first bid (rows) for each upcard (columns); {origin}"]
        lines.append("bid " + "".join(f"{u:>7}" for u in range(1, n + 1)))
        for bid in range(n):
            lines.append(f"{bid + 1:>3} " + "".join(f"{p:>7.4f}" if p > 5e-5 else f"{'0':>7}" for p in table[bid]))
        odd, even = table[0::2].sum(axis=0), table[1::2].sum(axis=0)
        lines.append("odd " + "".join(f"{p:>6.3f}" + ("*" if p > q else " ") for p, q in zip(odd, even)))
        lines.append("even" + "".join(f"{q:>6.3f}" + ("*" if q > p else " ") for p, q in zip(odd, even)))
    if certify:
        lines += _certificate_lines(solution, workers, made, bases)
    if out:
        lines.append(f"saved to {solution.save(out)}")
    return "\n".join(lines)


def _load_for_report(path: str, num_cards: int, checkpoint: str | None) -> GoofspielSolution:
    """The solution file ``--load`` names, checked to be of ``--cards`` before it is read whole."""
    if checkpoint is not None:
        raise ValueError(
            f"--load {path} reads a finished solution; --checkpoint {checkpoint} is for solving: give only one of them"
        )
    cards = read_npz_meta(path, SOLUTION_FILE).get("num_cards")
    if cards is not None and cards != num_cards:  # None: load says what the file is not
        raise ValueError(f"--load {path} solves {cards} cards, but --cards is {num_cards}: pass --cards {cards}")
    return load_solution(path, num_cards)


def _certificate_lines(solution: PointsSolution, workers: int | None, made: str, bases: str | None) -> list[str]:
    found = certificate.certify(solution, workers=workers, bases=bases)
    n = solution.num_cards
    how = (
        f"strategies rebuilt from the stored bases of {len(found.levels_from_bases)} of {n} levels, "
        f"{found.re_solved} games re-solved"
        if found.levels_from_bases
        else "every game re-solved"
    )
    return [
        f"exploitability of the equilibrium: {found.exploitability:.3g} (certified in {found.seconds:.2f} s, {how}; "
        f"{made})",
        f"fixed-point residual of the values: {found.residual:.3g} (largest |value - mean over upcards of its "
        "matrix game's value|)",
    ]
