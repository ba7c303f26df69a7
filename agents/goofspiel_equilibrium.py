"""The exact Goofspiel equilibrium (:mod:`hiddenhand.solvers.goofspiel`) as an agent."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hiddenhand.agent import Agent, Observation, legal_mask
from hiddenhand.envs.goofspiel import GoofspielRules
from hiddenhand.envs.goofspiel_observation import GoofspielView, position_keys
from hiddenhand.files import read_npz_meta
from hiddenhand.solvers.cache import solved
from hiddenhand.solvers.goofspiel import GoofspielSolution, load, solve
from hiddenhand.solvers.goofspiel.coverage import SOLVED, SOLVED_SCORINGS, unsolved
from hiddenhand.solvers.goofspiel.patterns import pattern_of
from hiddenhand.solvers.goofspiel.storage import POINT_DIFFERENCE, SOLUTION_FILE
from hiddenhand.validation import mismatch, named

IN_PROCESS_SOLVE_LIMIT = 10
"""The equilibrium agent solves up to this many cards when it is created (seconds)."""


def check_solved_game(rules: GoofspielRules) -> None:
    """Refuse a Goofspiel configuration other than the one the exact solver solves."""
    differs = unsolved(rules)
    if differs:
        solved = ", ".join(named(k, v) for k, v in SOLVED.items() if k != "scoring")
        scorings = " or ".join(SOLVED_SCORINGS)
        raise ValueError(
            f"the exact equilibrium is of the game with {solved} and {named('scoring')} {scorings}; "
            f"this one has {', '.join(named(k, v) for k, v in differs.items())}"
        )


def load_solution_agent(
    path, rules: GoofspielRules | None, seed: int | None = None
) -> GoofspielEquilibriumAgent | None:
    """A solution file of ``hiddenhand solve goofspiel --out`` as an agent for ``rules``, or
    ``None`` when ``path`` is not a solution file (it may be a saved policy)."""
    path = Path(path)
    if path.suffix != ".npz" or not path.is_file():
        return None
    # A file whose meta cannot be read cannot be read as a saved policy either: say it is damaged
    # as what it may be, rather than try it as a policy file and say it is not one.
    meta = read_npz_meta(path, f"{SOLUTION_FILE} or saved policy")
    cards, scoring = meta.get("num_cards"), meta.get("scoring", POINT_DIFFERENCE)
    if cards is None:
        return None
    rules = rules if rules is not None else GoofspielRules(num_cards=cards, scoring=scoring)
    made = {"num_cards": cards, "scoring": scoring}
    if made != {name: rules.params[name] for name in made}:
        raise ValueError(f"{path} is a {SOLUTION_FILE} for {mismatch(made, rules.params)}")
    return GoofspielEquilibriumAgent(rules, load(path), seed=seed)


def cached_solution(num_cards: int, scoring: str = POINT_DIFFERENCE) -> GoofspielSolution:
    """The solution of ``num_cards`` Goofspiel, solved once per process (seconds up to 10
    cards: :func:`hiddenhand.solvers.cache.solved`)."""
    return solved(solve, num_cards, scoring=scoring)


class GoofspielEquilibriumAgent(Agent):
    """Plays the equilibrium mixed bid of the current position.

    It is the equilibrium of the two-player game with point-difference or win/loss scoring
    (as ``rules`` says; under win/loss it reads the score), random prize order and revealed
    bids; it needs the opponent's hand, so it refuses other rules and hidden-bids
    observations. ``rules`` may be given as the number of cards (point difference).
    ``solution`` defaults to solving the game once per process (seconds up to
    :data:`IN_PROCESS_SOLVE_LIMIT` cards; larger games need a saved solution file).
    """

    uses_score = False
    uses_history = False

    def __init__(
        self, rules: GoofspielRules | int, solution: GoofspielSolution | None = None, seed: int | None = None
    ) -> None:
        super().__init__(seed)
        rules = GoofspielRules(num_cards=rules) if isinstance(rules, (int, np.integer)) else rules
        check_solved_game(rules)
        self.num_cards = rules.params["num_cards"]
        self.scoring = rules.scoring
        self.uses_score = self.scoring == "win_loss"  # the score is part of the position then
        if solution is None:
            if self.num_cards > IN_PROCESS_SOLVE_LIMIT:
                raise ValueError(
                    f"solving {self.num_cards} cards takes long: run `hiddenhand solve goofspiel --cards "
                    f"{self.num_cards} --out gops{self.num_cards}.npz` once, then pass the file as the agent"
                )
            solution = cached_solution(self.num_cards, self.scoring)
        if solution.scoring != self.scoring:
            raise ValueError(f"the solution is scored {solution.scoring}; the game is scored {self.scoring}")
        self.solution = solution
        self._tables: dict[int, np.ndarray] = {}
        if self.solution.num_cards != self.num_cards:
            raise ValueError(f"the solution is for {self.solution.num_cards} cards, not {self.num_cards}")

    def policy(self, observation: Observation) -> np.ndarray:
        mask = legal_mask(observation)
        if len(mask) != self.num_cards:
            raise ValueError(
                f"this agent plays {self.num_cards}-card Goofspiel; the observation is for {len(mask)} cards"
            )
        view = GoofspielView.decode(np.asarray(observation["observation"]), self.num_cards)
        if view.num_players != 2 or not view.reveal_bids:
            raise ValueError("the equilibrium is for two players with revealed bids (reveal_bids=True)")
        prizes = view.prizes_to_come + (view.prize,)
        lead = (view.points[0] - view.points[1],) if self.uses_score else ()  # win/loss: the score difference
        mine, _ = self.solution.strategy(view.hand, view.others_hands[0], prizes, view.prize, *lead)
        probs = np.zeros(self.num_cards)
        for card, prob in mine.items():
            probs[card - 1] = prob
        return probs

    def policy_batch(self, observations: Observation) -> np.ndarray:
        """The equilibrium at many positions at once, read from the solution's strategy
        tables (:meth:`~hiddenhand.solvers.goofspiel.solution.PointsSolution.strategy_table`, one per hand
        size, computed on first use and kept): exact exploitability and exact values ask
        about every position of the game, millions from 8 cards. Under win/loss the score
        is part of the position, and each observation is answered by :meth:`policy`."""
        if self.uses_score:
            return super().policy_batch(observations)
        vectors = np.asarray(observations["observation"])
        n = self.num_cards
        keys = position_keys(vectors, n, score=False)  # prize, own hand, the other's hand
        if (keys[:, 2] < 0).any() or keys.shape[1] != 3 or (keys[:, 0] < 0).any():
            raise ValueError("the equilibrium is for two players with revealed bids, bidding on a prize")
        to_come = _prizes_to_come(vectors, n) @ (1 << np.arange(n))
        prizes = to_come | (1 << keys[:, 0])
        sizes = _popcount(keys[:, 1])
        out = np.zeros((len(vectors), n))
        for k in np.unique(sizes):
            rows = np.flatnonzero(sizes == k)
            table = self._table(int(k))
            pattern = _indices(keys[rows, 1] << 16 | keys[rows, 2], lambda pair: self._pattern_index(pair, int(k)))
            prize_set = _indices(prizes[rows], lambda mask: self.solution.indexer.prizes(int(k))[_cards_of(mask)])
            upcard = _popcount(prizes[rows] & ((1 << keys[rows, 0]) - 1))
            hands, which = np.unique(keys[rows, 1], return_inverse=True)
            cards = (np.array([_cards_of(mask) for mask in hands]) - 1)[which.ravel()]  # (rows, k), increasing
            out[rows[:, None], cards] = table[pattern, prize_set, upcard]
        return out / out.sum(axis=1, keepdims=True)

    def _table(self, k: int) -> np.ndarray:
        if k not in self._tables:
            self._tables[k] = self.solution.strategy_table(k)
        return self._tables[k]

    def _pattern_index(self, pair: int, k: int) -> int:
        return self.solution.indexer.patterns(k)[pattern_of(_cards_of(pair >> 16), _cards_of(pair & 0xFFFF))]

    def __repr__(self) -> str:
        scoring = "" if self.scoring == POINT_DIFFERENCE else f", scoring={self.scoring!r}"
        return f"GoofspielEquilibriumAgent(num_cards={self.num_cards}{scoring})"


def _cards_of(mask: int) -> tuple[int, ...]:
    """The cards (1-based, increasing) of a bitmask."""
    return tuple(c + 1 for c in range(14) if int(mask) >> c & 1)


def _popcount(masks: np.ndarray) -> np.ndarray:
    return ((masks[:, None] >> np.arange(14)) & 1).sum(axis=1)


def _indices(values: np.ndarray, index_of) -> np.ndarray:
    """``index_of(v)`` for every entry, computed once per distinct value."""
    distinct, inverse = np.unique(values, return_inverse=True)
    return np.array([index_of(v) for v in distinct], dtype=np.int64)[inverse.ravel()]


def _prizes_to_come(vectors: np.ndarray, n: int) -> np.ndarray:
    rules = GoofspielRules(num_cards=n, observation="markov" if vectors.shape[1] == 4 * n else "full")
    return rules.layout.views(vectors)["prizes_to_come"] > 0.5
