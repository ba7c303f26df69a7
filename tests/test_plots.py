"""The figures every trainer and the benchmark draw (:mod:`hiddenhand.training.plots`): the
measured points and nothing between them, a visible marker for a single measurement, titles
that fit and say what they show, tick labels that do not run into each other, and one
exploitability with one label for CFR and the benchmark."""

import csv
import itertools

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgb

import hiddenhand
from hiddenhand.envs.goofspiel import GoofspielRules
from hiddenhand.training import plots
from hiddenhand.training.benchmark.report import figure as benchmark_figure
from hiddenhand.training.benchmark.runs import TrainedRun
from hiddenhand.training.cfr import CFRSettings, train_cfr
from hiddenhand.training.run import Point, curve_figure

GAMES = sorted(hiddenhand.games())  # ours and the example's Kuhn poker (tests/conftest.py)


def tiny(name):
    game = hiddenhand.games()[name]
    return game.rules(**game.env.configurations["tiny"])


def draw(fig):
    """Render ``fig`` as the PNG writer does; returns the canvas."""
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas


def points(line):
    return [(float(x), float(y)) for x, y in line.get_xydata()]


def curves(ax):
    """The measured curves of a panel (the references are dashed)."""
    return [line for line in ax.get_lines() if line.get_linestyle() == "-"]


def test_the_benchmark_draws_every_seeds_measured_points_and_nothing_between():
    runs = [
        TrainedRun("cfr+", 0, None, [(10, 0.5, 0.4), (20, 1.0, 0.1)]),
        TrainedRun("mmd", 0, None, [(0, 0.001, 2.5), (1000, 2.0, 1.2), (2000, 4.0, 0.9)]),
        TrainedRun("mmd", 1, None, [(0, 0.002, 2.5), (1000, 2.5, 1.1), (2000, 5.0, None)]),  # last one unmeasured
    ]
    fig = benchmark_figure(GoofspielRules(num_cards=4), runs, {"equilibrium": 0.0, "random": 2.5})
    seconds, decisions = fig.axes
    assert [points(line) for line in curves(seconds)] == [
        [(0.5, 0.4), (1.0, 0.1)],
        [(0.001, 2.5), (2.0, 1.2), (4.0, 0.9)],
        [(0.002, 2.5), (2.5, 1.1)],
    ]
    # CFR's iterations are not decisions; 0 decisions has no place on a log axis.
    assert [points(line) for line in curves(decisions)] == [[(1000, 1.2), (2000, 0.9)], [(1000, 1.1)]]
    for ax in (seconds, decisions):
        assert ax.get_xscale() == ax.get_yscale() == "log"
        assert all(line.get_marker() == plots.MARKER for line in curves(ax))
        mmd = [line for line in curves(ax) if line.get_color() == curves(ax)[-1].get_color()]
        assert len(mmd) == 2  # one colour per method, every seed drawn
        assert [line.get_label() for line in mmd][0] == "mmd (2 seeds)"
        (dashed,) = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
        assert dashed.get_label() == "random" and dashed.get_ydata()[0] == 2.5  # no line for the equilibrium


@pytest.mark.parametrize(
    "fig",
    [
        lambda: curve_figure([Point(100, 0.96, 0.0454)], "cfr+ on one point", unit="iteration"),
        lambda: curve_figure([Point(0, 0.0, None), Point(2048, 1.5, 0.8)], "final measure only"),
    ],
    ids=["cfr", "ppo"],
)
def test_a_single_measurement_is_a_visible_marker(fig):
    fig = fig()
    canvas = draw(fig)
    image = np.asarray(canvas.buffer_rgba())[:, :, :3].astype(int)
    ax = fig.axes[0]
    (line,) = curves(ax)
    ((x, y),) = points(line)
    column, row = ax.transData.transform((x, y))
    row = image.shape[0] - int(round(row))
    patch = image[row - 8 : row + 9, int(round(column)) - 8 : int(round(column)) + 9]
    colour = np.array(to_rgb(line.get_color())) * 255
    assert np.all(np.abs(patch - colour) < 60, axis=-1).sum() >= 15  # a filled marker, not a speck


@pytest.mark.parametrize("game", GAMES)
def test_titles_fit_inside_the_figure_and_name_the_learner(game):
    rules = tiny(game)
    titles = [f"self-play MMD on {plots.describe(rules)}", f"OpenSpiel NFSP on {rules!r}"]  # the second is long
    for title in titles:
        fig = curve_figure([Point(0, 0.0, 1.0), Point(2048, 1.5, 0.8)], title)  # one panel: narrowest
        renderer = draw(fig).get_renderer()
        box, frame = fig._suptitle.get_window_extent(renderer), fig.bbox
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1, title
        assert fig._suptitle.get_text().replace("\n", " ") == title


@pytest.mark.parametrize("game", GAMES)
def test_a_configuration_is_described_in_words(game):
    rules = tiny(game)
    declared = hiddenhand.games()[game]
    text = plots.describe(rules)
    assert text.startswith(f"{declared.title}, {rules.num_players} players")
    assert "Rules(" not in text and "=" not in text
    defaults = type(rules).param_defaults()
    for name, value in rules.params.items():
        if name != "num_players" and defaults.get(name) != value:
            assert f" {value}" in text, name
    markov = GoofspielRules(num_cards=4, observation="markov")
    assert plots.describe(markov) == "Goofspiel, 2 players: cards 4, observation markov"


@pytest.mark.parametrize("game", GAMES)
def test_cfr_plots_exploitability_as_the_benchmark_does(game, tmp_path):
    """The CFR plot's values are the curve's exploitability column (NashConv / players, so a
    third of it for three-player EggHead: tests/test_conformance.py checks the NashConv)
    against iterations, both axes logarithmic, under the label the benchmark's panels use."""
    rules = tiny(game)
    curve = train_cfr(rules, eval_every=2, progress=False, steps=6, out=tmp_path, settings=CFRSettings("cfr+"))
    with open(tmp_path / "curve.csv") as handle:
        rows = [{k: float(v) for k, v in row.items()} for row in csv.DictReader(handle)]
    fig = curve_figure(curve, "cfr+", unit="iteration")
    (iterations,) = fig.axes
    expected = [max(r["exploitability"], plots.LOG_FLOOR) for r in rows]
    assert [y for _, y in points(curves(iterations)[0])] == pytest.approx(expected, rel=1e-5)
    assert [x for x, _ in points(curves(iterations)[0])] == [r["steps"] for r in rows] == [2, 4, 6]
    assert iterations.get_xscale() == iterations.get_yscale() == "log" and iterations.get_xlabel() == "iterations"
    benchmark = benchmark_figure(
        rules, [TrainedRun("cfr+", 0, None, [(p.steps, p.seconds, p.exploitability) for p in curve])], {}
    )
    labels = {ax.get_ylabel() for ax in (*fig.axes, *benchmark.axes)}
    assert labels == {plots.EXPLOITABILITY} and "NashConv" not in labels


@pytest.mark.parametrize(
    "seconds, exploitability",
    [
        ((2.26, 2.8), (1.2, 0.32)),
        ((0.0008, 40.0), (2.5, 0.008)),
        ((0.5, 13.5), (0.1, 0.0016)),
        ((15.0, 200.0), (3.1, 2.7)),
        ((1.0, 1.0), (0.5, 0.5)),
    ],
    ids=["mccfr-narrow", "benchmark-wide", "cfr", "one-decade-and-a-bit", "flat"],
)
def test_log_axis_labels_are_readable_and_never_overlap(seconds, exploitability):
    curve = [
        Point(int(i), float(s), float(e))
        for i, s, e in zip(np.geomspace(300, 3000, 10), np.geomspace(*seconds, 10), np.geomspace(*exploitability, 10))
    ]
    run = TrainedRun("mmd", 0, None, [(p.steps, p.seconds, p.exploitability) for p in curve])
    figures = [curve_figure(curve, "ticks", unit="iteration"), benchmark_figure(GoofspielRules(num_cards=4), [run], {})]
    for fig, ax in ((figure, ax) for figure in figures for ax in figure.axes):
        renderer = draw(fig).get_renderer()
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            shown = [
                t
                for t in axis.get_majorticklabels()
                if t.get_text() and low <= t.get_position()[axis is ax.yaxis] <= high
            ]
            assert len(shown) >= 2, [t.get_text() for t in shown]
            assert not any(t.get_text() for t in axis.get_minorticklabels())
            boxes = [t.get_window_extent(renderer) for t in shown]
            for a, b in itertools.combinations(boxes, 2):
                assert not a.overlaps(b), [t.get_text() for t in shown]


def test_tick_labels_are_plain_numbers_within_reason():
    values = (0.05, 2.25, 1000, 100_000, 1e-5, 2e-5, 1e6)
    assert [plots.number(v) for v in values] == ["0.05", "2.25", "1,000", "100,000", "$10^{-5}$", "2e-5", "$10^{6}$"]
