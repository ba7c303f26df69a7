"""``render_mode="rgb_array"`` on every registered game (ours and the Kuhn example, which
has no picture of its own and gets its text drawn) and on the Gymnasium face: frames of one
size that follow the game, hidden cards face down, and a video of an episode.
(``tests/test_conformance.py`` runs PettingZoo's ``render_test`` over every render mode of
every configuration, ``rgb_array`` included.)"""

import numpy as np
import pettingzoo
import pytest
from conftest import quiet_warnings, tiny
from gymnasium.wrappers import RecordVideo
from moviepy import VideoFileClip

from hiddenhand.agents import RandomAgent
from hiddenhand.core import CHANCE, sample_chance
from hiddenhand.gymnasium_env import SingleAgentEnv
from hiddenhand.picture import HEIGHT, WIDTH, draw
from hiddenhand.registry import games

GAMES = [pytest.param(game, id=name) for name, game in games().items()]


quiet = pytest.fixture(autouse=True)(quiet_warnings)


@pytest.mark.parametrize("game", GAMES)
def test_frames_have_one_size_and_change_with_the_table(game):
    env = pettingzoo.make("aec", game.env_id, render_mode="rgb_array", **tiny(game))
    assert "rgb_array" in env.metadata["render_modes"]
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    frames, texts = [env.render()], [env.unwrapped.game_state.render()]
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        frames.append(env.render())
        texts.append(env.unwrapped.game_state.render())
    for frame in frames:
        assert frame.dtype == np.uint8 and frame.shape == (HEIGHT, WIDTH, 3)
        assert (frame != frame[0, 0]).any(axis=2).sum() > 2000  # not blank: text and cards on the cloth
    changes = [k for k in range(1, len(texts)) if texts[k] != texts[k - 1]]
    assert changes  # a game always moves the table
    for k in changes:
        assert not np.array_equal(frames[k], frames[k - 1]), f"move {k} changed the table but not the picture"


def same_view_different_table(rules, seed=0, games_to_try=300):
    """Two states and a player who cannot tell them apart (equal information states, the same
    player to move) although another player can (a card hidden from the first), from random
    play."""
    rng = np.random.default_rng(seed)
    seen = {}
    for _ in range(games_to_try):
        state = rules.new_initial_state()
        while not state.is_terminal():
            if state.current_player() == CHANCE:
                state.apply(sample_chance(state, rng))
            else:
                state.apply(int(rng.choice(state.legal_actions())))
            views = [state.information_state_string(player) for player in range(rules.num_players)]
            for player, view in enumerate(views):
                key = (player, view, state.current_player())
                other, other_views = seen.setdefault(key, (state.clone(), views))
                if other_views != views:
                    return player, other, state.clone()
    raise AssertionError(f"no hidden information found in {games_to_try} random games of {rules!r}")


@pytest.mark.parametrize("game", GAMES)
def test_a_hidden_card_is_face_down_to_whoever_may_not_see_it(game):
    player, first, second = same_view_different_table(game.rules(**tiny(game)))
    np.testing.assert_array_equal(draw(first.table(player)), draw(second.table(player)))
    assert not np.array_equal(draw(first.table()), draw(second.table()))  # the spectator sees the difference


def test_goofspiel_bids_stay_face_down_until_the_reveal():
    rules = games()["goofspiel"].rules(num_cards=4, prize_order="ascending")
    low, high = rules.new_initial_state(), rules.new_initial_state()
    low.apply(0)  # player_0 bids 1 ...
    high.apply(3)  # ... or 4
    np.testing.assert_array_equal(draw(low.table(1)), draw(high.table(1)))
    assert not np.array_equal(draw(low.table(0)), draw(high.table(0)))
    for state in (low, high):
        state.apply(1)  # player_1 bids 2: the reveal
    assert not np.array_equal(draw(low.table(1)), draw(high.table(1)))


def test_the_gymnasium_face_draws_its_learners_seat():
    """The opponent (player_0) bids inside reset(), differently under the two seeds; the
    learner in seat 1 sees the same picture, a spectator would not."""

    def learner_frame(seed):
        env = SingleAgentEnv("goofspiel", RandomAgent(), seat=1, render_mode="rgb_array", prize_order="ascending")
        env.reset(seed=seed)
        return env.render(), env.state.render()

    frame, table = learner_frame(0)
    other_frame, other_table = next(f for f in map(learner_frame, range(1, 50)) if f[1] != table)
    np.testing.assert_array_equal(frame, other_frame)
    frame_a = frame
    assert frame_a.shape == (HEIGHT, WIDTH, 3) and frame_a.dtype == np.uint8
    assert SingleAgentEnv.metadata["render_fps"] > 0 and "rgb_array" in SingleAgentEnv.metadata["render_modes"]


@pytest.mark.parametrize("game", GAMES)
def test_gymnasiums_record_video_records_an_episode(game, tmp_path):
    """What users do: Gymnasium's ``RecordVideo`` over the Gymnasium face writes one video of
    the episode, one frame per table the learner saw (the reset and each step)."""
    env = RecordVideo(
        SingleAgentEnv(game.name, RandomAgent(seed=0), render_mode="rgb_array", **tiny(game)), str(tmp_path)
    )
    env.reset(seed=0)
    steps, done = 0, False
    while not done:
        _, _, term, trunc, _ = env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
        steps, done = steps + 1, term or trunc
    env.close()
    (video,) = tmp_path.glob("*.mp4")
    with VideoFileClip(str(video)) as clip:
        assert tuple(clip.size) == (WIDTH, HEIGHT)
        assert round(clip.duration * clip.fps) == steps + 1
