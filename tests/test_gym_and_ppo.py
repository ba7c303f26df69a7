"""The Gymnasium face and self-play PPO: env checkers on every game, the loser's reward,
a seeded PPO run that beats random play, and saved agents that act as before."""

import csv
import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

from hiddenhand.agent import Agent, legal_mask
from hiddenhand.agents import RandomAgent, load_agent
from hiddenhand.agents.ppo import PPOAgent
from hiddenhand.cli import main
from hiddenhand.core import IllegalActionError
from hiddenhand.envs.bid_spoof import BidSpoofRules
from hiddenhand.envs.goofspiel import GoofspielRules
from hiddenhand.envs.spoof import SpoofRules
from hiddenhand.gymnasium_env import SingleAgentEnv
from hiddenhand.training import head_to_head
from hiddenhand.training.ppo_pool import PoolSettings, train_ppo

GAMES = [
    ("goofspiel", dict(num_cards=4)),
    ("spoof", dict(matches=2)),
    ("bid_spoof", dict(num_players=3, coins=2)),
    ("egghead", dict(num_players=3, target_score=2, valids_in_observation=True)),
]


@pytest.mark.parametrize("game, kwargs", GAMES, ids=[g for g, _ in GAMES])
def test_gymnasium_and_sb3_checkers(game, kwargs):
    env = SingleAgentEnv(game, RandomAgent(seed=0), **kwargs)
    check_env(env, skip_render_check=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sb3_check_env(env)
    obs, info = env.reset(seed=3)
    assert obs.shape == env.observation_space.shape and env.action_masks().any()


class Holder(Agent):
    """Spoof with one match each: holds its match, then bids 1."""

    def policy(self, observation):
        mask = legal_mask(observation)
        probs = np.zeros(len(mask))
        probs[1 if mask[1] and mask[0] else SpoofRules(matches=1).bid_action(1)] = 1.0
        return probs


def test_the_learner_is_paid_when_an_opponent_ends_the_game():
    env = SingleAgentEnv("spoof", Holder(), seat=0, matches=1)
    env.reset(seed=0)
    rules = env.rules
    _, reward, terminated, _, _ = env.step(rules.hold_action(0))  # the learner holds nothing
    assert reward == 0.0 and not terminated
    # The learner bids 2 (wrong: the total is 1); the opponent answers 1, is right and wins.
    _, reward, terminated, truncated, _ = env.step(rules.bid_action(2))
    assert terminated and not truncated and reward == -1.0


def test_illegal_actions_end_the_episode_or_raise():
    env = SingleAgentEnv("goofspiel", RandomAgent(), seat=0, num_cards=3)
    env.reset(seed=0)
    env.step(0)
    _, reward, terminated, _, info = env.step(0)  # card 1 was spent
    assert terminated and reward == env.rules.utility_range[0] and info["illegal_action"]
    strict = SingleAgentEnv("goofspiel", RandomAgent(), seat=0, illegal_action="raise", num_cards=3)
    strict.reset(seed=0)
    strict.step(0)
    with pytest.raises(IllegalActionError):
        strict.step(0)
    with pytest.raises(ValueError, match="seat=5 is not allowed"):
        SingleAgentEnv("goofspiel", RandomAgent(), seat=5)
    with pytest.raises(ValueError, match="give 2 opponent agents"):
        SingleAgentEnv("bid_spoof", [RandomAgent()], num_players=3)


@pytest.fixture(scope="module")
def ppo_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("ppo4")
    settings = PoolSettings(snapshot_every=1024, eval_games=100)
    curve = train_ppo(
        GoofspielRules(num_cards=4), steps=8192, out=out, eval_every=4096, settings=settings, progress=False
    )
    return out, curve


def test_seeded_ppo_beats_random_on_four_cards(ppo_run):
    out, curve = ppo_run
    agent = PPOAgent.load(out, seed=1)
    result = head_to_head(GoofspielRules(num_cards=4), agent, RandomAgent(seed=2), 600, seed=3)
    assert result.mean - result.ci95 > 0.5  # random play scores 0 against itself
    assert curve[-1].exploitability < curve[0].exploitability < 2.5  # random play concedes 2.5 points


def test_saved_agents_act_identically(ppo_run):
    out, _ = ppo_run
    trained = PPOAgent.load(out)
    again = load_agent("goofspiel", str(out), GoofspielRules(num_cards=4).params)
    state = GoofspielRules(num_cards=4).new_initial_state()
    rng = np.random.default_rng(0)
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply(int(rng.choice(state.legal_actions())))
            continue
        obs = state.observation(state.current_player())
        assert np.array_equal(trained.policy(obs), again.policy(obs))
        state.apply(trained.act(obs))
    with pytest.raises(ValueError, match="was made for goofspiel with"):
        load_agent("goofspiel", str(out), GoofspielRules(num_cards=5).params)
    rows = list(csv.DictReader(open(out / "curve.csv")))
    assert [int(r["steps"]) for r in rows] == [4096, 8192] and (out / "curve.png").exists()


def test_ppo_on_other_games_and_the_command(tmp_path, capsys, monkeypatch):
    import tempfile

    scratch = tmp_path / "temp dir"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # where stable-baselines3's default logger writes
    rules = SpoofRules(matches=2, objective="round")
    settings = PoolSettings(eval_games=20)
    curve = train_ppo(rules, steps=1024, out=tmp_path / "spoof", eval_every=512, settings=settings, progress=False)
    assert curve[-1].exploitability is not None and 0 <= curve[-1].exploitability <= 0.5
    assert not list(scratch.glob("SB3-*"))  # no empty log folder of stable-baselines3 left behind
    rules = BidSpoofRules(num_players=3, coins=1, objective="round")
    settings = PoolSettings(eval_games=10)
    curve = train_ppo(rules, steps=1024, out=tmp_path / "bid", eval_every=1024, settings=settings, progress=False)
    assert curve[-1].exploitability is None and set(curve[-1].against) == {"random", "heuristic"}
    assert (
        main(
            [
                "train",
                "ppo",
                "egghead",
                "--players",
                "3",
                "--valids-in-observation",
                "--target",
                "1",
                "--steps",
                "600",
                "--eval-every",
                "600",
                "--eval-games",
                "3",
                "--out",
                str(tmp_path / "egg"),
            ]
        )
        == 0
    )
    assert "exploitability n/a" in capsys.readouterr().out
