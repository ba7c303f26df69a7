"""EggHead's game: scripted rounds, the PettingZoo and OpenSpiel faces, the deducing agents
and the study's experiment."""

import json
import warnings

import numpy as np
import pyspiel
import pytest
from pettingzoo.test import api_test, seed_test

import hiddenhand.openspiel  # noqa: F401  (registers hiddenhand_egghead)
from hiddenhand.agents import make_agent
from hiddenhand.cli import main
from hiddenhand.core import CHANCE, TERMINAL
from hiddenhand.envs import egghead_v0
from hiddenhand.envs.egghead import EggHeadRules
from hiddenhand.training.egghead_experiment import simulate

EXAMPLE = [(1, 2, 2), (4, 5, 6), (3, 3, 3)]


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


@pytest.mark.parametrize("kwargs", [dict(num_players=3, target_score=2), dict(num_players=3, moderator="rotating", valids_in_observation=True, target_score=2)])
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
        agents = [make_agent("egghead", "analyst", rules.params)] + [make_agent("egghead", "naive", rules.params) for _ in range(2)]
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
        (dict(analysts="0,7"), "analysts='0,7': use 'all', 'none' or player ids from 0 to 3"),
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
    assert main(["egghead", "simulate", "--players", "3", "--analysts", "3", "--rounds", "100", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "analyst" in out and "chance of reaching 10 points first" in out
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["rounds_to_score"]["analyst"]["points"] > 0
    assert (tmp_path / "cdf.png").stat().st_size > 10_000
