"""Whether two of sampled regret matching's table rows can share a key on N-card Markov
Goofspiel: every decision position's observation (the rows the exact measure queries,
``Positions`` of ``diagnose_selfplay.py``), reduced to the canonical observation the table
keys its rows by (``Rules.canonical``), hashed by the table's ``hash_observations`` and by
the FNV-1a over whole float32 words it used before (kept here as the reference: it left the
low 23 bits of every key alike, and 9-card runs met two observations with one key).

The table's rows are a subset of these observations (a long run meets nearly all of them),
so no shared key here means no run could have merged two rows. Run: ``NUMBA_NUM_THREADS=1
python benchmarks/regret_keys.py --cards 8``.
"""

from __future__ import annotations

import argparse

import numpy as np
from diagnose_selfplay import Positions, rules_of
from numba import njit

from hiddenhand.training.regret_kernels import hash_observations


@njit(cache=True)
def fnv_before(obs):  # pragma: no cover - compiled
    """The keys before: 64-bit FNV-1a over each row's float32 words."""
    bits = obs.view(np.uint32)
    keys = np.empty(obs.shape[0], dtype=np.uint64)
    for i in range(obs.shape[0]):
        h = np.uint64(14695981039346656037)
        for j in range(bits.shape[1]):
            h = (h ^ np.uint64(bits[i, j])) * np.uint64(1099511628211)
        keys[i] = h
    return keys


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cards", type=int, default=8, help="Goofspiel cards (default 8)")
    args = parser.parse_args(argv)
    where = Positions(args.cards)
    view = rules_of(args.cards).canonical(where.obs.astype(np.float32), where.masks)[0]
    rows = np.ascontiguousarray(np.unique(np.asarray(view, dtype=np.float32), axis=0))
    positions = f"{len(where.obs):,} decision positions"
    print(f"{args.cards}-card Markov Goofspiel: {positions}, {len(rows):,} canonical observations")
    print("| keys | distinct keys | keys shared by two or more observations | distinct low 20 bits |")
    print("|---|---:|---:|---:|")
    for name, hashed in (("the table's", hash_observations), ("FNV-1a before", fnv_before)):
        keys = hashed(rows)
        distinct, counts = np.unique(keys, return_counts=True)
        low = len(np.unique(keys & np.uint64((1 << 20) - 1)))
        print(f"| {name} | {len(distinct):,} | {(counts > 1).sum():,} | {low:,} |")


if __name__ == "__main__":
    main()
