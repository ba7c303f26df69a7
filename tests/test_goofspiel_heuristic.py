"""The three computer players of "Determinist's Bane": hand-checked decisions, valid distributions, strength."""

import numpy as np
import pytest
from conftest import decisions, play_out

import hiddenhand
from hiddenhand.agents import GoofspielHeuristic, RandomAgent, make_agent
from hiddenhand.agents.goofspiel_heuristic import LEVELS
from hiddenhand.envs.goofspiel import GoofspielRules
from hiddenhand.training import head_to_head


def dist(level, state, player):
    probs = GoofspielHeuristic(level).policy(state.observation(player))
    return {a + 1: pytest.approx(p) for a, p in enumerate(probs) if p > 1e-12}


def first_round(prize, n=13):
    state = GoofspielRules(num_cards=n).new_initial_state()
    state.apply(prize - 1)
    return state


@pytest.mark.parametrize(
    "prize, expected",
    [(5, {4: 1 / 3, 5: 1 / 3, 6: 1 / 3}), (1, {1: 2 / 3, 2: 1 / 3}), (13, {12: 1 / 3, 13: 2 / 3})],
)
def test_easy_bids_value_plus_minus_one(prize, expected):
    assert dist("easy", first_round(prize), 0) == expected


def test_easy_takes_the_closest_card_and_the_lower_one_on_a_tie():
    rules = GoofspielRules(num_cards=7, prize_order="ascending")
    state = play_out(rules.new_initial_state(), [(1, 1), (2, 2), (4, 4), (5, 5)])
    assert state.prize == 5
    # Player 0 holds 3, 6, 7. Targets 4, 5, 6 -> 3 (nearer than 6), 6 (nearer than 3), 6.
    assert dist("easy", state, 0) == {3: 1 / 3, 6: 2 / 3}


def test_easy_tie_goes_to_the_lower_card():
    rules = GoofspielRules(num_cards=9, prize_order="descending")
    # Player 0 spends 4, 5, 6, 9, 8 on prizes 9..5, keeping 1, 2, 3, 7; prize 4 is up.
    state = play_out(rules.new_initial_state(), [(9, 1), (8, 2), (4, 3), (5, 9), (6, 8)])
    assert state.prize == 4
    # Targets 3, 4, 5: 3 -> 3; 4 -> 3 (|4-3|=1 < |4-7|=3); 5 -> tie 3 and 7 at distance 2 -> 3.
    assert dist("easy", state, 0) == {3: 1.0}
    rules2 = GoofspielRules(num_cards=9, prize_order="descending")
    state2 = play_out(rules2.new_initial_state(), [(9, 1), (8, 2), (4, 3), (5, 9), (6, 8), (1, 7)])
    # Prize 3; player 0 holds 2, 3, 7. Targets 2, 3, 4 -> 2, 3, 3.
    assert dist("easy", state2, 0) == {2: 1 / 3, 3: 2 / 3}


def test_medium_bluffs_or_fights_on_a_high_prize():
    assert dist("medium", first_round(12), 0) == {1: 0.5, 11: 0.5}
    assert dist("medium", first_round(9), 0) == {8: 1 / 3, 9: 1 / 3, 10: 1 / 3}


def test_medium_sees_high_cards_spent_on_high_prizes():
    """The script's counter only drops when a high card buys a low prize; ours counts the cards."""
    state = GoofspielRules(num_cards=13).new_initial_state()
    # Opponent (player 1) spends 10, 11, 12 on prizes 10, 11, 12 and 13 on prize 2.
    play_out(state, [(1, 10), (2, 11), (3, 12), (4, 13)], prizes=[10, 11, 12, 2])
    state.apply(13 - 1)  # prize 13 is up; the opponent has no high card left
    assert dist("medium", state, 0) == {12: 1 / 3, 13: 2 / 3}


def test_medium_fights_with_its_lowest_high_card_and_falls_back_to_value():
    state = GoofspielRules(num_cards=13).new_initial_state()
    play_out(state, [(1, 5), (2, 6), (3, 7), (4, 8)], prizes=[1, 2, 3, 4])
    state.apply(12 - 1)  # prize 12; no card of at most 3 left, opponent holds 10..13
    # bluff -> no low card -> value {11, 12, 13}; fight -> 11.
    assert dist("medium", state, 0) == {11: 0.5 / 3 + 0.5, 12: 0.5 / 3, 13: 0.5 / 3}


def test_hard_first_round_choices():
    assert dist("hard", first_round(12), 0) == {11: 1 / 3, 12: 1 / 3, 13: 1 / 3}
    assert dist("hard", first_round(3), 0) == {1: 0.25, 2: 0.25, 3: 0.25, 4: 0.25}
    assert dist("hard", first_round(8), 0) == {7: 1 / 3, 8: 1 / 3, 9: 1 / 3}


def test_hard_reads_a_conservative_opponent():
    state = GoofspielRules(num_cards=13).new_initial_state()
    # Four rounds in which the opponent wins nothing: below 5 points a round -> conservative.
    play_out(state, [(13, 1), (12, 2), (11, 3), (10, 4)], prizes=[13, 12, 11, 10])
    state.apply(2 - 1)
    assert dist("hard", state, 0) == {1: 1.0}  # its lowest card on a low prize


def test_hard_reads_an_aggressive_opponent():
    state = GoofspielRules(num_cards=13).new_initial_state()
    # The opponent takes 9, 8, 7, 6 = 30 points in four rounds (> 28): aggressive, and
    # still holds 10..13, so on a high prize hard bluffs 1/3 and fights 2/3 (its 11). It
    # has no card of at most 3 left, so the bluff falls back to a value bid {11, 12, 13}.
    play_out(state, [(1, 2), (2, 3), (3, 4), (4, 5)], prizes=[9, 8, 7, 6])
    state.apply(12 - 1)
    assert dist("hard", state, 0) == {11: 1 / 9 + 2 / 3, 12: 1 / 9, 13: 1 / 9}


@pytest.mark.parametrize("level", ["easy", "medium", "hard"])
@pytest.mark.parametrize(
    "kwargs",
    [dict(num_cards=13), dict(num_cards=5), dict(num_cards=8, reveal_bids=False), dict(num_cards=6, num_players=3)],
)
def test_policies_are_distributions_on_legal_actions(level, kwargs, rng):
    rules = GoofspielRules(**kwargs)
    agent = GoofspielHeuristic(level, seed=1)
    for _ in range(60):
        for state in decisions(rules.new_initial_state(), rng):
            obs = state.observation(state.current_player())
            probs = agent.policy(obs)
            assert probs.shape == (rules.num_cards,)
            assert (probs >= 0).all() and probs.sum() == pytest.approx(1.0)
            assert (probs[obs["action_mask"] == 0] == 0).all()
            state.apply(agent.act(obs))


def test_act_samples_the_policy():
    agent = GoofspielHeuristic("hard", seed=0)
    obs = first_round(3).observation(0)
    counts = np.bincount([agent.act(obs) for _ in range(4000)], minlength=13) / 4000
    assert np.abs(counts - agent.policy(obs)).max() < 0.03


def test_hard_beats_random_at_13_cards():
    result = head_to_head(GoofspielRules(num_cards=13), GoofspielHeuristic("hard"), RandomAgent(), games=200, seed=0)
    assert result.mean - result.ci95 > 0
    assert result.wins > 0.75 * result.games


def test_unknown_level_and_agent_names():
    with pytest.raises(ValueError, match="level='expert' is not allowed; choose one of: 'easy', 'medium', 'hard'"):
        GoofspielHeuristic("expert")
    with pytest.raises(
        ValueError, match="unknown agent 'expert' for goofspiel; choose one of: random, easy, medium, hard, equilibrium"
    ):
        make_agent("goofspiel", "expert")


def test_the_game_offers_every_level():
    """The declaration names the levels without importing the agent: it names these."""
    game = hiddenhand.games()["goofspiel"]
    assert game.heuristics == ("random", *LEVELS)
    assert set(game.agent_names) == {"random", "equilibrium", *LEVELS}
    for level in LEVELS:
        assert make_agent("goofspiel", level).level == level
