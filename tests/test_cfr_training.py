"""CFR training through the adapter: the curve, the saved policy, the command line."""

import csv
import json

import pytest

import hiddenhand.openspiel as ho
from hiddenhand.agents import PolicyAgent, RandomAgent, load_agent
from hiddenhand.cli import main
from hiddenhand.envs.goofspiel import GoofspielRules
from hiddenhand.terminal import play_in_terminal
from hiddenhand.training.cfr import CFRSettings, train_cfr


def read_curve(path):
    with open(path) as handle:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(handle)]


@pytest.mark.parametrize("algorithm", ["cfr", "cfr+", "mccfr-external", "mccfr-outcome"])
def test_every_algorithm_writes_a_curve_and_a_policy(algorithm, tmp_path):
    rules = GoofspielRules(num_cards=3)
    curve = train_cfr(rules, eval_every=20, progress=False, steps=60, out=tmp_path, settings=CFRSettings(algorithm))
    assert [p.steps for p in curve] == [20, 40, 60]
    rows = read_curve(tmp_path / "curve.csv")
    assert [r["steps"] for r in rows] == [20, 40, 60]
    assert rows[-1]["exploitability"] == pytest.approx(curve[-1].exploitability, rel=1e-5)
    assert (tmp_path / "curve.png").read_bytes()[:4] == b"\x89PNG"
    meta = json.loads((tmp_path / "run.json").read_text())
    assert meta["algorithm"] == algorithm and meta["params"]["num_cards"] == 3
    assert meta["unit"] == "iteration" and meta["steps"] == 60 and [p["steps"] for p in meta["curve"]] == [20, 40, 60]
    # The saved policy is the solver's average policy: NashConv (exploitability times the
    # players) by an independent walk.
    agent = PolicyAgent.load(tmp_path)
    assert ho.nash_conv(ho.to_pyspiel(rules), agent) == pytest.approx(2 * curve[-1].exploitability, abs=1e-9)
    uniform = 1.3333333333333333  # OpenSpiel's NashConv of uniform play at 3 cards, halved
    assert curve[-1].exploitability < uniform


def test_cfr_plus_converges_on_three_cards(tmp_path):
    curve = train_cfr(
        GoofspielRules(num_cards=3),
        eval_every=100,
        progress=False,
        steps=300,
        out=tmp_path,
        settings=CFRSettings("cfr+"),
    )
    assert curve[0].exploitability > curve[-1].exploitability
    assert curve[-1].exploitability < 5e-4


def test_bad_training_configuration(tmp_path):
    with pytest.raises(ValueError, match="algorithm='dqn' is not allowed"):
        train_cfr(GoofspielRules(num_cards=3), steps=10, eval_every=5, out=tmp_path, settings=CFRSettings("dqn"))
    with pytest.raises(ValueError, match="is general-sum"):
        train_cfr(
            GoofspielRules(num_cards=3, scoring="total_points"),
            steps=10,
            eval_every=5,
            out=tmp_path,
            settings=CFRSettings("cfr"),
        )
    with pytest.raises(ValueError, match="steps=0"):
        train_cfr(GoofspielRules(num_cards=3), steps=0, eval_every=5, out=tmp_path, settings=CFRSettings("cfr"))


def test_train_command_and_playing_the_result(tmp_path, capsys):
    out = tmp_path / "run"
    assert (
        main(
            [
                "train",
                "cfr",
                "goofspiel",
                "--cards",
                "3",
                "--no-reveal-bids",
                "--iterations",
                "40",
                "--eval-every",
                "20",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert "NashConv" in capsys.readouterr().out
    agent = load_agent("goofspiel", str(out), GoofspielRules(num_cards=3, reveal_bids=False).params)
    assert agent.params["reveal_bids"] is False
    with pytest.raises(ValueError, match="was made for goofspiel with"):
        load_agent("goofspiel", str(out), GoofspielRules(num_cards=3).params)
    with pytest.raises(ValueError, match="neither an agent"):
        load_agent("goofspiel", str(tmp_path / "nothing"))
    lines = iter(["1", "2", "n"])
    results = play_in_terminal(
        GoofspielRules(num_cards=3, reveal_bids=False),
        [agent],
        seed=1,
        input_fn=lambda _: next(lines),
        output=lambda _: None,
    )
    assert len(results) == 1


@pytest.mark.parametrize(
    "argv, message",
    [
        (["train", "cfr", "goofspiel", "--reveal-bids=maybe", "--out", "x"], "ignored explicit argument 'maybe'"),
        (["train", "cfr", "goofspiel", "--colour", "red", "--out", "x"], "unrecognized arguments: --colour red"),
        (["train", "cfr", "goofspiel", "--cards", "0", "--out", "x"], "--cards 0 is out of range; allowed: 2 to 13"),
        (
            ["train", "cfr", "goofspiel", "--cards", "three", "--out", "x"],
            "--cards three is not an integer; allowed: 2 to 13",
        ),
    ],
)
def test_train_command_errors(argv, message, capsys):
    with pytest.raises(SystemExit):
        main(argv)
    assert message in capsys.readouterr().err


def test_cfr_on_a_three_player_game(tmp_path):
    """CFR+ runs on many-player zero-sum games too (NashConv is still exact there, though
    no longer a distance to a unique value): one round of three-player Bid Spoof."""
    from hiddenhand.envs.bid_spoof import BidSpoofRules

    curve = train_cfr(
        BidSpoofRules(num_players=3, coins=1, objective="round"),
        steps=60,
        eval_every=20,
        out=tmp_path,
        progress=False,
        settings=CFRSettings("cfr+"),
    )
    rules = BidSpoofRules(num_players=3, coins=1, objective="round")
    uniform = ho.exploitability(rules, RandomAgent()).value  # OpenSpiel's best response: 0.353
    assert curve[-1].exploitability < curve[0].exploitability
    assert curve[-1].exploitability < 0.1 * uniform  # 0.017 after 60 iterations
    agent = load_agent("bid_spoof", str(tmp_path), rules.params)
    assert agent.game == "bid_spoof"
    # The curve's exploitability is NashConv over the three seats.
    assert ho.nash_conv(ho.to_pyspiel(rules), agent) == pytest.approx(3 * curve[-1].exploitability, abs=1e-9)


def test_an_exact_measure_leaves_torch_on_its_threads():
    """numba's OpenMP layer, started by a process's first parallel measure (Markov
    Goofspiel's positions), sets torch's thread count to every core; ``exact_measure``
    puts it back. In a fresh process, as a benchmark worker's first run is (there, on two
    cores, the measure alone leaves torch on two threads)."""
    import subprocess
    import sys

    code = """
import torch
torch.set_num_threads(1)
assert torch.get_num_threads() == 1  # torch has started its threads, as in a training run
import hiddenhand
from hiddenhand.agent import RandomAgent
from hiddenhand.training.run import exact_measure
game = hiddenhand.games()["goofspiel"]
assert exact_measure(game, game.rules(num_cards=4, observation="markov"), RandomAgent()) == 2.5
print(torch.get_num_threads())
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["1"]
