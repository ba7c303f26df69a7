"""The EggHead study's experiment: how many rounds naive deducers and behavioural analysts
need to score, and who wins.

As in the study (section 5): one long game with the score cap removed, an external
moderator by default, every player reacting truthfully (calling exactly when they know);
the first ``analysts`` players analyse behaviour, the others deduce from answers alone
(the study's partial analysis). For each point scored we record the number of questions
answered while the player held that hand; a hand dealt in the middle of a round starts
counting at the next question, so a hand read off the others' reactions alone counts 0.
The rounds needed for ten points are the ten-fold convolution of the one-point
distribution (independent points, as the study assumes), and a player's chance of winning
a race to ten is computed from those distributions, ties counting as a win for each tied
player (so the chances add up to more than 1).

The game is played on the deduction engine directly (Algorithm 1), not through the env:
the same :class:`~hiddenhand.envs.egghead.Knowledge` the env uses, without the env's
observations, which the experiment does not need.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from hiddenhand.envs.egghead_deck import deck_from
from hiddenhand.envs.egghead_knowledge import Knowledge
from hiddenhand.files import atomic_write
from hiddenhand.validation import check_choice, check_int

KINDS = ("naive", "analyst")


@dataclass
class ExperimentResult:
    """Rounds needed per point, by player; ``analysts`` are the players 0..analysts-1."""

    num_players: int
    analysts: int
    rounds: int
    seed: int
    rounds_needed: list[list[int]]

    def kind(self, player: int) -> str:
        return "analyst" if player < self.analysts else "naive"

    def samples(self, kind: str) -> np.ndarray:
        """Rounds needed for one point, pooled over the players of ``kind``."""
        return np.array(
            [r for p in range(self.num_players) if self.kind(p) == kind for r in self.rounds_needed[p]], dtype=int
        )

    def kinds(self) -> list[str]:
        return [k for k in KINDS if len(self.samples(k))]

    def pmf(self, kind: str, points: int = 1) -> np.ndarray:
        """Distribution of the rounds needed for ``points`` points (index = rounds)."""
        samples = self.samples(kind)
        if not len(samples):
            raise ValueError(f"no {kind} player scored in {self.rounds} rounds: play more rounds")
        one = np.bincount(samples).astype(float)
        one /= one.sum()
        out = np.array([1.0])
        for _ in range(points):
            out = np.convolve(out, one)
        return out

    def win_probabilities(self, target: int = 10) -> list[float] | None:
        """Each player's chance of being first to ``target`` points (ties count as wins);
        ``None`` while some kind of player has not scored yet."""
        if any(self.kind(p) not in self.kinds() for p in range(self.num_players)):
            return None
        pmfs = {k: self.pmf(k, target) for k in self.kinds()}
        length = max(len(p) for p in pmfs.values())
        pmfs = {k: np.pad(p, (0, length - len(p))) for k, p in pmfs.items()}
        survival = {k: 1.0 - np.concatenate(([0.0], np.cumsum(p)[:-1])) for k, p in pmfs.items()}  # P(T >= t)
        chances = []
        for p in range(self.num_players):
            others = np.prod([survival[self.kind(q)] for q in range(self.num_players) if q != p], axis=0)
            chances.append(float((pmfs[self.kind(p)] * others).sum()))
        return chances

    def summary(self) -> dict:
        stats = {}
        for k in self.kinds():
            s = self.samples(k)
            stats[k] = {
                "points": int(len(s)),
                "mean": float(s.mean()),
                "variance": float(s.var(ddof=1)) if len(s) > 1 else 0.0,
            }
        return {
            "num_players": self.num_players,
            "analysts": self.analysts,
            "rounds": self.rounds,
            "seed": self.seed,
            "rounds_to_score": stats,
            "win_probability_to_10": self.win_probabilities(10),
        }


def simulate(
    num_players: int = 4,
    analysts: int = 0,
    rounds: int = 1000,
    seed: int = 0,
    moderator: str = "external",
    deck: str = "standard",
    progress: bool = True,
) -> ExperimentResult:
    """Play ``rounds`` questions of one uncapped game; see the module docstring."""
    num_players = check_int("num_players", num_players, 3, 5)
    analysts = check_int("analysts", analysts, 0, num_players)
    rounds = check_int("rounds", rounds, 1, 10_000_000)
    moderator = check_choice("moderator", moderator, ("external", "rotating"))
    questions = deck_from(deck, 3, 6)
    knowledge = Knowledge(num_players, analysts=range(analysts), deck=questions)
    hands = knowledge.hands
    rng = np.random.default_rng(seed)

    def draw() -> tuple[int, ...]:
        return hands.tuples[rng.choice(len(hands), p=hands.probabilities)]

    deal = [draw() for _ in range(num_players)]
    asked = [0] * num_players
    needed: list[list[int]] = [[] for _ in range(num_players)]
    for r in tqdm(range(rounds), desc="rounds", disable=not progress, unit="round"):
        mod = r % num_players if moderator == "rotating" else None
        question = questions[rng.integers(len(questions))].id
        knowledge.announce_answer(question, knowledge.answer(question, deal, mod), mod)
        asked = [a + 1 for a in asked]
        while callers := knowledge.settle(deal, mod):
            for p in callers:
                needed[p].append(asked[p])
                knowledge.reveal_solution(p, deal[p])
                deal[p], asked[p] = draw(), 0
    return ExperimentResult(num_players, analysts, rounds, seed, needed)


def write_report(result: ExperimentResult, out_dir: str | Path) -> dict:
    """Write ``summary.json`` and ``cdf.png`` (CDFs for 1 and 10 points, win chances)."""
    from hiddenhand.training import plots

    out = Path(out_dir)
    summary = result.summary()
    with atomic_write(out / "summary.json", "w") as handle:
        json.dump(summary, handle, indent=2)
    players, seed = result.num_players, result.seed
    fig, axes = plots.figure(
        3, f"EggHead, {players} players, {result.analysts} analysing, {result.rounds} rounds, seed {seed}"
    )
    for k in result.kinds():
        for ax, points in zip(axes[:2], (1, 10)):
            cdf = np.cumsum(result.pmf(k, points))
            ax.step(
                np.arange(len(cdf)),
                cdf,
                where="post",
                label=f"{k} (mean {(np.arange(len(cdf)) * result.pmf(k, points)).sum():.1f})",
            )
    for ax, points in zip(axes[:2], (1, 10)):
        tail = max((int(np.searchsorted(np.cumsum(result.pmf(k, points)), 0.999)) for k in result.kinds()), default=10)
        ax.set_xlim(0, tail + 1)
        plots.labels(ax, "rounds", "probability")
        ax.set_title(f"rounds needed to score {points} point{'s' if points > 1 else ''}", fontsize=plots.FONT)
    wins = summary["win_probability_to_10"] or [0.0] * result.num_players
    colours = ["tab:orange" if result.kind(p) == "analyst" else "tab:blue" for p in range(result.num_players)]
    axes[2].bar([f"player_{p}\n{result.kind(p)}" for p in range(result.num_players)], wins, color=colours)
    plots.labels(axes[2], "", "probability of reaching 10 first (ties count)")
    axes[2].set_title("winning chances", fontsize=plots.FONT)
    plots.save(fig, out / "cdf.png")
    return summary
