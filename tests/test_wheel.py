"""What a user installs is what we test: the wheel, built from this tree and installed into
a fresh virtual environment outside the clone, holds every file of the package and its
command works; pyproject.toml's version bounds are true of what we test with.

``make`` installs the package in editable mode, which reads the folders directly, so a
package left out of the wheel (``hiddenhand.cli`` once) would pass every other test.
The new environment gets our dependencies from this one (a ``.pth`` line naming this
environment's site-packages: plain path entries, so this environment's editable install of
hiddenhand is not loaded) and the wheel itself installed without dependencies.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

REPOSITORY = Path(__file__).resolve().parent.parent
FOLDERS = {
    "hiddenhand": "hiddenhand",
    "envs": "hiddenhand/envs",
    "agents": "hiddenhand/agents",
    "training": "hiddenhand/training",
}
PYPROJECT = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())
SKIP = shutil.ignore_patterns(
    ".venv", ".git", "__pycache__", "*.egg-info", "build", "dist", ".ruff_cache", ".pytest_cache"
)


def run(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (
        f"{' '.join(map(str, command))} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    )
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The wheel built from a copy of the tree (the build writes ``build/`` and egg-info
    beside its sources), and a fresh virtual environment with only that wheel in it."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    shutil.copytree(REPOSITORY, source, ignore=SKIP)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    pip = [sys.executable, "-m", "pip"]
    run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(work / "dist"), str(source)], work, env)
    (wheel,) = (work / "dist").glob("hiddenhand-*.whl")
    venv = work / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], work, env)
    python = venv / "bin" / "python"
    run([*pip, "--python", str(python), "install", "--no-deps", "--no-index", str(wheel)], work, env)
    site = Path(
        run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], work, env).stdout.strip()
    )
    (site / "our_dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    elsewhere = work / "elsewhere"
    elsewhere.mkdir()
    return {"wheel": wheel, "venv": venv, "python": python, "cwd": elsewhere, "env": env}


def test_the_wheel_holds_every_file_of_the_package(installed):
    names = set(zipfile.ZipFile(installed["wheel"]).namelist())
    expected = {
        f"{target}/{path.relative_to(REPOSITORY / folder).as_posix()}"
        for folder, target in FOLDERS.items()
        for path in (REPOSITORY / folder).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert expected - names == set()
    assert "hiddenhand/cli/__init__.py" in names and "hiddenhand/envs/goofspiel_v0.py" in names


def test_the_installed_command_and_faces_work_outside_the_clone(installed):
    venv, cwd, env = installed["venv"], installed["cwd"], installed["env"]
    help_text = run([str(venv / "bin" / "hiddenhand"), "--help"], cwd, env).stdout
    assert "usage: hiddenhand" in help_text
    listed = run([str(venv / "bin" / "hiddenhand"), "games"], cwd, env).stdout
    for name in ("goofspiel", "spoof", "bid_spoof", "egghead"):
        assert name in listed.replace("-", "_")
    script = f"""
import hiddenhand, hiddenhand.agents, hiddenhand.training, hiddenhand.cli, pettingzoo, pyspiel
from pathlib import Path
site = Path({str(venv)!r}).resolve()
for module in (hiddenhand, hiddenhand.envs, hiddenhand.agents, hiddenhand.training, hiddenhand.cli):
    assert site in Path(module.__file__).resolve().parents, module.__file__
env = pettingzoo.make("aec", "hiddenhand/goofspiel-v0")
env.reset(seed=1)
assert env.agents == ["player_0", "player_1"], env.agents
game = pyspiel.load_game("hiddenhand_spoof")
assert game.num_players() == 2
print("ok", hiddenhand.__version__)
"""
    assert run([str(installed["python"]), "-c", script], cwd, env).stdout.startswith("ok ")


def _lower_bound(specifier: SpecifierSet) -> Version | None:
    bounds = [Version(s.version) for s in specifier if s.operator in (">=", "==", "~=")]
    return max(bounds) if bounds else None


def test_python_and_dependency_bounds_are_true():
    """Our ``requires-python`` admits no Python that a dependency refuses, and each lower
    bound we declare is met by what we test with and is at least what our other
    dependencies themselves require of that package."""
    ours = _lower_bound(SpecifierSet(PYPROJECT["project"]["requires-python"]))
    assert Version(".".join(map(str, sys.version_info[:3]))) >= ours
    declared = [Requirement(r) for r in PYPROJECT["project"]["dependencies"]]
    declared += [Requirement(r) for extra in ("rl",) for r in PYPROJECT["project"]["optional-dependencies"][extra]]
    bounds = {r.name.lower().replace("_", "-"): _lower_bound(r.specifier) for r in declared}
    for requirement in declared:
        dist = importlib.metadata.distribution(requirement.name)
        theirs = _lower_bound(SpecifierSet(dist.metadata.get("Requires-Python") or ""))
        assert theirs is None or ours >= theirs, f"{requirement.name} needs Python {theirs}, we say {ours}"
        assert Version(dist.version.split("+")[0]) >= bounds[requirement.name.lower().replace("_", "-")]
        for needed in map(Requirement, dist.requires or []):
            name = needed.name.lower().replace("_", "-")
            if needed.marker is None and name in bounds and _lower_bound(needed.specifier) is not None:
                assert bounds[name] >= _lower_bound(needed.specifier), f"{requirement.name} needs {needed}"
