"""Goofspiel's exact solve on Ray: each level's patterns as tasks over a cluster.

The thread pool of :func:`hiddenhand.solvers.goofspiel.points.solve` stops at one machine's cores. Here
each level (hand size k) is cut into chunks of interleaving patterns, and each chunk is a
Ray task that runs the same compiled kernel (:func:`~hiddenhand.solvers.goofspiel.kernels.solve_patterns`)
on the same inputs, so the values are the thread pool's bit for bit. What moves:

- the values of the level below, put once per level in Ray's object store and read there
  by every task on a node without a copy (``ray.put``; a node fetches them once);
- each chunk's index tables (``win``, ``child``: 5k² bytes per pattern) to
  its task, and its values (8 bytes per state) and, when kept, its bases (4 bytes per
  matrix game) back to the driver, which writes the level (and its checkpoint) as before.

:func:`transfer` gives those sizes per level; at 13 cards the heaviest levels are 8 (0.62 GB
of values below to each node, 1.21 GB of values back, 4.8 GB more with bases) and 9 (1.21
GB out, 0.63 GB back).
Each worker process compiles the kernel once. On one machine Ray adds that and its
scheduling to the thread pool's work, so it pays only across machines (the timings:
docs/goofspiel.md, "The exact solver on Ray"); the hiddenhand package must be installed on
every node of a cluster.
"""

from __future__ import annotations

import numpy as np

from hiddenhand.ray_cluster import start_ray
from hiddenhand.solvers.goofspiel.kernels import solve_patterns
from hiddenhand.solvers.goofspiel.patterns import Indexer, Level

TASKS_PER_CPU = 8
"""Chunks per CPU of the cluster in each level: enough to balance uneven patterns."""


def _chunk(win, child, prize_values, prize_child, below, keep_bases: bool, warm: bool):
    """One task: the values (and bases) of the patterns whose tables ``win``, ``child`` are."""
    k = win.shape[1]
    out = np.empty((win.shape[0], prize_values.shape[0]))
    bases = np.empty((*out.shape, k) if keep_bases else (0, 0, 0), dtype=np.uint32)
    rows = np.arange(win.shape[0])
    solve_patterns(rows, win, child, prize_values, prize_child, below, out, bases, warm, 0, len(out))
    return out, bases


class RayLevels:
    """Solves levels on the Ray cluster at ``address`` (default: a local instance on
    127.0.0.1, :func:`~hiddenhand.ray_cluster.start_ray`)."""

    def __init__(self, address: str | None = None, num_cpus: int | None = None) -> None:
        start_ray(address, num_cpus)
        import ray

        self.ray = ray
        self.task = ray.remote(num_cpus=1)(_chunk)
        self.cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))

    def solve_level(
        self, level: Level, todo: np.ndarray, below: np.ndarray, out: np.ndarray, bases: np.ndarray, warm: bool, bar
    ) -> None:
        """Fill ``out`` (and ``bases`` unless it is empty) for the patterns ``todo`` of
        ``level`` from the values ``below`` (``warm``: as in
        :func:`~hiddenhand.solvers.goofspiel.kernels.solve_patterns`); ``bar`` advances by each chunk's
        matrix games."""
        ray = self.ray
        patterns, prize_sets, k = len(todo), out.shape[1], level.win.shape[1]
        shared = [ray.put(a) for a in (level.prize_values, level.prize_child, below)]
        keep = bases.shape[0] > 0
        size = max(1, -(-patterns // (TASKS_PER_CPU * self.cpus)))
        chunks = [todo[a : a + size] for a in range(0, patterns, size)]
        pending = {self.task.remote(level.win[rows], level.child[rows], *shared, keep, warm): rows for rows in chunks}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            rows = pending.pop(done[0])
            values, masks = ray.get(done[0])
            out[rows] = values
            if keep:
                bases[rows] = masks
            bar.update(len(values) * prize_sets * k)


def transfer(num_cards: int) -> list[tuple[int, int, int, int]]:
    """Per level k of an ``num_cards`` solve on Ray: (k, bytes of the values below sent to
    each node, bytes of values returned, bytes of bases returned when kept)."""
    indexer = Indexer(num_cards)
    rows = []
    for k in range(1, num_cards + 1):
        patterns, prize_sets = indexer.shape(k)
        below = int(np.prod(indexer.shape(k - 1))) * 8
        rows.append((k, below, patterns * prize_sets * 8, patterns * prize_sets * k * 4))
    return rows
