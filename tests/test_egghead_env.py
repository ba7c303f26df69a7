"""EggHead's game: scripted rounds, the PettingZoo and OpenSpiel faces, the deducing agents
and the study's experiment."""

import json
import pickle
import warnings

import numpy as np
import pyspiel
import pytest
from pettingzoo.test import api_test, seed_test

import hiddenhand.openspiel  # noqa: F401  (registers hiddenhand_egghead)
from hiddenhand.agents import make_agent
from hiddenhand.cli import main
from hiddenhand.core import CHANCE, TERMINAL, sample_chance
from hiddenhand.envs import egghead_v0
from hiddenhand.envs.egghead import EggHeadRules
from hiddenhand.envs.egghead_deck import standard_deck
from hiddenhand.training.egghead_experiment import simulate

EXAMPLE = [(1, 2, 2), (4, 5, 6), (3, 3, 3)]
SMALL = dict(num_players=3, cards_per_player=1, num_values=3, target_score=3)


def example_state(**kwargs):
    """Three players dealt the study's example, asked "how many values are missing?"."""
    rules = EggHeadRules(num_players=3, **kwargs)
    state = rules.new_initial_state()
    for hand in EXAMPLE:
        state.apply(rules.hands.of(hand))
    state.apply([q.id for q in rules.deck].index("missing_values"))
    return rules, state


def test_a_scripted_round_with_a_right_call_and_repeated_phases():
    rules, state = example_state(valids_in_observation=True)
    assert state.events[-1].answer == 0 and state.current_player() == 0
    state.apply(0)  # player_0 passes
    state.apply(rules.call_action((6, 5, 4)))  # player_1 calls their hand, in any order
    state.apply(0)
    assert state.scores == [0, 1, 0]
    assert state.events[-1].shown == (None, rules.hands.of((4, 5, 6)), None)
    assert state.current_player() == CHANCE  # player_1 is dealt a new hand
    state.apply(rules.hands.of((1, 1, 1)))
    # The call changed what is public, so the round goes on with another reaction phase.
    assert state.current_player() == 0 and state.questions == 1
    assert state.valids(0) == [(1, 1, 2), (1, 2, 2), (1, 2, 3)]


def test_a_wrong_call_scores_nothing_and_ties_share_the_win():
    rules, state = example_state(target_score=1)
    state.apply(rules.call_action((1, 2, 3)))  # wrong
    state.apply(rules.call_action((4, 5, 6)))  # right
    state.apply(rules.call_action((3, 3, 3)))  # right
    assert state.current_player() == TERMINAL
    assert state.scores == [0, 1, 1] and state.returns() == [-1.0, 0.5, 0.5]


def test_everyone_reaching_the_target_together_is_a_draw():
    rules, state = example_state(target_score=1)
    for hand in EXAMPLE:
        state.apply(rules.call_action(hand))
    assert state.is_terminal() and state.returns() == [0.0, 0.0, 0.0]


def test_observations_while_hands_are_being_dealt():
    rules = EggHeadRules(num_players=3, valids_in_observation=True)
    state = rules.new_initial_state()
    state.apply(0)
    assert state.observation_tensor(1).shape == (rules.observation_size,)
    assert "player_0: (1, 1, 1)" in state.render(1)


def test_nobody_knowing_and_nothing_changing_ends_the_round():
    rules = EggHeadRules(num_players=3, deck="even_total")
    state = rules.new_initial_state()
    for hand in EXAMPLE:
        state.apply(rules.hands.of(hand))
    state.apply(0)
    for _ in range(3):
        state.apply(0)
    # A parity never tells anyone their hand, so three passes teach nothing: next question.
    assert state.current_player() == CHANCE and state.phase_in_round == 1 and state.questions == 1


def test_rotating_moderator_does_not_react_and_max_questions_truncates():
    rules = EggHeadRules(num_players=3, moderator="rotating", max_questions=2, deck="total")
    state = rules.new_initial_state()
    for hand in EXAMPLE:
        state.apply(rules.hands.of(hand))
    state.apply(0)
    assert state.moderator == 0 and state.current_player() == 1 and state.legal_actions(0) == []
    assert state.events[-1].answer == 15 + 9  # (4,5,6) and (3,3,3): player_0 does not see their own hand
    while not state.is_terminal():
        state.apply(0)
    assert state.is_truncated() and state.returns() == [0.0, 0.0, 0.0] and state.questions == 2


def test_the_deducers_act_on_the_worked_example():
    rules, state = example_state(valids_in_observation=True)
    naive = make_agent("egghead", "naive", rules.params)
    analyst = make_agent("egghead", "analyst", rules.params)
    assert naive.act(state.observation(1)) == rules.call_action((4, 5, 6))
    assert analyst.act(state.observation(0)) == 0
    for action in (0, rules.call_action((4, 5, 6)), 0):
        state.apply(action)
    state.apply(rules.hands.of((1, 1, 1)))
    # After player_1 showed (4, 5, 6) the analysts narrow down; the naive players do not.
    assert list(analyst.valids(state.observation(0))) == [rules.hands.of(h) for h in [(1, 1, 2), (1, 2, 2), (1, 2, 3)]]
    assert len(naive.valids(state.observation(0))) == 6
    with pytest.raises(ValueError, match="valids_in_observation=True"):
        make_agent("egghead", "analyst", {"num_players": 3})


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(num_players=3, target_score=2),
        dict(num_players=3, moderator="rotating", valids_in_observation=True, target_score=2),
    ],
)
def test_pettingzoo_api(kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(egghead_v0.env(**kwargs), num_cycles=100)
        seed_test(lambda: egghead_v0.env(**kwargs), num_cycles=100)


def test_analysts_beat_naive_players_in_the_env():
    rules = EggHeadRules(num_players=3, valids_in_observation=True, analysts="0", target_score=5)
    from hiddenhand.training import play_game

    wins = 0
    rng = np.random.default_rng(3)
    for _ in range(6):
        agents = [make_agent("egghead", "analyst", rules.params)] + [
            make_agent("egghead", "naive", rules.params) for _ in range(2)
        ]
        returns = play_game(rules, agents, rng)
        wins += returns[0] > 0
    assert wins >= 4


def test_openspiel_plays_it():
    game = pyspiel.load_game("hiddenhand_egghead(num_players=3,target_score=1)")
    state = game.new_initial_state()
    rng = np.random.default_rng(0)
    while not state.is_terminal():
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(actions, p=probs)))
        else:
            state.apply_action(0 if rng.random() < 0.9 else int(rng.choice(state.legal_actions())))
    assert sum(state.returns()) == pytest.approx(0.0)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(num_players=6), "num_players=6 is out of range; allowed: 3 to 5"),
        (dict(num_players=5, num_values=9), "make .* deals; the engine keeps every deal"),
        (dict(moderator="boss"), "moderator='boss' is not allowed"),
        (
            dict(analysts="0,7"),
            "analysts='0,7': '7' is not a player id; allowed: 'all', 'none', or player ids from 0 to 3",
        ),
        (dict(deck="total,colour"), "unknown question ids \\['colour'\\]"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        EggHeadRules(**kwargs)


def test_experiment_reproduces_and_analysts_need_fewer_rounds():
    a = simulate(3, analysts=1, rounds=600, seed=5, progress=False)
    b = simulate(3, analysts=1, rounds=600, seed=5, progress=False)
    assert a.rounds_needed == b.rounds_needed
    naive, analyst = a.samples("naive"), a.samples("analyst")
    assert analyst.mean() < naive.mean() - 0.5
    # Ten points take the ten-fold convolution: ten times the mean.
    pmf = a.pmf("naive", 10)
    assert (np.arange(len(pmf)) * pmf).sum() == pytest.approx(10 * naive.mean())
    wins = a.win_probabilities(10)
    assert wins[1] == pytest.approx(wins[2]) and wins[0] > wins[1] and sum(wins) >= 1.0


def test_simulate_command(tmp_path, capsys):
    assert (
        main(["simulate", "egghead", "--players", "3", "--analysts", "3", "--rounds", "100", "--out", str(tmp_path)])
        == 0
    )
    out = capsys.readouterr().out
    assert "analyst" in out and "chance of reaching 10 points first" in out
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["rounds_to_score"]["analyst"]["points"] > 0
    assert (tmp_path / "cdf.png").stat().st_size > 10_000


# ------------------------------------------------------------------ information state


def random_states(rules, games, seed):
    """Every state (chance and terminal ones included) of ``games`` random play-outs, in
    which a player passes half the time and otherwise takes any legal action."""
    rng = np.random.default_rng(seed)
    for _ in range(games):
        state = rules.new_initial_state()
        while True:
            yield state
            if state.is_terminal():
                break
            if state.current_player() == CHANCE:
                state.apply(sample_chance(state, rng))
            else:
                state.apply(0 if rng.random() < 0.5 else int(rng.choice(state.legal_actions())))


@pytest.mark.parametrize(
    "kwargs, games",
    [(SMALL, 120), (dict(SMALL, moderator="rotating", valids_in_observation=True, analysts="0"), 50)],
)
def test_information_state_tensor_and_string_tell_the_same_states_apart(kwargs, games):
    rules = EggHeadRules(**kwargs)
    assert not rules.observation_is_information_state
    by_string, by_tensor, observations = {}, {}, set()
    for state in random_states(rules, games, seed=11):
        for player in range(rules.num_players):
            string, tensor = state.information_state_string(player), state.information_state_tensor(player)
            assert tensor.shape == (rules.information_state_size,) and tensor.dtype == np.float32
            observation = state.observation_tensor(player)
            assert np.array_equal(tensor[: rules.observation_size], observation)  # the observation is a prefix
            assert 0.0 <= tensor.min() and tensor.max() <= 1.0
            nonzero = np.flatnonzero(tensor)
            key = nonzero.tobytes() + tensor[nonzero].tobytes()  # exact, and far smaller than the tensor
            assert by_string.setdefault(string, key) == key, f"one string, two tensors: {string}"
            assert by_tensor.setdefault(key, string) == string, f"one tensor, two strings: {string} / {by_tensor[key]}"
            observations.add(observation.tobytes())
    assert len(by_string) == len(by_tensor) > 1.5 * len(observations)  # the window alone forgets


def test_information_state_recalls_your_own_calls():
    """Two wrong calls of different hands: only the caller can tell the histories apart."""
    rules, a = example_state()
    b = a.clone()
    for state, named in ((a, (1, 1, 1)), (b, (6, 6, 6))):
        state.apply(rules.call_action(named))  # player_0 holds (1, 2, 2): wrong either way
        state.apply(0)
        state.apply(0)
    for player in (1, 2):
        assert a.information_state_string(player) == b.information_state_string(player)
        assert np.array_equal(a.information_state_tensor(player), b.information_state_tensor(player))
    assert a.information_state_string(0) != b.information_state_string(0)
    assert not np.array_equal(a.information_state_tensor(0), b.information_state_tensor(0))
    assert np.array_equal(a.observation_tensor(0), b.observation_tensor(0))


def test_information_state_sizes_and_openspiel_uses_them():
    assert EggHeadRules().information_state_size == 8949 + 1000 * 11 * 6 + 3
    rules = EggHeadRules(**SMALL)
    assert rules.information_state_size == rules.observation_size + 1000 * 11 * 5 + 3
    game = pyspiel.load_game("hiddenhand_egghead(num_players=3,cards_per_player=1,num_values=3,target_score=3)")
    assert game.information_state_tensor_shape() == [rules.information_state_size]
    state = game.new_initial_state()
    rng = np.random.default_rng(2)
    while not state.is_terminal():
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(actions, p=probs)))
        else:
            player = state.current_player()
            assert np.array_equal(state.information_state_tensor(player), state.inner.information_state_tensor(player))
            state.apply_action(int(rng.choice(state.legal_actions())))


# ------------------------------------------------------------------ pickling


def test_rules_and_states_pickle_and_play_on_alike():
    rules = EggHeadRules(num_players=3, analysts=[0, 2], deck=["total", "missing_values", "count_3"])
    copy = pickle.loads(pickle.dumps(rules))
    assert copy.params == rules.params and repr(copy) == repr(rules)
    assert [q.id for q in copy.deck] == ["total", "missing_values", "count_3"]
    rng = np.random.default_rng(4)
    state = rules.new_initial_state()
    for _ in range(12):  # deep into the first rounds
        state.apply(sample_chance(state, rng) if state.current_player() == CHANCE else 0)
    other = pickle.loads(pickle.dumps(state))
    for _ in range(60):
        for player in range(3):
            assert other.legal_actions(player) == state.legal_actions(player)
            assert other.information_state_string(player) == state.information_state_string(player)
            assert np.array_equal(other.observation_tensor(player), state.observation_tensor(player))
        if state.is_terminal():
            break
        if state.current_player() == CHANCE:
            action = sample_chance(state, rng)
        else:
            action = 0 if rng.random() < 0.7 else int(rng.choice(state.legal_actions()))
        state.apply(action)
        other.apply(action)
    assert other.returns() == state.returns()


@pytest.mark.parametrize("make", [egghead_v0.env, egghead_v0.raw_env])
def test_envs_pickle_mid_game(make):
    env = make(num_players=3, target_score=2, valids_in_observation=True)
    env.reset(seed=3)
    for _ in range(4):
        env.step(0)
    copy = pickle.loads(pickle.dumps(env))
    for _ in range(30):  # chance moves continue from the same generator state
        assert copy.agent_selection == env.agent_selection
        agent = env.agent_selection
        obs, copy_obs = env.observe(agent), copy.observe(agent)
        assert np.array_equal(obs["observation"], copy_obs["observation"])
        assert np.array_equal(obs["action_mask"], copy_obs["action_mask"])
        if env.terminations[agent] or env.truncations[agent]:
            break
        env.step(0)
        copy.step(0)
    assert copy.rewards == env.rewards


# ------------------------------------------------------------------ arguments


@pytest.mark.parametrize(
    "name, value",
    [
        ("num_players", "4"),
        ("num_players", 2),
        ("num_players", 3.5),
        ("cards_per_player", 0),
        ("cards_per_player", None),
        ("num_values", 10),
        ("num_values", True),
        ("target_score", 0),
        ("target_score", "10"),
        ("moderator", "boss"),
        ("moderator", None),
        ("deck", None),
        ("deck", 1),
        ("deck", []),
        ("deck", ""),
        ("deck", ["total", 3]),
        ("deck", ["colour"]),
        ("deck", "standard,total"),
        ("max_questions", 0),
        ("max_questions", 1.5),
        ("valids_in_observation", 2),
        ("valids_in_observation", "yes"),
        ("analysts", None),
        ("analysts", 0),
        ("analysts", [0, 7]),
        ("analysts", "0,7"),
        ("analysts", "some"),
        ("analysts", ""),
        ("analysts", True),
        ("analysts", [True]),
        ("analysts", [0.5]),
        ("analysts", {"0": 1}),
    ],
)
def test_every_bad_argument_is_refused_by_name(name, value):
    with pytest.raises(ValueError, match=f"^{name}=") as raised:
        EggHeadRules(**{name: value})
    assert "allowed" in str(raised.value) or "use " in str(raised.value)
    with pytest.raises(ValueError, match=f"^{name}="):
        egghead_v0.env(**{name: value})


@pytest.mark.parametrize(
    "name, values, canonical",
    [
        ("analysts", [[0, 2], (2, 0), {0, 2}, "0,2", "0;2", "2,0,", ["0", "2"], [np.int64(0), 2, 2]], "0,2"),
        ("analysts", ["all", [0, 1, 2, 3], "3;2;1;0", range(4)], "all"),
        ("analysts", ["none", [], ()], "none"),
        ("analysts", ["1", [1], "1;"], "1"),
        (
            "deck",
            [
                ["total", "missing_values"],
                ("total", "missing_values"),
                "total,missing_values",
                "total;missing_values",
                ["total", "missing_values", "total"],
            ],
            "total,missing_values",
        ),
        ("deck", ["standard", [q.id for q in standard_deck()]], "standard"),
    ],
)
def test_list_arguments_take_their_natural_spellings(name, values, canonical):
    rules = [EggHeadRules(**{name: v}) for v in values]
    assert {r.params[name] for r in rules} == {canonical}
    assert len({repr(r) for r in rules}) == 1
    assert EggHeadRules(**rules[0].params).params == rules[0].params


@pytest.mark.parametrize(
    "extra",
    [
        "",
        ",analysts=0;2",
        ",analysts=all",
        ",analysts=none",
        ",analysts=1;",
        ",analysts=2;1;0",
        ",deck=total",
        ",deck=total;missing_values;count_2",
        ",deck=standard",
        ",analysts=0;1,deck=highest;lowest",
    ],
)
def test_openspiel_game_strings_round_trip(extra):
    game = pyspiel.load_game(f"hiddenhand_egghead(num_players=3,cards_per_player=1,num_values=3,target_score=3{extra})")
    again = pyspiel.load_game(str(game))
    assert again.get_parameters() == game.get_parameters()
    assert again.rules.params == game.rules.params


def test_python_lists_reach_openspiel_as_semicolon_strings():
    rules = EggHeadRules(num_players=3, analysts=[0, 2], deck=["total", "lowest"])
    params = rules.to_openspiel()
    assert params["analysts"] == "0;2" and params["deck"] == "total;lowest"
    assert EggHeadRules.from_openspiel(params).params == rules.params
    assert EggHeadRules(num_players=3, analysts=[1]).to_openspiel()["analysts"] == "1;"  # not read back as an int
    # OpenSpiel's own type check refuses a bare analysts=1 (an integer for a string parameter).
    with pytest.raises(pyspiel.SpielError, match="Wrong type for parameter analysts"):
        pyspiel.load_game("hiddenhand_egghead(num_players=3,analysts=1)")
    game = hiddenhand.openspiel.to_pyspiel(rules)
    assert "analysts=0;2" in str(game) and pyspiel.load_game(str(game)).rules.params == rules.params
