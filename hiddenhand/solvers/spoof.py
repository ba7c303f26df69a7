"""Exact Spoof: every round-state's value and equilibrium, for the game and for one round.

A Spoof round-state is (matches of the round's first bidder, matches of the other): every
round ends with both hands shown, so nothing else about the past matters. The full game is
solved as a stochastic game (:mod:`.stochastic`): round-state (f, s) leads to (f - 1, s)
when the first bidder is right (they bid first again), to (s - 1, f) when the second is
(they now bid first), and back to itself when nobody is. Values are listed by the total of
matches, so each sweep meets a round-state after those it leads to; only the "nobody was
right" loop needs repeated solves.

One round with the Hugin models' utilities (1 right, 0 opponent right, 0.5 neither) is a finite
game of its own, solved once by the sequence-form LP (:func:`solve_round`).

**Ending the loop.** Each round's equilibrium, optimal given the values of the rounds after
it, is not quite an equilibrium of the whole game: a round where nobody is right loops back
at the round's own value ``v``, so the round's LP is indifferent to it, while in the whole
game an endless loop is a draw (0). From 3 matches a losing first bidder exploits this: in
(2, 1) (worth -1/2 to them) holding 2 and bidding 0 leaves the round equilibrium's reply
never right, and the game never ends. Played as they are, the round equilibria are
exploitable in the whole game (the exact whole-game measure, :mod:`.round_best_response`;
figures in docs/spoof.md); up to 5 matches they can be stalled in exactly the
round-states where the first bidder has more matches, and so is losing. No round-optimal
strategy of the second bidder there ends the round against every reply, and recursive
games need not have optimal stationary strategies (Everett, 1957), only epsilon-optimal
ones. The strategies played (:data:`ENDING`, :func:`.stochastic.end_loops`) are built so:

- The player a round-state is bad for (value ``v < 0`` to them, the would-be staller)
  keeps its round equilibrium: against any reply that loops with probability ``p`` and is
  worth ``A`` otherwise, ``A + p v >= v``, so the whole game is worth ``A / (1 - p) >= v``
  to them, and a sure loop ``0 >= v``.
- The other, the *ender*, mixes its round equilibrium ``sigma`` with weight ``w = 1e-10``
  with ``rho``, its optimal plan in the round whose loop is paid 0.9 times the
  round-state's value (discounted towards the draw), the discount halved until ``rho``
  ends every stall of ``sigma`` at a loss to the staller (every reply that never ends the
  round against ``sigma`` gets ``A / (1 - p) < v`` against ``rho``, ``v`` the staller's
  value; :func:`.stochastic.stall_margin` checks it). Against such a stall the ``sigma``
  part reaches only loops, so the ratio is ``rho``'s whatever ``w``; against any other
  reply ``sigma`` ends the round with probability ``q > 0`` and concedes nothing, so the
  ``rho`` part costs at most ``w`` times a constant over ``q``. The exploitability is
  therefore linear in ``w``, with no floor but round-off: the small probabilities are
  ``w`` times ``rho``'s, which the LP gives at the scale of 1, not of its tolerances.
- Both are first cleaned of the LP's round-off: behaviour probabilities below 1e-6 (those
  of HiGHS's solutions are below 1e-9 up to 9 matches, the real ones above 1e-3) set to 0.
  This matters to the exact measure: a reply that loops except with probability 1e-13,
  ending well for it, is worth its ending, however rare, and the raw round equilibria had
  such ends.

The values reported stay those of the fixed point (the undiscounted game); only the
strategies played change, and by at most ``w`` in any round. The measured exploitability of
the whole game for each ``w`` (and with the raw round equilibria) is in docs/spoof.md.

So the price of a stationary strategy is a trade: what a staller can gain is about 0.05 to
0.4 times the probability with which its stall ends each round. ``w = 1e-10`` (the default)
keeps the gain near 1e-12, well below the 1e-9 asked for, and round-off is the floor below
that. The simpler construction, the ender playing ``rho`` alone for a discount ``eta``
(``w = 1``), gains about ``0.6 eta`` (3 matches) to ``0.15 eta`` (5), but ``rho``'s small
probabilities, of order ``eta``, come out of the LP at the scale of its tolerances: with
HiGHS's defaults it reaches 5.7e-8, 1.1e-7 and 1.6e-6 at 3, 4 and 5 matches (``eta`` 1e-6,
1e-6, 1e-5; a tenth of that falls back to the stall, or worse), and with feasibility
tolerances of 1e-10 5.7e-11, 1.1e-10 and 1.4e-9 (``eta`` 1e-9, 1e-9, 1e-8), short of 1e-9
at 5 matches.

Against the game as played, with ``max_rounds`` (50) stopping it as a draw, none of this
helps: a stall that ends with probability 1e-12 a round still reaches the stop. The measure
and this construction are about the unlimited game, which the solver values.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np

from hiddenhand.envs.spoof import MAX_MATCHES, SpoofRules, SpoofState
from hiddenhand.exploitability import Exploitability
from hiddenhand.solvers.round_best_response import RoundBestResponse
from hiddenhand.solvers.sequence_form import SequenceForm
from hiddenhand.solvers.stochastic import (
    Continuation,
    LoopEnding,
    RoundSolution,
    StochasticSolution,
    two_player_continuation,
)
from hiddenhand.solvers.stochastic import solve as solve_stochastic
from hiddenhand.validation import check_int

if TYPE_CHECKING:
    from hiddenhand.agent import Agent


ENDING = LoopEnding(discount=0.1, weight=1e-10, threshold=1e-6)
"""How the whole game's strategies end the loop of a round where nobody is right (see the
module docstring)."""


@dataclass(frozen=True)
class RoundStrategy:
    """Both players' strategies in one round-state, by role: ``first_*`` is the round's
    first bidder (with ``first_matches``), ``second_*`` the other. Bids run over
    0..``first_matches + second_matches``."""

    first_matches: int
    second_matches: int
    first_hold: np.ndarray  # (f + 1,): matches to hold
    second_hold: np.ndarray  # (s + 1,)
    first_bid: np.ndarray  # (f + 1, T + 1): the bid, given the hand held
    second_bid: np.ndarray  # (s + 1, T + 1, T + 1): the bid, given the hand held and the first bid

    def hold(self, first: bool) -> np.ndarray:
        return self.first_hold if first else self.second_hold

    def bid(self, first: bool, hold: int, their_bid: int | None = None) -> np.ndarray:
        return self.first_bid[hold] if first else self.second_bid[hold, their_bid]


def _round_strategy(
    form: SequenceForm, plans: tuple[np.ndarray, np.ndarray], rules: SpoofRules, key: tuple[int, int]
) -> RoundStrategy:
    """Read a solved round of ``rules`` in round-state ``key`` (player 0 bids first) into
    per-role arrays."""
    f, s = key
    total = f + s
    first_hold, second_hold = np.zeros(f + 1), np.zeros(s + 1)
    first_bid, second_bid = np.zeros((f + 1, total + 1)), np.zeros((s + 1, total + 1, total + 1))
    for player in (0, 1):
        for infostate, probs in form.behaviour(player, plans[player], unreached=0.0).items():
            state: SpoofState = form.players[player].representatives[infostate]
            hold = state.holds[player]
            for action, p in probs.items():
                kind, value = rules.decode_action(action)
                if kind == "hold":
                    (first_hold if player == 0 else second_hold)[value] = p
                elif player == 0:
                    first_bid[hold, value] = p
                else:
                    second_bid[hold, state.bids[0], value] = p
    return RoundStrategy(f, s, first_hold, second_hold, first_bid, second_bid)


class SpoofRounds:
    """Spoof as a :class:`~hiddenhand.solvers.stochastic.RoundGame`: round-states (f, s)
    with up to the larger of ``matches`` each, listed by their total, played by the rules
    of ``matches`` and ``params`` (the other parameters of :class:`SpoofRules`). The solver
    needs only the counts; the whole-game best response passes a game's every parameter, as
    the agent it measures reads observations laid out by them."""

    def __init__(self, matches: int | tuple[int, int], **params: Any) -> None:
        self.rules = SpoofRules(matches=matches, **params)
        self.matches = self.rules.max_hold

    def keys(self) -> list[tuple[int, int]]:
        m = self.matches
        return sorted(((f, s) for f in range(1, m + 1) for s in range(1, m + 1)), key=lambda k: (sum(k), k))

    def start(self, key: tuple[int, int], first: int = 0) -> SpoofState:
        return self.rules.new_round_state(key if first == 0 else key[::-1], first)

    def continuation(self, state: SpoofState) -> Continuation | None:
        return two_player_continuation(state, state.matches, state.first) if state.history else None


@dataclass
class SpoofSolution:
    """The solved game for up to ``matches`` matches each: values are to the first bidder
    (+1 a sure win, -1 a sure loss), strategies (those to play, see the module docstring)
    by round-state."""

    matches: int
    values: dict[tuple[int, int], float]
    strategies: dict[tuple[int, int], RoundStrategy]
    outcomes: dict[tuple[int, int], tuple[float, float, float]]
    """Per round-state, the equilibrium probabilities that the first bidder is right, that
    the second is, and that nobody is."""
    stochastic: StochasticSolution
    ending: LoopEnding | None = None
    """How the strategies end the loop of a round where nobody is right (``None``: the
    round equilibria as the LP returns them)."""

    def _key(self, first_matches: int, second_matches: int) -> tuple[int, int]:
        return (
            check_int("first_matches", first_matches, 1, self.matches),
            check_int("second_matches", second_matches, 1, self.matches),
        )

    def first_bidder_win_probability(self, first_matches: int, second_matches: int) -> float:
        """Probability that the player bidding first in this round-state wins the game when
        both play the equilibrium (the game ends with probability 1, so it is (1 + value) / 2)."""
        return (1.0 + self.values[self._key(first_matches, second_matches)]) / 2.0

    def strategy(self, first_matches: int, second_matches: int) -> RoundStrategy:
        return self.strategies[self._key(first_matches, second_matches)]

    def unfinished_probability(self, first_matches: int, second_matches: int, rounds: int) -> float:
        """Probability that a game from this round-state is still going after ``rounds``
        rounds of equilibrium play (what ``max_rounds`` cuts off)."""
        dist = {self._key(first_matches, second_matches): 1.0}
        for _ in range(rounds):
            after: dict[tuple[int, int], float] = {}
            for (f, s), p in dist.items():
                right, other_right, neither = self.outcomes[(f, s)]
                for key, q in (((f - 1, s), right), ((s - 1, f), other_right), ((f, s), neither)):
                    if min(key) > 0 and q > 0:
                        after[key] = after.get(key, 0.0) + p * q
            dist = after
        return sum(dist.values())


def _outcomes(key: tuple[int, int], solution: RoundSolution) -> tuple[float, float, float]:
    probs = solution.leaf_probabilities()
    right = other = neither = 0.0
    for p, leaf in zip(probs, solution.form.leaves):
        if leaf.key == key and leaf.sign > 0:
            neither += p
        elif leaf.payoff > 0 or (leaf.key is not None and leaf.sign > 0):
            right += p
        else:
            other += p
    return right, other, neither


def solve(matches: int = 3, progress: bool = True, ending: LoopEnding | None = ENDING) -> SpoofSolution:
    """Solve Spoof for every round-state with up to ``matches`` matches each (1 to 9).

    ``ending`` says how the strategies end the loop of a round where nobody is right (see
    the module docstring); ``None`` gives the round equilibria as the LP returns them, which
    a losing first bidder can stall."""
    matches = check_int("matches", matches, 1, MAX_MATCHES)
    game = SpoofRounds(matches)
    result = solve_stochastic(game, progress=progress, ending=ending)
    strategies, outcomes = {}, {}
    for key, r in result.rounds.items():
        strategies[key] = _round_strategy(r.form, r.strategy, game.rules, key)
        outcomes[key] = _outcomes(key, r)
        if outcomes[key][2] > 1 - 1e-9:
            raise RuntimeError(f"round-state {key}: the equilibrium never ends the round")
    return SpoofSolution(matches, result.values, strategies, outcomes, result, ending)


@cache
def solve_round(first_matches: int, second_matches: int) -> tuple[float, RoundStrategy]:
    """One round with the Hugin models' utilities (1 right, 0 the opponent right, 0.5 neither),
    the player bidding first holding ``first_matches``: its value to the first bidder and
    an equilibrium."""
    rules = SpoofRules(matches=(first_matches, second_matches), objective="round")
    form = SequenceForm.build(rules.new_initial_state(), lambda s: tuple(s.returns()) if s.is_terminal() else None)
    value, *plans = form.solve(np.array([(r0 - r1) / 2 for r0, r1 in form.leaves]))
    return value + 0.5, _round_strategy(form, tuple(plans), rules, rules.matches)


def distribution(probs) -> str:
    """``k: p`` for every count with visible probability (the reports' notation)."""
    return ", ".join(f"{k}: {p:.3f}" for k, p in enumerate(probs) if p > 5e-4)


def value_table(title: str, corner: str, cells: dict[tuple[int, int], float], size: int) -> list[str]:
    """A square table of values by (row player's count, column player's count), 1..size."""
    lines = [title, corner, "     " + "".join(f"{s:>8}" for s in range(1, size + 1))]
    for f in range(1, size + 1):
        lines.append(f"{f:>4} " + "".join(f"{cells[f, s]:>8.4f}" for s in range(1, size + 1)))
    return lines


def report(rules: SpoofRules) -> str:
    """``hiddenhand solve spoof``: the first bidder's chances from every round-state up to
    the larger starting count (or a single round's values), then the opening round."""
    m = rules.max_hold
    start = time.perf_counter()
    if rules.params["objective"] == "round":
        cells = {(f, s): solve_round(f, s)[0] for f in range(1, m + 1) for s in range(1, m + 1)}
        title = (
            f"Spoof, one round: value to the first bidder (1 right, 0 opponent right, 0.5 neither), "
            f"solved in {time.perf_counter() - start:.2f} s"
        )
        strategy = solve_round(m, m)[1]
    else:
        solution = solve(m)
        cells = {(f, s): solution.first_bidder_win_probability(f, s) for f in range(1, m + 1) for s in range(1, m + 1)}
        title = f"Spoof: probability that the first bidder wins the game, solved in {time.perf_counter() - start:.2f} s"
        strategy = solution.strategy(m, m)
    lines = value_table(title, "rows: the first bidder's matches; columns: the other player's", cells, m)
    lines += ["", f"Opening round from {m} matches each (an equilibrium; others may exist):"]
    lines.append("first bidder holds:  " + distribution(strategy.first_hold))
    lines.append("second bidder holds: " + distribution(strategy.second_hold))
    lines += [f"first bidder holding {hold} bids: " + distribution(strategy.first_bid[hold]) for hold in range(m + 1)]
    return "\n".join(lines)


def game_best_response(rules: SpoofRules, agent: Agent) -> RoundBestResponse:
    """The whole game of ``rules`` against ``agent``, round-state by round-state, with the
    game's own observations (:mod:`~hiddenhand.solvers.round_best_response`)."""
    return RoundBestResponse(SpoofRounds(**rules.params), agent, opening=rules.matches)


def exploitability(rules: SpoofRules, agent: Agent) -> Exploitability:
    """``spoof_v0``'s exact exploitability: one round by OpenSpiel's best response on its
    tree, a whole game by policy iteration over round-states (:func:`game_best_response`,
    for agents that do not read past rounds)."""
    if rules.objective == "round":
        from hiddenhand.openspiel import exploitability as on_the_tree

        return on_the_tree(rules, agent)
    return game_best_response(rules, agent).exploitability()
