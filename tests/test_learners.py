"""The learner interface: every declared learner trains through one call and one command,
with every setting an option; a user's learner registers as ours do; the device choice."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, replace

import numpy as np
import pytest
from conftest import tiny

from hiddenhand.agents import RandomAgent, load_agent
from hiddenhand.agents.policy_agent import PolicyAgent
from hiddenhand.cli import main
from hiddenhand.devices import machine, torch_device
from hiddenhand.registry import games, get
from hiddenhand.training import learners as learners_module
from hiddenhand.training.evaluation import play_games
from hiddenhand.training.learners import Learner, learner, learners, setting_help
from hiddenhand.training.run import Run
from hiddenhand.vector import vector_env

MARKOV = {"num_cards": 3, "observation": "markov"}

TINY = {
    "cfr": {},
    "regret": {"games": 64},
    "mmd": {"games": 8, "batch": 256, "epochs": 1},
    "ppo-selfplay": {"games": 8, "batch": 256, "epochs": 1},
    "mmd-critic": {"games": 8, "batch": 256},
    "ppo": {"n_steps": 128, "snapshot_every": 128, "eval_games": 4},
    "nfsp": {"min_buffer_size_to_learn": 64, "batch_size": 32, "learn_every": 16},
    "psro": {"episodes_per_oracle": 30, "sims_per_entry": 8, "prd_iterations": 500, "min_buffer_size_to_learn": 32},
    "rllib": {"env_runners": 0, "envs_per_runner": 2, "batch": 256, "num_cpus": 1},
    "rllib-mmd-critic": {"env_runners": 0, "envs_per_runner": 2, "batch": 256, "num_cpus": 1, "epochs": 2},
}
"""Per declared learner, settings small enough for seconds."""

STEPS = {"cfr": 10, "psro": 600}


def _params(name: str) -> list:
    marks = [pytest.mark.xdist_group("ray")] if learner(name).requires == "ray" else []
    return [pytest.param(name, marks=marks, id=name)]


def _tiny_run(name: str, out, request, seed: int = 0, measures: int = 1) -> list:
    """A run of the declared learner ``name`` on 3-card Markov Goofspiel with its :data:`TINY`
    settings into ``out``, measured ``measures`` times; its curve. A learner on Ray gets the
    local test instance (and is skipped without Ray)."""
    if learner(name).requires == "ray":
        pytest.importorskip("ray")
        request.getfixturevalue("ray_local")
    declared = learner(name)
    rules = get("goofspiel").rules(**MARKOV)
    settings = replace(declared.settings_for(rules), **TINY[name])
    steps = STEPS.get(name, 512)
    return declared.run(
        rules,
        steps=steps,
        out=out,
        seed=seed,
        eval_every=steps // measures,
        settings=settings,
        progress=False,
        device="cpu",
    )


@pytest.mark.parametrize("name", [p for name in learners() for p in _params(name)])
def test_every_declared_learner_trains_through_the_one_call(name, tmp_path, request):
    steps = STEPS.get(name, 512)
    curve = _tiny_run(name, tmp_path, request)
    rules = get("goofspiel").rules(**MARKOV)
    record = json.loads((tmp_path / "run.json").read_text())
    assert record["steps"] >= steps and record["interrupted"] is False and record["machine"] == machine()
    assert record["game"] == "goofspiel" and record["params"]["num_cards"] == 3
    assert curve[-1].steps == record["steps"] and curve[-1].exploitability is not None
    agent = load_agent("goofspiel", str(tmp_path), rules.params)
    returns = play_games(rules, [agent, RandomAgent()], 4, seed=0)
    assert returns.shape == (4, 2) and np.all(returns.sum(axis=1) == 0)  # whole zero-sum games


def test_the_train_help_lists_every_learner_with_all_its_settings(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = capsys.readouterr().out
    for name in learners():
        assert name in text
    for name, declared in learners().items():
        with pytest.raises(SystemExit):
            main(["train", name, "goofspiel", "--help"])
        text = " ".join(capsys.readouterr().out.split())
        settings = declared.settings_for(get("goofspiel").rules())
        helps = setting_help(type(settings))
        for field in dataclasses.fields(settings):
            flag = "--" + field.name.replace("_", "-")
            assert flag in text, (name, flag)
            if field.name in helps:
                assert helps[field.name][:40] in text, (name, field.name)
        assert "--device" in text if declared.network else "--device" not in text
        assert ("--resume" in text) == declared.resumes, name
        assert "the learner's own for goofspiel's default rules" in text  # not those of every configuration


def test_a_setting_typed_on_the_command_line_reaches_the_run(tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["train", "regret", "goofspiel", "--cards", "3", "--observation", "markov", "--games", "64"]
    argv += ["--exploration", "0.25", "--no-canonical", "--steps", "2000", "--eval-every", "1000", "--out", str(out)]
    assert main(argv) == 0
    settings = json.loads((out / "run.json").read_text())["settings"]
    assert settings["exploration"] == 0.25 and settings["canonical"] is False and settings["games"] == 64
    assert settings["bootstrap"] is True  # the game's own, untouched
    assert capsys.readouterr().out.startswith("regret on goofspiel --cards 3 --players 2 --observation markov: ")


def test_a_bad_setting_is_refused_naming_the_option(tmp_path, capsys):
    argv = ["train", "regret", "goofspiel", "--exploration", "2", "--out", str(tmp_path / "x")]
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert "--exploration 2.0 is not allowed; allowed: a number more than 0, at most 1" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["train", "mmd", "goofspiel", "--hidden", "64,x", "--out", str(tmp_path / "y")])
    assert "argument --hidden" in capsys.readouterr().err


@dataclass(frozen=True)
class TemperatureSettings:
    """A user's learner's settings."""

    temperature: float = 1.0
    """How far from uniform the policy may stray."""


def _uniform_settings(rules):
    return TemperatureSettings()


def _train_uniform(
    rules, *, steps, out, seed=0, eval_every=1, settings=None, progress=True, seconds=None, device="auto"
):
    """A user's learner: plays uniformly, records its settings."""
    settings = settings or TemperatureSettings()
    run = Run("uniform", rules, out, total=steps, progress=progress, seconds=seconds)
    with run.training():
        while run.going():
            run.advance(steps)
    agent = PolicyAgent(rules.name, rules.params, {}, unseen="uniform")
    return run.finish(lambda: agent.save(run.out), None, {"settings": dataclasses.asdict(settings), "seed": seed})


def test_a_users_learner_registers_and_gets_the_command(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(learners_module, "_LEARNERS", dict(learners_module._LEARNERS))
    learners_module.register_learner(
        Learner("uniform", "a user's learner", "Plays uniformly.", _train_uniform, _uniform_settings, 10, 10)
    )
    with pytest.raises(SystemExit):
        main(["train", "uniform", "spoof", "--help"])
    assert "How far from uniform the policy may stray" in capsys.readouterr().out
    out = tmp_path / "u"
    assert main(["train", "uniform", "spoof", "--temperature", "0.5", "--out", str(out)]) == 0
    assert json.loads((out / "run.json").read_text())["settings"] == {"temperature": 0.5}
    with pytest.raises(TypeError, match="register_learner"):
        learners_module.register_learner("uniform")


def test_the_old_call_with_a_game_name_is_refused_with_the_new_one(tmp_path):
    with pytest.raises(TypeError, match=r"make them with hiddenhand.registry.get\('goofspiel'\).rules"):
        learner("regret").run("goofspiel", steps=10, out=tmp_path)


def test_the_device_choice(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert torch_device() == "cpu" and torch_device("cpu") == "cpu"
    with pytest.raises(ValueError, match="sees no GPU"):
        torch_device("cuda")
    with pytest.raises(ValueError, match="device='tpu' is not allowed; choose one of: auto, cpu, cuda, cuda:N"):
        torch_device("tpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert torch_device() == "cuda" and torch_device("cuda:0") == "cuda:0"
    with pytest.raises(ValueError, match="sees 1 GPU"):
        torch_device("cuda:1")


def test_the_machine_line_names_the_processor_and_torch_s_kernels(tmp_path):
    """What a run records of its machine, read from a two-processor ``/proc/cpuinfo``: the
    first entry's model, family and model number; torch's kernels once torch is loaded."""
    import os

    import torch

    cpuinfo = tmp_path / "cpuinfo"
    entry = "processor\t: {}\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: {}\nmodel name\t: {}\n"
    cpuinfo.write_text(entry.format(0, 143, "Intel Xeon") + "\n" + entry.format(1, 85, "Other"))
    kernels = torch.backends.cpu.get_cpu_capability()
    assert machine(cpuinfo) == f"Intel Xeon (family 6, model 143), {os.cpu_count()} CPUs, torch CPU kernels {kernels}"
    assert machine(tmp_path / "missing").endswith(f", {os.cpu_count()} CPUs, torch CPU kernels {kernels}")


def test_a_learner_of_openspiel_s_refuses_a_gpu(tmp_path):
    with pytest.raises(ValueError, match="device='cuda' is not allowed for train_nfsp"):
        learner("nfsp").run(get("goofspiel").rules(**MARKOV), steps=10, out=tmp_path, device="cuda")


@pytest.mark.parametrize("name", [n for n, d in learners().items() if d.network and n not in ("nfsp", "psro")])
def test_every_torch_learner_refuses_a_gpu_torch_cannot_see_before_training(name, tmp_path, monkeypatch):
    """``device="cuda"`` on a machine without one is the device check's error, raised before
    anything is trained or written; OpenSpiel's learners refuse any GPU (test above)."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match="sees no GPU"):
        learner(name).run(get("goofspiel").rules(**MARKOV), steps=10, out=tmp_path / "run", device="cuda")
    assert not (tmp_path / "run" / "run.json").exists()


def test_the_trained_best_responder_takes_the_device(monkeypatch):
    import torch

    from hiddenhand.training.best_response import approximate_exploitability

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match="sees no GPU"):
        approximate_exploitability(get("goofspiel").rules(num_cards=3), RandomAgent(), steps=10, device="cuda")


def test_a_learner_without_a_network_never_imports_torch(tmp_path):
    """Sampled regret matching's run, measures included, leaves torch unimported: a measure
    is where Ctrl-C may raise, and a press that landed in torch's import, while it ran Python
    from its C++ side, aborted the process (exit -6 instead of 130). In a fresh process, as
    other tests import torch into this one."""
    import subprocess
    import sys

    program = (
        "import sys\n"
        "from dataclasses import replace\n"
        "from hiddenhand.registry import get\n"
        "from hiddenhand.training.learners import learner\n"
        "rules = get('goofspiel').rules(num_cards=3, observation='markov')\n"
        "regret = learner('regret')\n"
        "settings = replace(regret.settings_for(rules), games=64)\n"
        f"regret.run(rules, steps=20_000, out={str(tmp_path)!r}, eval_every=5_000, settings=settings, progress=False)\n"
        "print('torch' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
    assert len(json.loads((tmp_path / "run.json").read_text())["curve"]) >= 4  # it measured, several times


@pytest.mark.parametrize("name", [p for name in learners() for p in _params(name)])
def test_a_learners_run_reproduces_from_its_seed(name, tmp_path, request):
    """Two runs from one seed measure the same curve to the last bit: what the benchmark's
    reruns and a user's reported figures rely on."""
    first, second = (
        [(p.steps, p.exploitability) for p in _tiny_run(name, tmp_path / str(i), request, seed=3, measures=2)]
        for i in range(2)
    )
    assert first == second


RESUMING = [
    pytest.param(name, game, id=f"{name}-{game}")
    for name, declared in learners().items()
    if declared.resumes
    for game, entry in games().items()
    if declared.plays(entry)
]
"""Every learner that resumes, on every game it plays."""


@pytest.mark.parametrize("name, game", RESUMING)
def test_a_killed_run_resumes_and_measures_what_the_uncut_run_measures(name, game, tmp_path, monkeypatch):
    """The learner's whole state is saved at each measure: a run killed after one (an
    exception no handler sees, as a kill or a restarted machine leaves it) and resumed in
    the same directory measures, bit for bit, what the uncut run measures, and saves an agent
    that plays as the uncut run's does, to the last bit of its probabilities."""
    declared = learner(name)
    markov = {"observation": "markov"} if "observation" in get(game).rules().params else {}  # exact measures
    rules = get(game).rules(**tiny(get(game)), **markov)
    settings = replace(declared.settings_for(rules), **TINY[name])
    run = dict(steps=1024, eval_every=512, settings=settings, progress=False, seed=3, device="cpu")
    straight = declared.run(rules, out=tmp_path / "straight", **run)
    advance, calls = Run.advance, []

    def killed(self, steps, games=0):
        calls.append(steps)
        if sum(calls) > 512:  # the update after the measure at 512, before it is counted
            raise RuntimeError("killed")
        advance(self, steps, games)

    monkeypatch.setattr(Run, "advance", killed)
    with pytest.raises(RuntimeError, match="killed"):
        declared.run(rules, out=tmp_path / "cut", **run)
    monkeypatch.setattr(Run, "advance", advance)
    resumed = declared.run(rules, out=tmp_path / "cut", resume=True, **run)
    assert [(p.steps, p.exploitability) for p in resumed] == [(p.steps, p.exploitability) for p in straight]
    assert all(p.exploitability is not None for p in straight) and len(straight) == 3
    assert json.loads((tmp_path / "cut" / "run.json").read_text())["resumed"] == [512]
    envs = vector_env(rules, 32)
    seen, _ = envs.reset(seed=0)
    positions = [seen, envs.step(seen["action_mask"].argmax(axis=1))[0]]  # the first decisions, and the next
    agents = [load_agent(game, str(tmp_path / kind), rules.params) for kind in ("straight", "cut")]
    for obs in positions:
        obs = {key: obs[key] for key in ("observation", "action_mask")}
        assert np.array_equal(agents[0].policy_batch(obs), agents[1].policy_batch(obs))
