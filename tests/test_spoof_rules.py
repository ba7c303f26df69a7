"""Spoof's rules on hand-checked rounds, its PettingZoo and OpenSpiel faces, and invariants
under random play."""

import warnings

import numpy as np
import pettingzoo
import pyspiel
import pytest
from pettingzoo.test import api_test, seed_test

import hiddenhand.openspiel  # noqa: F401  (registers hiddenhand_spoof)
from hiddenhand.core import TERMINAL, IllegalActionError
from hiddenhand.envs import spoof_v0
from hiddenhand.envs.spoof import SpoofRules, SpoofView


def play_round(state, holds, bids):
    """Holds and bids by role: (first bidder's, second's)."""
    rules = state.rules
    first = state.first
    for p, hold in zip((first, 1 - first), holds):
        assert state.current_player() == p
        state.apply(rules.hold_action(hold))
    for p, bid in zip((first, 1 - first), bids):
        assert state.current_player() == p
        state.apply(rules.bid_action(bid))
    return state


def test_round_state_keys_the_match_counts_and_first_bidder_at_each_round_start():
    """(first * 4 + matches_0) * 4 + matches_1 from 3 matches each, -1 inside a round; a
    round where nobody is right leads back to the same key."""
    rules = SpoofRules()
    state = rules.new_initial_state()
    assert state.round_state() == (0 * 4 + 3) * 4 + 3
    state.apply(rules.hold_action(2))
    assert state.round_state() == -1
    state = play_round(rules.new_initial_state(), holds=(0, 2), bids=(4, 2))  # player_1 right
    assert state.matches == [3, 2] and state.first == 1
    assert state.round_state() == (1 * 4 + 3) * 4 + 2
    play_round(state, holds=(1, 1), bids=(3, 0))  # nobody right
    assert state.round_state() == (1 * 4 + 3) * 4 + 2
    assert rules.new_round_state((1, 3), first=1).round_state() == (1 * 4 + 1) * 4 + 3
    assert SpoofRules(matches=(2, 5)).new_initial_state().round_state() == 2 * 6 + 5


def test_a_right_bid_drops_a_match_and_bids_first_next():
    state = SpoofRules().new_initial_state()
    play_round(state, holds=(2, 1), bids=(3, 4))  # total 3: player_0 right
    assert state.matches == [2, 3] and state.first == 0
    play_round(state, holds=(0, 2), bids=(4, 2))  # total 2: player_1 right
    assert state.matches == [2, 2] and state.first == 1
    assert state.current_player() == 1  # player_1 now chooses a hand first
    play_round(state, holds=(1, 1), bids=(3, 0))  # total 2: nobody right
    assert state.matches == [2, 2] and state.first == 1
    assert [r.winner for r in state.history] == [0, 1, None]


def test_the_first_player_out_of_matches_wins():
    state = SpoofRules(matches=(1, 3)).new_initial_state()
    play_round(state, holds=(0, 2), bids=(2, 3))
    assert state.current_player() == TERMINAL and not state.is_truncated()
    assert state.returns() == [1.0, -1.0]


def test_legal_moves_and_illegal_ones():
    rules = SpoofRules(matches=(2, 3))
    state = rules.new_initial_state()
    # Both hands are due: both players have their holds, up to their own matches.
    assert state.legal_actions(0) == [0, 1, 2] and state.legal_actions(1) == [0, 1, 2, 3]
    with pytest.raises(
        IllegalActionError, match=r"action 3 \(Hold 3\) is illegal for player 0.*legal actions: 0 \(Hold 0\)"
    ):
        state.apply(3)
    state.apply(rules.hold_action(2))
    assert state.legal_actions(0) == []
    state.apply(rules.hold_action(0))
    assert state.legal_actions(1) == []  # player_0 bids first
    assert state.legal_actions(0) == [rules.bid_action(b) for b in range(6)]
    state.apply(rules.bid_action(4))
    assert rules.bid_action(4) not in state.legal_actions(1)
    with pytest.raises(
        IllegalActionError, match=r"action 8 \(Bid 4\) is illegal for player 1.*7 \(Bid 3\), 9 \(Bid 5\)$"
    ):
        state.apply(rules.bid_action(4))


def test_one_round_pays_the_diagrams_utilities():
    for holds, bids, returns in [
        ((2, 1), (3, 4), [1.0, 0.0]),
        ((2, 1), (4, 3), [0.0, 1.0]),
        ((2, 1), (0, 6), [0.5, 0.5]),
    ]:
        state = play_round(SpoofRules(objective="round").new_initial_state(), holds, bids)
        assert state.is_terminal() and state.returns() == returns


def test_max_rounds_stops_the_game_as_a_truncated_draw():
    rules = SpoofRules(matches=2, max_rounds=2)
    state = rules.new_initial_state()
    play_round(state, (1, 1), (0, 1))
    assert not state.is_terminal()
    play_round(state, (1, 1), (0, 1))
    assert state.is_terminal() and state.is_truncated() and state.returns() == [0.0, 0.0]
    env = spoof_v0.env(matches=2, max_rounds=2)
    env.reset(seed=0)
    for _ in range(2):
        for step in ((1, 1), (0, 1)):
            for value in step:
                env.step(
                    rules.hold_action(value) if env.unwrapped.game_state.holds.count(None) else rules.bid_action(value)
                )
    assert all(env.truncations.values()) and not any(env.terminations.values())


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(matches=0), "matches=0 is out of range; allowed: 1 to 9"),
        (dict(matches=10), "matches=10 is out of range"),
        (dict(matches=(1, 2, 3)), "not one count or a pair"),
        (dict(matches=(2, 0)), r"matches=\(2, 0\): player_1's count=0 is out of range; allowed: 1 to 9"),
        (dict(matches=True), "matches=True is not an integer"),
        (dict(objective="match"), "objective='match' is not allowed; choose one of: 'game', 'round'"),
        (dict(max_rounds=0), "max_rounds=0 is out of range"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SpoofRules(**kwargs)


def test_the_observation_hides_the_opponents_hand_and_decodes():
    rules = SpoofRules(matches=(2, 3))
    seen = []
    for hold in (0, 2):
        state = rules.new_initial_state()
        state.apply(rules.hold_action(hold))
        seen.append((state.observation_tensor(1), state.information_state_string(1)))
        state.apply(rules.hold_action(1))
        state.apply(rules.bid_action(3))
        view = SpoofView.decode(state.observation_tensor(1), rules.layout)
        assert view == SpoofView(mine=3, theirs=2, first=False, hold=1, my_bid=None, their_bid=3)
    assert np.array_equal(seen[0][0], seen[1][0]) and seen[0][1] == seen[1][1]
    assert rules.observation_size == 4 + 3 * 4 + 2 * 6 + 50 * (2 + 2 * 4 + 2 * 6)


@pytest.mark.parametrize("kwargs", [{}, dict(matches=(1, 4), objective="round"), dict(matches=2, max_rounds=3)])
def test_pettingzoo_api(kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(spoof_v0.env(**kwargs), num_cycles=300)
        seed_test(lambda: spoof_v0.env(**kwargs), num_cycles=300)


def test_registry_and_openspiel_parameters():
    env = pettingzoo.make("aec", "hiddenhand/spoof-v0", matches=(2, 3))
    assert env.unwrapped.rules.matches == (2, 3)
    game = pyspiel.load_game("hiddenhand_spoof(matches=2,matches_p1=3,objective=round)")
    assert game.rules.matches == (2, 3)
    assert game.get_type().utility == pyspiel.GameType.Utility.CONSTANT_SUM and game.utility_sum() == 1.0
    assert pyspiel.load_game("hiddenhand_spoof").get_type().utility == pyspiel.GameType.Utility.ZERO_SUM


def test_random_play_invariants(rng):
    rules = SpoofRules(matches=(3, 2), max_rounds=30)
    for _ in range(200):
        state = rules.new_initial_state()
        while not state.is_terminal():
            before = list(state.matches)
            state.apply(int(rng.choice(state.legal_actions())))
            assert all(a >= b for a, b in zip(before, state.matches)) and sum(before) - sum(state.matches) <= 1
        returns = state.returns()
        assert sum(returns) == 0
        if state.is_truncated():
            assert returns == [0, 0] and len(state.history) == 30
        else:
            assert returns[state.matches.index(0)] == 1.0
