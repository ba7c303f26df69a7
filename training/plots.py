"""One figure style for every plot hiddenhand writes: the training curves of CFR, PPO and the
self-play learners (``curve.png``), the benchmark's panels and the EggHead experiment.

Why one module: each trainer used to draw its own way, and the plots disagreed on what they
showed. Here every figure gets the same panel size, fonts, markers and axis labels, and:

- a curve is drawn exactly as measured: a marker at every measured point and straight
  segments between consecutive ones, nothing interpolated, so a single measurement is a
  visible marker and a reader sees where the measurements are (a smooth fall drawn between
  two points would invent the ones in between);
- exploitability has one name and one label everywhere (:data:`EXPLOITABILITY`): NashConv
  divided by the number of players, the figure the benchmark's report gives;
- log axes get ticks that never crowd (:func:`log_axis`): decades over wide ranges, round
  numbers over narrow ones, where matplotlib labels every minor tick of a narrow range in
  scientific notation and the labels run into each other;
- the title is a configuration in words (:func:`describe`), wrapped to the figure's width,
  so that it is never clipped.

Figures are plain :class:`matplotlib.figure.Figure` objects (no pyplot state, no backend
switch), so drawing is separate from writing: tests read the Axes of a drawn figure back.
"""

from __future__ import annotations

import math
import os
import textwrap
from collections.abc import Sequence

from hiddenhand.core import Rules
from hiddenhand.files import write_figure

EXPLOITABILITY = "exploitability (NashConv / players)"
"""The y label of every exploitability plot: what a best response gains on average over the
seats, in the game's payoff units (half of NashConv with two players)."""
DECISIONS = "decisions trained on (environment steps)"
"""The x label of every learner's curve against training steps (CFR counts iterations instead)."""

PANEL = (5.4, 4.0)
"""Inches of one panel; a figure of ``n`` panels side by side is ``n`` times as wide."""
FONT, SMALL, TITLE = 9.0, 8.0, 10.0
"""Point sizes: axis labels, ticks and legends, the figure's title."""
MARKER, MARKER_SIZE, LINE_WIDTH = "o", 4.0, 1.3
LOG_FLOOR = 1e-6
"""Values at or below 0 cannot sit on a log axis: an exploitability below this (an exact
solution, rounding) is drawn at it."""


def describe(rules: Rules) -> str:
    """A configuration in words, for titles and the report's sections: the game's title, its
    number of players and the parameters that differ from the defaults, as the command line
    spells them (``Goofspiel, 2 players: cards 4, observation markov``). A game that is not
    registered is named by its rules' name."""
    from hiddenhand.registry import game_of

    try:
        game = game_of(rules)
        title, options = game.title, game.options
    except ValueError:
        title, options = rules.name, {}
    defaults = type(rules).param_defaults()
    parts = []
    for name, value in rules.params.items():
        if name == "num_players" or (name in defaults and defaults[name] == value):
            continue
        flag = options[name].spelling(name) if name in options else name
        parts.append(f"{flag.lstrip('-').replace('-', ' ').replace('_', ' ')} {value}")
    head = f"{title}, {rules.num_players} players"
    return f"{head}: {', '.join(parts)}" if parts else head


def figure(panels: int, title: str):
    """A new figure of ``panels`` panels side by side; returns ``(figure, list of Axes)``.
    The title is wrapped to the figure's width (about 0.6 em a character, with a margin)."""
    from matplotlib.figure import Figure

    width, height = PANEL[0] * panels, PANEL[1]
    fig = Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(1, panels, squeeze=False)[0]
    per_line = max(20, int(width * 72 / (TITLE * 0.6)) - 4)
    fig.suptitle(textwrap.fill(title, per_line), fontsize=TITLE)
    for ax in axes:
        ax.tick_params(labelsize=SMALL)
        ax.grid(True, which="major", alpha=0.3)
    return fig, list(axes)


def measured(ax, xs: Sequence[float], ys: Sequence[float], label: str | None = None, color: str | None = None):
    """Draw measured points: a marker at each, straight segments between consecutive ones.
    On a log axis, points at ``x <= 0`` cannot be drawn and are left out, and ``y`` below
    :data:`LOG_FLOOR` is drawn at it. Returns the line (its data are the points drawn)."""
    points = list(zip(xs, ys))
    if ax.get_xscale() == "log":
        points = [(x, y) for x, y in points if x > 0]
    if ax.get_yscale() == "log":
        points = [(x, max(y, LOG_FLOOR)) for x, y in points]
    (line,) = ax.plot(
        [x for x, _ in points],
        [y for _, y in points],
        marker=MARKER,
        markersize=MARKER_SIZE,
        linewidth=LINE_WIDTH,
        color=color,
        label=label,
    )
    return line


def reference(ax, value: float, label: str, color: str) -> None:
    """A reference level (a heuristic's exploitability, say) as a dashed horizontal line."""
    if ax.get_yscale() == "log":
        value = max(value, LOG_FLOOR)
    ax.axhline(value, linestyle="--", linewidth=1.0, color=color, alpha=0.7, label=label)


def labels(ax, xlabel: str, ylabel: str, xlog: bool = False, ylog: bool = False) -> None:
    """Axis labels in the figure font, and log axes with readable ticks. Call before
    :func:`measured`, which reads the scales."""
    ax.set_xlabel(xlabel, fontsize=FONT)
    ax.set_ylabel(ylabel, fontsize=FONT)
    if xlog:
        log_axis(ax, "x")
    if ylog:
        log_axis(ax, "y")


def log_axis(ax, which: str) -> None:
    """A log scale on ``ax``'s ``which`` axis (``"x"`` or ``"y"``) whose major ticks never
    crowd (``_Readable``) and whose minor ticks are unlabelled."""
    from matplotlib import ticker

    getattr(ax, f"set_{which}scale")("log")
    axis = getattr(ax, f"{which}axis")
    axis.set_major_locator(_readable_locator())
    axis.set_major_formatter(ticker.FuncFormatter(lambda value, _: number(value)))
    axis.set_minor_formatter(ticker.NullFormatter())


def number(value: float) -> str:
    """A tick label: plain between 0.001 and a million (``0.05``, ``2.25``, ``100,000``), a
    power of ten or ``2e-5`` outside."""
    if value == 0 or 1e-3 <= abs(value) < 1e6:
        return f"{value:,g}"
    exponent = math.floor(math.log10(abs(value)))
    mantissa = value / 10**exponent
    if math.isclose(mantissa, 1.0):
        return f"$10^{{{exponent}}}$"
    return f"{mantissa:.2g}e{exponent}"


def _readable_locator():
    from matplotlib import ticker

    class _Readable(ticker.Locator):
        """Major ticks of a log axis: decades when the view spans more than two, 1-2-5
        multiples when at least two of them fall inside it, else a few round numbers evenly
        spaced (a narrow range, as an MCCFR run's seconds from 2.3 to 2.8)."""

        def __call__(self):
            return self.tick_values(*self.axis.get_view_interval())

        def tick_values(self, vmin, vmax):
            lo, hi = sorted((vmin, vmax))
            if hi <= 0:
                return []
            lo = lo if lo > 0 else hi / 1000
            if math.log10(hi / lo) > 2:
                return ticker.LogLocator(base=10, numticks=7).tick_values(lo, hi)
            first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
            nice = [m * 10.0**e for e in range(first, last + 1) for m in (1, 2, 5)]
            nice = [t for t in nice if lo <= t <= hi]
            if len(nice) >= 2:
                return nice
            return [t for t in ticker.MaxNLocator(nbins=4).tick_values(lo, hi) if t > 0]

    return _Readable()


def save(fig, path: str | os.PathLike) -> None:
    """Legends on the panels that have labelled artists, then the PNG, written atomically."""
    for ax in fig.axes:
        if ax.get_legend_handles_labels()[1]:
            ax.legend(fontsize=SMALL)
    write_figure(fig, path)


__all__ = [
    "DECISIONS",
    "EXPLOITABILITY",
    "describe",
    "figure",
    "labels",
    "log_axis",
    "measured",
    "number",
    "reference",
    "save",
]
