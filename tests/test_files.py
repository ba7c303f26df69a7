"""Files the package writes: damage is detected and every load failure is one line naming
the file; temporary files of killed writes are removed; output paths are checked first."""

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from hiddenhand.agents.policy_agent import PolicyAgent
from hiddenhand.cli import main
from hiddenhand.files import (
    atomic_write,
    check_writable,
    digest,
    load_npz,
    read_json,
    read_npz_meta,
    remove_stale_temps,
    save_npz,
)
from hiddenhand.solvers.goofspiel import PointsSolution, solve

ROOT = os.geteuid() == 0  # root ignores permissions


def refused(path, call, error=ValueError, match=None):
    """The message of the error ``call()`` raises, checked to name ``path`` on one line
    without numpy's pickle advice."""
    with pytest.raises(error, match=match) as info:
        call()
    message = str(info.value)
    assert str(path) in message and "\n" not in message and "allow_pickle" not in message, message
    return message


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def rewrite_npz(path, **changes):
    """Rewrite an .npz keeping its entries (checksum included) except ``changes`` (None drops one)."""
    with np.load(path) as data:
        entries = {name: data[name] for name in data.files}
    entries.update(changes)
    np.savez(path, **{name: value for name, value in entries.items() if value is not None})


def small_policy() -> PolicyAgent:
    table = {
        np.array([0, 1, 0], dtype=np.float32).tobytes(): np.array([0.25, 0.75, 0.0]),
        np.array([1, 0, 1], dtype=np.float32).tobytes(): np.array([0.0, 0.5, 0.5]),
    }
    return PolicyAgent("goofspiel", {"num_cards": 3}, table)


# --------------------------------------------------------------------------- .npz files


def test_npz_round_trip_and_every_damage_named(tmp_path):
    path = tmp_path / "thing.npz"
    arrays = {"a": np.arange(6.0).reshape(2, 3), "b": np.array([1, 2], dtype=np.int8)}
    assert save_npz(path, {"kind": "test", "n": 2}, arrays) == path
    meta, loaded = load_npz(path, "test file", required_meta=("kind",), required_arrays=("a", "b"))
    assert meta == {"kind": "test", "n": 2} and set(loaded) == {"a", "b"}
    assert np.array_equal(loaded["a"], arrays["a"]) and loaded["b"].dtype == np.int8
    assert read_npz_meta(path) == meta
    good = path.read_bytes()

    def load():
        return load_npz(path, "test file", required_meta=("kind",), required_arrays=("a", "b"))

    rewrite_npz(path, a=arrays["a"] + 1)  # an altered array: still a valid zip
    refused(path, load, match="fails its checksum")
    path.write_bytes(good)
    rewrite_npz(path, meta=np.array(json.dumps({"kind": "test", "n": 3})))  # an altered meta
    refused(path, load, match="fails its checksum")
    path.write_bytes(good)
    rewrite_npz(path, sha256=None)  # no checksum: written before there were any, or damaged
    refused(path, load, match="has no checksum: it was written before")
    path.write_bytes(good)
    rewrite_npz(path, b=arrays["b"].astype(np.int16))  # same values, another dtype
    refused(path, load, match="fails its checksum")
    path.write_bytes(good)
    rewrite_npz(path, a=arrays["a"].view(np.int64))  # the same bytes read as another dtype
    refused(path, load, match="fails its checksum")
    path.write_bytes(good)
    rewrite_npz(path, a=arrays["a"].reshape(3, 2))  # the same bytes in another shape
    refused(path, load, match="fails its checksum")
    path.write_bytes(good)
    save_npz(path, {"n": 2}, {"a": arrays["a"]})  # intact, but not what the reader needs
    assert "it lacks meta 'kind', array 'b'" in refused(path, load)
    for content, reason in [
        (good[: len(good) // 2], "truncated, corrupt"),
        (b"", "it is empty"),
        (b"just some text\n", "not an .npz"),
        (b"\x93NUMPY", "not an .npz"),
    ]:
        path.write_bytes(content)
        refused(path, load, match=reason)
        refused(path, lambda: read_npz_meta(path), match=reason)
    np.savez(path, meta=np.array([{"a": 1}], dtype=object))  # a pickle inside the zip
    refused(path, load, match="pickled objects")
    np.savez(path, meta=np.array("{not json"))
    refused(path, load, match="meta is not JSON")
    np.savez(path, meta=np.array("[1]"))
    refused(path, load, match="meta is a JSON list, not an object")
    np.savez(path, x=np.zeros(2))
    refused(path, load, match="no 'meta' entry")
    refused(tmp_path, lambda: load_npz(tmp_path, "test file"), match="is a directory")
    refused(tmp_path / "none.npz", lambda: load_npz(tmp_path / "none.npz", "test file"), FileNotFoundError)
    with pytest.raises(ValueError, match="reserved"):
        save_npz(path, {}, {"sha256": np.zeros(1)})


def test_read_json_names_the_file_and_the_fault(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"a": 1, "b": 2}')
    assert read_json(path, "thing", required=("a",)) == {"a": 1, "b": 2}
    for text, reason in [
        ("", "it is empty"),
        ("\n", "it is empty"),
        ('{"a": 1', "not valid JSON"),
        ("[1]", "holds a JSON list, not an object"),
        ('{"b": 2}', "lacks 'a'"),
    ]:
        path.write_text(text)
        refused(path, lambda: read_json(path, "thing", required=("a",)), match=reason)
    path.write_bytes(b"\xff\xfe\x00")
    refused(path, lambda: read_json(path, "thing"), match="not UTF-8")
    refused(tmp_path / "no.json", lambda: read_json(tmp_path / "no.json", "thing"), FileNotFoundError)


# --------------------------------------------------------------------------- policy files


def test_policy_files_detect_damage(tmp_path):
    agent = small_policy()
    path = agent.save(tmp_path)
    assert path == tmp_path / "policy.npz"
    loaded = PolicyAgent.load(tmp_path)
    assert (loaded.game, loaded.params) == ("goofspiel", {"num_cards": 3})
    assert all(np.array_equal(loaded.table[k], v) for k, v in agent.table.items())
    good = path.read_bytes()
    with np.load(path) as data:
        probs = data["probabilities"].copy()
    probs[0] = [0.75, 0.25, 0.0]  # altered probabilities: a policy that would play otherwise
    rewrite_npz(path, probabilities=probs)
    refused(path, lambda: PolicyAgent.load(tmp_path), match="fails its checksum")
    # A file as written before checksums: refused, saying so (it cannot be told from a damaged one).
    with np.load(path) as data:
        meta = str(data["meta"])
    np.savez_compressed(path, information_states=np.zeros((1, 3), np.float32), probabilities=probs[:1], meta=meta)
    refused(path, lambda: PolicyAgent.load(path), match="no checksum: it was written before .*regenerate")
    # Intact files that lack a part.
    keys = np.zeros((1, 3), np.float32)
    save_npz(path, {"game": "goofspiel"}, {"information_states": keys, "probabilities": probs[:1]})
    assert "lacks meta 'params'" in refused(path, lambda: PolicyAgent.load(path))
    save_npz(path, {"game": "goofspiel", "params": {}}, {"information_states": keys})
    assert "lacks array 'probabilities'" in refused(path, lambda: PolicyAgent.load(path))
    save_npz(path, {"game": "goofspiel", "params": {}}, {"information_states": keys, "probabilities": probs})
    refused(path, lambda: PolicyAgent.load(path), match="malformed")
    path.write_bytes(b"not a zip at all")  # numpy would advise allow_pickle=True here
    refused(path, lambda: PolicyAgent.load(path), match="not an .npz")
    path.write_bytes(good)
    assert PolicyAgent.load(path).table.keys() == agent.table.keys()


# --------------------------------------------------------------------------- Goofspiel solutions


@pytest.fixture(scope="module")
def solution():
    return solve(4, progress=False)


def test_solution_files_detect_damage_and_read_per_level_checksums(tmp_path, solution):
    path = solution.save(tmp_path / "gops4.npz")
    assert PointsSolution.load(path).value((1, 3), (2, 4), (1, 2)) == solution.value((1, 3), (2, 4), (1, 2))
    good = path.read_bytes()
    rewrite_npz(path, level_3=np.asarray(solution.levels[3]) + 1e-9)
    refused(path, lambda: PointsSolution.load(path), match="fails its checksum")
    # A file of this format without its checksum is damaged (format 2 came after whole-file
    # checksums), although its per-level sums still match: refused, naming it.
    path.write_bytes(good)
    rewrite_npz(path, sha256=None)
    refused(path, lambda: PointsSolution.load(path), match="has no checksum")
    # A format-1 file as written before whole-file checksums (every pattern, per-level sums,
    # no scoring) still loads, verified by its per-level checksums...
    levels = {f"level_{k}": np.asarray(level) for k, level in enumerate(solution.levels)}
    legacy = {"format": 1, "num_cards": 4, "sha256": [digest(level) for level in levels.values()]}
    np.savez(path, meta=np.array(json.dumps(legacy)), **levels)
    assert PointsSolution.load(path).value((1, 3), (2, 4), (1, 2)) == solution.value((1, 3), (2, 4), (1, 2))
    rewrite_npz(path, level_2=levels["level_2"] * 2)
    refused(path, lambda: PointsSolution.load(path), match="fails its checksum")
    # ...but not one that claims a scoring (win/loss files came after whole-file checksums),
    rewrite_npz(path, level_2=levels["level_2"], meta=np.array(json.dumps(legacy | {"scoring": "point_difference"})))
    refused(path, lambda: PointsSolution.load(path), match="has no checksum")
    # and one without any checksum is refused with the reason, not a KeyError.
    path.write_bytes(good)
    meta = {"format": 1, "num_cards": 4}
    rewrite_npz(path, sha256=None, meta=np.array(json.dumps(meta)))
    refused(path, lambda: PointsSolution.load(path), match="has no checksum")
    save_npz(path, {"format": 1}, {"level_0": np.zeros((1, 1))})
    assert "lacks meta 'num_cards'" in refused(path, lambda: PointsSolution.load(path))
    save_npz(path, {"format": 1, "num_cards": 4}, {"level_0": np.zeros((1, 1))})
    assert "lacks level_1, level_2, level_3, level_4" in refused(path, lambda: PointsSolution.load(path))
    # A policy file is not a solution, and the reverse.
    policy = small_policy().save(tmp_path / "policy.npz")
    refused(policy, lambda: PointsSolution.load(policy), match="lacks meta 'format', meta 'num_cards'")
    path.write_bytes(good)
    refused(path, lambda: PolicyAgent.load(path), match="lacks meta 'game', meta 'params'")


def test_a_solution_without_its_checksum_is_not_played(tmp_path, solution, capsys):
    path = solution.save(tmp_path / "gops4.npz")
    rewrite_npz(path, sha256=None)
    with pytest.raises(SystemExit) as info:
        main(["play", "goofspiel", "--cards", "4", "--opponent", str(path)])
    err = capsys.readouterr().err
    assert info.value.code == 2 and err.count("\n") == 1, err
    assert f"{path} has no checksum" in err, err


def test_damaged_checkpoint_manifests_are_named(tmp_path, solution):
    folder = tmp_path / "levels"
    solve(4, progress=False, checkpoint=folder)
    manifest = folder / "manifest.json"
    good = json.loads(manifest.read_text())
    assert set(good["sha256"]) == {"1", "2", "3", "4"}
    for text, reason in [
        ("", "it is empty"),
        ("[1]", "holds a JSON list"),
        ('{"format": 1, "num_cards": 4}', "lacks 'sha256'"),
        ('{"format": 1, "num_cards": 4, "sha256": [1]}', "'sha256' is not an object"),
        ('{"form', "not valid JSON"),
    ]:
        manifest.write_text(text)
        message = refused(manifest, lambda: solve(4, progress=False, checkpoint=folder), match=reason)
        assert "delete it to solve from the start" in message
    manifest.unlink()
    manifest.mkdir()  # unreadable as a file
    message = refused(manifest, lambda: solve(4, progress=False, checkpoint=folder), match="is a directory")
    assert "delete it to solve from the start" in message
    manifest.rmdir()
    manifest.write_text(json.dumps(good))
    assert np.array_equal(solve(4, progress=False, checkpoint=folder).levels[4], solution.levels[4])


def test_damaged_checkpoint_levels_are_one_line_naming_the_checkpoint(tmp_path, solution, capsys):
    """A level the manifest records was written whole before it was recorded: if it is now
    missing, torn, of another shape, altered or a directory, the solve stops before any work
    with one line naming the checkpoint and the file, and saying how to go on."""
    folder = tmp_path / "levels"
    solve(4, progress=False, checkpoint=folder)
    level = folder / "level_03.npy"
    good = level.read_bytes()
    other = tmp_path / "other.npy"
    np.save(other, np.zeros((2, 2)))
    altered = tmp_path / "altered.npy"
    np.save(altered, np.asarray(solution.levels[3]) + 1.0)

    def damage_and_restore(damage):
        level.unlink()
        damage()
        message = refused(folder, lambda: solve(4, progress=False, checkpoint=folder))
        assert "level_03.npy" in message and "delete the directory to solve from the start" in message, message
        assert "take levels 3 and above out of its manifest.json" in message and ".tmp" not in message, message
        if level.is_dir():
            level.rmdir()
        elif level.exists():
            level.unlink()
        level.write_bytes(good)
        return message

    assert "is missing" in damage_and_restore(lambda: None)
    assert "is truncated or not a level" in damage_and_restore(lambda: level.write_bytes(good[: len(good) // 2]))
    assert "has shape (2, 2)" in damage_and_restore(lambda: level.write_bytes(other.read_bytes()))
    assert "fails the checksum" in damage_and_restore(lambda: level.write_bytes(altered.read_bytes()))
    assert "is not a file" in damage_and_restore(level.mkdir)
    # A directory where a level not yet recorded is to be written: refused before the work, not after it.
    manifest = json.loads((folder / "manifest.json").read_text())
    del manifest["sha256"]["4"]
    (folder / "manifest.json").write_text(json.dumps(manifest))
    (folder / "level_04.npy").unlink()
    (folder / "level_04.npy").mkdir()
    with pytest.raises(SystemExit) as info:
        main(["solve", "goofspiel", "--cards", "4", "--checkpoint", str(folder)])
    err = capsys.readouterr().err
    assert info.value.code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"checkpoint {folder} is damaged: level_04.npy is not a file" in err and ".tmp" not in err, err
    (folder / "level_04.npy").rmdir()
    assert np.array_equal(solve(4, progress=False, checkpoint=folder).levels[4], solution.levels[4])


# --------------------------------------------------------------------------- stale temporary files


def test_a_resume_removes_the_temporary_files_of_killed_writes(tmp_path, solution):
    folder = tmp_path / "levels"
    solve(4, progress=False, checkpoint=folder)
    (folder / "level_04.npy").unlink()  # killed during the last level, before it was recorded...
    manifest = json.loads((folder / "manifest.json").read_text())
    del manifest["sha256"]["4"]
    (folder / "manifest.json").write_text(json.dumps(manifest))
    dead, alive = dead_pid(), os.getpid()
    stale = [
        f".level_04.npy.{dead}.k2j4h5g6.tmp",
        f".manifest.json.{dead}.abcdefgh.tmp",
        ".level_03.npy.x8_z9q0w.tmp",
    ]  # ...and before, by a version without pids in the names
    kept = [
        f".level_04.npy.{alive}.abcdefgh.tmp",  # a live writer's
        f".notes.txt.{dead}.abcdefgh.tmp",
        "level_04.npy.tmp",
        ".level_04.npy.tmp",
        "keep.txt",
    ]
    for name in stale + kept:
        (folder / name).write_bytes(b"x" * 100)
    resumed = solve(4, progress=False, checkpoint=folder)
    assert np.array_equal(resumed.levels[4], solution.levels[4])
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        kept + ["manifest.json"] + [f"level_0{k}.npy" for k in range(1, 5)]
    )


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path):
    """An error inside the write, or in the rename (the target is a directory), leaves the
    old file as it was and nothing else: a failed write is not a killed one, and its
    temporary file is removed at once, not left for the next write of the target."""
    target = tmp_path / "out.bin"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError, match="midway"):
        with atomic_write(target) as handle:
            handle.write(b"new" * 1000)
            raise RuntimeError("midway")
    assert list(tmp_path.iterdir()) == [target] and target.read_bytes() == b"old"
    (tmp_path / "folder").mkdir()
    with pytest.raises(OSError, match="cannot write"):
        with atomic_write(tmp_path / "folder") as handle:
            handle.write(b"new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "out.bin"]
    assert not any((tmp_path / "folder").iterdir())


def test_a_write_killed_midway_leaves_a_temporary_file_that_is_removed(tmp_path):
    target = tmp_path / "out.bin"
    target.write_bytes(b"old")
    script = (
        "import os, signal, sys\nfrom hiddenhand.files import atomic_write\n"
        "with atomic_write(sys.argv[1]) as handle:\n"
        "    handle.write(b'new' * 1000); handle.flush(); os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    result = subprocess.run([sys.executable, "-c", script, str(target)])
    assert result.returncode == -signal.SIGKILL
    leftovers = [p for p in tmp_path.iterdir() if p != target]
    assert len(leftovers) == 1 and leftovers[0].name.startswith(".out.bin.") and leftovers[0].suffix == ".tmp"
    assert target.read_bytes() == b"old"
    other = tmp_path / f".other.bin.{dead_pid()}.abcdefgh.tmp"
    live = tmp_path / f".out.bin.{os.getpid()}.abcdefgh.tmp"
    other.write_bytes(b"")
    live.write_bytes(b"")
    with atomic_write(target) as handle:  # a write of the same target removes its stale temporaries
        handle.write(b"newer")
    assert sorted(tmp_path.iterdir()) == sorted([target, other, live])
    assert remove_stale_temps(tmp_path) == [other] and remove_stale_temps(tmp_path, []) == []
    assert sorted(tmp_path.iterdir()) == sorted([target, live])


# --------------------------------------------------------------------------- output paths


def test_output_paths_are_checked_before_the_work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for kind in ("file", "dir"):
        refused("''", lambda: check_writable("", "output", kind), match="path is empty")
    refused("''", lambda: solve(4, progress=False, checkpoint=""), match="checkpoint directory path is empty")
    refused("''", lambda: small_policy().save(""), match="policy file path is empty")
    (tmp_path / "file.txt").write_text("x")
    refused("file.txt", lambda: check_writable("file.txt", "output", "dir"), match="existing file, not a directory")
    refused("file.txt", lambda: solve(4, progress=False, checkpoint="file.txt"), match="existing file")
    (tmp_path / "sub").mkdir()
    refused("sub", lambda: check_writable("sub", "output", "file"), match="existing directory, not a file")
    refused("file.txt/x/y.npz", lambda: check_writable("file.txt/x/y.npz", "out", "file"), match="file.txt is a file")
    assert check_writable("sub/new/deeper/out.npz", "output") == Path("sub/new/deeper/out.npz")
    assert check_writable("sub/new", "output", "dir") == Path("sub/new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt", "sub"] and not any((tmp_path / "sub").iterdir())
    with pytest.raises(ValueError, match="kind="):
        check_writable("x", "output", "folder")


def test_a_directory_another_process_makes_meanwhile_is_used_and_left_to_it(tmp_path, monkeypatch):
    """Runs side by side check paths under one new directory: the one that loses the race to
    make it finds it made, uses it, and does not remove it (the other's run is in it)."""
    real = Path.mkdir

    def raced(self, *args, **kwargs):
        if self.name == "shared" and not self.exists():
            real(self)  # the other process got there first
            raise FileExistsError(17, "File exists", str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", raced)
    assert check_writable(tmp_path / "shared" / "seed0", "output", "dir") == tmp_path / "shared" / "seed0"
    assert (tmp_path / "shared").is_dir() and not any((tmp_path / "shared").iterdir())
    monkeypatch.setattr(Path, "mkdir", lambda self, *a, **k: (_ for _ in ()).throw(FileExistsError(17, "exists")))
    with pytest.raises(FileExistsError, match="making the directory"):
        check_writable(tmp_path / "file2" / "x", "output", "dir")


@contextlib.contextmanager
def read_only(directory: Path):
    """``directory`` made unwritable for this process: by its mode for a user; for root, whom
    modes do not stop (as in containers and CI), by the immutable attribute, which stops root too."""
    if not ROOT:
        directory.chmod(0o500)
        try:
            yield
        finally:
            directory.chmod(0o700)
        return
    made = shutil.which("chattr") and subprocess.run(["chattr", "+i", str(directory)], capture_output=True)
    if not made or made.returncode != 0:
        pytest.skip("running as root, where modes stop nothing, and `chattr +i` is not available on this file system")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(directory)], check=True)


def test_a_read_only_directory_is_refused_before_the_work(tmp_path, monkeypatch, capsys):
    import hiddenhand.solvers.goofspiel.report as gops

    locked = tmp_path / "locked"
    locked.mkdir()
    with read_only(locked):
        out = locked / "out.npz"
        refused(out, lambda: check_writable(out, "output"), PermissionError, f"making a file in {locked} failed")
        refused(locked / "a" / "b", lambda: check_writable(locked / "a" / "b", "output", "dir"), PermissionError)
        refused(locked, lambda: check_writable(locked, "output", "dir"), PermissionError)
        refused(locked / "ck", lambda: solve(4, progress=False, checkpoint=locked / "ck"), PermissionError)
        refused(locked / "s.npz", lambda: solve(1, progress=False).save(locked / "s.npz"), PermissionError)
        deeper = locked / "nonexistent" / "deeper" / "x.npz"
        monkeypatch.setattr(gops, "solve", lambda *a, **k: pytest.fail("the solve started before the check"))
        with pytest.raises(SystemExit) as info:
            main(["solve", "goofspiel", "--cards", "3", "--out", str(deeper)])
        err = capsys.readouterr().err
        assert info.value.code == 2 and f"--out '{deeper}' cannot be written" in err and err.count("\n") == 1, err
        assert list(locked.iterdir()) == []


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="no /proc file system here")
def test_a_path_not_even_root_can_create_is_refused_before_the_work(monkeypatch, capsys):
    """/proc takes no new entries, whatever permissions say (root's included)."""
    import hiddenhand.solvers.goofspiel.report as gops

    monkeypatch.setattr(gops, "solve", lambda *a, **k: pytest.fail("the solve started before the check"))
    out = "/proc/no/such/dir/x.npz"
    with pytest.raises(SystemExit) as info:
        main(["solve", "goofspiel", "--cards", "10", "--out", out])
    err = capsys.readouterr().err
    assert info.value.code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"--out '{out}' cannot be written: making the directory /proc/no failed" in err, err
    refused("/proc/no/x", lambda: check_writable("/proc/no/x", "--out", "dir"), OSError, "cannot be written")


def test_a_failed_check_removes_the_directories_it_made(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    def no_file(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", no_file)
    message = refused("new/deeper/out.npz", lambda: check_writable("new/deeper/out.npz", "--out"), PermissionError)
    assert "making a file in new/deeper failed (Permission denied)" in message
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- PPO agents


def test_ppo_directories_detect_damage(tmp_path):
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from hiddenhand.agents import RandomAgent
    from hiddenhand.agents.ppo import PPOAgent
    from hiddenhand.gymnasium_env import SingleAgentEnv

    env = SingleAgentEnv("goofspiel", RandomAgent(), num_cards=3)
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, seed=0, device="cpu")
    out = PPOAgent(model, "goofspiel", {"num_cards": 3}).save(tmp_path / "ppo")
    meta_file, model_file = out / "agent.json", out / "model.zip"
    meta = json.loads(meta_file.read_text())
    assert meta["model_sha256"] == digest(model_file.read_bytes())
    loaded = PPOAgent.load(out)
    assert (loaded.game, loaded.params) == ("goofspiel", {"num_cards": 3})
    good = model_file.read_bytes()
    damaged = bytearray(good)
    damaged[len(good) // 2] ^= 0xFF
    model_file.write_bytes(bytes(damaged))
    message = refused(model_file, lambda: PPOAgent.load(out), match="fails the checksum recorded in")
    assert str(meta_file) in message
    model_file.write_bytes(good)
    meta_file.write_text(json.dumps({"game": "goofspiel", "params": {"num_cards": 3}}))  # as written before checksums
    refused(model_file, lambda: PPOAgent.load(out), match="records no checksum")
    for text, reason in [
        ("", "it is empty"),
        ('{"game": "goofs', "not valid JSON"),
        ('{"game": "goofspiel"}', "lacks 'params'"),
        ('{"game": 1, "params": {}}', "malformed"),
    ]:
        meta_file.write_text(text)
        refused(meta_file, lambda: PPOAgent.load(out), match=reason)
    meta_file.unlink()
    refused(out, lambda: PPOAgent.load(out), match="agent.json missing")
    refused("''", lambda: loaded.save(""), match="PPO agent directory path is empty")
