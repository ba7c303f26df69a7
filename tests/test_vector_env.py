"""The batched face (:mod:`hiddenhand.vector`) against the PettingZoo env, move for move.

Each game of a batched env is shadowed by its own ``raw_env`` driven with the same actions
and the same chance outcomes (the prize the batched env turned is fed to the PettingZoo env
as its "random" draw), so the comparison does not depend on how either draws chance: at
every decision the observation, the action mask and the player to move must be equal, and
at every step the rewards, terminations and truncations. Random legal actions over several
games per slot cover the automatic restarts. Every registered game is covered: a game with
a batched env in each configuration its env declares and its defaults (and more sizes), a
game without one by the error that says which games have one. How a batched env draws
chance, which that comparison cannot see, is checked apart: every game mirrored in the rules
engine, every draw of a game held to the engine's ``chance_outcomes()``.
"""

from __future__ import annotations

import pickle
from collections import Counter, defaultdict

import numpy as np
import pytest
from scipy.stats import chi2

from hiddenhand.core import IllegalActionError
from hiddenhand.registry import games
from hiddenhand.vector import vector_env

BATCHED = [name for name, game in games().items() if game.vector is not None]
UNBATCHED = [name for name, game in games().items() if game.vector is None]

EXTRA = {
    "goofspiel": {
        **{f"{n}_markov": {"num_cards": n, "observation": "markov"} for n in (2, 3, 5, 6, 8, 13)},
        **{f"{n}_full": {"num_cards": n} for n in (2, 4, 6)},
        "win_loss_ascending": {"num_cards": 5, "scoring": "win_loss", "prize_order": "ascending"},
        "four_descending": {"num_cards": 4, "num_players": 4, "prize_order": "descending"},
        "six_markov_total": {"num_cards": 3, "num_players": 6, "observation": "markov", "scoring": "total_points"},
        "five_win_loss": {"num_cards": 4, "num_players": 5, "scoring": "win_loss"},
        "hidden_bids": {"num_cards": 4, "reveal_bids": False},
    },
    "spoof": {
        "three_markov": {"matches": 3, "observation": "markov"},
        "unequal_markov_short": {"matches": (3, 1), "max_rounds": 2, "observation": "markov"},
        "round_markov": {"matches": (2, 4), "objective": "round", "observation": "markov"},
        "short": {"matches": 2, "max_rounds": 3},
        "stopped": {"matches": 2, "max_rounds": 1},  # every game truncated
    },
    "bid_spoof": {
        "two_markov": {"num_players": 2, "coins": 3, "observation": "markov"},
        "two_before_own_bid": {"num_players": 2, "coins": 2, "zero_call": "before_own_bid", "max_rounds": 4},
        "five_markov_short": {"num_players": 5, "coins": 1, "max_rounds": 3, "observation": "markov"},
        "four_round_markov": {"num_players": 4, "coins": 2, "objective": "round", "observation": "markov"},
        "stopped": {"num_players": 2, "coins": 2, "max_rounds": 1},  # every game truncated
    },
}
"""Configurations compared besides the env's declared ones: more sizes, players, scorings."""


def _goofspiel_prize(rules, row):
    """The prize on the table in an observation (full or Markov): the chance outcome drawn."""
    layout = rules.markov_layout if rules.markov else rules.layout
    return int(np.argmax(layout.views(row)["prize"]))


CHANCE_SHOWN = {"goofspiel": _goofspiel_prize}
"""For each batched game with chance: the outcome a decision's observation shows was drawn."""

CASES = [
    pytest.param(game, kwargs, id=f"{game}-{name}")
    for game in BATCHED
    for name, kwargs in {**games()[game].env.configurations, "default": {}, **EXTRA.get(game, {})}.items()
]


class ChanceFrom:
    """Stands in for a PettingZoo env's generator: its one draw per chance node picks
    ``outcome`` among the node's outcomes (``hiddenhand.core.sample_chance`` subtracts the
    probabilities from the draw in order)."""

    def __init__(self, env):
        self.env, self.outcome = env, None

    def random(self):
        outcomes = self.env.game_state.chance_outcomes()
        k = [action for action, _ in outcomes].index(self.outcome)
        return sum(p for _, p in outcomes[:k]) + outcomes[k][1] / 2


def _legal_random(masks, rng):
    return np.array([rng.choice(np.flatnonzero(m)) for m in masks])


@pytest.mark.parametrize("game,kwargs", CASES)
def test_move_for_move_against_pettingzoo(game, kwargs):
    declared = games()[game]
    num_envs = 8
    envs = vector_env(game, num_envs, **kwargs)
    rules = envs.rules
    shown = CHANCE_SHOWN.get(game)
    shadows = [declared.env(**kwargs) for _ in range(num_envs)]
    draws = [ChanceFrom(env) for env in shadows]
    for env, draw in zip(shadows, draws):
        env._rng = draw

    def follow(i, obs):
        """Set the chance outcome game ``i``'s shadow is to draw next: what the batched env drew."""
        draws[i].outcome = shown(rules, obs["observation"][i]) if shown else None

    def same_decision(i, obs, info):
        env = shadows[i]
        seen = env.observe(env.agent_selection)
        assert info["player"][i] == env.possible_agents.index(env.agent_selection)
        np.testing.assert_array_equal(obs["observation"][i], seen["observation"])
        np.testing.assert_array_equal(obs["action_mask"][i], seen["action_mask"])
        np.testing.assert_allclose(info["banked"][i], env.game_state.banked())
        assert info["round_state"][i] == env.game_state.round_state()

    obs, info = envs.reset(seed=1)
    assert obs["observation"].dtype == np.float32 and obs["action_mask"].dtype == np.int8
    assert obs in envs.observation_space
    for i, env in enumerate(shadows):
        follow(i, obs)
        env.reset()
        same_decision(i, obs, info)
    rng = np.random.default_rng(0)
    finished = np.zeros(num_envs, dtype=int)
    for _ in range(3 * rules.max_game_length + 2):
        if finished.min() >= 3:
            break
        actions = _legal_random(obs["action_mask"], rng)
        obs, rewards, terminations, truncations, info = envs.step(actions)
        for i, env in enumerate(shadows):
            follow(i, obs)
            env.step(int(actions[i]))
            over = not env.agents or all(env.terminations.values()) or all(env.truncations.values())
            assert terminations[i] == (over and all(env.terminations.values()))
            assert truncations[i] == (over and all(env.truncations.values()))
            expected = [env.rewards[a] for a in env.possible_agents] if over else [0.0] * rules.num_players
            assert rewards[i].tolist() == expected
            if over:
                finished[i] += 1
                env.reset()
            same_decision(i, obs, info)
    assert finished.min() >= 3  # the automatic restarts were exercised


@pytest.mark.parametrize("game", UNBATCHED)
def test_games_without_a_batched_env_say_which_have_one(game):
    with pytest.raises(ValueError, match=f"{game} has no batched env; the games that have one: {', '.join(BATCHED)} "):
        vector_env(game, 4)


@pytest.fixture(params=BATCHED)
def batched(request):
    return request.param, games()[request.param].env.configurations["tiny"]


def test_illegal_action_names_the_game_the_action_and_the_legal_ones(batched):
    game, kwargs = batched
    envs = vector_env(game, 5, **kwargs)
    twin = vector_env(game, 5, **kwargs)
    obs, _ = envs.reset(seed=3)
    twin.reset(seed=3)
    rng = np.random.default_rng(1)
    for _ in range(2):  # a round in: some actions in range are illegal (a card spent, a bid before a hand)
        actions = _legal_random(obs["action_mask"], rng)
        obs = envs.step(actions)[0]
        twin.step(actions)
    actions = _legal_random(obs["action_mask"], rng)
    bad = actions.copy()
    illegal = np.flatnonzero(obs["action_mask"][2] == 0)
    bad[2] = illegal[0]
    legal = np.flatnonzero(obs["action_mask"][2]).tolist()
    with pytest.raises(IllegalActionError, match=rf"game 2: action {bad[2]} is illegal .*legal actions: \[") as err:
        envs.step(bad)
    assert str(legal) in str(err.value)
    bad[4] = -1
    with pytest.raises(IllegalActionError, match=r"game 2: .*\(1 more games have illegal actions\)"):
        envs.step(bad)
    # Nothing moved: the env goes on exactly as one that never saw the illegal batch.
    for _ in range(4):
        got, want = envs.step(actions), twin.step(actions)
        np.testing.assert_array_equal(got[0]["observation"], want[0]["observation"])
        np.testing.assert_array_equal(got[1], want[1])
        actions = _legal_random(got[0]["action_mask"], rng)


def test_bad_actions_and_calls_out_of_order(batched):
    game, kwargs = batched
    envs = vector_env(game, 3, **kwargs)
    with pytest.raises(RuntimeError, match=r"step\(\) before reset\(\): call reset\(\) first"):
        envs.step(np.zeros(3, dtype=np.int64))
    obs, _ = envs.reset(seed=0)
    actions = np.argmax(obs["action_mask"], axis=1)
    with pytest.raises(TypeError, match="actions must be integers, one per game"):
        envs.step(actions.astype(np.float64))
    with pytest.raises(ValueError, match=r"actions must have shape \(3,\), one per game; got shape \(2,\)"):
        envs.step(actions[:2])
    with pytest.raises(ValueError, match=r"actions must have shape \(3,\), one per game; got shape \(\)"):
        envs.step(int(actions[0]))


@pytest.mark.parametrize("num_envs", [0, -2, 2.5, "4", 1 << 25])
def test_bad_sizes_are_refused(batched, num_envs):
    game, kwargs = batched
    with pytest.raises(ValueError, match=rf"num_envs={num_envs!r} is (not an integer|out of range); allowed: 1 to"):
        vector_env(game, num_envs, **kwargs)


def test_bad_game_parameters_are_refused_as_the_rules_refuse_them():
    with pytest.raises(ValueError, match="num_cards=1 is out of range; allowed: 2 to 13"):
        vector_env("goofspiel", 4, num_cards=1)
    with pytest.raises(ValueError, match="observation='markov' needs reveal_bids=True"):
        vector_env("goofspiel", 4, observation="markov", reveal_bids=False)


def _play(envs, seed, steps):
    """Everything a seeded run of ``steps`` random legal steps returns, as one list."""
    obs, info = envs.reset(seed=seed)
    rng = np.random.default_rng(7)
    out = [obs["observation"], info["player"]]
    for _ in range(steps):
        obs, rewards, terminations, truncations, info = envs.step(_legal_random(obs["action_mask"], rng))
        out += [obs["observation"], obs["action_mask"], rewards, terminations, truncations, info["player"]]
    return out


def test_a_seed_repeats_the_games_and_another_seed_changes_them():
    kwargs = {"num_cards": 5, "observation": "markov"}
    first = _play(vector_env("goofspiel", 8, **kwargs), 11, 30)
    again = _play(vector_env("goofspiel", 8, **kwargs), 11, 30)
    other = _play(vector_env("goofspiel", 8, **kwargs), 12, 30)
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not all(np.array_equal(a, b) for a, b in zip(first, other))


def test_reset_restarts_every_game_and_a_pickled_env_goes_on_the_same(batched):
    """Besides the original, the copy's step is held to the rules engine played with the
    same moves (:class:`Mirror`): it goes on with the right games, not only the same ones."""
    game, kwargs = batched
    envs = vector_env(game, 4, **kwargs)
    start, _ = envs.reset(seed=5)
    obs = start
    for _ in range(3):
        obs, *_ = envs.step(np.argmax(obs["action_mask"], axis=1))
    again, info = envs.reset(seed=5)
    np.testing.assert_array_equal(again["observation"], start["observation"])
    mirror = Mirror(envs, again, info)
    copy = pickle.loads(pickle.dumps(envs))
    actions = np.argmax(again["action_mask"], axis=1)
    stepped = copy.step(actions)
    np.testing.assert_array_equal(envs.step(actions)[0]["observation"], stepped[0]["observation"])
    mirror.step(actions, *stepped)


def test_goofspiel_prizes_are_drawn_uniformly():
    """The seed-independent comparison above cannot see how chance is drawn: the first prize
    of 8,000 four-card games is uniform (each card within 5% of 2,000; a skew to one card
    of 10% would be far outside)."""
    obs, _ = vector_env("goofspiel", 8000, num_cards=4, observation="markov").reset(seed=0)
    counts = obs["observation"][:, :4].sum(axis=0)
    assert counts.sum() == 8000
    assert np.all(np.abs(counts - 2000) < 100), counts


def _chance_paths(state):
    """Every way chance can go on from ``state`` to a decision or the end: ``(the state
    there, [(chance_outcomes(), outcome drawn) at each chance node on the way])``."""
    if not state.is_chance_node():
        return [(state, [])]
    outcomes = tuple(state.chance_outcomes())
    paths = []
    for action, _ in outcomes:
        child = state.clone()
        child.apply(action)
        paths += [(leaf, [(outcomes, action), *draws]) for leaf, draws in _chance_paths(child)]
    return paths


class Mirror:
    """Each game of a batched env played again in its own rules engine state, with the same
    actions, an independent computation of what the env must return. Chance is read off the
    env: at a chance node the outcome it drew is the one (of the engine's
    ``chance_outcomes()``) that leads to the observation, mask and player it returned, or,
    where the game ended, to its returns; anything else returned, or more than one outcome
    fitting, fails. ``draws`` counts the outcomes drawn, per draw of a game (0 for the
    first) and distribution the engine gives there: ``{(k, chance_outcomes()): Counter}``."""

    def __init__(self, envs, obs, info):
        self.rules = envs.rules
        self.draws = defaultdict(Counter)
        self.drawn = np.zeros(envs.num_envs, dtype=int)
        self.ended = 0
        self.states = [self._start(i, obs, info) for i in range(envs.num_envs)]

    def step(self, actions, obs, rewards, terminations, truncations, info):
        for i, state in enumerate(self.states):
            state.apply(int(actions[i]))
            if terminations[i] or truncations[i]:
                returns, truncated = rewards[i].tolist(), bool(truncations[i])
                self._follow(
                    i, state, lambda s: s.is_terminal() and s.returns() == returns and s.is_truncated() == truncated
                )
                self.states[i] = self._start(i, obs, info)
                self.ended += 1
            else:
                assert not rewards[i].any()
                self.states[i] = self._follow(i, state, self._decision(i, obs, info))

    def _start(self, i, obs, info):
        self.drawn[i] = 0
        return self._follow(i, self.rules.new_initial_state(), self._decision(i, obs, info))

    @staticmethod
    def _decision(i, obs, info):
        player, seen, mask = int(info["player"][i]), obs["observation"][i], obs["action_mask"][i]
        return lambda state: (
            state.current_player() == player
            and np.array_equal(state.observation_tensor(player), seen)
            and np.array_equal(state.action_mask(player), mask)
        )

    def _follow(self, i, state, shows):
        found = [(leaf, draws) for leaf, draws in _chance_paths(state) if shows(leaf)]
        assert len(found) == 1, f"game {i}: {len(found)} ways for chance to go show what the batched env returned"
        state, draws = found[0]
        for outcomes, action in draws:
            self.draws[self.drawn[i], outcomes][action] += 1
            self.drawn[i] += 1
        return state


CHANCE_CASES = [
    pytest.param(game, kwargs, id=f"{game}-{name}")
    for game in BATCHED
    for name, kwargs in games()[game].env.configurations.items()
]


@pytest.mark.parametrize("game,kwargs", CHANCE_CASES)
def test_chance_is_drawn_as_the_rules_engine_deals_it_at_every_draw(game, kwargs):
    """The move-for-move comparison feeds the batched env's draws to the PettingZoo env, so
    it cannot see how they are drawn. Here every game of each configuration a batched env's
    game declares is mirrored in the rules engine (:class:`Mirror`) over random games, and
    the outcomes drawn at each draw of a game, pooled over the engine states that give the
    same distribution, must fit the engine's probabilities (a Pearson chi-square test per
    draw, p > 0.001): a prize drawn as the lowest one left, even only after the first, is far
    outside. A game without chance must never reach a chance node (the mirror would find no
    outcome that shows nothing drawn)."""
    envs = vector_env(game, 64, **kwargs)
    obs, info = envs.reset(seed=4)
    mirror = Mirror(envs, obs, info)
    rng = np.random.default_rng(5)
    for _ in range(100):
        actions = _legal_random(obs["action_mask"], rng)
        obs, *rest, info = envs.step(actions)
        mirror.step(actions, obs, *rest, info)
    assert mirror.ended >= envs.num_envs  # whole games, several draws each
    if not mirror.draws:
        return
    by_draw = defaultdict(lambda: [0.0, 0])  # draw of the game -> chi-square, degrees of freedom
    for (k, outcomes), seen in mirror.draws.items():
        total = sum(seen.values())
        expected = np.array([total * p for _, p in outcomes])
        observed = np.array([seen[action] for action, _ in outcomes])
        if len(outcomes) < 2 or expected.min() < 5:
            continue  # too few draws of this distribution for the test's approximation
        by_draw[k][0] += float(((observed - expected) ** 2 / expected).sum())
        by_draw[k][1] += len(outcomes) - 1
    tested = sum(sum(seen.values()) for (k, _), seen in mirror.draws.items() if k in by_draw)
    assert tested > 0.5 * sum(sum(seen.values()) for seen in mirror.draws.values())
    assert len(by_draw) == 1 + max(k for k, outcomes in mirror.draws if len(outcomes) > 1)  # every draw tested
    for k, (statistic, df) in sorted(by_draw.items()):
        assert chi2.sf(statistic, df) > 1e-3, f"draw {k} of a game: chi-square {statistic:.1f} on {df} df"


def test_spaces_are_the_pettingzoo_envs():
    envs = vector_env("goofspiel", 3, num_cards=4)
    env = games()["goofspiel"].env(num_cards=4)
    assert envs.single_observation_space == env.observation_space("player_0")
    assert envs.single_action_space == env.action_space("player_0")
    assert envs.action_space.shape == (3,)
