"""Exact two-player Bid Spoof: every round-state's value and equilibrium.

A round-state is (coins of the round's starter, coins of the other player); every round
ends with both hands shown, so nothing else of the past matters. The game is solved as a
stochastic game (:mod:`.stochastic`) like Spoof, except that rounds lead back and forth:
a right cliff wins a coin, and a right spoof repeats the round-state with the roles
possibly swapped, so the value iteration takes several sweeps.

Strategies are tabulated by the *present round* part of an observation (coins, starter,
own hand, the bids so far; see ``bid_spoof_v0``), which is the same in a round-state
whether it is reached in a solver's fresh round or in the middle of a game: the
equilibrium agent looks its moves up there.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np

from hiddenhand.envs.bid_spoof import MAX_COINS, ZERO_CALLS, BidSpoofRules, BidSpoofState
from hiddenhand.exploitability import Exploitability
from hiddenhand.solvers.round_best_response import RoundBestResponse
from hiddenhand.solvers.sequence_form import Behaviour, SequenceForm
from hiddenhand.solvers.stochastic import Continuation, StochasticSolution, two_player_continuation
from hiddenhand.solvers.stochastic import solve as solve_stochastic
from hiddenhand.validation import check_choice, check_int

if TYPE_CHECKING:
    from hiddenhand.agent import Agent


def _tabulate(rules: BidSpoofRules, form: SequenceForm, policies: tuple[Behaviour, Behaviour], table: dict) -> None:
    """Add a solved round's moves to ``table``, keyed by the present-round observation."""
    for player in (0, 1):
        for infostate, probs in policies[player].items():
            state = form.players[player].representatives[infostate]
            row = np.zeros(rules.num_actions)
            for action, p in probs.items():
                row[action] = p
            table[present_round(rules, state.observation_tensor(player))] = row


class BidSpoofRounds:
    """Two-player Bid Spoof as a :class:`~hiddenhand.solvers.stochastic.RoundGame`, played
    by the rules of ``coins``, ``zero_call`` and ``params`` (the other parameters of
    :class:`BidSpoofRules`; two players). The solver needs only the first two; the
    whole-game best response passes a game's every parameter, as the agent it measures
    reads observations laid out by them."""

    def __init__(self, coins: int, zero_call: str = "round_start", **params: Any) -> None:
        self.rules = BidSpoofRules(**{"num_players": 2, **params}, coins=coins, zero_call=zero_call)
        if self.rules.num_players != 2:
            raise ValueError(f"rounds are solved for two players; {self.rules} has {self.rules.num_players}")

    def keys(self) -> list[tuple[int, int]]:
        c = self.rules.coins
        return sorted(((a, b) for a in range(1, c + 1) for b in range(1, c + 1)), key=lambda k: (sum(k), k))

    def start(self, key: tuple[int, int], first: int = 0) -> BidSpoofState:
        return self.rules.new_round_state(key if first == 0 else key[::-1], starter=first)

    def continuation(self, state: BidSpoofState) -> Continuation | None:
        return two_player_continuation(state, state.coins, state.starter) if state.history else None


@dataclass
class BidSpoofSolution:
    """The solved two-player game: values to the round's starter (+1 a sure win)."""

    coins: int
    zero_call: str
    values: dict[tuple[int, int], float]
    stochastic: StochasticSolution
    table: dict[bytes, np.ndarray]

    def _key(self, starter_coins: int, other_coins: int) -> tuple[int, int]:
        return (
            check_int("starter_coins", starter_coins, 1, self.coins),
            check_int("other_coins", other_coins, 1, self.coins),
        )

    def starter_win_probability(self, starter_coins: int, other_coins: int) -> float:
        """Probability that the player starting this round-state wins the game under the
        equilibrium (the game ends with probability 1, so (1 + value) / 2)."""
        return (1.0 + self.values[self._key(starter_coins, other_coins)]) / 2.0

    def opening(self, starter_coins: int, other_coins: int) -> tuple[np.ndarray, dict[int, dict[str, float]]]:
        """The starter's equilibrium hand distribution, and for each hand the opening move
        (``"bid b"`` or ``"zero"``) probabilities."""
        key = self._key(starter_coins, other_coins)
        round_solution = self.stochastic.rounds[key]
        rules = BidSpoofRules(num_players=2, coins=self.coins, zero_call=self.zero_call)
        policy = round_solution.policy(0)
        hands = np.zeros(key[0] + 1)
        openings: dict[int, dict[str, float]] = {}
        for infostate, probs in policy.items():
            state = round_solution.form.players[0].representatives[infostate]
            kinds = {rules.actions.decode(a)[0] for a in probs}
            if kinds == {"hold"}:
                for a, p in probs.items():
                    hands[a] = p
            elif not state.bids:
                labels = {}
                for a, p in probs.items():
                    kind, value = rules.actions.decode(a)
                    if p > 1e-9:
                        labels[f"bid {value}" if kind == "bid" else str(value)] = p
                openings[state.holds[0]] = labels
        return hands, openings


def solve(coins: int = 3, zero_call: str = "round_start", progress: bool = True) -> BidSpoofSolution:
    """Solve two-player Bid Spoof for every round-state with up to ``coins`` each."""
    coins = check_int("coins", coins, 1, MAX_COINS)
    zero_call = check_choice("zero_call", zero_call, ZERO_CALLS)
    game = BidSpoofRounds(coins, zero_call)
    result = solve_stochastic(game, progress=progress)
    table: dict[bytes, np.ndarray] = {}
    for r in result.rounds.values():
        _tabulate(game.rules, r.form, (r.policy(0), r.policy(1)), table)
    return BidSpoofSolution(coins, zero_call, result.values, result, table)


def present_round(rules: BidSpoofRules, observation: np.ndarray) -> bytes:
    """The part of an observation (full or Markov) that describes the present round: the
    key of an equilibrium table (the past rounds tell nothing about the present hands)."""
    present = slice(rules.layout.offset("coins"), rules.layout.slice("bids").stop)  # the coins to the bid table
    return np.ascontiguousarray(observation[present], dtype=np.float32).tobytes()


@cache
def solve_round(coins: int, zero_call: str = "round_start") -> tuple[float, dict[bytes, np.ndarray]]:
    """One round with equal ``coins`` (``objective="round"``): its value to the starter
    and an equilibrium table (for :class:`BidSpoofEquilibriumAgent`)."""
    rules = BidSpoofRules(num_players=2, coins=coins, zero_call=zero_call, objective="round")
    form = SequenceForm.build(rules.new_initial_state(), lambda s: tuple(s.returns()) if s.is_terminal() else None)
    value, plan0, plan1 = form.solve(np.array([(r0 - r1) / 2 for r0, r1 in form.leaves]))
    table: dict[bytes, np.ndarray] = {}
    _tabulate(rules, form, (form.behaviour(0, plan0), form.behaviour(1, plan1)), table)
    return value, table


def report(rules: BidSpoofRules) -> str:
    """``hiddenhand solve bid-spoof``: the starter's chances from every round-state up to
    ``rules.coins`` each, then the starter's opening from that many coins each."""
    from hiddenhand.solvers.spoof import distribution, value_table

    c = rules.coins
    start = time.perf_counter()
    solution = solve(c, rules.zero_call)
    title = (
        f"Bid Spoof, two players, zero_call={rules.zero_call}: probability that the round's starter wins the "
        f"game, solved in {time.perf_counter() - start:.2f} s ({solution.stochastic.sweeps} sweeps)"
    )
    cells = {(f, s): solution.starter_win_probability(f, s) for f in range(1, c + 1) for s in range(1, c + 1)}
    lines = value_table(title, "rows: the starter's coins; columns: the other player's", cells, c)
    hands, openings = solution.opening(c, c)
    lines += ["", f"The starter's opening from {c} coins each (an equilibrium; others may exist):"]
    lines.append("holds: " + distribution(hands))
    for hold, moves in sorted(openings.items()):
        if hands[hold] > 5e-4:
            lines.append(f"holding {hold}, opens: " + ", ".join(f"{m} {p:.3f}" for m, p in moves.items()))
    return "\n".join(lines)


def game_best_response(rules: BidSpoofRules, agent: Agent) -> RoundBestResponse:
    """The whole two-player game of ``rules`` against ``agent``, round-state by round-state,
    with the game's own observations (:mod:`~hiddenhand.solvers.round_best_response`)."""
    return RoundBestResponse(BidSpoofRounds(**rules.params), agent, opening=(rules.coins, rules.coins))


def exploitability(rules: BidSpoofRules, agent: Agent) -> Exploitability:
    """Two-player ``bid_spoof_v0``'s exact exploitability: one round by OpenSpiel's best
    response on its tree, a whole game by policy iteration over round-states
    (:func:`game_best_response`, for agents that do not read past rounds)."""
    if rules.objective == "round":
        from hiddenhand.openspiel import exploitability as on_the_tree

        return on_the_tree(rules, agent)
    return game_best_response(rules, agent).exploitability()
