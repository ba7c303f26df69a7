"""Self-play PPO and MMD (hiddenhand.training.selfplay): the rollout credits every seat, the
advantages are GAE by hand, runs reproduce and reload, and a seeded run learns."""

from dataclasses import replace

import numpy as np
import pytest

import hiddenhand
from hiddenhand.agents import PPOAgent
from hiddenhand.training.selfplay import _gae, _Rollout, settings_for, train_selfplay

TINY = dict(games=8, batch=256, epochs=2)


def test_gae_by_hand():
    """Gamma 1: lambda 1 gives the return minus the value, lambda 0 the one-step difference."""
    values = [0.5, -1.0, 2.0]
    gains, targets = _gae(values, 3.0, 1.0)
    assert gains == pytest.approx([2.5, 4.0, 1.0])
    assert targets == pytest.approx([3.0, 3.0, 3.0])
    gains, _ = _gae(values, 3.0, 0.0)
    assert gains == pytest.approx([-1.5, 3.0, 1.0])
    gains, _ = _gae(values, 3.0, 0.5)  # delta = (-1.5, 3, 1): 1; 3 + 0.5; -1.5 + 0.5 * 3.5
    assert gains == pytest.approx([0.25, 3.5, 1.0])


@pytest.mark.parametrize(
    "game, params",
    [
        ("goofspiel", {"num_cards": 4, "observation": "markov"}),
        ("spoof", {"matches": 2, "observation": "markov"}),
        ("bid_spoof", {"num_players": 2, "coins": 2, "observation": "markov"}),
    ],
)
def test_every_seat_is_a_sample_credited_with_its_own_return(game, params):
    """With lambda 1 each decision's target is the final return of the player who made it:
    in these two-player zero-sum games the targets of the two seats' decisions in one game
    are opposite, and both seats appear in every game."""
    import torch
    from sb3_contrib import MaskablePPO

    from hiddenhand.agents import RandomAgent
    from hiddenhand.gymnasium_env import SingleAgentEnv

    torch.manual_seed(0)
    model = MaskablePPO("MlpPolicy", SingleAgentEnv(game, RandomAgent(), **params), seed=0, device="cpu")
    rollout = _Rollout(game, params, games=4, rng=np.random.default_rng(0))
    batch, finished = rollout.collect(model.policy, batch=200, gae_lambda=1.0, scale=1.0)
    assert len(batch.actions) >= 200 and finished >= 4
    assert batch.masks[np.arange(len(batch.actions)), batch.actions].all()  # only legal moves
    assert np.allclose(batch.advantages + batch.values, batch.returns)
    # Both seats are credited: the returns take both signs of each outcome.
    outcomes = set(np.round(batch.returns, 4))
    assert all(-r in outcomes for r in outcomes) and len(outcomes) > 1
    if game == "goofspiel":  # four decisions a seat in every game: the targets cancel game by game
        assert batch.returns.sum() == pytest.approx(0.0, abs=1e-3)


def test_a_run_reproduces_saves_and_reloads(tmp_path):
    params = {"num_cards": 3, "observation": "markov"}
    settings = replace(settings_for("mmd", "goofspiel"), **TINY)
    curves = [
        train_selfplay(
            "goofspiel", params, 600, tmp_path / str(k), seed=3, eval_every=300, settings=settings, progress=False
        )
        for k in (0, 1)
    ]
    assert [p.exploitability for p in curves[0]] == [p.exploitability for p in curves[1]]
    assert [p.steps for p in curves[0]][0] == 0 and curves[0][-1].steps >= 600
    assert all(p.exploitability is not None for p in curves[0])
    agent = PPOAgent.load(tmp_path / "0")
    assert not agent.uses_history and not agent.uses_score  # Markov: measured over positions
    rules = hiddenhand.games()["goofspiel"].rules(**params)
    assert hiddenhand.games()["goofspiel"].exact_exploitability(rules, agent) == pytest.approx(
        curves[0][-1].exploitability, abs=1e-12
    )
    for name in ("curve.csv", "curve.png", "run.json"):
        assert (tmp_path / "0" / name).stat().st_size > 0


def test_bad_settings_are_refused(tmp_path):
    with pytest.raises(ValueError, match="learner='sgd' is not allowed; choose one of: 'ppo', 'mmd'"):
        train_selfplay("goofspiel", {"num_cards": 3}, 10, tmp_path, learner="sgd", progress=False)
    with pytest.raises(ValueError, match="steps"):
        train_selfplay("goofspiel", {"num_cards": 3}, 0, tmp_path, progress=False)


def test_a_seeded_mmd_run_on_4_cards_beats_the_heuristics_exploitability(tmp_path):
    """Every heuristic concedes at least 1.417 points at 4 cards (easy 1.418, medium 1.955,
    hard 1.417: the README's table) and uniform play 2.5; 250,000 decisions of MMD with our
    settings get well below the best of them (0.86 with this seed; seed 0 gives 1.00)."""
    curve = train_selfplay(
        "goofspiel",
        {"num_cards": 4, "observation": "markov"},
        250_000,
        tmp_path,
        seed=1,
        eval_every=250_000,
        progress=False,
    )
    rules = hiddenhand.games()["goofspiel"].rules(num_cards=4, observation="markov")
    easy = hiddenhand.games()["goofspiel"].make_agent("easy", rules)
    assert curve[-1].exploitability < 0.75 * hiddenhand.games()["goofspiel"].exact_exploitability(rules, easy)


def test_the_command_trains_prints_and_saves(tmp_path, capsys):
    from hiddenhand.cli import main

    out = tmp_path / "run"
    args = ["train", "selfplay", "goofspiel", "--cards", "3", "--observation", "markov", "--learner", "ppo"]
    assert main([*args, "--steps", "600", "--eval-every", "300", "--out", str(out)]) == 0
    line = capsys.readouterr().out
    assert line.startswith("PPO self-play on GoofspielRules(num_cards=3") and "exploitability" in line
    recorded = float(line.split("exploitability ")[1].split(";")[0])
    rules = hiddenhand.games()["goofspiel"].rules(num_cards=3, observation="markov")
    agent = PPOAgent.load(out)
    assert hiddenhand.games()["goofspiel"].exact_exploitability(rules, agent) == pytest.approx(recorded, rel=1e-3)
