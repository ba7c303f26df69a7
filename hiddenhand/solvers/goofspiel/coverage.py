"""Which Goofspiel configurations the exact solver and its exact measures cover.

Two players, random prize order and revealed bids, scored by point difference or win/loss,
with any number of cards (up to 13 for the solve, 10 for the measures over positions).
This is the solver's own statement, read by the measures over positions before they run
and by the Goofspiel env's declaration (:mod:`hiddenhand.envs.goofspiel_v0`), which routes
the command line and the exploitability dispatch here. It reads only the rules'
parameters, so it imports nothing.
"""

from __future__ import annotations

SOLVED = {"num_players": 2, "prize_order": "random", "scoring": "point_difference", "reveal_bids": True}
"""The configuration the exact solver covers (with any number of cards), scored as here or
as in :data:`SOLVED_SCORINGS`."""
SOLVED_SCORINGS = ("point_difference", "win_loss")


def unsolved(rules) -> dict:
    """The parameters of ``rules`` (a :class:`~hiddenhand.envs.goofspiel.GoofspielRules`)
    that differ from :data:`SOLVED` other than a scoring of :data:`SOLVED_SCORINGS` (empty:
    the solver covers it)."""
    return {
        k: rules.params[k]
        for k, v in SOLVED.items()
        if rules.params[k] != v and not (k == "scoring" and rules.params[k] in SOLVED_SCORINGS)
    }


def covers(rules) -> bool:
    """Whether the exact solver covers ``rules``."""
    return not unsolved(rules)
