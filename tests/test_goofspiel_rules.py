"""Goofspiel rules on hand-checked positions, and invariants under random play."""

import numpy as np
import pytest
from conftest import decisions, play_out

from hiddenhand.core import CHANCE, IllegalActionError
from hiddenhand.envs.goofspiel import GoofspielRules, scores_to_returns
from hiddenhand.envs.goofspiel_observation import GoofspielView


def test_seed_example_opening_rounds():
    """The annotated game of "Determinist's Bane": prizes 5, 2, 13, 8, 1 with bids (5,6) (2,1) (4,12) (10,3) (1,2)."""
    state = GoofspielRules(num_cards=13).new_initial_state()
    assert state.current_player() == CHANCE
    play_out(state, [(5, 6), (2, 1), (4, 12), (10, 3), (1, 2)], prizes=[5, 2, 13, 8, 1])
    assert state.points == [2 + 8, 5 + 13 + 1]
    assert [r.winner for r in state.history] == [1, 0, 1, 0, 1]
    assert state.legal_actions(0) == []  # chance is to turn the next prize
    assert sorted(a + 1 for a, _ in state.chance_outcomes()) == [3, 4, 6, 7, 9, 10, 11, 12]


def test_tie_discards_the_prize():
    state = GoofspielRules(num_cards=3, prize_order="ascending").new_initial_state()
    assert state.current_player() == 0 and state.prize == 1
    play_out(state, [(2, 2)])
    assert state.points == [0, 0] and state.history[-1].winner is None
    play_out(state, [(3, 1)])  # prize 2 to player 0; the last round (1 vs 3) plays itself
    assert state.is_terminal()
    assert state.history[-1].bids == (1, 3) and state.history[-1].winner == 1
    assert state.points == [2, 3]
    assert state.returns() == [-1.0, 1.0]


def test_three_player_tie_for_highest_bid_discards_even_with_a_lower_bid():
    state = GoofspielRules(num_cards=3, num_players=3, prize_order="descending").new_initial_state()
    assert state.prize == 3
    play_out(state, [(3, 3, 1)])
    assert state.points == [0, 0, 0]
    play_out(state, [(1, 2, 3)])  # prize 2 to player 2; last round: 2, 1, 2 -> tie
    assert state.points == [0, 0, 2]
    assert state.is_terminal() and state.history[-1].winner is None


@pytest.mark.parametrize("order, expected", [("ascending", [1, 2, 3, 4]), ("descending", [4, 3, 2, 1])])
def test_fixed_prize_orders_have_no_chance_nodes(order, expected):
    state = GoofspielRules(num_cards=4, prize_order=order).new_initial_state()
    seen = []
    while not state.is_terminal():
        assert state.current_player() != CHANCE
        if state.current_player() == 0:
            seen.append(state.prize)
        card = state.legal_actions()[0]
        state.apply(card)
    assert [r.prize for r in state.history] == expected
    assert seen == expected[:-1]  # nobody is asked in the last round


def test_random_order_last_prize_is_turned_without_chance():
    state = GoofspielRules(num_cards=3).new_initial_state()
    play_out(state, [(1, 2), (2, 1)], prizes=[3, 1])
    assert state.is_terminal()
    assert [r.prize for r in state.history] == [3, 1, 2]


@pytest.mark.parametrize(
    "scoring, points, expected",
    [
        ("point_difference", [10, 4], [6.0, -6.0]),
        ("point_difference", [6, 3, 0], [4.5, 0.0, -4.5]),
        ("win_loss", [10, 4], [1.0, -1.0]),
        ("win_loss", [5, 5], [0.0, 0.0]),
        ("win_loss", [5, 5, 1], [0.5, 0.5, -1.0]),
        ("win_loss", [6, 2, 1], [1.0, -0.5, -0.5]),
        ("total_points", [10, 4], [10.0, 4.0]),
    ],
)
def test_scorings(scoring, points, expected):
    assert scores_to_returns(points, scoring) == pytest.approx(expected)


@pytest.mark.parametrize(
    "scoring, expected", [("point_difference", [-1.0, 1.0]), ("win_loss", [-1.0, 1.0]), ("total_points", [1.0, 2.0])]
)
def test_scoring_through_a_whole_game(scoring, expected):
    state = GoofspielRules(num_cards=2, prize_order="descending", scoring=scoring).new_initial_state()
    # Prize 2: bids 1 vs 2, player 1 scores 2. Last round, prize 1: 2 vs 1, player 0 scores 1.
    play_out(state, [(1, 2)])
    assert state.is_terminal() and state.points == [1, 2]
    assert state.returns() == expected


@pytest.mark.parametrize(
    "scoring, after_one, after_two",
    [
        ("point_difference", [0.0, 0.0], [-3.0, 3.0]),
        ("total_points", [0.0, 0.0], [0.0, 3.0]),
        ("win_loss", [0.0] * 2, [0.0] * 2),
    ],
)
def test_banked_is_what_the_rounds_played_have_settled(scoring, after_one, after_two):
    """Prizes 4, 3, 2, 1: a tie discards the 4, then player 1 takes the 3; additive scorings
    have banked that much of the return, win/loss nothing until the end, where the whole
    return is settled and banked stops mattering."""
    state = GoofspielRules(num_cards=4, prize_order="descending", scoring=scoring).new_initial_state()
    assert state.banked() == [0.0, 0.0]
    play_out(state, [(4, 4)])
    assert state.banked() == after_one
    play_out(state, [(1, 3)])
    assert state.banked() == after_two
    state.apply(state.legal_actions()[0])  # player 0 has bid and player 1 not yet: nothing newly settled
    assert state.banked() == after_two


def test_round_state_keys_the_hands_the_prizes_to_come_and_the_prize_at_each_rounds_start():
    """Four cards, prizes 4, 3, 2, 1: card c of player p is bit 4p + c - 1, prize card c bit
    8 + c - 1, the prize on the table minus one above bit 12; -1 once player 0 has bid, and
    wherever the rest of the game depends on more than the position (bids hidden, or
    win/loss, where the score matters)."""
    state = GoofspielRules(num_cards=4, prize_order="descending").new_initial_state()
    assert state.round_state() == 0b1111_1111 | 0b0111 << 8 | 3 << 12  # the 4 turned: 1, 2, 3 to come
    state.apply(0)  # player 0 bids 1
    assert state.round_state() == -1
    state.apply(3)  # player 1 bids 4 and takes the 4; the 3 is turned
    assert state.round_state() == 0b0111_1110 | 0b0011 << 8 | 2 << 12
    for hidden in ({"reveal_bids": False}, {"scoring": "win_loss"}):
        assert GoofspielRules(num_cards=4, prize_order="descending", **hidden).new_initial_state().round_state() == -1


def test_illegal_actions_name_the_legal_ones():
    state = GoofspielRules(num_cards=4, prize_order="ascending").new_initial_state()
    state.apply(2)
    with pytest.raises(IllegalActionError, match=r"legal actions: 0 \(Bid 1\), 1 \(Bid 2\), 2 \(Bid 3\), 3 \(Bid 4\)"):
        state.apply(7)
    state.apply(1)
    with pytest.raises(IllegalActionError, match="illegal for player 0"):
        state.apply(2)  # card 3 is spent
    random_state = GoofspielRules(num_cards=4).new_initial_state()
    with pytest.raises(IllegalActionError, match="chance"):
        random_state.apply(9)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_cards": 0}, r"num_cards=0 is out of range; allowed: 2 to 13"),
        ({"num_cards": 14}, r"num_cards=14"),
        ({"num_cards": 2.5}, r"not an integer"),
        ({"num_players": 7}, r"num_players=7 is out of range; allowed: 2 to 6"),
        (
            {"prize_order": "shuffled"},
            r"prize_order='shuffled' is not allowed; choose one of: 'random', 'ascending', 'descending'",
        ),
        ({"scoring": "points"}, r"scoring='points'.*'point_difference', 'win_loss', 'total_points'"),
        ({"reveal_bids": "yes"}, r"reveal_bids='yes' is not a boolean"),
        ({"num_cards": float("inf")}, r"num_cards=inf is not an integer"),
        ({"num_cards": float("nan")}, r"num_cards=nan is not an integer"),
        ({"num_cards": True}, r"num_cards=True is not an integer"),
    ],
)
def test_bad_configuration(kwargs, message):
    with pytest.raises(ValueError, match=message):
        GoofspielRules(**kwargs)


def test_numpy_scalars_are_accepted():
    rules = GoofspielRules(num_cards=np.int64(4), num_players=np.int32(3), reveal_bids=np.False_)
    assert rules.params["num_cards"] == 4 and type(rules.params["num_cards"]) is int
    assert rules.params["reveal_bids"] is False


def test_hidden_bids_hide_the_opponents_cards_but_not_the_winner():
    rules = GoofspielRules(num_cards=4, prize_order="ascending", reveal_bids=False)
    a, b = rules.new_initial_state(), rules.new_initial_state()
    play_out(a, [(2, 1)])
    play_out(b, [(2, 3)])  # same own bid, different opponent bid, different winner
    assert a.information_state_string(0) != b.information_state_string(0)
    c = rules.new_initial_state()
    play_out(c, [(2, 4)])  # same winner as b, different opponent bid: indistinguishable to player 0
    assert b.information_state_string(0) == c.information_state_string(0)
    assert np.array_equal(b.observation_tensor(0), c.observation_tensor(0))
    assert not np.array_equal(b.observation_tensor(1), c.observation_tensor(1))
    revealed = GoofspielRules(num_cards=4, prize_order="ascending").new_initial_state()
    other = GoofspielRules(num_cards=4, prize_order="ascending").new_initial_state()
    play_out(revealed, [(2, 3)])
    play_out(other, [(2, 4)])
    assert not np.array_equal(revealed.observation_tensor(0), other.observation_tensor(0))


def test_a_pending_bid_is_hidden_from_the_next_bidder():
    rules = GoofspielRules(num_cards=4, prize_order="ascending")
    a, b = rules.new_initial_state(), rules.new_initial_state()
    a.apply(0)
    b.apply(3)
    assert a.current_player() == b.current_player() == 1
    assert a.information_state_string(1) == b.information_state_string(1)
    assert np.array_equal(a.observation_tensor(1), b.observation_tensor(1))
    assert a.information_state_string(0) != b.information_state_string(0)  # perfect recall of own bid


def test_observation_decodes_to_what_the_player_knows():
    rules = GoofspielRules(num_cards=6, num_players=3)
    state = play_out(rules.new_initial_state(), [(6, 1, 2), (1, 5, 5)], prizes=[4, 2])
    state.apply(3 - 1)  # chance turns 3
    state.apply(2 - 1)  # player 0 bids 2; player 1 is to move
    view = GoofspielView.decode(state.observation_tensor(1), 6)
    assert view.num_players == 3 and view.reveal_bids
    assert view.prize == 3 and view.rounds_played == 2
    assert view.hand == (2, 3, 4, 6)
    assert view.points == (0, 0, 4)  # self (player 1), player 2, player 0
    assert view.others_hands == ((1, 3, 4, 6), (2, 3, 4, 5))  # player 2, then player 0 before this round
    assert view.prizes_to_come == (1, 5, 6)


def test_single_card_game_is_refused():
    # Its only round would play itself: a game without decisions, which PettingZoo's and
    # OpenSpiel's tests (and every tabular algorithm) reject.
    with pytest.raises(ValueError, match=r"num_cards=1 is out of range; allowed: 2 to 13"):
        GoofspielRules(num_cards=1)


@pytest.mark.parametrize("players, reveal", [(2, True), (2, False), (3, True), (4, False)])
def test_invariants_under_random_play(players, reveal, rng):
    n = 7
    rules = GoofspielRules(num_cards=n, num_players=players, reveal_bids=reveal)
    for _ in range(500):
        state = rules.new_initial_state()
        count = 0
        for _ in decisions(state, rng):  # yields the same state, ready for its next move
            p = state.current_player()
            mask = state.action_mask(p)
            assert mask.tolist() == [int(a in state.legal_actions(p)) for a in range(n)]
            for q in range(players):  # players who already bid this round have no moves
                assert bool(state.legal_actions(q)) == (q >= p)
            state.apply(int(rng.choice(state.legal_actions())))
            count += 1
        assert count == (n - 1) * players
        bids = np.array([r.bids for r in state.history])
        for q in range(players):  # each card played exactly once
            assert sorted(bids[:, q]) == list(range(1, n + 1))
        assert sorted(r.prize for r in state.history) == list(range(1, n + 1))
        won = sum(r.prize for r in state.history if r.winner is not None)
        assert sum(state.points) == won
        assert sum(state.returns()) == pytest.approx(0.0, abs=1e-9)
        lo, hi = rules.utility_range
        assert all(lo - 1e-9 <= r <= hi + 1e-9 for r in state.returns())


def test_clone_is_independent(rules5):
    state = rules5.new_initial_state()
    state.apply(2)
    copy = state.clone()
    copy.apply(0)
    assert state.current_player() == 0 and copy.current_player() == 1
    assert state.information_state_string(0) != copy.information_state_string(0)
    assert state.observation_tensor(0)[rules5.layout.offset("hand")] == 1.0


@pytest.mark.parametrize("num_cards", [3, 5, 13])
def test_full_observations_translate_to_the_markov_ones_of_the_same_positions(num_cards):
    """The same random games under both observations: at every decision the translated full
    observation equals what the Markov rules show, and a Translated agent (the medium
    heuristic, which reads no score) plays on the full observation exactly as the agent
    itself does on the Markov one."""
    from hiddenhand.agents import GoofspielHeuristic
    from hiddenhand.agents.base import Translated
    from hiddenhand.core import sample_chance

    full, markov = GoofspielRules(num_cards=num_cards), GoofspielRules(num_cards=num_cards, observation="markov")
    medium = GoofspielHeuristic("medium")
    translated = Translated(medium, full.markov_observations)
    assert not translated.uses_score and not translated.uses_history
    rng = np.random.default_rng(num_cards)
    for _ in range(5):
        a, b = full.new_initial_state(), markov.new_initial_state()
        while not a.is_terminal():
            player = a.current_player()
            if player >= 0:
                shown = full.markov_observations({k: v[None] for k, v in a.observation(player).items()})
                np.testing.assert_array_equal(shown["observation"][0], b.observation_tensor(player))
                np.testing.assert_array_equal(shown["action_mask"][0], b.action_mask(player))
                np.testing.assert_array_equal(
                    translated.policy(a.agent_observation(player)), medium.policy(b.agent_observation(player))
                )
                action = int(rng.choice(a.legal_actions()))
            else:
                action = sample_chance(a, rng)
            a.apply(action)
            b.apply(action)
