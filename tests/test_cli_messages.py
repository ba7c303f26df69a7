"""Every message the command line refuses with speaks the user's words: an option as it is
typed (``--valids-in-observation``), a configuration as a command line sets it up
(``goofspiel --cards 3``), a file by its path and what it is. None shows a Python repr
(``GoofspielRules(...)``, ``{'num_cards': 3}``) or a parameter's Python name (``num_cards``),
which the user never typed. The cases are the command line's refusals the other tests check
(read off their parameters, so that a case added there is checked here too) and the ones below."""

import errno
import io
import os
import re
import shutil

import numpy as np
import pytest
import test_cli_input
import test_parameter_input
import test_terminal_and_cli

from hiddenhand.cli import main
from hiddenhand.core import IllegalActionError
from hiddenhand.envs.goofspiel import GoofspielRules
from hiddenhand.envs.spoof import SpoofRules
from hiddenhand.registry import games
from hiddenhand.validation import mismatch
from hiddenhand.vector import vector_env

GAMES = games()

PYTHON_NAMES = sorted(
    {
        name
        for game in GAMES.values()
        for name in (*game.rules_class.param_defaults(), *(game.solver.options if game.solver else ()))
        if "_" in name
    }
)
"""Every declared parameter (of a game's rules or its solver) whose Python name the command
line spells otherwise: ``num_cards`` is ``--cards``, ``valids_in_observation`` is
``--valids-in-observation``."""


def assert_in_users_words(text: str) -> None:
    assert "Rules(" not in text and "{'" not in text, text
    python = [name for name in PYTHON_NAMES if re.search(rf"(?<![\w-]){name}(?![\w-])", text)]
    assert not python, f"{python} in: {text}"


def refusal(argv, capsys) -> str:
    """The one line of a command refused with status 2, checked to be in the user's words."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    line = err.strip().splitlines()[-1]
    assert re.match(r"hiddenhand( [\w-]+)*: error: ", line), line  # argparse names the subcommand
    assert_in_users_words(line)
    return line


def parametrized(test, argnames: str) -> list:
    """The values ``test`` is parametrized with under ``argnames``."""
    marks = [mark for mark in test.pytestmark if mark.name == "parametrize" and mark.args[0] == argnames]
    assert marks, f"{test.__name__} is not parametrized with {argnames!r}"
    return [getattr(value, "values", value) for value in marks[0].args[1]]


def test_the_names_to_avoid_are_read_off_the_declarations():
    assert {"num_cards", "valids_in_observation", "zero_call", "max_rounds"} <= set(PYTHON_NAMES)


# --------------------------------------------------------------------------- the other tests' cases


CHECKED_ELSEWHERE = [
    argv
    for test in (
        test_cli_input.test_option_errors_name_the_flag_as_typed,
        test_terminal_and_cli.test_cli_errors_are_one_clear_line,
    )
    for argv, _ in parametrized(test, "argv, message")
]
BAD_OPTIONS = [
    ["tournament", GAMES[game].command, "--games", "1", flag, text]
    for game, flag in (param.values for param in test_cli_input.INTEGER_OPTIONS)
    for text in ("abc", str(10**9))
]
BAD_AGENTS = [
    [command, game.command, flag, "random,,random" if flag == "--agents" else "no/such/policy.npz"]
    for game in GAMES.values()
    for command, flag in parametrized(test_cli_input.test_a_missing_agent_file_is_said_not_to_exist, "command, flag")
]
BAD_LISTS = [
    ["play", "egghead", "--players", "4", f"--{name}", spec]
    for name, test in (
        ("analysts", test_parameter_input.test_analysts_refuses_what_is_not_a_list_of_player_ids),
        ("deck", test_parameter_input.test_deck_refuses_empty_items_and_spaces),
    )
    for spec, _ in parametrized(test, "spec, problem")
    if isinstance(spec, str)
]


@pytest.mark.parametrize("argv", CHECKED_ELSEWHERE + BAD_OPTIONS + BAD_AGENTS + BAD_LISTS, ids=" ".join)
def test_every_refusal_checked_elsewhere_is_in_the_users_words(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # some write to a relative --out if they are not refused first
    refusal(argv, capsys)


def test_a_move_typed_wrong_at_the_prompt_is_answered_in_the_users_words(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("banana\n9\n1\n2\n3\nn\n"))
    assert main(["play", "goofspiel", "--cards", "3", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "'banana' is not a card" in out and "9 is not in your hand" in out
    assert_in_users_words(out)


# --------------------------------------------------------------------------- configurations


def test_an_agent_that_needs_an_observation_option_names_it_as_typed(capsys):
    argv = ["play", "egghead", "--no-valids-in-observation", "--opponent", "analyst", "--players", "3"]
    line = refusal(argv, capsys)
    assert "BehaviouralAnalyst reads the valids masks" in line
    assert "which --no-valids-in-observation leaves out: use --valids-in-observation" in line


def test_a_game_tree_too_large_for_cfr_lists_configurations_as_options(tmp_path, capsys):
    line = refusal(["train", "cfr", "spoof", "--out", str(tmp_path / "spoof")], capsys)
    assert "CFR enumerates the whole game tree: spoof has about" in line
    assert "Configurations of spoof that fit: tiny (--matches 1 --max-rounds 3); round (--objective round)" in line
    line = refusal(["train", "cfr", "egghead", "--out", str(tmp_path / "egghead")], capsys)
    assert "egghead --players 4 --valids-in-observation has about" in line
    assert "tiny (--players 3 --cards 1 --values 2 --target 1 --max-questions 1 --deck total --max-phases 1)" in line


def test_a_general_sum_configuration_is_named_as_typed(tmp_path, capsys):
    argv = ["train", "cfr", "goofspiel", "--cards", "4", "--scoring", "total_points", "--out", str(tmp_path / "x")]
    assert "goofspiel --cards 4 --players 2 --scoring total_points is general-sum" in refusal(argv, capsys)


def test_an_equilibrium_for_two_players_names_the_players_option(capsys):
    line = refusal(["play", "bid-spoof", "--players", "3", "--opponent", "equilibrium"], capsys)
    assert line.endswith("the exact equilibrium is for two players, not --players 3")
    line = refusal(["exploitability", "bid-spoof", "--players", "3", "--agent", "random", "--method", "exact"], capsys)
    assert line.startswith("hiddenhand: error: bid-spoof --players 3 has no exact exploitability (it covers two")


def test_an_equilibrium_of_another_configuration_names_the_options(capsys):
    line = refusal(["play", "goofspiel", "--cards", "3", "--no-reveal-bids", "--opponent", "equilibrium"], capsys)
    assert "the exact equilibrium is of the game with --players 2, --prize-order random, --reveal-bids" in line
    assert line.endswith("this one has --no-reveal-bids")


# --------------------------------------------------------------------------- files


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A 3-card Goofspiel solution file and a 3-card policy (a trained CFR agent)."""
    folder = tmp_path_factory.mktemp("files")
    solution, policy = folder / "gops3.npz", folder / "cfr3"
    assert main(["solve", "goofspiel", "--cards", "3", "--out", str(solution)]) == 0
    argv = ["train", "cfr", "goofspiel", "--cards", "3", "--iterations", "2", "--eval-every", "1", "--out", str(policy)]
    assert main(argv) == 0
    return solution, policy


def test_a_file_made_for_another_configuration_names_the_options_that_differ(files, capsys):
    solution, policy = files
    line = refusal(["play", "goofspiel", "--cards", "4", "--opponent", str(policy)], capsys)
    assert line.endswith(f"the agent in {policy} was made for goofspiel with --cards 3, not --cards 4")
    line = refusal(["play", "goofspiel", "--cards", "3", "--no-reveal-bids", "--opponent", str(policy)], capsys)
    assert line.endswith("was made for goofspiel with --reveal-bids, not --no-reveal-bids")
    line = refusal(["play", "goofspiel", "--cards", "4", "--opponent", str(solution)], capsys)
    assert line.endswith(f"{solution} is a Goofspiel solution file for --cards 3, not --cards 4")
    line = refusal(["play", "goofspiel", "--cards", "3", "--scoring", "win_loss", "--opponent", str(solution)], capsys)
    assert line.endswith("is a Goofspiel solution file for --scoring point_difference, not --scoring win_loss")


@pytest.mark.parametrize(
    "damage",
    [lambda data: data[: len(data) // 2], lambda data: bytes(len(data)), lambda data: data[:-200] + bytes(200)],
    ids=["truncated", "zeroed", "tail-zeroed"],
)
def test_a_damaged_solution_file_is_called_damaged_not_a_foreign_policy(files, damage, tmp_path, capsys):
    damaged = tmp_path / "gops3.npz"
    damaged.write_bytes(damage(files[0].read_bytes()))
    line = refusal(["play", "goofspiel", "--cards", "3", "--opponent", str(damaged)], capsys)
    assert line.startswith(f"hiddenhand: error: {damaged} is truncated, corrupt or not a Goofspiel solution file")
    assert "not a hiddenhand policy file" not in line


def solve_with_checkpoint(folder, capsys):
    assert main(["solve", "goofspiel", "--cards", "3", "--checkpoint", str(folder)]) == 0
    capsys.readouterr()


def test_a_zeroed_checkpoint_level_is_called_damaged_not_pickled(tmp_path, capsys):
    folder = tmp_path / "checkpoint"
    solve_with_checkpoint(folder, capsys)
    level = folder / "level_02.npy"
    level.write_bytes(bytes(level.stat().st_size))
    line = refusal(["solve", "goofspiel", "--cards", "3", "--checkpoint", str(folder)], capsys)
    assert f"checkpoint {folder} is damaged: level_02.npy is truncated or not a level" in line
    assert "pickle" not in line and "allow_pickle" not in line
    line = refusal(["solve", "goofspiel", "--cards", "4", "--checkpoint", str(folder)], capsys)
    assert line.endswith(f"checkpoint {folder} belongs to another solve: --cards 3, not --cards 4")


FULL_DISK = {
    "no-space": OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)),
    "short-write": OSError("40446 requested and 30192 written"),  # numpy's tofile on a full disk
}


@pytest.mark.parametrize("error", FULL_DISK.values(), ids=FULL_DISK.keys())
def test_a_full_disk_names_the_file_and_says_nothing_was_lost(error, files, tmp_path, monkeypatch, capsys):
    out, folder = tmp_path / "gops3.npz", tmp_path / "checkpoint"
    shutil.copy(files[0], out)
    before = out.read_bytes()

    def full(fd):
        raise error

    monkeypatch.setattr(os, "fsync", full)  # every atomic write fails as a full disk would fail it
    line = refusal(["solve", "goofspiel", "--cards", "3", "--out", str(out)], capsys)
    assert line.startswith(f"hiddenhand: error: cannot write {out}: ")
    assert line.endswith(f"; nothing was lost: {out} is as it was before")
    assert out.read_bytes() == before and os.listdir(tmp_path) == ["gops3.npz"]
    if error.errno is None:
        assert "the write stopped short (40446 requested and 30192 written): the disk may be full" in line
    else:
        assert "No space left on device" in line
    line = refusal(["solve", "goofspiel", "--cards", "3", "--checkpoint", str(folder)], capsys)
    assert line.startswith(f"hiddenhand: error: cannot write {folder / 'level_01.npy'}: ")
    assert "nothing was lost" in line and not any(folder.iterdir())


def test_an_error_naming_another_file_is_left_as_it_is(tmp_path):
    from hiddenhand.files import atomic_write

    with pytest.raises(FileNotFoundError) as raised, atomic_write(tmp_path / "out.txt", "w") as handle:
        handle.write((tmp_path / "missing.txt").read_text())
    assert raised.value.filename == str(tmp_path / "missing.txt") and "cannot write" not in str(raised.value)
    assert not any(tmp_path.iterdir())


# --------------------------------------------------------------------------- the library's words


def test_python_names_a_configuration_as_python_spells_it():
    rules = GoofspielRules(num_cards=3, reveal_bids=False)
    assert str(rules) == "goofspiel with num_cards=3, num_players=2, reveal_bids=False"
    assert str(SpoofRules()) == "spoof"  # the defaults, and no number of players to choose
    assert mismatch({"num_cards": 3, "scoring": "win_loss"}, {"num_cards": 4, "scoring": "win_loss"}) == (
        "num_cards=3, not num_cards=4"
    )


def test_a_batched_action_is_reported_as_given():
    env = vector_env("goofspiel", 2, num_cards=4)
    env.reset(seed=0)
    huge = np.array([2**64 - 1, 0], dtype=np.uint64)
    with pytest.raises(IllegalActionError, match=rf"^game 0: action {2**64 - 1} is illegal for player 0 in goofspiel"):
        env.step(huge)
    with pytest.raises(IllegalActionError, match=r"^game 1: action 200 is illegal"):
        env.step(np.array([0, 200], dtype=np.uint8))
