"""The main job end to end on a tiny budget: every method trains, every agent is measured,
the report and the plots are written."""

import csv
import importlib.metadata
import json
import os
import platform
import re
from pathlib import Path

import pytest
from conftest import killed_at_update

import hiddenhand
import hiddenhand.training.benchmark as benchmark
from hiddenhand.agents import load_agent
from hiddenhand.interrupt import Interrupted
from hiddenhand.training import cfr, ppo_pool
from hiddenhand.training.benchmark import Budget, run_benchmark, runs
from hiddenhand.training.run import Point

TINY = Budget(
    cfr_iterations=10,
    mccfr_iterations=100,
    ppo_steps=1024,
    evaluations=2,
    games=20,
    many_cfr_iterations=5,
    tournament_games=6,
    small=True,
    learner_steps=600,
    learners=("mmd",),
    seeds=2,
    workers=2,
    name="tiny",
)


pytestmark = pytest.mark.xdist_group("benchmark")  # one worker, so the tiny run below is made once


_TINY_RUN: list[tuple] = []


@pytest.fixture
def tiny_run(tmp_path_factory):
    """One tiny benchmark for the tests that read its output: ``(directory, report)``. Kept
    in a module variable rather than a module-scoped fixture: a pytest-xdist worker whose
    queue runs dry tears its fixtures down, and the run, the slowest step of the suite, was
    made twice."""
    if not _TINY_RUN:
        out = tmp_path_factory.mktemp("benchmark")
        _TINY_RUN.append((out, run_benchmark(TINY, out, seed=0, progress=False)))
    return _TINY_RUN[0]


def test_benchmark_on_a_tiny_budget(tiny_run):
    tmp_path, report = tiny_run
    assert (tmp_path / "REPORT.md").read_text() == report
    plots = {p.name for p in tmp_path.glob("*.png")}
    for config in ("goofspiel_num_cards=4", "goofspiel_num_cards=6", "spoof_objective=round", "spoof_observation"):
        (name,) = [p for p in plots if p.startswith(config)]
        assert (tmp_path / name).stat().st_size > 10_000
    summary = json.loads((tmp_path / "summary.json").read_text())
    goofspiel = next(rows for title, rows in summary["games"].items() if title.startswith("GoofspielRules(num_cards=4"))
    by_agent = {row["agent"]: row for row in goofspiel}
    # hard reads the score, which the Markov observation hides: it is left out there
    assert set(by_agent) == {"cfr+", "mccfr-external", "ppo", "mmd", "equilibrium", "random", "easy", "medium"}
    assert by_agent["equilibrium"]["exploitability"] < 1e-9  # the exact solution, measured by the exact DP
    assert by_agent["random"]["exploitability"] > by_agent["cfr+"]["exploitability"]
    assert set(by_agent["mmd"]["against"]) == {"equilibrium", "random", "easy", "medium"}
    assert "every seating" in report and "EggHead, 3 players" in report
    # One record per run; every learned configuration has both seeds; each saved agent reloads
    # and measures as recorded.
    runs = summary["runs"]
    keys = {"game", "config", "method", "seed", "steps", "seconds", "exploitability", "exact", "path", "reused"}
    assert all(set(r) == keys and r["reused"] is False for r in runs)
    assert "Resumed" not in report
    learned = [r for r in runs if r["method"] == "mmd"]
    assert {(r["game"], r["seed"]) for r in learned} == {(g, s) for g in ("goofspiel", "spoof") for s in (0, 1)}
    assert len([r for r in learned if r["game"] == "goofspiel"]) == 4  # 4 and 6 cards
    for record in learned[:1] + [r for r in runs if r["method"] == "cfr+"][:1]:
        game = hiddenhand.games()[record["game"]]
        rules = game.rules(**record["config"])
        agent = load_agent(record["game"], record["path"])
        assert record["exact"] and game.exact_exploitability(rules, agent) == pytest.approx(
            record["exploitability"], abs=1e-9
        )


def sections(report: str) -> dict[str, list[str]]:
    """The report's ``## `` sections: title -> lines."""
    parts = re.split(r"^## (.+)$", report, flags=re.MULTILINE)
    return {title: body.strip().splitlines() for title, body in zip(parts[1::2], parts[2::2])}


def table(lines: list[str]) -> list[dict[str, str]]:
    """The Markdown table in ``lines`` as one dict per row, by column header."""
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in lines if line.startswith("|")]
    return [dict(zip(rows[0], row)) for row in rows[2:]]


def test_the_report_opens_with_how_to_read_it_and_what_ran(tiny_run):
    """A reader learns what exploitability means, each configuration's payoff scale, and
    what produced the numbers: the command, the seed, the versions and the machine."""
    _, report = tiny_run
    head = report.split("\n## ")[0]
    assert "- command: `run_benchmark(Budget(" in head and "name='tiny'" in head and "seed=0)`" in head
    for name in ("numpy", "torch", "open_spiel", "hiddenhand"):
        assert f"{name} {importlib.metadata.version(name)}" in head
    assert f"python {platform.python_version()}" in head
    import torch

    machine = next(line for line in head.splitlines() if line.startswith("- machine: "))
    assert f"{os.cpu_count()} CPUs" in machine and machine.endswith(platform.platform())
    assert f"torch CPU kernels {torch.backends.cpu.get_cpu_capability()}" in machine
    how = sections(report)["How to read this"]
    text = "\n".join(how)
    assert "**Exploitability** is what a best response gains" in text and "best measured" in text
    assert "- Spoof, 2 players: objective round: each player gets 0 to 1 a game; even play gets 0.5" in how
    assert (
        "- Goofspiel, 2 players: cards 4, observation markov: each player gets -10 to 10 a game; even play gets 0"
        in how
    )


def test_report_sections_are_titled_in_words(tiny_run):
    _, report = tiny_run
    assert "Rules(" not in report
    titles = list(sections(report))
    assert titles[:3] == [
        "How to read this",
        "Bid Spoof, 2 players: objective round",
        "Goofspiel, 2 players: cards 4, observation markov",
    ]
    assert "Bid Spoof, 3 players: coins 2, objective round (every seating)" in titles
    assert "EggHead, 3 players, one analyst (every seating)" in titles


def test_iterations_and_decisions_are_separate_columns_and_best_sits_beside_last(tiny_run):
    """CFR counts iterations, the learners decisions: each in its own column. Beside each
    learner's last exploitability, the best any seed measured, read back from the runs' curves."""
    out, report = tiny_run
    rows = {row["agent"]: row for row in table(sections(report)["Goofspiel, 2 players: cards 4, observation markov"])}
    assert rows["cfr+"]["iterations"] == "10" and rows["cfr+"]["decisions"] == ""
    assert rows["mccfr-external"]["iterations"] == "100" and rows["mccfr-external"]["decisions"] == ""
    assert rows["ppo"]["iterations"] == "" and rows["ppo"]["decisions"] == "1,024"
    assert rows["mmd"]["iterations"] == "" and int(rows["mmd"]["decisions"].replace(",", "")) >= 600
    assert rows["random"]["best measured (at)"] == "" and rows["random"]["exploitability (last)"] == "2.5000"
    summary = json.loads((out / "summary.json").read_text())
    for method in ("cfr+", "mccfr-external", "ppo", "mmd"):
        paths = [r["path"] for r in summary["runs"] if r["method"] == method and r["config"].get("num_cards") == 4]
        measured = []
        for path in paths:
            with open(f"{path}/curve.csv") as handle:
                for point in csv.DictReader(handle):
                    if point["exploitability"]:
                        step = point.get("iteration") or point.get("steps")
                        measured.append((float(point["exploitability"]), int(step)))
        best, at = min(measured)
        shown, shown_at = re.fullmatch(r"(\S+) \(at (\S+)\)", rows[method]["best measured (at)"]).groups()
        assert float(shown) == pytest.approx(best, abs=1e-4) and shown_at == f"{at:,}"
        last = float(rows[method]["exploitability (last)"].split()[0])
        assert best <= last + 5e-5


def test_the_three_player_cfr_run_has_a_curve(tiny_run):
    """The tournament's CFR+ run is measured along the way, so its plot is a curve, not a dot."""
    out, _ = tiny_run
    (curve,) = out.glob("bid_spoof_coins=2_objective=round/cfr+/curve.csv")
    with open(curve) as handle:
        assert len(list(csv.DictReader(handle))) >= TINY.evaluations


def test_ctrl_c_stops_the_whole_benchmark_and_reports_what_finished(tmp_path, monkeypatch):
    """Ctrl-C during the first PPO run: the CFR runs before it are on disk, the report is
    written and says where it was cut, and the benchmark does not go on to other games."""

    calls = []

    def interrupted_ppo(rules, **kwargs):
        calls.append(rules.name)
        raise KeyboardInterrupt

    monkeypatch.setattr(ppo_pool, "train_ppo", interrupted_ppo)
    with pytest.raises(Interrupted, match="benchmark stopped by Ctrl-C"):
        run_benchmark(TINY, tmp_path, seed=0, progress=False)
    assert len(calls) == 1  # nothing ran after the interruption
    report = (tmp_path / "REPORT.md").read_text()
    cut = report.split("Cut short by Ctrl-C")[1]
    assert cut.startswith(f"** while running {hiddenhand.games()[calls[0]].title}, 2 players")
    assert json.loads((tmp_path / "summary.json").read_text())["interrupted"] is True


def test_a_pool_stopped_at_once_trains_none_of_its_runs(tmp_path):
    """Closing the pool (as a Ctrl-C does) before its processes have taken a run: no run is
    trained, not even those the pool had already handed to a process, where cancelling
    their futures cannot reach them."""
    game = hiddenhand.games()["goofspiel"]
    entry = hiddenhand.Benchmark({"num_cards": 4, "observation": "markov"}, learn=True)
    budget = Budget(**{**vars(TINY), "learners": ("mmd",), "learner_steps": 2048, "seeds": 4, "workers": 2})
    learning = runs.LearnerRuns(budget, progress=False, resume=False)
    learning.start([(game.rules(**entry.params), entry, tmp_path)], seed=0)
    futures = [future for _, future in learning.jobs[tmp_path]]
    learning.close()
    assert len(futures) == 4 and all(f.cancelled() or isinstance(f.exception(), Interrupted) for f in futures)
    assert not list(tmp_path.rglob("run.json"))


def test_a_pool_run_stopped_by_ctrl_c_stops_the_runs_after_it(monkeypatch):
    """In a pool process: a run that Ctrl-C stops sets the benchmark's stop event, and a run
    asked for once it is set is not trained."""
    import threading

    calls = []

    def interrupted(*arguments):
        calls.append(arguments)
        raise Interrupted("stopped")

    monkeypatch.setattr(runs, "train_learner", interrupted)
    monkeypatch.setattr(runs, "_stopped", threading.Event())
    arguments = ("mmd", None, 10, Path("out"), 0, 10, False, False)
    with pytest.raises(Interrupted, match="stopped"):
        runs._pool_run(*arguments)
    assert runs._stopped.is_set()
    with pytest.raises(Interrupted, match="mmd into out: not started, the benchmark stopped"):
        runs._pool_run(*arguments)
    assert calls == [arguments]


def test_a_pool_process_hears_ctrl_c_between_runs_and_starts_none_after_it(monkeypatch):
    """Between runs a pool process takes Ctrl-C without dying (a dead process breaks the pool,
    which stops the other processes' runs by SIGTERM), and starts no run after it."""
    import signal
    import threading

    handlers = {}
    monkeypatch.setattr(signal, "getsignal", lambda signum: signal.default_int_handler)  # as after Python starts
    monkeypatch.setattr(signal, "signal", lambda signum, handler: handlers.setdefault(signum, handler))
    monkeypatch.setattr(runs, "train_learner", lambda *arguments: pytest.fail("a run started after Ctrl-C"))
    monkeypatch.setattr(runs, "_heard_ctrl_c", False)
    monkeypatch.setattr(runs, "_stopped", None)
    stopped = threading.Event()
    runs._pool_process(stopped)
    handlers[signal.SIGINT](signal.SIGINT, None)  # returns: the process lives on
    assert not stopped.is_set()  # set by the next run asked for, not inside the handler
    with pytest.raises(Interrupted, match="not started, the benchmark stopped"):
        runs._pool_run("mmd", None, 10, Path("out"), 0, 10, False, False)
    assert stopped.is_set()


def test_a_pool_process_of_a_benchmark_that_ignores_ctrl_c_ignores_it_too(monkeypatch):
    """Started under ``nohup`` (Ctrl-C ignored), a pool process keeps ignoring it."""
    import signal
    import threading

    monkeypatch.setattr(signal, "getsignal", lambda signum: signal.SIG_IGN)
    monkeypatch.setattr(signal, "signal", lambda signum, handler: pytest.fail("the ignored Ctrl-C was taken"))
    monkeypatch.setattr(runs, "_stopped", None)
    runs._pool_process(threading.Event())


def test_resume_reads_back_the_finished_runs_and_trains_only_the_rest(tiny_run, tmp_path, monkeypatch):
    """A copy of the tiny benchmark resumed: every finished run is read back, not trained; a
    run cut by Ctrl-C, one of another seed and one made with other settings are trained again; the agents are measured
    anew, so the figures match the first report's, and the report says what was read back."""
    import shutil
    from dataclasses import replace

    first, first_report = tiny_run
    out = tmp_path / "resumed"
    shutil.copytree(first, out)
    cut = out / "goofspiel_num_cards=4_observation=markov" / "mmd" / "seed1" / "run.json"
    cut.write_text(cut.read_text().replace('"interrupted": false', '"interrupted": true'))
    other = out / "spoof_observation=markov" / "mmd" / "seed0" / "run.json"
    other.write_text(other.read_text().replace('"seed": 0', '"seed": 7'))
    changed = out / "spoof_observation=markov" / "mmd" / "seed1" / "run.json"  # made with other settings
    assert '"ent_coef": 0.1,' in changed.read_text()
    changed.write_text(changed.read_text().replace('"ent_coef": 0.1,', '"ent_coef": 0.2,'))
    trained = []
    real = runs.train_learner
    monkeypatch.setattr(runs, "train_learner", lambda *a: trained.append(a[3]) or real(*a))

    def refuse(*args, **kwargs):
        raise AssertionError("a finished run was trained again")

    monkeypatch.setattr(cfr, "train_cfr", refuse)
    monkeypatch.setattr(ppo_pool, "train_ppo", refuse)
    report = run_benchmark(replace(TINY, workers=1), out, seed=0, progress=False, resume=True)
    assert sorted(trained) == sorted([cut.parent, other.parent, changed.parent])
    records = json.loads((out / "summary.json").read_text())["runs"]
    retrained = {str(cut.parent), str(other.parent), str(changed.parent)}
    assert all(r["reused"] is (r["path"] not in retrained) for r in records)
    assert f"**Resumed:** {len(records) - 3} of the {len(records)} training runs above were read back" in report
    assert ", resume=True)`" in report
    first_rows = table(sections(first_report)["Goofspiel, 2 players: cards 6, observation markov"])
    rows = table(sections(report)["Goofspiel, 2 players: cards 6, observation markov"])
    assert rows == first_rows  # read back and measured again: the same figures


def test_the_command_line_resumes_with_resume(tmp_path, monkeypatch):
    from hiddenhand.cli import main

    calls = []
    monkeypatch.setattr(benchmark, "run_benchmark", lambda *args, **kwargs: calls.append((args, kwargs)) or "")
    assert main(["benchmark", "--out", str(tmp_path), "--resume"]) == 0
    assert main(["benchmark", "--out", str(tmp_path)]) == 0
    assert [kwargs["resume"] for _, kwargs in calls] == [True, False]
    # A game's section declares the option that gives it a file: Goofspiel's --gops13.
    assert main(["benchmark", "--out", str(tmp_path), "--gops13", "gops13.npz"]) == 0
    assert calls[-1][1]["files"] == {"gops13": "gops13.npz"}


def test_finished_refuses_a_shorter_run_other_rules_other_code_or_a_damaged_record(tiny_run, tmp_path):
    from hiddenhand.training.run import code_version, finished

    out, _ = tiny_run
    path = out / "goofspiel_num_cards=4_observation=markov" / "cfr+"
    rules = hiddenhand.games()["goofspiel"].rules(num_cards=4, observation="markov")
    assert [p.steps for p in finished(path, rules, 0, TINY.cfr_iterations)][-1] == TINY.cfr_iterations
    assert finished(path, rules, 0, TINY.cfr_iterations + 1) is None
    assert finished(path, rules, 1, TINY.cfr_iterations) is None
    assert finished(path, hiddenhand.games()["goofspiel"].rules(num_cards=4), 0, TINY.cfr_iterations) is None
    assert finished(out / "no such run", rules, 0, 1) is None
    record = json.loads((path / "run.json").read_text())
    assert record["code"] == code_version()
    other = tmp_path / "other code"
    other.mkdir()
    (other / "run.json").write_text(json.dumps(record | {"code": "0" * 16}))  # made by another version
    assert finished(other, rules, 0, TINY.cfr_iterations) is None
    for damaged in ("{", "[]", '{"game": "goofspiel"}'):
        copy = tmp_path / "damaged"
        copy.mkdir(exist_ok=True)
        (copy / "run.json").write_text(damaged)
        assert finished(copy, rules, 0, 1) is None


def test_the_code_version_follows_the_sources_a_run_depends_on(tmp_path):
    """The digest that run.json records moves when a module that makes results changes (or
    appears), not when a skipped one does, and counts a file reached from two roots once
    (an installed wheel nests the subpackages inside ``hiddenhand/``)."""
    from hiddenhand.training.run import source_digest

    root = tmp_path / "pkg"
    (root / "training").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "training" / "learner.py").write_text("RATE = 0.1\n")
    (root / "training" / "report.py").write_text("TITLE = 'a'\n")
    roots = [("pkg", root)]
    skip = ("pkg.training.report",)
    before = source_digest(roots, skip)
    assert source_digest(roots + [("pkg.training", root / "training")], skip) == before
    (root / "training" / "report.py").write_text("TITLE = 'b'\n")
    assert source_digest(roots, skip) == before
    (root / "training" / "learner.py").write_text("RATE = 0.2\n")
    changed = source_digest(roots, skip)
    assert changed != before
    (root / "training" / "critic.py").write_text("")
    assert source_digest(roots, skip) != changed


def test_the_full_game_section_plays_the_heuristics_and_a_given_equilibrium(tmp_path):
    """The section Goofspiel declares for the full budget at 13 cards (``--gops13``), here at
    5 with a 5-card solution file: the learner trains on the Markov observation, has no
    exploitability (none is pretended), and plays every heuristic (hard included, which reads
    the score) and the equilibrium."""
    from dataclasses import replace

    from hiddenhand.registry import resolve
    from hiddenhand.solvers.goofspiel import solve

    game = hiddenhand.games()["goofspiel"]
    (section,) = game.benchmark_sections
    assert section.params == {"num_cards": 13} and section.option == "gops13"
    solution = solve(5, progress=False).save(tmp_path / "gops5.npz")
    budget = replace(TINY, big_steps=600, name="tiny")
    part = resolve(section.function)(game.rules(num_cards=5), budget, tmp_path, 0, str(solution), False, False)
    (record,) = part.runs
    assert record["exploitability"] is None and record["exact"] is False
    assert record["config"]["observation"] == "markov" and record["config"]["num_cards"] == 5
    assert record["path"] == str(tmp_path / "goofspiel_num_cards=5" / "mmd" / "seed0")
    played = part.results["goofspiel 5 cards"]
    assert set(played) == {"equilibrium", "random", "easy", "medium", "hard"}
    assert played["equilibrium"] <= 0.5  # an untrained network does not beat the equilibrium
    assert part.lines[0] == "## Goofspiel, 5 cards: mmd on the Markov observation"
    assert "No exact exploitability" in "\n".join(part.lines)


def test_only_runs_the_named_games_and_configurations(tmp_path, monkeypatch):
    """``only`` picks by game name and by directory name; the others are neither trained nor
    reported, the header lists only what ran, and the command to run it again names the part."""
    from hiddenhand.cli import main

    report = run_benchmark(TINY, tmp_path, seed=0, progress=False, only=["spoof_objective=round", "egghead"])
    assert [p.name for p in tmp_path.iterdir() if p.is_dir()] == ["spoof_objective=round"]
    assert [
        title for title in sections(report) if title.startswith(("Goofspiel", "Bid Spoof", "Spoof", "EggHead"))
    ] == [
        "Spoof, 2 players: objective round",
        "EggHead, 3 players, one analyst (every seating)",
    ]
    assert "only=['spoof_objective=round', 'egghead']" in report
    assert "- Goofspiel" not in report.split("## How to read this")[1].split("###")[0]
    calls = []
    monkeypatch.setattr(benchmark, "run_benchmark", lambda *args, **kwargs: calls.append(kwargs) or "")
    assert main(["benchmark", "--out", str(tmp_path), "--only", "goofspiel", "--only", "spoof"]) == 0
    assert calls[-1]["only"] == ["goofspiel", "spoof"]


def test_only_refuses_a_name_that_matches_nothing_before_any_work(tmp_path):
    with pytest.raises(
        ValueError,
        match=r"--only \['chess'\] names nothing the full budget runs; choose from .*"
        r"'goofspiel_num_cards=8_observation=markov'",
    ):
        run_benchmark("full", tmp_path / "out", progress=False, only=["goofspiel", "chess"])
    assert not (tmp_path / "out").exists()


def test_a_solution_file_of_another_size_is_refused_before_any_work(tmp_path):
    from hiddenhand.solvers.goofspiel import solve

    solution = solve(4, progress=False).save(tmp_path / "gops4.npz")
    with pytest.raises(ValueError, match="solves num_cards=4; the benchmark plays 13 cards"):
        run_benchmark("full", tmp_path / "out", files={"gops13": str(solution)}, progress=False)
    assert not (tmp_path / "out").exists()


def test_a_budget_with_rllib_is_refused_without_ray_before_any_work(tmp_path, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a))
    with pytest.raises(ValueError, match=r"the full budget trains rllib, which needs ray: pip install '.\[ray\]'"):
        run_benchmark("full", tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()


def test_each_learner_trains_for_its_share_of_the_budget(tmp_path, monkeypatch):
    """``learner_share`` scales one learner's decisions (the full budget halves NFSP's and
    PSRO's, which play about half as fast) on top of the configuration's ``steps_scale``,
    and ``configuration_share`` one learner's on one configuration, named by its directory;
    a learner they do not name trains the whole budget, and a name that is no learner is refused."""
    asked = {}

    def fake(method, rules, steps, out, seed, eval_every, progress, resume):
        asked[out.parent.parent.name, method] = (steps, eval_every)
        return [Point(steps, 1.0, 0.5)]

    monkeypatch.setattr(runs, "train_learner", fake)
    game = hiddenhand.games()["goofspiel"]
    entry = hiddenhand.Benchmark({"num_cards": 6, "observation": "markov"}, learn=True, steps_scale=2)
    budget = Budget(**{**vars(TINY), "learners": ("mmd", "nfsp"), "learner_share": {"nfsp": 0.25}, "seeds": 1})
    budget = Budget(**{**vars(budget), "workers": 1, "learner_steps": 1000, "evaluations": 4})
    budget = Budget(**{**vars(budget), "configuration_share": {"six": {"mmd": 1.5}}})
    rules = game.rules(**entry.params)
    learning = runs.LearnerRuns(budget, progress=False, resume=False)
    learning.start([(rules, entry, tmp_path / "six"), (rules, entry, tmp_path / "other")], seed=0)
    learned = learning.of(tmp_path / "six") + learning.of(tmp_path / "other")
    assert asked == {
        ("six", "mmd"): (3000, 750),
        ("six", "nfsp"): (500, 125),
        ("other", "mmd"): (2000, 500),
        ("other", "nfsp"): (500, 125),
    }
    assert [r.curve[-1][0] for r in learned] == [3000, 500, 2000, 500]
    wrong = Budget(**{**vars(TINY), "learner_share": {"dqn": 0.5}})
    with pytest.raises(ValueError, match=r"unknown learners \['dqn'\]"):
        run_benchmark(wrong, tmp_path, progress=False)


def test_the_pool_starts_every_configurations_runs_at_once_the_longest_first(tmp_path, monkeypatch):
    """With two workers every configuration's learner runs go to one pool when the benchmark
    starts, those given most beyond their learner's share first (a run on a larger
    configuration, or one the budget lengthens there), the others in the order of the
    configurations and the learners; the runs read back by ``resume`` are not submitted."""
    from concurrent.futures import Future

    submitted = []

    class Recording:
        def __init__(self, workers, mp_context, **initializer):
            assert workers == 2

        def submit(self, function, method, rules, steps, out, seed, eval_every, progress, resume):
            assert resume is True  # a cut run goes on where its learner resumes
            submitted.append((out.parent.parent.name, method, steps))
            future = Future()
            future.set_result([Point(steps, 1.0, 0.5)])
            return future

        def shutdown(self, wait, cancel_futures):
            submitted.append("shut down")

    monkeypatch.setattr(runs, "ProcessPoolExecutor", Recording)
    monkeypatch.setattr(runs, "read_back", lambda path, *args: [Point(7, 1.0, 0.5)] if path.name == "seed1" else None)
    game = hiddenhand.games()["goofspiel"]
    small = hiddenhand.Benchmark({"num_cards": 4, "observation": "markov"}, learn=True)
    large = hiddenhand.Benchmark({"num_cards": 6, "observation": "markov"}, learn=True, steps_scale=2)
    budget = Budget(**{**vars(TINY), "learners": ("mmd", "regret"), "learner_steps": 100, "seeds": 2})
    budget = Budget(**{**vars(budget), "configuration_share": {"six": {"regret": 3}}})
    configurations = [
        (game.rules(**small.params), small, tmp_path / "four"),
        (game.rules(**large.params), large, tmp_path / "six"),
    ]
    learning = runs.LearnerRuns(budget, progress=False, resume=True)
    learning.start(configurations, seed=0)
    assert submitted == [("six", "regret", 600), ("six", "mmd", 200), ("four", "mmd", 100), ("four", "regret", 100)]
    four = learning.of(tmp_path / "four")
    assert [(r.method, r.seed, r.reused, r.curve[-1][0]) for r in four] == [
        ("mmd", 0, False, 100),
        ("mmd", 1, True, 7),
        ("regret", 0, False, 100),
        ("regret", 1, True, 7),
    ]
    learning.close()
    assert submitted[-1] == "shut down"


def test_with_resume_a_cut_run_of_a_learner_that_resumes_goes_on_and_another_runs_state_is_trained_over(
    tmp_path, monkeypatch
):
    """``resume`` reads back finished runs, and a run cut in the middle (here killed after
    its measure at 2,048 decisions) goes on from its saved state and ends where the uncut
    run ends; a state saved by another run (another seed) is not resumed: that run trains
    from the start."""
    from hiddenhand.registry import get

    rules = get("goofspiel").rules(num_cards=3, observation="markov")
    straight = runs.train_learner("mmd-critic", rules, 4096, tmp_path / "straight", 0, 2048, False)
    with killed_at_update(monkeypatch, 1):
        runs.train_learner("mmd-critic", rules, 4096, tmp_path / "cut", 0, 2048, False)
    resumed = runs.train_learner("mmd-critic", rules, 4096, tmp_path / "cut", 0, 2048, False, True)
    assert [(p.steps, p.exploitability) for p in resumed] == [(p.steps, p.exploitability) for p in straight]
    assert json.loads((tmp_path / "cut" / "run.json").read_text())["resumed"] == [2048]
    other = runs.train_learner("mmd-critic", rules, 4096, tmp_path / "cut", 1, 2048, False, True)
    record = json.loads((tmp_path / "cut" / "run.json").read_text())
    assert record["resumed"] == [] and record["seed"] == 1 and other[0].steps == 0
