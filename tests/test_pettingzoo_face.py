"""The PettingZoo face over Goofspiel: PettingZoo's own API tests on every variant, the
registry, illegal moves, seeding, rendering."""

import warnings

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, parallel_api_test, seed_test

import hiddenhand  # noqa: F401  (registers the envs)
from hiddenhand.core import IllegalActionError
from hiddenhand.envs import goofspiel_v0

VARIANTS = [
    dict(num_cards=5),
    dict(num_cards=4, reveal_bids=False),
    dict(num_cards=4, prize_order="ascending", scoring="win_loss"),
    dict(num_cards=4, prize_order="descending", scoring="total_points"),
    dict(num_cards=4, num_players=3),
    dict(num_cards=3, num_players=6, reveal_bids=False),
    dict(num_cards=13),
]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PettingZoo's notes on dict observation spaces
        yield


@pytest.mark.parametrize("kwargs", VARIANTS, ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()))
def test_pettingzoo_api(kwargs):
    api_test(goofspiel_v0.env(**kwargs), num_cycles=200)
    seed_test(lambda: goofspiel_v0.env(**kwargs), num_cycles=200)
    parallel_api_test(goofspiel_v0.parallel_env(**kwargs), num_cycles=200)


def test_registry():
    aec = pettingzoo.make("aec", "hiddenhand/goofspiel-v0", num_cards=5)
    par = pettingzoo.make("parallel", "hiddenhand/goofspiel-v0", num_cards=5, num_players=3)
    assert aec.unwrapped.rules.num_cards == 5
    assert par.possible_agents == ["player_0", "player_1", "player_2"]
    with pytest.raises(ValueError, match="num_cards=99"):
        pettingzoo.make("aec", "hiddenhand/goofspiel-v0", num_cards=99)


def test_parallel_episode_pays_the_point_difference():
    env = goofspiel_v0.parallel_env(num_cards=4, prize_order="ascending")
    obs, _ = env.reset(seed=3)
    total = {a: 0.0 for a in env.possible_agents}
    hands = {a: {1, 2, 3, 4} for a in env.possible_agents}
    for bids in ([1, 2], [2, 1], [4, 3]):  # card values; prizes 1, 2, 3 then 4 plays itself
        for agent, o in obs.items():
            assert set(np.flatnonzero(o["action_mask"]) + 1) == hands[agent]
        for agent, b in zip(env.agents, bids):
            hands[agent].discard(b)
        obs, rewards, terms, truncs, _ = env.step({a: b - 1 for a, b in zip(env.agents, bids)})
        for a, r in rewards.items():
            total[a] += r
    # player_1 takes 1, player_0 takes 2 and 3; the last round is 3 vs 4: player_1 takes 4.
    assert all(terms.values())
    assert total == {"player_0": 0.0, "player_1": 0.0}  # 5 points each
    assert not env.agents


def test_both_masks_are_live_in_a_simultaneous_round():
    env = goofspiel_v0.raw_env(num_cards=4, prize_order="ascending")
    env.reset()
    assert env.observe("player_1")["action_mask"].tolist() == [1, 1, 1, 1]
    env.step(2)
    assert env.observe("player_0")["action_mask"].tolist() == [0, 0, 0, 0]
    assert env.observe("player_1")["action_mask"].tolist() == [1, 1, 1, 1]


def test_rewards_reach_every_player_at_the_end():
    env = goofspiel_v0.env(num_cards=3, prize_order="descending")
    env.reset(seed=0)
    finals = {}
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        if term or trunc:
            finals[agent] = reward
            env.step(None)
        else:
            env.step(
                {"player_0": 2, "player_1": 1}[agent]
                if env.unwrapped.game_state.prize == 3
                else int(np.flatnonzero(obs["action_mask"])[0])
            )
    # Prize 3: 3 vs 2 to player_0. Prize 2: 1 vs 1 tie. Prize 1: 2 vs 3 to player_1.
    assert finals == {"player_0": 2.0, "player_1": -2.0}


def test_raw_env_raises_on_an_illegal_action():
    env = goofspiel_v0.raw_env(num_cards=4, prize_order="ascending")
    env.reset()
    env.step(3)
    env.step(0)
    with pytest.raises(IllegalActionError, match="legal actions: 0 \\(Bid 1\\), 1 \\(Bid 2\\), 2 \\(Bid 3\\)"):
        env.step(3)


def test_env_follows_pettingzoos_illegal_move_convention():
    env = goofspiel_v0.env(num_cards=13)
    env.reset(seed=1)
    env.step(5)
    env.step(5)
    env.step(5)  # card 6 is spent: player_0 forfeits, paid the worst return, player_1 the best
    assert all(env.terminations.values())
    finals = {}
    for agent in env.agent_iter():
        _, reward, term, trunc, _ = env.last()
        finals[agent] = reward
        env.step(None)
    assert finals == {"player_0": -91.0, "player_1": 91.0}


def test_env_enforces_call_order():
    env = goofspiel_v0.env(num_cards=4)
    with pytest.raises(RuntimeError, match=r"step\(\) before reset\(\): call reset\(\) first"):
        env.step(0)


def test_same_seed_same_prizes_different_seed_different_prizes():
    def prizes(seed):
        env = goofspiel_v0.raw_env(num_cards=8)
        env.reset(seed=seed)
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
        return [r.prize for r in env.game_state.history]

    assert prizes(7) == prizes(7)
    assert len({tuple(prizes(s)) for s in range(5)}) > 1


def test_render_modes():
    env = goofspiel_v0.env(num_cards=4, render_mode="ansi", prize_order="ascending")
    env.reset()
    env.step(1)
    env.step(2)
    text = env.render()
    assert "Last round: prize 1♦: player_0 bid 2, player_1 bid 3; player_1 takes 1♦" in text
    assert "Scores: player_0 0, player_1 1" in text
    with pytest.raises(ValueError, match="render_mode='svg' is not allowed; choose one of: None, 'ansi', 'human'"):
        goofspiel_v0.env(render_mode="svg")
