"""Goofspiel's exact solve on Ray (``hiddenhand solve goofspiel --ray``): the same values and
bases, bit for bit, as the thread pool, on a local Ray instance (127.0.0.1, two CPUs)."""

import importlib.util

import numpy as np
import pytest

from hiddenhand.cli import main
from hiddenhand.solvers.goofspiel import solve
from hiddenhand.solvers.goofspiel.ray_runner import transfer

pytestmark = pytest.mark.xdist_group("ray")  # one Ray instance at a time: both modules run on one worker

if importlib.util.find_spec("ray") is None:  # not imported here: see start_ray
    pytest.skip("Ray is not installed (pip install 'hiddenhand[ray]')", allow_module_level=True)


def test_ray_solve_is_the_thread_solve_bit_for_bit(ray_local, tmp_path):
    threads = solve(6, progress=False, bases=tmp_path / "threads")
    on_ray = solve(6, progress=False, bases=tmp_path / "ray", ray=True)
    for k, (mine, theirs) in enumerate(zip(on_ray.levels, threads.levels)):
        np.testing.assert_array_equal(mine, theirs)
        if k:
            name = f"bases_{k:02d}.npy"
            np.testing.assert_array_equal(np.load(tmp_path / "ray" / name), np.load(tmp_path / "threads" / name))


def test_ray_solve_command(ray_local, capsys, tmp_path):
    assert main(["solve", "goofspiel", "--cards", "5", "--ray", "--checkpoint", str(tmp_path / "ck")]) == 0
    ray_table = capsys.readouterr().out.splitlines()[2:]
    assert main(["solve", "goofspiel", "--cards", "5"]) == 0
    assert ray_table == capsys.readouterr().out.splitlines()[2:]  # the first-move table, line for line


def test_bad_ray_arguments():
    with pytest.raises(ValueError, match="workers=2 sets threads"):
        solve(3, workers=2, ray=True, progress=False)
    with pytest.raises(ValueError, match="needs ray=True"):
        solve(3, address="10.0.0.1:6379", progress=False)


def test_transfer_sizes_follow_the_level_shapes():
    """What a solve moves per level: the level below's values out, this level's back."""
    rows = transfer(5)
    assert [r[0] for r in rows] == [1, 2, 3, 4, 5]
    assert rows[0][1] == 8  # level 0: one value
    assert rows[-1][2] == 8  # level 5 of 5 cards: one pattern, one prize set
    assert all(bases == values // 2 * k for k, _, values, bases in rows)
