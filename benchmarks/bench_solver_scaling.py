"""Exact Goofspiel solves against the number of threads: speed-up, memory traffic, serial share.

The points solve (:func:`hiddenhand.solvers.goofspiel.points.solve`, 11 cards by default) and
the win/loss solve (:func:`hiddenhand.solvers.goofspiel.winloss.solve`, 10 cards) run with
1, 2, 4, 8 and 16 workers, those the machine has (never more than ``os.cpu_count()``), after
a 3-card solve of each that compiles the kernels. Both solves run their levels (hand sizes)
one after the other; within a level, the compiled kernel runs chunks of patterns on a pool
of ``workers`` threads (:func:`hiddenhand.solvers.goofspiel.kernels.run_level`) and
everything else (the level's index tables, built in Python, the mirrored half of the points
level, the arrays) runs on one thread. What can hold the curve below the number of
threads, and how the script measures it:

- **The serial part.** ``run_level`` is wrapped (in this script only) to time each level's
  parallel section; the rest of the solve's wall clock is serial. With the serial seconds
  ``S`` and parallel seconds ``P`` of the 1-worker run (from CPU time, below), Amdahl's
  bound at ``K`` workers is ``(S + P) / (S + P / K)``. ``--index-tables N`` also times the
  index tables alone of an ``N``-card solve (the largest serial piece), which needs no
  solve: for 13 cards, whose solve is too long to repeat at every thread count.
- **Granularity.** Each chunk's wall time and its thread's CPU time are recorded. Pool
  utilisation is the chunks' wall time over ``K`` times the parallel section's: below 1,
  threads waited (the last chunks of a level, the small levels, the pool's overhead).
  Where the machine is shared, the chunks' wall time over their CPU time says how much of
  it other processes took.
- **Threads or the machine.** If each thread's chunks take more CPU time as threads are
  added (``CPU x``, the chunks' CPU seconds over the 1-worker run's), the threads slow each
  other down. ``--processes`` (on by default) then tells where: as many 1-worker solves as
  the most workers run at once, one per process, sharing the machine (memory bus, caches,
  SMT siblings, the clock) but nothing inside a process. If they slow down as much, the
  machine is the limit; if not, something the threads share (the reference counts numba
  keeps on the arrays every thread reads, a cache line two threads write).
- **Memory.** Bytes moved per solve are estimated from what the kernels read and write,
  and divided by the parallel sections' seconds; the same run measures what this machine
  delivers with the same number of threads: a numpy copy (one thread) and a numba parallel
  copy of a ``--copy-mb`` array (bytes read plus bytes written), and a numba parallel
  gather of random 8-byte reads from a table the size of the solve's largest level. A
  slowdown is bandwidth when the bytes per second are near what the copy or the gather
  delivers.

The bytes estimate, per level ``k`` (hand size) of an ``n``-card solve, ``P_k`` patterns
solved (one of each mirror pair) of ``R_k`` in the level, ``Q_k = C(n, k)`` prize sets,
``G_k`` matrix games of ``k x k`` entries:

- *tables*: the level below read once (points: ``R_(k-1) x Q_(k-1)`` float64; win/loss: the
  stored level, ``P_(k-1)`` rows by the level's differences), the level written once
  (points ``R_k x Q_k``, since the mirrored half is written too; win/loss ``P_k`` rows),
  and the index tables read once: ``win`` (``R_k x k x k`` int8), ``child`` (int32),
  ``prize_values`` (``Q_k x k`` float64) and ``prize_child`` (int32), and for win/loss the
  differences' layout (a bool per slot, three int64 per prize set). This is the least the
  level can move; its rate is compared with the copy.
- *lookups*: each matrix entry reads one float64 of the level below (``G_k x k x k x 8``
  bytes; points ``G_k = P_k x Q_k x k``, win/loss the games the solve counts). ``win`` and
  ``child`` are read as often but are one pattern's ``k x k`` entries, which stay in the
  core's cache across its prize sets, so they are not counted. Where no lookup hits a
  cache this is what crosses the memory bus (in whole cache lines, up to 8 times more);
  its rate is compared with the random gather's, which reads 8 bytes at a time too.

The verdict line per solve, at the most workers measured: *bandwidth-bound* when a rate
reaches half of what the copy (tables) or the gather (lookups) delivers with that many
threads and the chunks' CPU time grew by more than 15% (threads that share a saturated bus
slow each other down; a high rate alone may be lookups that hit the cache); *serial-bound*
when the speed-up reaches 85% of Amdahl's bound and that bound is under 85% of the workers
(the serial part explains the curve); otherwise *granularity* when the pool utilisation is
below 90%, and *per-thread slowdown* when the chunks' CPU time grew by more than 15%; else
it scales.

On a shared machine the wall clock measures the other processes as much as the solve, so
each run also gets an estimate of its seconds with the cores to itself (``alone s``): the
CPU seconds outside the chunks (the serial part; the process's CPU time less the chunks')
plus the chunks' CPU seconds over the threads. It leaves out the pool's waiting, which only
a quiet machine measures (there, pool utilisation below 1 is granularity; on a shared one
it is also threads that waited for a core). Amdahl's
bound and the rates in GB/s are taken from these estimates, and the copy and the gather
are timed by CPU time over their threads likewise; the verdict uses the estimated
speed-up when the chunks' wall time exceeds their CPU time by more than 20% (``wall/CPU``),
and the measured one otherwise. The load average is printed before and after.

Run: ``python benchmarks/bench_solver_scaling.py [--cards 11] [--win-loss-cards 10]
[--workers 1 2 4 8 16] [--scoring point_difference win_loss] [--repeats 1] [--copy-mb 512]
[--index-tables 13] [--no-processes]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

import numba
import numpy as np
from numba import njit, prange

from hiddenhand.solvers.goofspiel import kernels, points, winloss
from hiddenhand.solvers.goofspiel.patterns import Differences, Indexer

THREADS = (1, 2, 4, 8, 16)


def machine() -> str:
    """The CPU model, logical and physical cores, L3 cache and load average, as one line."""
    model, cores = "unknown CPU", set()
    entry: dict[str, str] = {}
    for line in [*Path("/proc/cpuinfo").read_text().splitlines(), ""]:
        if ":" in line:
            key, value = (part.strip() for part in line.split(":", 1))
            entry[key] = value
        elif entry:
            model = entry.get("model name", model)
            cores.add((entry.get("physical id"), entry.get("core id", entry.get("processor"))))
            entry = {}
    l3 = Path("/sys/devices/system/cpu/cpu0/cache/index3/size")
    cache = f", L3 {l3.read_text().strip()}" if l3.exists() else ""
    return f"{model}: {os.cpu_count()} logical cores, {len(cores)} physical{cache}; load average {load()}"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


@njit(parallel=True)
def _parallel_copy(src, dst):
    for i in prange(src.size):
        dst[i] = src[i]


@njit(parallel=True)
def _gather(table, reads):
    """Sum of ``reads`` pseudo-random entries of ``table``, spread over the threads: each
    thread walks its own linear congruential sequence, so the reads are independent of one
    another, as the solver's lookups are."""
    threads = numba.get_num_threads()
    sums = np.zeros(threads)
    size = np.uint64(table.size)
    for t in prange(threads):
        x = np.uint64(t + 1) * np.uint64(0x9E3779B97F4A7C15)
        total = 0.0
        for _ in range(reads // threads):
            x = x * np.uint64(6364136223846793005) + np.uint64(1442695040888963407)
            total += table[(x >> np.uint64(20)) % size]
        sums[t] = total
    return sums.sum()


def best_seconds(run, threads: int = 1, repeats: int = 5) -> float:
    """The shortest of ``repeats`` runs after a warm-up, in process CPU seconds over
    ``threads``: what the run takes with its cores to itself, as the solves are measured."""
    run()
    return min(_cpu_seconds(run) for _ in range(repeats)) / threads


def _cpu_seconds(run) -> float:
    start = time.process_time()
    run()
    return time.process_time() - start


@dataclass
class Memory:
    """GB/s this machine delivers: a numpy copy on one thread, and by ``threads``: a parallel
    copy and random 8-byte reads from a table of the solve's largest level."""

    numpy_copy: float
    copy: dict[int, float]
    gather: dict[int, float]


def memory(threads: list[int], copy_mb: int, table_bytes: int) -> Memory:
    src = np.random.default_rng(0).random(copy_mb * 2**20 // 8)
    dst = np.empty_like(src)
    moved = 2 * src.nbytes / 1e9  # read and written
    numpy_copy = moved / best_seconds(lambda: np.copyto(dst, src))
    table = np.random.default_rng(1).random(max(1, table_bytes // 8))
    reads = 2**24
    copy, gather = {}, {}
    for k in threads:
        numba.set_num_threads(k)
        copy[k] = moved / best_seconds(lambda: _parallel_copy(src, dst), k)
        gather[k] = reads * 8 / 1e9 / best_seconds(lambda: _gather(table, reads), k)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    return Memory(numpy_copy, copy, gather)


@dataclass
class Probe:
    """What the wrapped ``run_level`` saw of one solve: per level, the parallel section's
    wall seconds, and its chunks' wall and CPU seconds summed."""

    parallel: list[float] = field(default_factory=list)
    chunk_wall: list[float] = field(default_factory=list)
    chunk_cpu: list[float] = field(default_factory=list)

    def run_level(self, pool, workers, patterns, work, bar) -> None:
        lock = threading.Lock()
        wall, cpu = [0.0], [0.0]

        def timed(start: int, stop: int):
            started, cpu_started = time.perf_counter(), time.thread_time()
            done = work(start, stop)
            with lock:
                wall[0] += time.perf_counter() - started
                cpu[0] += time.thread_time() - cpu_started
            return done

        started = time.perf_counter()
        kernels.run_level(pool, workers, patterns, timed, bar)
        self.parallel.append(time.perf_counter() - started)
        self.chunk_wall.append(wall[0])
        self.chunk_cpu.append(cpu[0])


@dataclass
class Run:
    """One solve's clocks: wall and process CPU seconds of the whole solve, the parallel
    sections' wall seconds, and their chunks' wall and CPU seconds summed."""

    workers: int
    seconds: float
    cpu: float
    parallel: float
    chunk_wall: float
    chunk_cpu: float
    level_parallel: list[float]
    level_seconds: dict[int, float]

    @property
    def serial(self) -> float:
        return self.seconds - self.parallel

    @property
    def serial_cpu(self) -> float:
        """CPU seconds outside the kernels' chunks: the serial part, and the pool's bookkeeping."""
        return self.cpu - self.chunk_cpu

    @property
    def utilisation(self) -> float:
        return self.chunk_wall / (self.workers * self.parallel)

    @property
    def shared(self) -> float:
        """The chunks' wall time over their CPU time: 1 when the threads had their cores to themselves."""
        return self.chunk_wall / self.chunk_cpu

    @property
    def parallel_alone(self) -> float:
        """The parallel sections as they would take with the cores to themselves and no
        thread waiting: the chunks' CPU seconds over the threads."""
        return self.chunk_cpu / self.workers

    @property
    def alone(self) -> float:
        """The solve's seconds with the cores to itself, estimated from CPU time (a lower
        bound: any waiting in the pool is left out)."""
        return self.serial_cpu + self.parallel_alone


def solve_once(scoring: str, n: int, workers: int) -> tuple[Run, object]:
    probe = Probe()
    module = winloss if scoring == "win_loss" else points
    with mock.patch.object(module, "run_level", probe.run_level):
        started, cpu_started = time.perf_counter(), time.process_time()
        solution = module.solve(n, workers=workers, progress=False)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    run = Run(
        workers,
        seconds,
        cpu,
        sum(probe.parallel),
        sum(probe.chunk_wall),
        sum(probe.chunk_cpu),
        probe.parallel,
        dict(solution.level_seconds),
    )
    return run, solution


def traffic(scoring: str, solution) -> tuple[float, float, int]:
    """(tables, lookups, largest level): the bytes estimates of the module docstring for
    ``solution``'s solve, and the bytes of its largest level (the gather's table)."""
    n, indexer = solution.num_cards, Indexer(solution.num_cards)
    tables = lookups = 0.0
    for k in range(1, n + 1):
        rows, prize_sets = indexer.shape(k)
        solved = len(indexer.halves(k)[0])
        index = rows * k * k * (1 + 4) + prize_sets * k * (8 + 4)
        below, here = np.asarray(solution.levels[k - 1]).nbytes, np.asarray(solution.levels[k]).nbytes
        if scoring == "win_loss":
            games = solution.level_games[k]
            index += Differences.of(indexer, k).width + prize_sets * 3 * 8  # reachable (bool), left, radius, offset
        else:
            games = solved * prize_sets * k
        tables += below + here + index
        lookups += games * k * k * 8
    largest = max(np.asarray(level).nbytes for level in solution.levels)
    return tables, lookups, largest


LOADED = 1.2
"""Chunks' wall time over CPU time above which the machine counts as shared: speed-ups are
then taken from the CPU-time estimates (``Run.alone``), since the wall clock measures the
other processes as much as the solve."""


def amdahl(one: Run, k: int) -> float:
    """Amdahl's bound at ``k`` workers from the 1-worker run's serial and parallel CPU seconds."""
    return one.alone / (one.serial_cpu + one.parallel_alone / k)


def verdict(runs: list[Run], rates: tuple[float, float], mem: Memory, apart: float | None) -> str:
    """The verdict line of the module docstring; ``apart`` is the CPU x of as many 1-worker
    solves in separate processes as the most workers (None when not run)."""
    one, last = runs[0], runs[-1]
    k = last.workers
    if k == 1:
        return "one worker only: no curve"
    loaded = max(one.shared, last.shared) > LOADED
    speedup = one.alone / last.alone if loaded else one.seconds / last.seconds
    bound, slowdown = amdahl(one, k), last.chunk_cpu / one.chunk_cpu
    tables, lookups = rates
    basis = "estimated from CPU time, the machine being shared; " if loaded else ""
    near = tables >= 0.5 * mem.copy[k] or lookups >= 0.5 * mem.gather[k]
    if near and slowdown > 1.15:
        return (
            f"bandwidth-bound: the chunks took {slowdown:.2f}x the CPU time of 1 worker, at {tables:.2f} GB/s "
            f"of tables against {mem.copy[k]:.1f} copied, {lookups:.2f} GB/s of lookups against "
            f"{mem.gather[k]:.2f} gathered"
        )
    if speedup >= 0.85 * bound and bound < 0.85 * k:
        return (
            f"serial-bound: speed-up {speedup:.2f} ({basis}Amdahl's bound {bound:.2f}; serial "
            f"{one.serial_cpu:.2f} CPU s of {one.alone:.2f} at 1 worker)"
        )
    if last.utilisation < 0.9:
        return f"granularity: the pool's threads worked {last.utilisation:.0%} of the parallel section"
    if slowdown > 1.15:
        if apart is None:
            where = "shared caches, clock or atomics"
        elif apart > 1.15:
            where = f"the machine: separate processes slow down too ({apart:.2f}x): shared caches, SMT or clock"
        else:
            where = f"inside the process: separate processes do not ({apart:.2f}x): shared reference counts or lines"
        return (
            f"per-thread slowdown: the chunks took {slowdown:.2f}x the CPU time of 1 worker, with memory "
            f"far from its limits ({tables:.2f} and {lookups:.2f} GB/s); {where}"
        )
    headroom = f"lookups at most {lookups / mem.gather[k]:.0%} of the random-read rate, no slowdown yet"
    return f"scales: speed-up {speedup:.2f} at {k} workers ({basis}Amdahl's bound {bound:.2f}; {headroom})"


def report(
    scoring: str, n: int, runs: list[Run], moved: tuple[float, float, int], mem: Memory, apart: tuple | None
) -> None:
    tables, lookups, largest = moved
    one = runs[0]
    print(f"\n{scoring} solve, {n} cards: tables {tables / 1e9:.2f} GB, lookups {lookups / 1e9:.2f} GB per solve;")
    print(
        f"largest level {largest / 2**20:.1f} MiB; serial part at 1 worker {one.serial:.2f} s of {one.seconds:.2f} "
        f"({one.serial_cpu:.2f} CPU s of {one.cpu:.2f})"
    )
    print(
        f"{'workers':>7} {'seconds':>8} {'speed-up':>8} {'effic.':>6} {'alone s':>8} {'speed-up':>8} {'Amdahl':>6} "
        f"{'serial s':>8} {'parallel s':>10} {'pool use':>8} {'CPU x':>6} {'wall/CPU':>8} {'tables GB/s':>11} "
        f"{'lookups GB/s':>12} {'copy GB/s':>9} {'gather GB/s':>11}"
    )
    rates = (0.0, 0.0)
    for run in runs:
        speedup = one.seconds / run.seconds
        rates = (tables / run.parallel_alone / 1e9, lookups / run.parallel_alone / 1e9)
        print(
            f"{run.workers:>7} {run.seconds:>8.2f} {speedup:>8.2f} {speedup / run.workers:>6.2f} {run.alone:>8.2f} "
            f"{one.alone / run.alone:>8.2f} {amdahl(one, run.workers):>6.2f} {run.serial:>8.2f} "
            f"{run.parallel:>10.2f} {run.utilisation:>8.2f} {run.chunk_cpu / one.chunk_cpu:>6.2f} "
            f"{run.shared:>8.2f} {rates[0]:>11.2f} {rates[1]:>12.2f} {mem.copy[run.workers]:>9.1f} "
            f"{mem.gather[run.workers]:>11.2f}"
        )
    last = runs[-1]
    bounds = ", ".join(f"{amdahl(one, k):.2f} at {k}" for k in THREADS[1:])
    print(f"Amdahl's bound from the 1-worker run's serial share ({one.serial_cpu / one.alone:.1%}): {bounds}")
    print("per level at the most workers (seconds): k, serial, parallel")
    print(
        "  "
        + "; ".join(
            f"{k} {last.level_seconds[k] - p:.2f} {p:.2f}"
            for k, p in zip(sorted(last.level_seconds), last.level_parallel)
        )
    )
    slowdown = None
    if apart is not None:
        seconds, cpu = apart
        slowdown = cpu / one.cpu
        print(
            f"{last.workers} solves of 1 worker at once, one per process: {seconds:.2f} s, {cpu:.2f} CPU s each "
            f"(CPU x {slowdown:.2f})"
        )
    print(f"verdict: {verdict(runs, rates, mem, slowdown)}")


def median_run(runs: list[Run]) -> Run:
    return sorted(runs, key=lambda run: run.seconds)[len(runs) // 2]


def index_tables(n: int) -> tuple[float, float]:
    """Wall and CPU seconds to build every level's index tables (and mirror halves) of an ``n``-card solve."""
    indexer = Indexer(n)
    started, cpu_started = time.perf_counter(), time.process_time()
    for k in range(1, n + 1):
        indexer.level(k)
        indexer.halves(k)
    return time.perf_counter() - started, time.process_time() - cpu_started


def side_by_side(scoring: str, n: int, copies: int) -> tuple[float, float]:
    """Mean wall and CPU seconds of ``copies`` 1-worker solves run at once, each in a fresh
    process (compiled first, then started together): the machine shared without sharing
    anything inside a process."""
    command = [sys.executable, __file__, "--child", scoring, str(n)]
    children = [
        subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for _ in range(copies)
    ]
    for child in children:
        if child.stdout.readline().strip() != "ready":
            raise RuntimeError(f"{' '.join(command)} did not start")
    for child in children:
        child.stdin.write("go\n")
        child.stdin.flush()
    results = [json.loads(child.communicate()[0].strip().splitlines()[-1]) for child in children]
    return statistics.mean(r["seconds"] for r in results), statistics.mean(r["cpu"] for r in results)


def child(scoring: str, n: int) -> None:
    """One process of :func:`side_by_side`: compile, say so, wait for the word, solve."""
    module = winloss if scoring == "win_loss" else points
    module.solve(3, workers=1, progress=False)
    print("ready", flush=True)
    sys.stdin.readline()
    started, cpu_started = time.perf_counter(), time.process_time()
    module.solve(n, workers=1, progress=False)
    print(json.dumps({"seconds": time.perf_counter() - started, "cpu": time.process_time() - cpu_started}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cards", type=int, default=11, help="cards of the points solve (default 11)")
    parser.add_argument("--win-loss-cards", type=int, default=10, help="cards of the win/loss solve (default 10)")
    parser.add_argument(
        "--workers", type=int, nargs="+", default=list(THREADS), help="thread counts, those up to os.cpu_count()"
    )
    parser.add_argument(
        "--scoring",
        nargs="+",
        default=["point_difference", "win_loss"],
        choices=("point_difference", "win_loss"),
        help="which solves (default both)",
    )
    parser.add_argument("--repeats", type=int, default=1, help="solves per thread count; the median is kept")
    parser.add_argument("--copy-mb", type=int, default=512, help="MiB of the copied array (default 512)")
    parser.add_argument("--index-tables", type=int, metavar="N", help="also time an N-card solve's index tables alone")
    parser.add_argument(
        "--processes",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also run as many 1-worker solves at once, one per process, as the most workers (default on)",
    )
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]))
        return
    threads = sorted({k for k in args.workers if 1 <= k <= (os.cpu_count() or 1)})
    if threads[0] != 1:
        threads.insert(0, 1)  # speed-ups are against one worker
    print(machine())
    print(f"workers {threads}; numba {numba.__version__}, numpy {np.__version__}")
    for scoring in args.scoring:
        module = winloss if scoring == "win_loss" else points
        module.solve(3, workers=1, progress=False)  # compiles the kernels
        n = args.win_loss_cards if scoring == "win_loss" else args.cards
        runs, solution = [], None
        for k in threads:
            tries = []
            for _ in range(args.repeats):
                run, solution = solve_once(scoring, n, k)
                tries.append(run)
            runs.append(median_run(tries))
            seconds = statistics.median(t.seconds for t in tries)
            print(f"  {scoring} {n} cards, {k} workers: {seconds:.2f} s", flush=True)
        moved = traffic(scoring, solution)
        del solution
        apart = side_by_side(scoring, n, threads[-1]) if args.processes and threads[-1] > 1 else None
        mem = memory(threads, args.copy_mb, moved[2])
        print(f"numpy copy {mem.numpy_copy:.1f} GB/s on one thread")
        report(scoring, n, runs, moved, mem, apart)
    if args.index_tables:
        seconds, cpu = index_tables(args.index_tables)
        print(f"\nindex tables of a {args.index_tables}-card solve: {seconds:.1f} s ({cpu:.1f} CPU s) on one thread")
    print(f"\nload average after: {load()}")


if __name__ == "__main__":
    main()
