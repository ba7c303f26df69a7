"""The conformance suite: every registered game, in every configuration its env declares
(``raw_env.configurations``) and its defaults, held to the peers' own checks.

- PettingZoo: ``api_test`` on ``env()`` and ``raw_env()``, ``seed_test``, the Parallel
  env's ``parallel_api_test`` and ``parallel_seed_test`` and both conversions where the
  game is parallelizable, ``render_test``, and pickle round trips.
- OpenSpiel: ``pyspiel.random_sim_test(serialize=True)``, a simulation in the manner of
  OpenSpiel's ``games_sim_test`` that also pickles the game and its states,
  ``load_game(str(game))``, information-state tensors one-to-one with the strings (every
  reachable information state of the tiny configuration, random play-outs of the others),
  returns within the utility range and adding up as the game type says, ``max_game_length``.
  The kept playthroughs are compared in ``test_playthroughs.py``.
- Gymnasium and stable-baselines3: both ``check_env``s on ``SingleAgentEnv``, synchronous
  and asynchronous vector envs driven by a masked sampler, pickling.
- Bad actions, illegal actions, calls out of order and bad values of every parameter.
- A CFR+ policy saved and loaded plays with the NashConv it was trained to.

A game added to the registry is covered without editing this file.
"""

from __future__ import annotations

import pickle
from types import SimpleNamespace

import gymnasium
import numpy as np
import pettingzoo
import pyspiel
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, render_test, seed_test
from pettingzoo.utils.conversions import aec_to_parallel, parallel_to_aec
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import hiddenhand.openspiel as ho
from hiddenhand.agents import PolicyAgent, RandomAgent
from hiddenhand.core import CHANCE, IllegalActionError, sample_chance
from hiddenhand.gymnasium_env import SingleAgentEnv
from hiddenhand.registry import games
from hiddenhand.training.cfr import CFRSettings, train_cfr


def faces(game):
    """A game's env factories as its module would hold them, made through the registries
    (so a user's game, registered by ``hiddenhand.register``, is checked the same way)."""
    face = SimpleNamespace(raw_env=game.env, env=lambda **kw: pettingzoo.make("aec", game.env_id, **kw))
    if game.simultaneous:
        face.parallel_env = lambda **kw: pettingzoo.make("parallel", game.env_id, **kw)
    return face


ENV_MODULES = {name: faces(game) for name, game in games().items()}
"""Every registered game, ours and the example of a user's (see conftest.py)."""

CASES = [
    pytest.param(game, name, kwargs, id=f"{game}-{name}")
    for game, module in ENV_MODULES.items()
    for name, kwargs in {**module.raw_env.configurations, "default": {}}.items()
]
TINY = [pytest.param(game, module.raw_env.configurations["tiny"], id=game) for game, module in ENV_MODULES.items()]
PARALLEL = [c for c in CASES if hasattr(ENV_MODULES[c.values[0]], "parallel_env")]


def rules_of(game, kwargs):
    return ENV_MODULES[game].raw_env.rules_class(**kwargs)


def random_games(rules, count, seed, max_moves=None):
    """``count`` random play-outs, each cut after ``max_moves`` moves if given: yields
    every state reached (chance states included)."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        state = rules.new_initial_state()
        yield state
        for _ in range(max_moves or 10**9):
            if state.is_terminal():
                break
            if state.current_player() == CHANCE:
                state.apply(sample_chance(state, rng))
            else:
                state.apply(int(rng.choice(state.legal_actions())))
            yield state


def play_masked(env, rng, steps):
    """Take ``steps`` masked random AEC steps (``None`` for finished agents)."""
    for agent in env.agent_iter(steps):
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))


# --------------------------------------------------------------------------- PettingZoo


@pytest.mark.parametrize("game, name, kwargs", CASES)
def test_pettingzoo_api_and_seed(game, name, kwargs):
    module = ENV_MODULES[game]
    api_test(module.env(**kwargs), num_cycles=100)
    api_test(module.raw_env(**kwargs), num_cycles=100)
    seed_test(lambda: module.env(**kwargs), num_cycles=100)


@pytest.mark.parametrize("game, name, kwargs", PARALLEL)
def test_parallel_api_seed_and_conversions(game, name, kwargs):
    module = ENV_MODULES[game]
    parallel_api_test(module.parallel_env(**kwargs), num_cycles=100)
    parallel_seed_test(lambda: module.parallel_env(**kwargs), num_cycles=100)
    api_test(parallel_to_aec(module.parallel_env(**kwargs)), num_cycles=100)
    parallel_api_test(aec_to_parallel(module.env(**kwargs)), num_cycles=100)


@pytest.mark.parametrize("game, name, kwargs", CASES)
def test_render(game, name, kwargs, capsys):
    module = ENV_MODULES[game]
    render_test(lambda render_mode=None: module.env(render_mode=render_mode, **kwargs))


@pytest.mark.parametrize("game, name, kwargs", CASES)
def test_envs_pickle_mid_game_and_play_on_identically(game, name, kwargs):
    module = ENV_MODULES[game]
    for make in (module.env, module.raw_env):
        env = make(**kwargs)
        env.reset(seed=3)
        play_masked(env, np.random.default_rng(0), 5)
        copy = pickle.loads(pickle.dumps(env))
        # The same moves from here, chance drawn by each env's own (pickled) generator.
        for e in (env, copy):
            play_masked(e, np.random.default_rng(1), 300)
        states = [e.unwrapped.game_state for e in (env, copy)]
        for player in range(states[0].rules.num_players):
            assert states[0].information_state_string(player) == states[1].information_state_string(player)
        assert states[0].returns() == states[1].returns()
        assert copy._cumulative_rewards == env._cumulative_rewards and copy.agents == env.agents
    if hasattr(module, "parallel_env"):
        par = module.parallel_env(**kwargs)
        observations, _ = par.reset(seed=3)
        again = pickle.loads(pickle.dumps(par))
        totals, rng = [{}, {}], np.random.default_rng(2)
        while par.agents:
            actions = {a: int(rng.choice(np.flatnonzero(o["action_mask"]))) for a, o in observations.items()}
            for env, total in zip((par, again), totals):
                observations, rewards = env.step(actions)[:2]
                for agent, reward in rewards.items():
                    total[agent] = total.get(agent, 0.0) + reward
        assert again.agents == [] and totals[0] == totals[1] and any(totals[0].values())


# --------------------------------------------------------------------------- OpenSpiel


@pytest.mark.parametrize("game, name, kwargs", CASES)
def test_openspiel_random_sim_and_game_string(game, name, kwargs):
    spiel_game = ho.to_pyspiel(rules_of(game, kwargs))
    again = pyspiel.load_game(str(spiel_game))
    assert again.get_parameters() == spiel_game.get_parameters()
    assert str(again) == str(spiel_game)
    too_large = ENV_MODULES[game].raw_env.too_large_for_random_sim
    if name in too_large:
        pytest.skip(f"random_sim_test: {too_large[name]}")
    pyspiel.random_sim_test(spiel_game, num_sims=3, serialize=True, verbose=False)


@pytest.mark.parametrize("game, name, kwargs", CASES)
def test_games_sim_with_pickling(game, name, kwargs):
    """OpenSpiel's games_sim_test, as it runs over its own games: the game and states
    pickle (at the first ten decisions and every power of two, as each restores by
    replaying the history), serialisation restores the history, tensors have their declared sizes,
    returns stay within the utility range and add up as the game type says, and no game
    runs past max_game_length."""
    # A game as OpenSpiel loads it (the registered class), pickled as its simulation does.
    spiel_game = pickle.loads(pickle.dumps(pyspiel.load_game(str(ho.to_pyspiel(rules_of(game, kwargs))))))
    info_size = spiel_game.information_state_tensor_size()
    obs_size = spiel_game.observation_tensor_size()
    kind = spiel_game.get_type().utility
    rng = np.random.default_rng(7)
    for _ in range(3 if name != "default" else 1):
        state, decisions = spiel_game.new_initial_state(), 0
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes())
                state.apply_action(int(rng.choice(actions, p=probs)))
                continue
            player = state.current_player()
            assert len(state.information_state_tensor(player)) == info_size
            assert len(state.observation_tensor(player)) == obs_size
            if decisions < 10 or decisions & (decisions - 1) == 0:  # as OpenSpiel samples its undo test
                restored = pickle.loads(pickle.dumps(state))  # a replay of the history
                assert restored.history() == state.history()
                assert restored.information_state_string(player) == state.information_state_string(player)
                assert spiel_game.deserialize_state(state.serialize()).history() == state.history()
            state.apply_action(int(rng.choice(state.legal_actions())))
            decisions += 1
        assert decisions <= spiel_game.max_game_length()
        returns = state.returns()
        assert all(spiel_game.min_utility() - 1e-9 <= r <= spiel_game.max_utility() + 1e-9 for r in returns)
        if kind in (pyspiel.GameType.Utility.ZERO_SUM, pyspiel.GameType.Utility.CONSTANT_SUM):
            assert sum(returns) == pytest.approx(spiel_game.utility_sum(), abs=1e-9)


def assert_one_to_one(pairs):
    """Information-state strings and tensors (as bytes) in one-to-one correspondence."""
    pairs = set(pairs)
    strings = {s for s, _ in pairs}
    tensors = {t for _, t in pairs}
    assert len(strings) == len(tensors) == len(pairs), (
        f"{len(strings)} strings, {len(tensors)} tensors, {len(pairs)} pairs: the tensor is not perfect recall"
    )


def info_pairs(state, players):
    return [(state.information_state_string(p), state.information_state_tensor(p).tobytes()) for p in players]


@pytest.mark.parametrize("game, kwargs", TINY)
def test_every_information_state_of_the_tiny_game_is_one_tensor(game, kwargs):
    rules = rules_of(game, kwargs)
    players = range(rules.num_players)
    pairs, stack = [], [rules.new_initial_state()]
    while stack:
        state = stack.pop()
        pairs += info_pairs(state, players)
        for action in [] if state.is_terminal() else state.legal_actions():
            child = state.clone()
            child.apply(action)
            stack.append(child)
    assert len(pairs) > 10
    assert_one_to_one(pairs)


@pytest.mark.parametrize("game, name, kwargs", [c for c in CASES if c.values[1] != "tiny"])
def test_information_state_tensors_are_perfect_recall_under_random_play(game, name, kwargs):
    rules = rules_of(game, kwargs)
    pairs = []
    # Random play of a default-sized game can run to thousands of moves (EggHead's does):
    # there the check samples the first few hundred moves of more games.
    games, moves = (60, None) if name != "default" else (30, 400)
    for state in random_games(rules, games, seed=11, max_moves=moves):
        player = state.current_player()
        if player >= 0:
            pairs += info_pairs(state, [player])
    assert_one_to_one(pairs)


# --------------------------------------------------------------------------- Gymnasium and SB3


@pytest.mark.parametrize("game, name, kwargs", CASES)
def test_single_agent_env_checkers_and_pickle(game, name, kwargs):
    env = SingleAgentEnv(game, RandomAgent(seed=0), **kwargs)
    gym_check_env(env, skip_render_check=True)
    sb3_check_env(env, warn=False)
    env.reset(seed=5)
    copy = pickle.loads(pickle.dumps(env))
    action = int(np.flatnonzero(env.action_masks())[0])
    first, second = env.step(action), copy.step(action)
    np.testing.assert_array_equal(first[0], second[0])
    assert first[1:4] == second[1:4]


class MaskedSampler:
    """Random legal actions from a vector env's ``action_masks``, as a masked policy
    acts; an empty mask would make it fail."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def __call__(self, masks):
        return np.array([self.rng.choice(np.flatnonzero(m)) for m in masks])


def make_single_agent(game, kwargs):
    return lambda: SingleAgentEnv(game, RandomAgent(seed=1), **kwargs)


@pytest.mark.parametrize("game, kwargs", TINY)
@pytest.mark.parametrize("vector", [gymnasium.vector.SyncVectorEnv, gymnasium.vector.AsyncVectorEnv])
def test_vector_envs_with_a_masked_sampler(game, kwargs, vector):
    envs = vector([make_single_agent(game, kwargs) for _ in range(2)])
    try:
        envs.reset(seed=0)
        sample, episodes = MaskedSampler(0), 0
        for _ in range(60):
            masks = np.stack(envs.call("action_masks"))
            assert masks.any(axis=1).all()
            _, _, term, trunc, infos = envs.step(sample(masks))
            assert not np.any(infos.get("illegal_action", False))
            episodes += int(np.sum(term | trunc))
        assert episodes > 0
    finally:
        envs.close()


@pytest.mark.parametrize("game, kwargs", TINY)
def test_action_masks_after_the_end_are_the_same_however_it_ended(game, kwargs):
    env = make_single_agent(game, kwargs)()
    env.reset(seed=0)
    done = False
    while not done:
        _, _, term, trunc, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
        done = term or trunc
    after_normal_end = env.action_masks()
    env.reset(seed=0)
    assert env.step(illegal_action({"action_mask": env.action_masks()}))[4]["illegal_action"]
    np.testing.assert_array_equal(env.action_masks(), after_normal_end)
    assert after_normal_end.all()


# --------------------------------------------------------------------------- actions and misuse


BAD_ACTIONS = [1.7, 1.0, "0", True, np.bool_(True), np.array([0]), float("nan"), None]


@pytest.mark.parametrize("game, kwargs", TINY)
def test_actions_must_be_integers(game, kwargs):
    module = ENV_MODULES[game]
    for make in (module.env, module.raw_env):
        env = make(**kwargs)
        env.reset(seed=0)
        legal = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])
        for bad in BAD_ACTIONS[:-1]:
            with pytest.raises(TypeError, match=r"is not an integer; legal actions: "):
                env.step(bad)
        with pytest.raises(ValueError, match="must act"):
            env.step(None)
        env.step(np.array(legal))  # a 0-d integer array is an integer
    env = SingleAgentEnv(game, RandomAgent(seed=0), **kwargs)
    env.reset(seed=0)
    for bad in BAD_ACTIONS[:-1]:
        with pytest.raises(TypeError, match="is not an integer"):
            env.step(bad)
    env.step(np.int64(np.flatnonzero(env.action_masks())[0]))


def illegal_action(observation):
    """A masked-out action, or one past the last where every action is legal (as while
    EggHead's players react)."""
    illegal = np.flatnonzero(observation["action_mask"] == 0)
    return int(illegal[0]) if len(illegal) else len(observation["action_mask"])


@pytest.mark.parametrize("game, name, kwargs", CASES)
def test_an_illegal_move_leaves_the_offender_strictly_worst(game, name, kwargs):
    module = ENV_MODULES[game]
    rng = np.random.default_rng(0)
    for seed in range(20):
        env = module.env(**kwargs)
        env.reset(seed=seed)
        play_masked(env, rng, int(rng.integers(0, 6)))
        if not env.agents or env.terminations[env.agent_selection] or env.truncations[env.agent_selection]:
            continue
        offender = env.agent_selection
        env.step(illegal_action(env.observe(offender)))
        assert all(env.terminations.values())
        paid = dict(env._cumulative_rewards)
        assert all(paid[offender] < paid[a] for a in paid if a != offender), paid
        return
    pytest.fail("no position with an illegal action was reached")


@pytest.mark.parametrize("game, name, kwargs", PARALLEL)
def test_parallel_env_bad_actions(game, name, kwargs):
    par = ENV_MODULES[game].parallel_env(**kwargs)
    observations, _ = par.reset(seed=0)
    legal = {a: int(np.flatnonzero(o["action_mask"])[0]) for a, o in observations.items()}
    first = par.agents[0]
    with pytest.raises(ValueError, match=rf"missing: \['{first}'\], unknown: none"):
        par.step({a: x for a, x in legal.items() if a != first})
    with pytest.raises(ValueError, match=r"missing: none, unknown: \['player_99'\]"):
        par.step({**legal, "player_99": 0})
    # After one round every bidder has spent a card; the first bidder's illegal action then
    # ends the game as a forfeit, under the AEC env's convention.
    observations = par.step(legal)[0]
    legal = {a: int(np.flatnonzero(o["action_mask"])[0]) for a, o in observations.items()}
    spent = int(np.flatnonzero(observations[first]["action_mask"] == 0)[0])
    _, rewards, terminations, _, _ = par.step({**legal, first: spent})
    assert all(terminations.values()) and par.agents == []
    assert all(rewards[first] < r for a, r in rewards.items() if a != first)


@pytest.mark.parametrize("game, kwargs", TINY)
def test_calls_out_of_order_are_clear_errors(game, kwargs):
    raw = ENV_MODULES[game].raw_env(**kwargs)
    for call in (lambda: raw.step(0), lambda: raw.observe("player_0"), lambda: raw.last()):
        with pytest.raises(RuntimeError, match=r"before reset\(\): call reset\(\) first"):
            call()
    raw.reset(seed=0)
    with pytest.raises(ValueError, match="unknown agent 'nobody'"):
        raw.observe("nobody")
    play_masked(raw, np.random.default_rng(0), 10_000)
    assert raw.agents == []
    with pytest.raises(RuntimeError, match=r"the game is over .* call reset\(\)"):
        raw.step(0)
    raw.reset(seed=0)
    with pytest.raises(IllegalActionError, match="legal actions: "):
        raw.step(illegal_action(raw.observe(raw.agent_selection)))


@pytest.mark.parametrize("game, name, kwargs", CASES)
def test_a_declared_canonical_observation_renames_legal_actions_onto_legal_actions(game, name, kwargs):
    """``Rules.canonical``, where a configuration declares one (Goofspiel's Markov
    observation): under random play every decision's canonical actions that are legal stand
    for the legal actions one to one, and a canonical observation is its own canonical one.
    A configuration that declares none answers ``None``, which is the base class's answer."""
    rules = rules_of(game, kwargs)
    shown = [s.observation(s.current_player()) for s in random_games(rules, 30, 0, 200) if s.current_player() >= 0]
    observations = np.stack([o["observation"] for o in shown])
    masks = np.stack([o["action_mask"] for o in shown])
    reduced = rules.canonical(observations, masks)
    if reduced is None:
        return
    canonical, canonical_masks, order = reduced
    assert canonical.shape == observations.shape and canonical_masks.shape == order.shape == masks.shape
    for mask, canonical_mask, row in zip(masks, canonical_masks, order):
        assert sorted(row[canonical_mask != 0]) == list(np.flatnonzero(mask))
        assert len(set(row[row >= 0])) == (row >= 0).sum()
    again = rules.canonical(canonical, canonical_masks)
    np.testing.assert_array_equal(again[0], canonical)
    np.testing.assert_array_equal(again[1], canonical_masks)
    named = again[2] >= 0  # renaming a canonical observation renames nothing
    np.testing.assert_array_equal(again[2][named], np.nonzero(named)[1])


# --------------------------------------------------------------------------- configurations


def bad_values(default):
    """Values no parameter with this default may take."""
    if isinstance(default, bool):
        return ["yes", 2, None, 0.5]
    if isinstance(default, int):
        return [10**400, -(10**400), 1.5, "3", None, True, float("nan"), np.array([default])]
    return [None, 1.5, np.array([default]), "no-such-value"]


BAD_CONFIGURATIONS = [
    pytest.param(game, param, bad, id=f"{game}-{param}-{type(bad).__name__}{i}")
    for game, module in ENV_MODULES.items()
    for param, default in module.raw_env.rules_class.param_defaults().items()
    for i, bad in enumerate(bad_values(default))
]


@pytest.mark.parametrize("game, param, bad", BAD_CONFIGURATIONS)
def test_every_parameter_refuses_bad_values_by_name(game, param, bad):
    with pytest.raises(ValueError, match=rf"\b{param}(\[\d\])?="):
        ENV_MODULES[game].raw_env.rules_class(**{param: bad})


# --------------------------------------------------------------------------- CFR policies


@pytest.mark.parametrize("game, kwargs", TINY)
def test_a_saved_cfr_policy_has_the_nash_conv_it_was_trained_to(game, kwargs, tmp_path):
    rules = rules_of(game, kwargs)
    curve = train_cfr(rules, eval_every=30, progress=False, steps=30, out=tmp_path, settings=CFRSettings("cfr+"))
    agent = PolicyAgent.load(tmp_path)
    nash_conv = curve[-1].exploitability * rules.num_players
    assert ho.nash_conv(ho.to_pyspiel(rules), agent) == pytest.approx(nash_conv, abs=1e-9)


@pytest.mark.parametrize("game, name, kwargs", PARALLEL)
def test_a_bad_action_in_the_parallel_env_leaves_the_round_unplayed(game, name, kwargs):
    par = ENV_MODULES[game].parallel_env(**kwargs)
    observations, _ = par.reset(seed=0)
    legal = {a: int(np.flatnonzero(o["action_mask"])[0]) for a, o in observations.items()}
    last = par.agents[-1]
    before = par.aec_env.unwrapped.game_state.information_state_string(0)
    for bad in (1.5, None):
        with pytest.raises((TypeError, ValueError), match=last if bad is None else "is not an integer"):
            par.step({**legal, last: bad})
        assert par.aec_env.unwrapped.game_state.information_state_string(0) == before  # nobody has bid
    par.step(legal)  # and the round is then played normally
    assert all(r == 0 for r in par.aec_env.rewards.values()) and par.agents
