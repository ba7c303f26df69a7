"""The Spoof advisor: the expected utility of each choice, as the Hugin models' influence diagrams show.

The influence diagrams of the Hugin Spoof models (Hugin Expert A/S, "The game of Spoof";
docs/references.md) take the matches each player has left, and give the expected utility
of every number of matches to hold; once the hand is entered, of every bid. They assume an
opponent whose hand is uniformly random. We show that column and a second one against the
equilibrium opponent, because a uniform opponent is not what a good player faces.

The opponent is modelled by a :class:`~hiddenhand.solvers.spoof.RoundStrategy` (their
side of it). The *uniform* model holds uniformly at random and bids uniformly among the
totals its own hand makes possible (never the first bid); the *equilibrium* model plays
the exact equilibrium, of one round (``objective="round"``, utilities 1 / 0 / 0.5 as in
the diagrams) or of the whole game (``objective="game"``, where utilities are
probabilities of winning the game). The expected utility of a hand assumes you bid as well
as possible afterwards, knowing what you will know then, as a diagram's propagation does.

It is a best response to an opponent model, over the solver's round strategies and whole-game
solution, so it sits beside them; ``hiddenhand advise spoof`` prints it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hiddenhand.envs.spoof import MAX_MATCHES, OBJECTIVES, ROUND_UTILITY
from hiddenhand.solvers.cache import solved
from hiddenhand.solvers.spoof import RoundStrategy, solve, solve_round
from hiddenhand.validation import check_choice, check_int, named

SEATS = ("first", "second")
MODELS = ("uniform", "equilibrium")


def uniform_strategy(first_matches: int, second_matches: int) -> RoundStrategy:
    """The diagrams' opponent, in both roles: a uniformly random hand, and a bid uniform
    over the totals that hand makes possible (less the first bid, for the second bidder)."""
    f, s = first_matches, second_matches
    total = f + s
    first_bid = np.zeros((f + 1, total + 1))
    for k in range(f + 1):
        first_bid[k, k : k + s + 1] = 1.0 / (s + 1)
    second_bid = np.zeros((s + 1, total + 1, total + 1))
    for k in range(s + 1):
        for taken in range(total + 1):
            row = second_bid[k, taken]
            row[k : k + f + 1] = 1.0
            row[taken] = 0.0
            row /= row.sum()
    return RoundStrategy(f, s, np.full(f + 1, 1.0 / (f + 1)), np.full(s + 1, 1.0 / (s + 1)), first_bid, second_bid)


def outcome_utilities(mine: int, theirs: int, first: bool, objective: str) -> tuple[float, float, float]:
    """Your utility when you are right, when the opponent is, and when nobody is.

    For the game objective these are your probabilities of winning the game from the
    round-state each outcome leads to, under equilibrium play.
    """
    if objective == "round":
        return ROUND_UTILITY["right"], ROUND_UTILITY["opponent_right"], ROUND_UTILITY["neither"]
    solution = solved(solve, max(mine, theirs))  # the equilibrium agents' cache
    win = solution.first_bidder_win_probability  # of the player bidding first in that round-state
    right = 1.0 if mine == 1 else win(mine - 1, theirs)
    opponent_right = 0.0 if theirs == 1 else 1.0 - win(theirs - 1, mine)
    neither = win(mine, theirs) if first else 1.0 - win(theirs, mine)
    return right, opponent_right, neither


@dataclass(frozen=True)
class Advice:
    """Expected utilities of each choice (``kind`` "hold" or "bid") per opponent model;
    ``allowed[c]`` is False for a choice the rules forbid (its utilities are NaN)."""

    kind: str
    allowed: np.ndarray
    utilities: dict[str, np.ndarray]
    notes: tuple[str, ...] = ()

    def best(self, model: str, tol: float = 1e-9) -> list[int]:
        """The choices worth the most against ``model`` (several when they tie)."""
        values = self.utilities[model]
        return [int(c) for c in np.flatnonzero(values >= np.nanmax(values) - tol)]


def advise(
    mine: int,
    theirs: int,
    seat: str = "first",
    hold: int | None = None,
    their_bid: int | None = None,
    objective: str = "round",
) -> Advice:
    """What each choice is worth to a player with ``mine`` matches against one with
    ``theirs``, bidding ``seat``: the holds, or (``hold`` given) the bids; a second bidder
    gives the first bid as ``their_bid``."""
    mine = check_int("mine", mine, 1, MAX_MATCHES)
    theirs = check_int("theirs", theirs, 1, MAX_MATCHES)
    first = check_choice("seat", seat, SEATS) == "first"
    objective = check_choice("objective", objective, OBJECTIVES)
    total = mine + theirs
    if hold is not None:
        hold = check_int("hold", hold, 0, mine)
    if their_bid is not None:
        if first:
            raise ValueError(
                f"{named('their_bid', their_bid)} is the first bid, which a first bidder has not seen; give it with "
                f"{named('seat', 'second')}"
            )
        their_bid = check_int("their_bid", their_bid, 0, total)
        if hold is None:
            raise ValueError(
                f"give the hand you hold ({named('hold')}) as well: the bids are advised once the hand is chosen"
            )
    if not first and hold is not None and their_bid is None:
        raise ValueError(f"bidding second, give the first bid ({named('their_bid')}) to see what each bid is worth")
    key = (mine, theirs) if first else (theirs, mine)
    models = {
        "uniform": uniform_strategy(*key),
        "equilibrium": solve_round(*key)[1] if objective == "round" else solved(solve, max(key)).strategy(*key),
    }
    u = np.array(outcome_utilities(mine, theirs, first, objective))
    utilities, notes = {}, []
    for name, strategy in models.items():
        table = _first_bid_table(strategy, u) if first else _second_bid_table(strategy, u)
        if hold is None:
            values = table.max(axis=1) if first else table.max(axis=2).sum(axis=1)
            utilities[name] = np.append(values, np.full(max(0, max(mine, theirs) - mine), np.nan))
            continue
        if first:
            utilities[name] = table[hold]
            continue
        reach = (strategy.first_hold @ strategy.first_bid)[their_bid]
        if reach > 0:
            utilities[name] = table[hold, their_bid] / reach
        else:
            notes.append(f"the {name} opponent never bids {their_bid} first; their hand is taken as before the bid")
            k = np.arange(strategy.first_matches + 1)[:, None]
            d = np.arange(total + 1)[None, :]
            utilities[name] = strategy.first_hold @ _payoff(u, d, their_bid, hold + k)
        utilities[name][their_bid] = np.nan
    size = len(next(iter(utilities.values())))
    allowed = ~np.isnan(next(iter(utilities.values())))
    return Advice("hold" if hold is None else "bid", allowed[:size], utilities, tuple(notes))


def _payoff(u: np.ndarray, my_bid: np.ndarray, their_bid: np.ndarray, total: np.ndarray) -> np.ndarray:
    """Utility of each (my bid, their bid, total) combination, broadcast."""
    return np.where(my_bid == total, u[0], np.where(their_bid == total, u[1], u[2]))


def _first_bid_table(strategy: RoundStrategy, u: np.ndarray) -> np.ndarray:
    """For a first bidder: [hold h, bid b] -> expected utility against the opponent's side
    of ``strategy`` (hand, then a second bid that answers b)."""
    f, s = strategy.first_matches, strategy.second_matches
    T = f + s
    h = np.arange(f + 1)[:, None, None, None]
    b = np.arange(T + 1)[None, :, None, None]
    k = np.arange(s + 1)[None, None, :, None]
    d = np.arange(T + 1)[None, None, None, :]
    # P(their hand k) * P(their bid d | k, b), then the payoff of (b, d, h + k).
    weight = strategy.second_hold[None, None, :, None] * strategy.second_bid[None, :, :, :].transpose(0, 2, 1, 3)
    return (weight * _payoff(u, b, d, h + k)).sum(axis=(2, 3))


def _second_bid_table(strategy: RoundStrategy, u: np.ndarray) -> np.ndarray:
    """For a second bidder: [hold h, first bid c, bid d] -> P(first bid c) times the
    expected utility of bidding d after it, -inf where d = c. Summing the best d over c
    gives what a hand is worth; dividing by P(c) gives what each bid is worth after c."""
    f, s = strategy.first_matches, strategy.second_matches
    T = f + s
    h = np.arange(s + 1)[:, None, None, None]
    c = np.arange(T + 1)[None, :, None, None]
    k = np.arange(f + 1)[None, None, :, None]
    d = np.arange(T + 1)[None, None, None, :]
    weight = (strategy.first_hold[:, None] * strategy.first_bid).T[None, :, :, None]  # P(hand k, bid c): [., c, k, .]
    table = (weight * _payoff(u, d, c, h + k)).sum(axis=2)
    return np.where(np.eye(T + 1, dtype=bool)[None], -np.inf, table)
