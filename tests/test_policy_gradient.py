"""Self-play PPO and MMD (hiddenhand.training.policy_gradient): the collection over the batched
env credits every seat, the advantages are GAE by hand, runs reproduce and reload, and a
seeded run learns."""

import json
from dataclasses import replace

import numpy as np
import pytest

import hiddenhand
from hiddenhand.agents import PPOAgent
from hiddenhand.registry import get
from hiddenhand.training.policy_gradient import settings_for, train_selfplay
from hiddenhand.training.selfplay_collection import Collector, gae

TINY = dict(games=8, batch=256, epochs=2)


def _arrays(players, values, banked, ended, rewards):
    players = np.array(players)[:, None]
    return {
        "players": players,
        "values": np.array(values, dtype=float)[:, None],
        "banked": np.array(banked, dtype=float)[:, None],
        "ended": np.array(ended)[:, None],
        "rewards": np.array(rewards, dtype=float)[:, None, :],
    }


def test_gae_by_hand():
    """Gamma 1, one game of two players: player 0 decides at steps 0 and 2, player 1 at 1 and 3,
    the game ends at step 3 paying (+3, -3); player 0 had banked 1 point by step 2 (player 1,
    -1 by step 3). Lambda 1 gives each decision the return still to come minus its value,
    lambda 0 the one-step difference over its player's own next decision."""
    arrays = _arrays(
        [0, 1, 0, 1],
        [0.5, 0.2, -1.0, 2.0],
        [0.0, 0.0, 1.0, -1.0],
        [False, False, False, True],
        [[0, 0]] * 3 + [[3, -3]],
    )
    gains, done = gae(arrays, 1.0)
    # to come: player 0 at step 0: 3, at step 2: 3 - 1 = 2; player 1 at step 1: -3, at step 3: -3 + 1 = -2.
    assert gains[:, 0] == pytest.approx([3 - 0.5, -3 - 0.2, 2 + 1.0, -2 - 2.0])
    assert done.all()
    gains, _ = gae(arrays, 0.0)
    # step 0: banked 1 by player 0's next decision, whose value is -1; step 1: -1 banked, next value 2.
    assert gains[:, 0] == pytest.approx([1 - 1.0 - 0.5, -1 + 2.0 - 0.2, 2 + 1.0, -2 - 2.0])


def test_gae_leaves_unfinished_games_for_later():
    arrays = _arrays([0, 1, 0], [0.0] * 3, [0.0] * 3, [False, True, False], [[0, 0], [1, -1], [0, 0]])
    _, done = gae(arrays, 0.9)
    assert done[:, 0].tolist() == [True, True, False]


@pytest.mark.parametrize(
    "game, params",
    [
        ("goofspiel", {"num_cards": 4, "observation": "markov"}),
        ("spoof", {"matches": 2, "observation": "markov"}),
        ("bid_spoof", {"num_players": 2, "coins": 2, "observation": "markov"}),
    ],
)
def test_every_seat_is_a_sample_credited_with_what_is_still_to_come(game, params):
    """With lambda 1 each decision's target is what is still to come to the player who made
    it: in these two-player zero-sum games both seats are credited, with opposite targets
    for each outcome; in Goofspiel a decision's target is the points of its round and the
    later ones (at most the prizes left), and no decision waits twice: over collections every
    decision played is in exactly one batch or still waiting."""
    import torch
    from sb3_contrib import MaskablePPO

    from hiddenhand.agents import RandomAgent
    from hiddenhand.gymnasium_env import SingleAgentEnv

    torch.manual_seed(0)
    model = MaskablePPO("MlpPolicy", SingleAgentEnv(game, RandomAgent(), **params), seed=0, device="cpu")
    collector = Collector(game, params, games=16, steps=7, seed=0)
    used, played = 0, 0
    outcomes = set()
    for _ in range(6):
        batch, n, finished = collector.collect(model.policy, gae_lambda=1.0, scale=1.0)
        played += n
        used += len(batch.actions)
        assert batch.masks[np.arange(len(batch.actions)), batch.actions].all()  # only legal moves
        assert np.allclose(batch.advantages + batch.values, batch.returns)
        outcomes |= set(np.round(batch.returns, 4))
        if game == "goofspiel":  # Markov layout: prize, hand, other hand, prizes to come (4 each)
            values = np.arange(1, 5)
            at_stake = batch.obs[:, :4] @ values + batch.obs[:, 12:16] @ values
            assert (np.abs(batch.returns) <= at_stake + 1e-9).all()  # never the points already won
    waiting = int(collector.kept["pending"].sum()) if collector.kept else 0
    assert used + waiting == played
    assert all(-r in outcomes for r in outcomes) and len(outcomes) > 1


def test_a_run_reproduces_saves_and_reloads(tmp_path):
    params = {"num_cards": 3, "observation": "markov"}
    settings = replace(settings_for("mmd", "goofspiel"), **TINY)
    curves = [
        train_selfplay(
            get("goofspiel").rules(**params),
            steps=600,
            out=tmp_path / str(k),
            seed=3,
            eval_every=300,
            settings=settings,
            progress=False,
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


def test_a_budget_of_seconds_ends_the_run_after_the_update_that_spends_it(tmp_path):
    settings = replace(settings_for("ppo", "goofspiel"), **TINY)
    params = {"num_cards": 3, "observation": "markov"}
    rules = get("goofspiel").rules(**params)
    curve = train_selfplay(
        rules, steps=10**9, out=tmp_path, eval_every=10**9, settings=settings, progress=False, seconds=0.5
    )
    assert len(curve) == 2 and curve[0].steps == 0  # the first measure, then the final one where the budget ended it
    assert 0 < curve[-1].steps < 10**9 and curve[-1].steps % 256 == 0  # whole updates (8 games, 32 steps each)
    assert curve[-1].seconds >= 0.5


def test_bad_settings_are_refused(tmp_path):
    with pytest.raises(ValueError, match="learner='sgd' is not allowed; choose one of: 'ppo', 'mmd'"):
        settings_for("sgd", "goofspiel")
    with pytest.raises(TypeError, match=r"make them with hiddenhand.registry.get\('goofspiel'\).rules"):
        train_selfplay("goofspiel", steps=10, out=tmp_path, progress=False)
    with pytest.raises(ValueError, match="device='tpu' is not allowed; choose one of: auto, cpu, cuda"):
        train_selfplay(get("goofspiel").rules(num_cards=3), steps=10, out=tmp_path, device="tpu", progress=False)
    with pytest.raises(ValueError, match="steps"):
        train_selfplay(get("goofspiel").rules(**{"num_cards": 3}), steps=0, out=tmp_path, progress=False)


def test_a_seeded_mmd_run_on_4_cards_beats_the_heuristics_exploitability(tmp_path):
    """Uniform play concedes 2.5 points at 4 cards and every heuristic at least 1.417 (easy
    1.418, medium 1.955, hard 1.417: the README's table); 250,000 decisions of MMD with our
    settings get below every heuristic that plays the Markov observation, as the game's
    exact measure gives their figures here (1.03 with this seed)."""
    curve = train_selfplay(
        get("goofspiel").rules(**{"num_cards": 4, "observation": "markov"}),
        steps=250_000,
        out=tmp_path,
        seed=1,
        eval_every=250_000,
        progress=False,
    )
    goofspiel = hiddenhand.games()["goofspiel"]
    rules = goofspiel.rules(num_cards=4, observation="markov")
    best = min(goofspiel.exact_exploitability(rules, goofspiel.make_agent(name, rules)) for name in ("easy", "medium"))
    assert best == pytest.approx(1.418, abs=1e-3)
    assert curve[-1].exploitability < best


def test_the_command_trains_prints_and_saves(tmp_path, capsys):
    from hiddenhand.cli import main

    out = tmp_path / "run"
    args = ["train", "ppo-selfplay", "goofspiel", "--cards", "3", "--observation", "markov"]
    assert main([*args, "--steps", "600", "--eval-every", "300", "--out", str(out)]) == 0
    line = capsys.readouterr().out
    assert (
        line.startswith("ppo-selfplay on goofspiel --cards 3 --players 2 --observation markov: ")
        and "exploitability" in line
    )
    recorded = float(line.split("exploitability ")[1].split()[0])
    rules = hiddenhand.games()["goofspiel"].rules(num_cards=3, observation="markov")
    agent = PPOAgent.load(out)
    assert hiddenhand.games()["goofspiel"].exact_exploitability(rules, agent) == pytest.approx(recorded, rel=1e-3)


def test_the_command_s_seconds_end_a_run_before_its_steps(tmp_path):
    from hiddenhand.cli import main

    args = ["train", "ppo-selfplay", "goofspiel", "--cards", "3", "--observation", "markov"]
    budget = ["--steps", "100000000", "--eval-every", "100000000", "--seconds", "1"]
    assert main([*args, *budget, "--out", str(tmp_path)]) == 0
    record = json.loads((tmp_path / "run.json").read_text())
    assert 0 < record["steps"] < 100_000_000 and record["seconds"] >= 1 and not record["interrupted"]
