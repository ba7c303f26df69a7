"""MMD with a critic on Markov Goofspiel, decisions per second, with the canonical networks
as they run (``CanonicalMLP``: the layers see each canonical position of a batch once)
against a reference that runs the layers on every row, renamings included.

Why it matters: the round model reads both networks at every position that can follow a
decision of the batch (every pair of bids and every next prize), and most of those
positions are renamings of a few; the policy's and the critic's fits read the batch's
distinct observations, many of them renamings too. Both loops are the learner's own update
(``CriticMMD.update``, its default settings for the game: ``HELD`` above 4 cards) from the
same seed; only the networks' forward differs, so the exploitability each ends at differs by
float rounding alone.

Run: ``NUMBA_NUM_THREADS=1 python benchmarks/bench_canonical_rows.py [--cards 6]
[--updates 60] [--repeats 3]``. It alternates the two, after one warm-up update each
(numba's compilation, torch's first calls), and prints the median decisions per second of
the repeats and their ratio.
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # before numba is imported

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from contextlib import contextmanager  # noqa: E402

import torch  # noqa: E402

from hiddenhand.agents.canonical_mlp import CanonicalMLP  # noqa: E402
from hiddenhand.registry import get  # noqa: E402
from hiddenhand.training.critic_mmd import CriticMMD, settings_for_rules  # noqa: E402


def every_row(self, x):
    """The reference: ``CanonicalMLP.forward`` without merging the rows that share a canonical position."""
    view, rank = self.views(x)
    out = torch.nn.Sequential.forward(self, torch.as_tensor(view, device=x.device, dtype=x.dtype))
    return out.gather(1, torch.as_tensor(rank, device=x.device))


@contextmanager
def forward(replacement):
    """``CanonicalMLP.forward`` replaced while the block runs (``None``: as it is)."""
    kept = CanonicalMLP.forward
    if replacement is not None:
        CanonicalMLP.forward = replacement
    try:
        yield
    finally:
        CanonicalMLP.forward = kept


def rate(cards: int, updates: int, replacement) -> float:
    """Decisions a second over ``updates`` updates of a fresh learner, after one untimed."""
    rules = get("goofspiel").rules(num_cards=cards, observation="markov")
    with forward(replacement):
        learner = CriticMMD(rules, settings_for_rules(rules), seed=0, device="cpu")
        learner.update()
        start, played = time.perf_counter(), 0
        for k in range(updates):
            played += learner.update(1 - k / updates)[0]
        return played / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cards", type=int, default=6, help="cards per hand (default 6)")
    parser.add_argument("--updates", type=int, default=60, help="timed updates per run (default 60)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each, alternated (default 3)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    rates: dict[str, list[float]] = {"once per canonical position": [], "every row (reference)": []}
    for _ in range(args.repeats):
        rates["once per canonical position"].append(rate(args.cards, args.updates, None))
        rates["every row (reference)"].append(rate(args.cards, args.updates, every_row))
    medians = {name: statistics.median(values) for name, values in rates.items()}
    for name, value in medians.items():
        print(f"{name:>30}: {value:9,.0f} decisions/s (median of {args.repeats})")
    ratio = medians["once per canonical position"] / medians["every row (reference)"]
    print(f"{'ratio':>30}: {ratio:.2f}x")


if __name__ == "__main__":
    main()
