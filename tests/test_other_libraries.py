"""Other RL libraries on every registered game: Tianshou 2.x (whose multi-agent algorithms
credit a step's rewards to its mover only, so that our games need the episode hook of
:mod:`hiddenhand.tianshou`), TorchRL's ``PettingZooWrapper`` unchanged, and a CleanRL-style
loop on the Gymnasium face; and the three examples' ``main()`` on tiny budgets."""

import importlib.util
import multiprocessing
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pettingzoo
import pytest
import torch
from tensordict.nn import TensorDictSequential
from tianshou.algorithm import Algorithm, MARLRandomDiscreteMaskedOffPolicyAlgorithm
from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm
from tianshou.data import Collector, VectorReplayBuffer
from tianshou.env import DummyVectorEnv, PettingZooEnv
from torchrl.envs import PettingZooWrapper

import hiddenhand
from hiddenhand.envs import egghead_v0
from hiddenhand.tianshou import CreditEachPlayer, credited_rewards, movers

# Importing TorchRL sets multiprocessing's start method to "spawn"; the rest of the suite runs
# vector envs of a game that conftest registers in this process only, so the platform's
# default start method (fork on Linux) is put back.
multiprocessing.set_start_method(None, force=True)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SMALL = {"goofspiel": {"num_cards": 4}, "egghead": egghead_v0.raw_env.configurations["small"]}
GAMES = list(hiddenhand.games().values())  # ours, and any game registered before collection
pytestmark = pytest.mark.filterwarnings("ignore:PettingZoo in TorchRL is tested")


def params(game):
    return dict(SMALL.get(game.name, {}))


def example(name):
    """The example script ``examples/<name>.py``, imported as a module."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# --------------------------------------------------------------------------- Tianshou


class Recorded(PettingZooEnv):
    """Tianshou's PettingZoo wrapper that numbers its games in each step's info and keeps
    every game's returns, read from the game itself."""

    def __init__(self, env, finals):
        self.finals = finals
        super().__init__(env)

    def step(self, action):
        obs, rewards, terminated, truncated, info = super().step(action)
        info = {**info, "game": len(self.finals)}
        if terminated or truncated:
            self.finals.append(np.array(self.env.unwrapped.game_state.returns(), dtype=float))
        return obs, rewards, terminated, truncated, info


def tianshou_random_games(game, games, hook, seed=0):
    """Collect ``games`` games of uniformly random play with Tianshou's Collector; returns the
    buffer's transitions, the agents and each game's returns."""
    np.random.seed(seed)  # Tianshou's random policy draws from numpy's global generator
    finals = []
    envs = DummyVectorEnv([lambda: Recorded(pettingzoo.make("aec", game.env_id, **params(game)), finals)])
    envs.seed(seed)
    env = envs.workers[0].env
    random = [MARLRandomDiscreteMaskedOffPolicyAlgorithm(env.action_space) for _ in env.agents]
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=random, env=env)
    buffer = VectorReplayBuffer(100_000, 1)
    hook = CreditEachPlayer(env.agents) if hook else None
    Collector(algorithm, envs, buffer, on_episode_done_hook=hook).collect(n_episode=games, reset_before_collect=True)
    assert len(finals) == games
    return buffer, env.agents, np.array(finals)


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_tianshou_with_the_hook_every_player_gets_its_final_reward(game):
    buffer, agents, finals = tianshou_random_games(game, games=16, hook=True)
    batch = buffer[:]
    mover, credited, game_of = movers(batch, agents), credited_rewards(batch, agents), batch.info.game
    rewarded = 0
    for g, final in enumerate(finals):
        for player in range(len(agents)):
            mine = (game_of == g) & (mover == player)
            if not mine.any():
                continue  # a player who never moved (an EggHead moderator) has nothing to credit
            assert credited[mine].sum() == pytest.approx(final[player])
            assert credited[mine][:-1].tolist() == [0.0] * (mine.sum() - 1)  # paid on its last move...
            assert batch.done[mine].tolist() == [False] * (mine.sum() - 1) + [True]  # ...which ends its game
            rewarded += final[player] != 0
    assert rewarded > 0
    # What Tianshou's on-policy algorithms compute from it (REINFORCE's Monte Carlo return, as
    # its multi-agent dispatcher does, one player's transitions at a time): every move of a
    # player returns that player's final reward, and no return runs on into the next game.
    for player, agent in enumerate(agents):
        indices = np.flatnonzero(mover == player)
        if len(indices) == 0:
            continue
        own = buffer[indices]
        own.rew = own.rew[:, player]
        returns, _ = Algorithm.compute_episodic_return(own, buffer, indices, gamma=1.0, gae_lambda=1.0)
        assert returns == pytest.approx(finals[game_of[indices], player])


def test_tianshou_without_the_hook_goofspiel_player_0_never_sees_a_point():
    game = hiddenhand.games()["goofspiel"]
    buffer, agents, finals = tianshou_random_games(game, games=48, hook=False)
    batch = buffer[:]
    mover, credited, game_of = movers(batch, agents), credited_rewards(batch, agents), batch.info.game
    player_0 = np.array([credited[(game_of == g) & (mover == 0)].sum() for g in range(len(finals))])
    player_1 = np.array([credited[(game_of == g) & (mover == 1)].sum() for g in range(len(finals))])
    assert (finals[:, 0] != 0).sum() > 24  # player 0 won or lost most of these games...
    assert (player_0 == 0).all()  # ...and was told of none: player 1 always bids last
    assert player_1 == pytest.approx(finals[:, 1])


# --------------------------------------------------------------------------- TorchRL


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_torchrl_rollouts_respect_the_masks_and_pay_every_player(game):
    torchrl_example = example("torchrl_pettingzoo")
    raw = game.env(**params(game))  # raw_env: an illegal move would raise rather than forfeit
    env = PettingZooWrapper(raw, use_mask=True, seed=3)
    players = list(env.group_map)
    assert players == raw.possible_agents
    uniform = torchrl_example.Uniform(torchrl_example.num_actions(env))
    example_policy = TensorDictSequential(*(torchrl_example.actor(p, uniform) for p in players))
    for policy in (None, example_policy):  # TorchRL's own masked random actions, and the example's actor
        for _ in range(4):
            episode = env.rollout(100_000, policy, break_when_any_done=True)
            acting = torch.stack([episode[p, "mask"].reshape(-1) for p in players], dim=1)
            assert (acting.sum(dim=1) == 1).all()  # one player moves at a time
            for i, p in enumerate(players):
                steps = acting[:, i]
                legal = episode[p, "action_mask"].reshape(len(episode), -1)[steps]
                actions = episode[p, "action"].reshape(-1)[steps]
                assert legal[torch.arange(len(actions)), actions].all()
            done = episode["next", "done"].reshape(-1)
            assert done[-1] and not done[:-1].any()
            returns = raw.game_state.returns()
            for i, p in enumerate(players):
                assert episode["next", p, "reward"].sum().item() == pytest.approx(returns[i], abs=1e-6)


# --------------------------------------------------------------------------- CleanRL style


def episodes_of(rollout, env_index):
    """(length, reward summed) of each game env ``env_index`` finished in the rollout, as the
    loop recorded them, and (length, return) as the env's RecordEpisodeStatistics saw them."""
    dones = rollout["dones"][:, env_index].bool().tolist()
    rewards = rollout["rewards"][:, env_index].tolist()
    recorded, seen, start = [], [], 0
    for t, done in enumerate(dones):
        info = rollout["infos"][t]
        if done:
            recorded.append((t + 1 - start, sum(rewards[start : t + 1])))
            start = t + 1
        if "final_info" in info and info["_final_info"][env_index]:
            episode = info["final_info"]["episode"]
            seen.append((int(episode["l"][env_index]), float(episode["r"][env_index])))
    return recorded, seen


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_cleanrl_style_loop_honours_the_mask_and_autoresets_on_the_same_step(game):
    cleanrl = example("cleanrl_style")
    envs = cleanrl.make_envs(game.name, 2, **params(game))  # its envs raise on an illegal move
    agent = cleanrl.Agent(envs.single_observation_space.shape[0], envs.single_action_space.n)
    obs = torch.as_tensor(envs.reset(seed=1)[0], dtype=torch.float32)
    rollout = cleanrl.collect(envs, agent, obs, num_steps=60)
    masks, actions = rollout["masks"], rollout["actions"]
    assert masks.gather(2, actions.unsqueeze(-1)).all()
    if game.name == "goofspiel":
        assert not masks.all()  # the masks did forbid something (cards already played)
    games = 0
    for i in range(envs.num_envs):
        recorded, seen = episodes_of(rollout, i)
        assert recorded == seen  # every step of every game, none extra, and its reward
        games += len(seen)
    assert games > 0
    envs.close()


def test_next_step_autoreset_would_add_a_step_per_game():
    """Why line (1) is there: with Gymnasium 1.x's default, the step after a game's end is a
    reset whose action is ignored, and the loop would record it as a move."""
    cleanrl = example("cleanrl_style")
    envs = cleanrl.make_envs("goofspiel", 1, autoreset_mode=gym.vector.AutoresetMode.NEXT_STEP, num_cards=4)
    agent = cleanrl.Agent(envs.single_observation_space.shape[0], envs.single_action_space.n)
    obs = torch.as_tensor(envs.reset(seed=1)[0], dtype=torch.float32)
    rollout = cleanrl.collect(envs, agent, obs, num_steps=40)
    dones = rollout["dones"][:, 0].bool().tolist()
    lengths = [
        t - s for s, t in zip([-1] + [i for i, d in enumerate(dones) if d], [i for i, d in enumerate(dones) if d])
    ]
    assert (
        len(lengths) > 3 and lengths[0] == 3 and set(lengths[1:]) == {4}
    )  # a 4-card game is 3 moves: one step more each
    envs.close()


# --------------------------------------------------------------------------- the examples


def test_tianshou_example_runs():
    result = example("tianshou_selfplay").main(
        ["--epochs", "1", "--steps-per-epoch", "60", "--games-per-update", "4", "--eval-games", "3"]
    )
    assert result["moves"] >= 60 and np.isfinite([result["before"], result["after"]]).all()


def test_torchrl_example_runs():
    result = example("torchrl_pettingzoo").main(["--updates", "2", "--games-per-update", "2", "--eval-games", "2"])
    assert np.isfinite([result["before"], result["after"]]).all()


def test_cleanrl_example_runs():
    result = example("cleanrl_style").main(["--iterations", "3", "--num-envs", "2", "--num-steps", "16"])
    assert result["games"] > 0 and np.isfinite([result["first"], result["last"]]).all()
