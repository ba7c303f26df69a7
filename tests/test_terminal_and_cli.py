"""The terminal game with scripted input, the command line, and the evaluation helpers."""

import os
import select
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import numpy as np
import pytest
from conftest import ctrl_c_reaches_the_child

from hiddenhand.agents import GoofspielHeuristic, RandomAgent
from hiddenhand.cli import main
from hiddenhand.envs.goofspiel import GoofspielRules
from hiddenhand.interrupt import Interrupted, is_the_command
from hiddenhand.terminal import outcome_line, play_in_terminal
from hiddenhand.training import head_to_head, play_games


class Script:
    """Feeds typed lines to the game, recording prompts and printed text."""

    def __init__(self, lines):
        self.lines = list(lines)
        self.seen = []

    def input(self, prompt):
        self.seen.append(prompt)
        if not self.lines:
            raise EOFError
        return self.lines.pop(0)

    def output(self, text):
        self.seen.append(text)

    @property
    def text(self):
        return "\n".join(self.seen)


def test_a_full_game_with_bad_input_and_a_rematch_offer():
    rules = GoofspielRules(num_cards=3, prize_order="ascending")
    script = Script(["7", "banana", "1", "K", "2", "n"])
    results = play_in_terminal(rules, [GoofspielHeuristic("easy")], seed=5, input_fn=script.input, output=script.output)
    assert "7 is not in your hand; your hand: [1, 2, 3]" in script.text
    assert "'banana' is not a card" in script.text
    assert "'K' is not a card" not in script.text and "13 is not in your hand" in script.text
    assert "Your hand: 1♣ | 2♣ | 3♣" in script.text
    assert "player_1: 3 cards remaining" in script.text
    assert "Round 1 of 3 · prize 1♦" in script.text
    assert "Play again? (y/n): " in script.seen
    assert script.text.rstrip().endswith("Thanks for playing!")
    assert len(results) == 1
    final = results[0]
    assert outcome_line(final, 0) in script.text


def test_play_again_and_end_of_input():
    rules = GoofspielRules(num_cards=2, prize_order="ascending")
    script = Script(["1", "y", "2"])  # second game: input runs out at "Play again?"
    results = play_in_terminal(rules, [RandomAgent()], seed=0, input_fn=script.input, output=script.output)
    assert len(results) == 2
    assert script.text.rstrip().endswith("Goodbye.")


def test_outcome_line():
    assert outcome_line([3.0, -3.0], 0) == "You win!"
    assert outcome_line([3.0, -3.0], 1) == "You lose."
    assert outcome_line([0.0, 0.0], 1) == "It's a tie."


def test_tournament_command(capsys):
    assert main(["tournament", "goofspiel", "--cards", "5", "--games", "20", "--agents", "random,hard"]) == 0
    out = capsys.readouterr().out
    assert "num_cards=5" in out and "random" in out and "hard" in out and "±" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["tournament", "goofspiel", "--cards", "20"], "--cards 20 is out of range; allowed: 2 to 13"),
        (
            ["tournament", "goofspiel", "--agents", "random,wizard"],
            "'wizard' is not an agent of goofspiel, and no file or directory 'wizard' exists; allowed: comma-separated "
            "agents, each one of random, easy, medium, hard, equilibrium, or a saved agent's directory or file",
        ),
        (["tournament", "goofspiel", "--games", "0"], "argument --games: 0 is out of range; allowed: 1 or more"),
        (["play", "goofspiel", "--seed", "-1"], "argument --seed: -1 is out of range"),
        (["solve", "goofspiel", "--out", ""], "the --out path is empty"),
        (["train", "cfr", "spoof", "--out", "x"], "Configurations of spoof that fit: tiny"),
        (["train", "cfr", "goofspiel", "--cards", "5", "--scoring", "total_points", "--out", "x"], "general-sum"),
        (["play", "goofspiel", "--seat", "2"], "--seat 2: this game has seats 0 to 1"),
        (["tournament", "goofspiel", "--agents", "random,/"], "'/' is neither an agent"),
        (["tournament", "goofspiel", "--agents", "easy,easy"], "fewer than two different agents"),
        (
            ["train", "cfr", "goofspiel", "--cards", "1", "--out", "/nonexistent/x"],
            "--cards 1 is out of range",
        ),
    ],
)
def test_cli_errors_are_one_clear_line(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_module_entry_point_help():
    out = subprocess.run(
        [sys.executable, "-m", "hiddenhand", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "play" in out and "tournament" in out
    sub = subprocess.run(
        [sys.executable, "-m", "hiddenhand", "play", "goofspiel", "--help"], capture_output=True, text=True, check=True
    ).stdout
    for flag in (
        "--cards",
        "--players",
        "--prize-order",
        "--scoring",
        "--no-reveal-bids",
        "--opponent",
        "--seat",
        "--seed",
    ):
        assert flag in sub


def test_matches_repeat_with_a_seed_and_rotate_seats():
    rules = GoofspielRules(num_cards=6)
    a = play_games(rules, [GoofspielHeuristic("medium"), RandomAgent()], 50, seed=3)
    b = play_games(rules, [GoofspielHeuristic("medium"), RandomAgent()], 50, seed=3)
    assert np.array_equal(a, b)
    assert np.allclose(a.sum(axis=1), 0.0)
    # The same agent in both seats: by symmetry of the rules the mean is near zero.
    with pytest.raises(ValueError, match="games=0 must be at least 1"):
        play_games(rules, [RandomAgent(), RandomAgent()], 0)
    mirror = head_to_head(rules, RandomAgent(), RandomAgent(), games=400, seed=1)
    assert abs(mirror.mean) < 3 * mirror.ci95 + 1e-9
    assert mirror.wins + mirror.draws + mirror.losses == 400


# --------------------------------------------------------------------------- Ctrl-C, pipes, --version

COMMAND_LINES = {
    "module": [sys.executable, "-m", "hiddenhand"],
    "console script": [str(Path(sys.executable).parent / "hiddenhand")],
}
SIGINT_AT_IMPORT = """
import os, signal, sys

class SigintAtImport:
    '''Sends this process SIGINT when the module HIDDENHAND_TEST_SIGINT_AT is first imported.'''

    def find_spec(self, name, path=None, target=None):
        if name == os.environ["HIDDENHAND_TEST_SIGINT_AT"]:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, SigintAtImport())
"""


def with_sigint_at_import(tmp_path, module):
    """An environment whose Python sends itself SIGINT when ``module`` is first imported: a
    Ctrl-C at that moment of the start, every time."""
    (tmp_path / "sitecustomize.py").write_text(SIGINT_AT_IMPORT)
    path = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "HIDDENHAND_TEST_SIGINT_AT": module}


def assert_one_line_ctrl_c(returncode, stderr):
    assert returncode == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert stderr.strip().splitlines()[-1] == "hiddenhand: interrupted by Ctrl-C", stderr


@pytest.mark.ctrl_c
@pytest.mark.parametrize("entry", list(COMMAND_LINES))
@pytest.mark.parametrize("module", ["numpy", "pyspiel", "hiddenhand.cli.tournament"])
def test_ctrl_c_while_the_command_imports_is_one_line_and_130(entry, module, tmp_path):
    """numpy: early in the package's imports (its games); pyspiel: registering them with
    OpenSpiel; hiddenhand.cli.tournament: the command modules, imported by main()."""
    if not Path(COMMAND_LINES[entry][0]).exists():
        pytest.skip(f"no console script beside {sys.executable}")
    env = with_sigint_at_import(tmp_path, module)
    result = subprocess.run(
        [*COMMAND_LINES[entry], "games"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        preexec_fn=ctrl_c_reaches_the_child,
    )
    assert_one_line_ctrl_c(result.returncode, result.stderr)
    assert result.stdout == ""


@pytest.mark.ctrl_c
def test_ctrl_c_while_a_program_imports_the_package_is_that_programs(tmp_path):
    env = with_sigint_at_import(tmp_path, "numpy")
    result = subprocess.run(
        [sys.executable, "-c", "import hiddenhand"],
        capture_output=True,
        text=True,
        env=env,
        preexec_fn=ctrl_c_reaches_the_child,
    )
    assert result.returncode == -signal.SIGINT and "KeyboardInterrupt" in result.stderr, result.stderr


def test_the_exit_after_ctrl_c_is_130_even_after_a_ctrl_c_in_exec_ed_code():
    """CPython ends a process by SIGINT (status -2 to its parent) when a KeyboardInterrupt went
    through code run by ``exec`` from a string, as dataclasses and scipy run, caught or not."""
    script = (
        "from hiddenhand.interrupt import exit_after_ctrl_c\n"
        "try:\n    exec('raise KeyboardInterrupt')\nexcept KeyboardInterrupt:\n    exit_after_ctrl_c('stopped')\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 130 and result.stderr == "\nhiddenhand: stopped\n", result


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["/venv/bin/python", "/venv/bin/hiddenhand", "games"], True),
        (["python", "-m", "hiddenhand", "play"], True),
        (["python", "-X", "dev", "-u", "-m", "hiddenhand"], True),
        (["python", "-mhiddenhand"], True),
        (["python", "-m", "pytest", "hiddenhand"], False),
        (["python", "-c", "import hiddenhand", "hiddenhand"], False),
        (["python", "train.py", "hiddenhand"], False),
        (["python", "-X", "hiddenhand", "x.py"], False),
        (["python"], False),
    ],
)
def test_the_command_is_told_from_other_programs(argv, expected):
    assert is_the_command(argv) is expected


def interrupt_when(argv, moment, stream="stderr", timeout=120):
    """Run ``argv`` with its input kept open, send SIGINT once ``moment`` (bytes) has appeared
    on ``stream``, or after ``moment`` seconds; return ``(returncode, stdout, stderr)``."""
    process = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=ctrl_c_reaches_the_child,
    )
    try:
        seen = b""
        if isinstance(moment, bytes):
            source = getattr(process, stream).fileno()
            deadline = time.monotonic() + timeout
            while moment not in seen:
                left = deadline - time.monotonic()
                ready = select.select([source], [], [], max(left, 0))[0] if left > 0 else []
                chunk = os.read(source, 65536) if ready else b""
                assert chunk, f"{moment!r} never came on {stream}: {seen!r}"
                seen += chunk
        else:
            time.sleep(moment)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    out, err = (seen + out, err) if stream == "stdout" else (out, seen + err)
    return process.returncode, out.decode(), err.decode()


PLAY_TEN = [*COMMAND_LINES["module"], "play", "goofspiel", "--cards", "10", "--opponent", "equilibrium"]


def interpreter_start() -> float:
    """Seconds this machine takes now to start the interpreter (``site`` included): a Ctrl-C
    inside that window reaches CPython before any code of ours can catch it (a known limit,
    README), and on a loaded machine the window grows well past a fixed delay."""
    start = time.monotonic()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.monotonic() - start


@pytest.mark.ctrl_c
@pytest.mark.parametrize("seconds", [0.2, 0.5, 1.0])
def test_ctrl_c_early_in_play_is_one_line_and_130(seconds):
    """Ctrl-C at moments after the interpreter has started (the imports, the solve's setup)."""
    returncode, _, stderr = interrupt_when(PLAY_TEN, interpreter_start() + seconds)
    assert_one_line_ctrl_c(returncode, stderr)


@pytest.mark.ctrl_c
@pytest.mark.parametrize(
    "argv",
    [PLAY_TEN, [*COMMAND_LINES["module"], "play", "spoof", "--opponent", "equilibrium", "--matches", "9,1"]],
    ids=["goofspiel10", "spoof9"],
)
def test_a_long_setup_says_what_it_does_and_ctrl_c_stops_it(argv):
    """The equilibrium is solved before the first prompt (minutes for Spoof from 9 matches):
    the command says so on stderr, and Ctrl-C then ends it as anywhere else."""
    returncode, stdout, stderr = interrupt_when(argv, b"setting up the")
    assert "solving the game first takes minutes in large configurations" in stderr
    assert_one_line_ctrl_c(returncode, stderr)


@pytest.mark.ctrl_c
def test_ctrl_c_at_a_prompt_exits_130():
    argv = [*COMMAND_LINES["module"], "play", "goofspiel", "--cards", "4", "--seed", "1"]
    returncode, stdout, stderr = interrupt_when(argv, b"> ", stream="stdout")
    assert_one_line_ctrl_c(returncode, stderr)
    assert stdout.rstrip().endswith("Goodbye.")


def test_ctrl_c_in_the_terminal_game_reports_the_games_played():
    rules = GoofspielRules(num_cards=2, prize_order="ascending")
    lines = ["1", "y"]

    def typed(prompt):
        if not lines:
            raise KeyboardInterrupt
        return lines.pop(0)

    shown = []
    with pytest.raises(Interrupted) as info:
        play_in_terminal(rules, [RandomAgent()], seed=0, input_fn=typed, output=shown.append)
    assert len(info.value.result) == 1 and shown[-1] == "\nGoodbye."


def test_a_closed_pipe_ends_the_command_quietly_as_git_does():
    """``hiddenhand games | head -1``: the reader has gone before the output is written."""
    read, write = os.pipe()
    os.close(read)
    try:
        result = subprocess.run([*COMMAND_LINES["module"], "games"], stdout=write, stderr=subprocess.PIPE, text=True)
    finally:
        os.close(write)
    assert result.returncode == 141 and result.stderr == "", result.stderr


def test_version():
    version = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())["project"]["version"]
    result = subprocess.run([*COMMAND_LINES["module"], "--version"], capture_output=True, text=True, check=True)
    assert result.stdout == f"hiddenhand {version}\n"
