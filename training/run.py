"""One training run's lifecycle, shared by every trainer: the training clock (measures kept
off it), the curve (``curve.csv`` and ``curve.png``, rewritten after every measure), the
progress bar, Ctrl-C, and the run record (``run.json``).

Why one object. Each learner used to write its own copy of this (clock, curve file, plot,
record, the two-Ctrl-Cs protocol), and the copies drifted apart in their columns and their
messages. As stable-baselines3's ``common/`` owns ``learn()`` and an algorithm writes only
its update, a learner here writes its update and its settings and hands the rest to
:class:`Run`:

1. ``run = Run(learner, rules, out, total=..., unit=...)`` starts the clock;
2. ``with run.training(): while run.going(): ...`` trains (to ``total``, or a budget of
   training seconds), calling ``run.measure(f)``
   when :meth:`Run.due` says so (``f`` returns the exploitability, ``None`` where the game
   has no exact measure, and the mean return against each heuristic) and ``run.advance(n)``
   after each update. Ctrl-C (or SIGTERM) inside the block is a flag: :meth:`Run.going`
   turns false and the loop ends at its next check (a measure it stops is left out). A learner
   with more to say about each point than the curve holds (PSRO's population and mixture)
   gives ``details``, measured with the point and recorded beside it in ``run.json``;
3. ``run.finish(save, measure, record)`` saves the result and measures it once more unless
   the last measure is current or SIGTERM stopped the run, with Ctrl-C held (a second
   Ctrl-C skips only the measure), writes ``run.json`` and, after a Ctrl-C or SIGTERM,
   raises :class:`~hiddenhand.interrupt.Interrupted` carrying the curve.

A learner whose whole state pickles (its networks, optimisers, generators and the games in
progress) hands it to :meth:`Run.keep`, which writes it to ``state.pkl`` after every measure
and when the run stops, and which, asked to resume, puts back the one saved there: a run cut
by Ctrl-C, SIGTERM, a kill or a restarted machine goes on from its last save and, from a
save at a measure, trains exactly what it would have trained uncut.

Every run's curve is a list of :class:`Point`: what was done (``steps``: decisions, or
iterations for CFR), the training seconds, the exploitability (NashConv divided by the
number of players) and the mean return against each heuristic the run measured.
"""

from __future__ import annotations

import contextlib
import csv
import functools
import hashlib
import importlib
import io
import json
import pickle
import signal
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from tqdm.auto import tqdm

from hiddenhand.devices import machine
from hiddenhand.files import atomic_write, check_writable
from hiddenhand.global_rngs import global_states, set_global_states
from hiddenhand.interrupt import STOPPED_BY, HeldCtrlC, Interrupted, held_ctrl_c
from hiddenhand.training import plots


@dataclass(frozen=True)
class Point:
    """One measure of a run: ``steps`` done (decisions, or iterations where the run's unit
    says so), training ``seconds`` (measures excluded), ``exploitability`` (``None`` where
    the game has no exact measure) and the mean return ``against`` each heuristic."""

    steps: int
    seconds: float
    exploitability: float | None
    against: dict[str, float] = field(default_factory=dict)


Measure = Callable[[], tuple[float | None, dict[str, float]]]
"""What a run measures: the exploitability (or ``None``) and the returns against heuristics."""

STATE = "state.pkl"
"""The file in a run's output directory that holds what :meth:`Run.keep` saves."""

Kept = TypeVar("Kept")


class NotResumable(ValueError):
    """The state saved in a run's directory is not this run's to resume (another run's, other
    code's, or a damaged file): :meth:`Run.keep` names why. A caller that would rather train
    again from the start (the benchmark's ``resume``) catches it."""


def exact_measure(declared, rules, agent) -> float | None:
    """``declared.exact_exploitability(rules, agent)`` with torch's thread count kept. The
    first parallel measure in a process starts numba's OpenMP threading layer, which sets
    the OpenMP thread count that torch shares to every core: a one-thread network trained
    after it then ran on every core, and two runs side by side on two cores slowed each
    other many times over.

    Only a torch already imported is kept: a learner without a network never imports it,
    and importing it here, inside a measure that Ctrl-C may stop, let a press raise while
    torch's import was running Python from its C++ side, which cannot pass an exception
    through and aborted the process."""
    torch = sys.modules.get("torch")
    if torch is None:  # a learner without a network
        return declared.exact_exploitability(rules, agent)
    threads = torch.get_num_threads()
    try:
        return declared.exact_exploitability(rules, agent)
    finally:
        torch.set_num_threads(threads)


class Run:
    """The lifecycle of one training run; see the module docstring. ``learner`` names it in
    the bar, the plot's title and messages; ``unit`` is what ``steps`` count (``"decision"``
    or ``"iteration"``); ``details``, if given, is called off the clock after each measure
    and its dict recorded with the point in ``run.json``; ``seconds``, if given, is a budget
    of training seconds that ends the run (:meth:`going`) before ``total`` steps if it is
    spent first, so that learners are compared at equal training time."""

    def __init__(
        self,
        learner: str,
        rules,
        out: str | Path,
        total: int,
        unit: str = "decision",
        progress: bool = True,
        details: Callable[[], dict[str, Any]] | None = None,
        seconds: float | None = None,
    ) -> None:
        if seconds is not None and (
            isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 < seconds < float("inf")
        ):
            raise ValueError(f"seconds={seconds!r} is not allowed; allowed: a positive number of seconds, or None")
        self.learner, self.rules, self.total, self.unit, self.progress = learner, rules, total, unit, progress
        self.budget = seconds
        self._details = details
        self.details: list[dict[str, Any]] = []
        self.out = check_writable(out, "output directory", kind="dir")
        self.title = f"{learner} on {plots.describe(rules)}"
        self.curve: list[Point] = []
        self.steps, self.games, self.interrupted = 0, 0, False
        self.stopped_by = signal.SIGINT  # what interrupted the run: Ctrl-C, or SIGTERM
        self._seconds, self._since = 0.0, time.perf_counter()
        self._next_measure = 0
        self._bar: Any = None
        self._ctrl_c: HeldCtrlC | None = None  # Ctrl-C as a flag, while the training block runs
        self._measure_cut = False  # a Ctrl-C stopped a measure: finish does not start it again
        self._state_final = False  # state.pkl holds where a resumed run goes on: not written again
        self._kept: Any = None  # the learner whose state is saved (keep), and what the run is
        self._identity: dict[str, Any] = {}
        self.resumed: list[int] = []  # the steps at which the run was resumed

    @property
    def seconds(self) -> float:
        """Training seconds so far (measures and saving excluded)."""
        return self._seconds + (time.perf_counter() - self._since if self._since is not None else 0.0)

    def going(self) -> bool:
        """Whether the training loop goes on: fewer than ``total`` steps done and, with a
        budget of seconds, fewer training seconds spent than it allows."""
        if self.pressed():
            return False
        return self.steps < self.total and (self.budget is None or self.seconds < self.budget)

    def spent(self) -> float:
        """The share of the run's budget spent, 0 to 1: of its steps, or of its training
        seconds where it has a budget of them, whichever is further. A schedule that anneals
        over the run (a learning rate) reads this, so that it reaches its end when the run
        does, also when seconds end it long before its steps would."""
        share = self.steps / self.total
        if self.budget is not None:
            share = max(share, self.seconds / self.budget)
        return min(1.0, share)

    def pressed(self) -> bool:
        """Whether Ctrl-C was pressed in the training block: for a learner whose batch is
        long and runs in Python (PSRO's oracle plays a thousand games an iteration), which
        may cut the batch short by raising ``KeyboardInterrupt`` from its own loop."""
        return self._ctrl_c is not None and self._ctrl_c.pressed

    def due(self, every: int) -> bool:
        """Whether a measure is due: at the start, then each time ``every`` more steps are done."""
        if self.steps < self._next_measure:
            return False
        self._next_measure = self.steps - self.steps % every + every
        return True

    def measure(self, measure: Measure) -> Point | None:
        """Stop the clock, measure, append the point, rewrite the curve's files, restart.
        In the training block Ctrl-C stops the measure (an exact one at 10 cards takes
        minutes): then no point is added, ``None`` is returned and the loop ends."""
        self._stop()
        if self._ctrl_c is None:
            exploitability, against = measure()
        else:
            (exploitability, against), self._measure_cut = self._ctrl_c.unless_interrupted(measure, (None, {}))
            if self._measure_cut:  # a resumed run goes on from here, measuring first
                self._next_measure = self.steps
                self._save_state()
                self._state_final = True  # not the update the loop may still make before it ends
                self._since = time.perf_counter()
                return None
        self.curve.append(Point(self.steps, self._seconds, exploitability, dict(against)))
        self.details.append(self._details() if self._details else {})
        write_curve(self.out, self.curve, self.title, self.unit)
        self._save_state()
        if self._bar is not None and exploitability is not None:
            self._bar.set_postfix(exploitability=f"{exploitability:.4g}")
        self._since = time.perf_counter()
        return self.curve[-1]

    def advance(self, steps: int, games: int = 0) -> None:
        """Count ``steps`` (and ``games``) more as done."""
        self.steps += steps
        self.games += games
        if self._bar is not None:
            self._bar.update(steps)

    @contextlib.contextmanager
    def training(self) -> Iterator[None]:
        """The training loop's block: a progress bar, and Ctrl-C or SIGTERM as a flag that
        ends the loop (:meth:`going`) at the next batch, so that it never lands inside a
        learner's compiled section; the result is then saved (and after Ctrl-C measured) by
        :meth:`finish`. A ``KeyboardInterrupt`` that still reaches the block (raised by a
        library, or where signals are not ours to handle: outside the main thread) ends it
        the same way."""
        # Ctrl-C is a flag before the bar shows: once a user sees the bar, it is.
        with held_ctrl_c(raise_after=False, sigterm=True) as self._ctrl_c:
            bar = tqdm(total=self.total, initial=self.steps, desc=self.title, disable=not self.progress, unit=self.unit)
            with bar:
                self._bar = bar
                try:
                    yield
                except KeyboardInterrupt:
                    self._ctrl_c.pressed = True
                    self._state_final = True  # raised inside an update, perhaps: the last save stands
                finally:
                    self._bar = None
                self.interrupted, self.stopped_by = self._ctrl_c.pressed, self._ctrl_c.signum
                if self.interrupted:
                    measuring = not self._measure_cut and self.stopped_by == signal.SIGINT
                    then = "saving, then measuring (Ctrl-C skips that)" if measuring else "saving"
                    by = STOPPED_BY[self.stopped_by]
                    bar.write(f"interrupted by {by} after {self.steps} {self.unit}s: {then}")
        self._ctrl_c = None

    def finish(self, save: Callable[[], None], measure: Measure | None, record: dict[str, Any]) -> list[Point]:
        """Save (``save()``), measure once more unless the last point is current or SIGTERM
        stopped the run (``measure`` ``None``: never), write ``run.json`` (``record`` plus
        what every run records) and, if the run was interrupted, raise
        :class:`~hiddenhand.interrupt.Interrupted`. Ctrl-C and SIGTERM are held throughout:
        a second one skips only the measure."""
        self._stop()
        with held_ctrl_c(sigterm=True) as ctrl_c:
            save()
            current = self._measure_cut or (self.curve and self.curve[-1].steps == self.steps)
            terminated = self.interrupted and self.stopped_by == signal.SIGTERM
            measured = None
            if measure is not None and not current and not terminated:
                measured, skipped = ctrl_c.unless_interrupted(lambda: self.measure(measure))
                if skipped and not self.interrupted:
                    self.interrupted, self.stopped_by = True, ctrl_c.signum
            if measured is None:  # a measure saves the state itself
                self._save_state()
            self._stop()
            info = {"game": record.pop("game", None) or self.rules.name, "params": self.rules.params}
            info |= {"learner": self.learner, **record, "unit": self.unit, "steps": self.steps, "games": self.games}
            info |= {"seconds": self._seconds, "interrupted": self.interrupted, "resumed": self.resumed}
            info["code"] = code_version()
            info["machine"] = machine()
            with atomic_write(self.out / "run.json", "w") as handle:
                points = [asdict(p) | more for p, more in zip(self.curve, self.details)]
                json.dump({**info, "curve": points}, handle, indent=2)
            if self.interrupted:
                done = f"after {self.steps} of {self.total} {self.unit}s" if self.steps else "before any training"
                kept = "results" if self.steps else "the untrained policy and run.json"
                if self._kept is not None:
                    kept += ", and the state to resume from,"
                by = STOPPED_BY[self.stopped_by]
                raise Interrupted(
                    f"{self.learner} stopped by {by} {done}; {kept} in {self.out}", self.curve, self.stopped_by
                )
        return self.curve

    def keep(self, learner: Kept, identity: dict[str, Any], resume: bool = False) -> Kept:
        """Save ``learner`` (pickled whole, with the global generators' states and the run's
        count, clock and curve) to ``state.pkl`` in the output directory after every measure
        and when the run stops; return the learner to train. That is ``learner`` itself,
        unless ``resume`` is set and the directory holds a saved state: then it is the saved
        learner, the run goes on from where the save left it, and the steps at which it went
        on are recorded (``resumed`` in ``run.json``). ``identity`` is what else makes the
        run the one it is (its settings, seed, device): a saved run that differs from this
        one in any of it, in its game, budget or learner, or in the code that trains
        (:func:`code_version`), is refused with :class:`NotResumable` naming each difference,
        as is a file that cannot be read. Without a saved state, ``resume`` trains from the
        start. Call it before training.

        The file is a pickle, read back only by ``resume``: resume runs of your own. Its
        first record, the run's identity and count (:func:`saved`), is compared before the
        learner is read, so that a state saved by other code is refused rather than half
        read. A ``KeyboardInterrupt`` that reaches the training block from inside an update
        (:meth:`training`) may leave the learner torn: the save at the last measure is then
        kept. A measure that Ctrl-C cuts is saved as due, so that a resumed run takes it
        first."""
        self._kept = learner
        self._identity = json.loads(json.dumps(identity | self._what()))
        path = self.out / STATE
        if resume and path.exists():
            learner = self._resumed(path)
        elif resume and self.progress:
            print(f"nothing saved in {self.out} to resume: training from the start", file=sys.stderr)
        self._since = time.perf_counter()  # reading the state, and the code's digest, off the clock
        return learner

    def _resumed(self, path: Path) -> Any:
        """The learner saved at ``path``, with the run's count, clock, curve and the global
        generators put back as they were saved (:meth:`keep`)."""
        header = saved(self.out)
        if header is None:
            raise NotResumable(f"cannot resume the run saved in {self.out}: {path} cannot be read")
        differences = [
            f"{name} {json.dumps(header['identity'].get(name))} (here {json.dumps(value)})"
            for name, value in self._identity.items()
            if header["identity"].get(name) != value
        ]
        if differences:
            code = " (code: the digest of the sources that train; resume with the hiddenhand that started the run)"
            raise NotResumable(
                f"cannot resume the run saved in {self.out}: it differs from this one in "
                + "; ".join(differences)
                + (code if header["identity"].get("code") != self._identity["code"] else "")
            )
        try:
            with open(path, "rb") as handle:
                pickle.load(handle)  # the header, read above
                state = pickle.load(handle)
            learner, generators = state["learner"], state["generators"]
            set_global_states(generators)
            for name, value in state["run"].items():
                setattr(self, name, value)
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, KeyError, TypeError, ValueError) as err:
            raise NotResumable(f"cannot resume the run saved in {self.out}: {path} cannot be read ({err!r})") from None
        self._kept = learner
        self.resumed.append(self.steps)
        if self.progress:
            print(f"resuming the run saved in {self.out} after {self.steps} {self.unit}s", file=sys.stderr)
        return learner

    def _what(self) -> dict[str, Any]:
        """What makes a run the run it is, beyond a learner's own ``identity`` (:meth:`keep`)."""
        what = {"learner": self.learner, "game": self.rules.name, "params": self.rules.params, "unit": self.unit}
        return what | {"steps": self.total, "seconds": self.budget, "code": code_version()}

    def _save_state(self) -> None:
        """Write what :meth:`keep` holds, with the clock stopped; nothing where it holds nothing
        or the state saved is where a resumed run must go on (:meth:`keep`)."""
        if self._kept is None or self._state_final:
            return
        fields = ("steps", "games", "_seconds", "curve", "details", "_next_measure", "resumed")
        run = {name: getattr(self, name) for name in fields}
        header = {"identity": self._identity, "steps": self.steps, "seconds": self._seconds}
        state = {"run": run, "generators": global_states(), "learner": self._kept}
        with atomic_write(self.out / STATE, "wb") as handle:
            for record in (header, state):
                pickle.dump(record, handle, protocol=pickle.HIGHEST_PROTOCOL)

    def _stop(self) -> None:
        if self._since is not None:
            self._seconds += time.perf_counter() - self._since
            self._since = None


def saved(out: str | Path) -> dict[str, Any] | None:
    """The first record of the state saved in ``out`` (:meth:`Run.keep`): ``identity``, what
    makes the run the one it is (its ``steps`` and ``seconds`` are its budget), ``steps`` and
    ``seconds``, how far it had come, and ``finished``, whether that is the end of its
    budget; ``None`` where nothing is saved or the file cannot be read. Only this record is
    read, not the learner."""
    try:
        with open(Path(out) / STATE, "rb") as handle:
            header = pickle.load(handle)
        budget = header["identity"]
        ended = header["steps"] >= budget["steps"] or (
            budget["seconds"] is not None and header["seconds"] >= budget["seconds"]
        )
        return header | {"finished": ended}
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, KeyError, TypeError, ValueError):
        return None


def finished(out: str | Path, rules, seed: int, total: int, settings: Any = None) -> list[Point] | None:
    """The curve of the run recorded in ``out`` (its ``run.json``) if that run finished (not
    cut by Ctrl-C) on these ``rules`` with this ``seed``, at least ``total`` steps and, given
    ``settings`` (a learner's settings dataclass), those settings recorded, else ``None``:
    what a resumed benchmark reads back instead of training again. The record must also
    carry today's :func:`code_version`: a learner whose update changed while its settings
    did not would otherwise be read back stale. A record it cannot read (damaged, or not
    one of ours) is ``None`` too: that run trains again."""
    try:
        record = json.loads((Path(out) / "run.json").read_text())
        same = record["game"] == rules.name and record["params"] == json.loads(json.dumps(rules.params))
        if settings is not None and record["settings"] != json.loads(json.dumps(asdict(settings))):
            return None
        if not same or record["seed"] != seed or record["interrupted"] or record["steps"] < total:
            return None
        if record.get("code") != code_version():
            return None
        return [Point(p["steps"], p["seconds"], p["exploitability"], p.get("against", {})) for p in record["curve"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None


PACKAGES = ("hiddenhand", "hiddenhand.envs", "hiddenhand.agents", "hiddenhand.training")
"""The packages whose sources make a run's result (the wheel's four roots, setup.py)."""

UNRELATED = (
    "hiddenhand.cli",
    "hiddenhand.training.benchmark",
    "hiddenhand.training.goofspiel_full_game",
    "hiddenhand.training.plots",
)
"""Modules left out of :func:`code_version` (each with the modules under it): the command
line, the benchmark (the package, and the section a game adds to it) and the plots shape
which runs are made and how results are shown, not what a run learns (its rules, seed,
length and settings are checked on their own), and editing them should not make a resumed
benchmark train everything again."""


@functools.cache
def code_version() -> str:
    """A digest of the installed sources that a training run's result depends on (every
    module of :data:`PACKAGES` but :data:`UNRELATED`), recorded in ``run.json`` so that
    :func:`finished` reads back only runs made by the code that runs now. A digest rather
    than the package version: between releases (an editable install, a development
    checkout) the version does not move while the code does."""
    roots = [(name, Path(importlib.import_module(name).__file__).parent) for name in PACKAGES]
    return source_digest(roots, UNRELATED)


def source_digest(roots: list[tuple[str, Path]], skip: tuple[str, ...] = ()) -> str:
    """SHA-256 (16 hex digits) of every ``.py`` file under the ``(package, folder)`` roots,
    each named as the module it is, skipping the modules in ``skip`` and everything under
    them. A file reached from two roots (an installed wheel nests ``envs/`` inside
    ``hiddenhand/``) counts once."""
    modules: dict[str, bytes] = {}
    for package, folder in roots:
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            name = ".".join((package, *parts[:-1])) if parts[-1] == "__init__" else ".".join((package, *parts))
            if not any(name == x or name.startswith(x + ".") for x in skip):
                modules[name] = path.read_bytes()
    digest = hashlib.sha256()
    for name in sorted(modules):
        digest.update(name.encode() + b"\0" + modules[name] + b"\0")
    return digest.hexdigest()[:16]


def write_curve(out: Path, curve: list[Point], title: str, unit: str = "decision") -> None:
    """``curve.csv`` (steps, seconds, exploitability, then ``vs_<heuristic>`` columns) and
    ``curve.png``, each written atomically."""
    names = list(curve[0].against)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["steps", "seconds", "exploitability", *(f"vs_{n}" for n in names)])
    for p in curve:
        figure = "" if p.exploitability is None else f"{p.exploitability:.6g}"
        writer.writerow([p.steps, f"{p.seconds:.3f}", figure, *(f"{p.against[n]:.4f}" for n in names)])
    with atomic_write(out / "curve.csv", "w") as handle:
        handle.write(buffer.getvalue())
    plots.save(curve_figure(curve, title, unit), out / "curve.png")


def curve_figure(curve: list[Point], title: str, unit: str = "decision"):
    """A run's curve: exploitability (log scale) against steps, and the mean return against
    each heuristic where the run measured it (a second panel only then). Decisions are on a
    linear axis, which keeps a learner's first measure, at 0 decisions, before training;
    iterations (CFR's, measured after each ``eval_every``) on a log axis, where a solver's
    power law is a straight line."""
    names = list(curve[0].against)
    fig, axes = plots.figure(2 if names else 1, title)
    xlabel, xlog = (plots.DECISIONS, False) if unit == "decision" else ("iterations", True)
    steps = [p.steps for p in curve]
    exact = [(p.steps, p.exploitability) for p in curve if p.exploitability is not None]
    plots.labels(axes[0], xlabel, plots.EXPLOITABILITY, xlog=xlog, ylog=bool(exact))
    if exact:
        plots.measured(axes[0], [x for x, _ in exact], [y for _, y in exact])
    else:
        axes[0].text(
            0.5, 0.5, "no exact equilibrium for this game", ha="center", va="center", transform=axes[0].transAxes
        )
    if names:
        plots.labels(axes[1], xlabel, "mean return against the heuristic", xlog=xlog)
        for n in names:
            plots.measured(axes[1], steps, [p.against[n] for p in curve], f"vs {n}")
    return fig


__all__ = [
    "Measure",
    "NotResumable",
    "Point",
    "Run",
    "STATE",
    "code_version",
    "curve_figure",
    "exact_measure",
    "finished",
    "saved",
    "source_digest",
    "write_curve",
]
