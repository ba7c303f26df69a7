"""Kept playthroughs, as OpenSpiel keeps one per game: a seeded random game of each
registered game's tiny configuration, written by OpenSpiel's own ``generate_playthrough``
(game type and info, then every state's strings, tensors, legal actions and returns).
The test regenerates them and compares, so any change to the rules, observations,
information states or action names shows up as a diff to review. After an intended
change: ``pytest tests/test_playthroughs.py --update-playthroughs``, then read the diff."""

from pathlib import Path

import pytest
from absl import flags
from open_spiel.python.algorithms import generate_playthrough

import hiddenhand.openspiel as ho
from hiddenhand.registry import games

FOLDER = Path(__file__).parent / "playthroughs"


@pytest.mark.parametrize("game", list(games()))
def test_playthrough_matches_the_kept_one(game, request):
    declared = games()[game]
    rules = declared.rules(**declared.env.configurations["tiny"])
    text = generate_playthrough.playthrough(str(ho.to_pyspiel(rules)), action_sequence=None, seed=1)
    path = FOLDER / f"{game}.txt"
    if request.config.getoption("--update-playthroughs"):
        path.write_text(text)
    assert path.exists(), f"no kept playthrough for {game}: run pytest {__file__} --update-playthroughs"
    kept = path.read_text()
    assert text == kept, (
        f"{game}'s playthrough changed: if intended, rerun with --update-playthroughs and review the diff"
    )


def test_the_kept_playthroughs_replay():
    """OpenSpiel's own replay of each kept file: the recorded actions give the recorded
    states (a second reading of the same files, through OpenSpiel's parser)."""
    if not flags.FLAGS.is_parsed():  # the reader consults one of OpenSpiel's command-line flags
        flags.FLAGS.mark_as_parsed()
    for game in games():
        expected, actual = generate_playthrough.replay(str(FOLDER / f"{game}.txt"))
        assert expected == actual, game
