"""The promises every face keeps, on every registered game (ours and the Kuhn example of a
user's game that conftest.py registers): calls before ``reset()`` and after the end raise
the same ``RuntimeError`` saying what to call, whichever face is used (PettingZoo's own
wrapper raises a bare ``AssertionError`` or only logs), and a game without a Parallel env
says why when PettingZoo's registry is asked for one."""

import importlib

import numpy as np
import pettingzoo
import pytest
from conftest import quiet_warnings, tiny

from hiddenhand.agents import RandomAgent
from hiddenhand.gymnasium_env import SingleAgentEnv
from hiddenhand.registry import games

GAMES = [pytest.param(game, id=name) for name, game in games().items()]
SIMULTANEOUS = [p for p in GAMES if p.values[0].simultaneous]
BEFORE_RESET = r"step\(\) before reset\(\): call reset\(\) first"
GAME_OVER = r"the game is over and every agent has left it; call reset\(\) to play again"


quiet = pytest.fixture(autouse=True)(quiet_warnings)


def aec_faces(game, **kwargs):
    """Every way to get the game's AEC env: the class, its ``env()``, PettingZoo's registry."""
    module = importlib.import_module(game.env_module)
    kwargs = {**tiny(game), **kwargs}
    return {
        "raw_env": game.env(**kwargs),
        "env": module.env(**kwargs),
        "make": pettingzoo.make("aec", game.env_id, **kwargs),
    }


def play_to_the_end(env, seed=0):
    """Masked random moves until every agent has left (finished agents step ``None``)."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert env.agents == []


@pytest.mark.parametrize("game", GAMES)
def test_every_aec_face_refuses_calls_before_reset_with_the_same_error(game):
    for face, env in aec_faces(game, render_mode="ansi").items():
        for call, attempt in {
            "step": lambda: env.step(0),
            "observe": lambda: env.observe("player_0"),
            "last": lambda: env.last(),
            "render": lambda: env.render(),
            "agent_iter": lambda: env.agent_iter(),
        }.items():
            with pytest.raises(RuntimeError, match=rf"{call}\(\) before reset\(\): call reset\(\) first"):
                attempt()


@pytest.mark.parametrize("game", GAMES)
def test_every_aec_face_refuses_a_step_once_everyone_has_left(game):
    for face, env in aec_faces(game).items():
        play_to_the_end(env)
        with pytest.raises(RuntimeError, match=GAME_OVER):
            env.step(0)
        with pytest.raises(RuntimeError, match=GAME_OVER):
            env.step(None)
        play_to_the_end(env, seed=1)  # reset() plays again


@pytest.mark.parametrize("game", SIMULTANEOUS)
def test_the_parallel_env_refuses_a_step_before_reset_and_after_the_end(game):
    module = importlib.import_module(game.env_module)
    for env in (module.parallel_env(**tiny(game)), pettingzoo.make("parallel", game.env_id, **tiny(game))):
        with pytest.raises(RuntimeError, match=BEFORE_RESET):
            env.step({})
        env.reset(seed=0)
        rng = np.random.default_rng(0)
        while env.agents:
            state = env.unwrapped.game_state
            env.step({a: int(rng.choice(state.legal_actions(i))) for i, a in enumerate(env.agents)})
        with pytest.raises(RuntimeError, match=GAME_OVER):
            env.step({})


@pytest.mark.parametrize("game", GAMES)
def test_the_gymnasium_face_refuses_a_step_before_reset_and_after_the_end(game):
    env = SingleAgentEnv(game.name, RandomAgent(seed=0), render_mode="ansi", **tiny(game))
    with pytest.raises(RuntimeError, match=BEFORE_RESET):
        env.step(0)
    with pytest.raises(RuntimeError, match=r"render\(\) before reset\(\): call reset\(\) first"):
        env.render()
    env.reset(seed=0)
    done = False
    while not done:
        _, _, term, trunc, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
        done = term or trunc
    with pytest.raises(RuntimeError, match=r"the episode is over; call reset\(\) to play again"):
        env.step(0)
    env.reset(seed=0)
    legal = env.action_masks()
    _, _, term, _, info = env.step(int(np.flatnonzero(~legal)[0]) if not legal.all() else env.rules.num_actions)
    assert term and info["illegal_action"]  # a forfeit ends the episode as surely
    with pytest.raises(RuntimeError, match=r"the episode is over; call reset\(\) to play again"):
        env.step(0)
    assert isinstance(env.render(), str)  # the table the forfeit left


@pytest.mark.parametrize("game", GAMES)
def test_pettingzoo_make_parallel_says_why_a_game_has_no_parallel_env(game):
    for env_id in (game.env_id, f"hiddenhand/{game.name}-v0"):
        if game.simultaneous:
            assert (
                pettingzoo.make("parallel", env_id, **tiny(game)).possible_agents
                == game.env(**tiny(game)).possible_agents
            )
        else:
            with pytest.raises(ValueError, match="has no Parallel env: its players do not all move each round"):
                pettingzoo.make("parallel", env_id, **tiny(game))
