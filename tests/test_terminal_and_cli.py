"""The terminal game with scripted input, the command line, and the evaluation helpers."""

import subprocess
import sys

import numpy as np
import pytest

from hiddenhand.agents import GoofspielHeuristic, RandomAgent
from hiddenhand.cli import main
from hiddenhand.envs.goofspiel import GoofspielRules
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
        (["tournament", "goofspiel", "--cards", "20"], "num_cards=20 is out of range; allowed: 2 to 13"),
        (
            ["tournament", "goofspiel", "--agents", "random,wizard"],
            "'wizard' is neither an agent of goofspiel (random, easy, medium, hard, equilibrium) nor a saved policy",
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
            "--cards: num_cards=1 is out of range",
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
