"""The exact Goofspiel solver: its public door.

:func:`solve` solves two-player Goofspiel (random prize order, bids revealed) scored by
point difference or win/loss, :func:`load` reads a saved solution, and
:func:`exploitability` measures any agent exactly against the game (NashConv / 2, by the
dynamic programme over histories; :func:`exploitability_report` per seat, over positions
where the agent allows it). The modules under it are layered so that imports only run
downwards (``tests/test_imports.py`` holds them to it):

- :mod:`.coverage`: which configurations the solver covers (imports nothing);
- :mod:`.patterns`: card sets, interleaving patterns and the index tables of a level;
- :mod:`.kernels`: the compiled matrix-game kernels and the thread pool that runs them;
- :mod:`.storage` (solution files, checkpoints) and :mod:`.bases` (optimal bases);
- :mod:`.solution`: the solution classes, points and win/loss siblings over one base;
- :mod:`.points`, :mod:`.winloss`: the two solves; :mod:`.ray_runner`: the points solve's
  levels as Ray tasks; :mod:`.certificate`: the certificate of a points solution;
- :mod:`.positions`, :mod:`.histories`: exact best responses over positions (Markov
  agents, compiled and batched) and over histories (any agent);
- :mod:`.report`: the text of ``hiddenhand solve goofspiel`` (above the door).
"""

from __future__ import annotations

import os

from hiddenhand.exploitability import Exploitability
from hiddenhand.solvers.goofspiel import histories, points, positions, winloss
from hiddenhand.solvers.goofspiel.histories import exploitability
from hiddenhand.solvers.goofspiel.solution import GoofspielSolution, PointsSolution, WinLossSolution, solution_class
from hiddenhand.solvers.goofspiel.storage import POINT_DIFFERENCE
from hiddenhand.validation import named


def solve(
    num_cards: int,
    *,
    workers: int | None = None,
    progress: bool = True,
    checkpoint: str | os.PathLike | None = None,
    bases: str | os.PathLike | None = None,
    ray: bool = False,
    address: str | None = None,
    scoring: str = POINT_DIFFERENCE,
    shortcuts: bool = True,
) -> GoofspielSolution:
    """Solve ``num_cards`` Goofspiel exactly under ``scoring``: ``"point_difference"`` (the
    values are A's expected point difference: :func:`.points.solve`, whose docstring says
    what every argument does) or ``"win_loss"`` (P(A wins) - P(B wins), over states that
    include the score: :func:`.winloss.solve`, which takes ``workers``, ``progress`` and
    ``checkpoint`` alone)."""
    if solution_class(scoring) is WinLossSolution:
        extra = {"bases": bases, "ray": ray, "address": address}
        given = {name: value for name, value in extra.items() if value not in (None, False)}
        given |= {} if shortcuts else {"shortcuts": False}
        if given:
            named_given = ", ".join(named(name, value) for name, value in given.items())
            raise ValueError(
                f"{named_given}: these apply to point-difference solves; {named('scoring', scoring)} takes none of them"
            )
        return winloss.solve(num_cards, workers=workers, progress=progress, checkpoint=checkpoint)
    return points.solve(
        num_cards,
        workers=workers,
        progress=progress,
        checkpoint=checkpoint,
        bases=bases,
        ray=ray,
        address=address,
        shortcuts=shortcuts,
    )


def load(path: str | os.PathLike, num_cards: int | None = None) -> GoofspielSolution:
    """The solution saved at ``path`` (either scoring: :meth:`GoofspielSolution.load`),
    checked to be of ``num_cards`` when given."""
    return GoofspielSolution.load(path, num_cards)


def exploitability_report(agent, rules) -> Exploitability:
    """The exact exploitability of ``agent`` playing both seats of ``rules`` (a
    :class:`~hiddenhand.envs.goofspiel.GoofspielRules` or a number of cards), per seat: over
    positions for a Markov agent under point difference (seconds at 8 cards, minutes at 10),
    else by the dynamic programme over histories (minutes from 6 cards for an agent that
    reads the score; always for win/loss scoring, where the score is part of every state)."""
    scoring = POINT_DIFFERENCE if isinstance(rules, int) else rules.scoring
    if positions.is_markov(agent) and scoring == POINT_DIFFERENCE:
        return positions.exploitability(agent, rules)
    return histories.exploitability_report(agent, rules)


__all__ = [
    "GoofspielSolution",
    "PointsSolution",
    "WinLossSolution",
    "exploitability",
    "exploitability_report",
    "load",
    "solve",
]
