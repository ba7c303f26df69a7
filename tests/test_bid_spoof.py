"""Bid Spoof: the Milan rules on hand-played rounds, the faces, the exact two-player
solution, the heuristic, and the many-player tournament."""

import warnings

import numpy as np
import pyspiel
import pytest
from conftest import finite_horizon_values
from open_spiel.python.algorithms import sequence_form_lp
from pettingzoo.test import api_test, seed_test

import hiddenhand.openspiel as ho
from hiddenhand.agents import RandomAgent, make_agent
from hiddenhand.agents.bid_spoof import BidSpoofEquilibriumAgent, cached_solution
from hiddenhand.cli import main
from hiddenhand.core import TERMINAL, IllegalActionError
from hiddenhand.envs import bid_spoof_v0
from hiddenhand.envs.bid_spoof import BidSpoofRules
from hiddenhand.solvers.bid_spoof import BidSpoofRounds, solve_round
from hiddenhand.solvers.sequence_form import solve as solve_sequence_form
from hiddenhand.training import tournament


def start(rules, holds, direction="clockwise", **state_kwargs):
    """A round with these hands (by player id, None for players out), direction chosen."""
    state = rules.new_round_state(**state_kwargs) if state_kwargs else rules.new_initial_state()
    acts = rules.actions
    while any(state.holds[p] is None for p in state.active()):
        state.apply(acts.hold(holds[state.current_player()]))
    if len(state.active()) > 2:
        state.apply(acts.direction(direction))
    return state


def say(state, *moves):
    acts = state.rules.actions
    for move in moves:
        state.apply(acts.bid(move) if isinstance(move, int) else acts.call(move))
    return state


def test_call_loses_a_coin_for_the_wrong_side_and_the_loser_starts():
    rules = BidSpoofRules(num_players=3, coins=3)
    state = say(start(rules, (1, 2, 0)), 2, 3, "call")  # total 3 >= 3: the caller (player_2) loses
    assert state.coins == [3, 3, 2] and state.starter == 2
    # Anticlockwise, player_2 answers player_0's bid of 2; the total is 1, so the bidder loses.
    state = say(start(rules, (0, 0, 1), direction="anticlockwise"), 2, "call")
    assert state.history[-1].caller == 2 and state.coins == [2, 3, 3] and state.starter == 0


def test_round_state_keys_the_starter_and_every_seats_coins_at_each_round_start():
    """The starter then each seat's coins as digits in base coins + 1; -1 inside a round."""
    rules = BidSpoofRules(num_players=3, coins=3)
    state = rules.new_initial_state()
    assert state.round_state() == ((0 * 4 + 3) * 4 + 3) * 4 + 3
    state.apply(rules.actions.hold(1))
    assert state.round_state() == -1
    state = say(start(rules, (1, 2, 0)), 2, 3, "call")  # player_2 loses a coin and starts
    assert state.round_state() == ((2 * 4 + 3) * 4 + 3) * 4 + 2
    two = BidSpoofRules(num_players=2, coins=2)
    assert two.new_round_state((1, 2), starter=1).round_state() == (1 * 3 + 1) * 3 + 2


def test_cliff_spoof_and_zero():
    rules = BidSpoofRules(num_players=3, coins=3)
    state = say(start(rules, (1, 1, 1)), 2, 3, "cliff")  # exactly 3: player_2 would win a coin, but holds the cap
    assert state.coins == [3, 3, 3] and state.starter == 2
    state = say(
        start(rules, (0, 1, 1), coins=(2, 3, 3), starter=2), 2, "cliff"
    )  # player_2 bids 2, player_0 cliffs: right
    assert state.coins == [3, 3, 3] and state.starter == 0
    state = say(start(rules, (3, 3, 2)), 4, "spoof")  # not all 9 coins held: player_1 loses and starts
    assert state.coins == [3, 2, 3] and state.starter == 1
    state = say(start(rules, (3, 3, 3), coins=(3, 3, 3), starter=1), 4, "spoof")  # player_2 spoofs: right, a draw
    assert state.coins == [3, 3, 3] and state.starter == 2
    state = say(start(rules, (0, 0, 0)), "zero")  # right: everyone else loses a coin, the caller starts
    assert state.coins == [3, 2, 2] and state.starter == 0
    state = say(start(rules, (0, 1, 0)), "zero")
    assert state.coins == [2, 3, 3] and state.starter == 0


def test_who_may_say_what():
    acts = BidSpoofRules(num_players=3).actions
    state = start(BidSpoofRules(num_players=3), (1, 1, 1))
    legal = state.legal_actions()
    assert acts.call("call") not in legal and acts.call("spoof") not in legal and acts.call("cliff") not in legal
    assert acts.call("zero") in legal and acts.bid(9) in legal and acts.bid(1) in legal
    say(state, 4)
    assert acts.call("zero") not in state.legal_actions() and acts.bid(4) not in state.legal_actions()
    with pytest.raises(IllegalActionError, match=r"action 7 \(Bid 4\) is illegal for player 1"):
        state.apply(acts.bid(4))
    house = BidSpoofRules(num_players=3, zero_call="before_own_bid")
    state = say(start(house, (1, 1, 1)), 2)
    assert house.actions.call("zero") in state.legal_actions()  # player_1 has not bid yet
    say(state, 3, 4)
    assert house.actions.call("zero") not in state.legal_actions()  # player_0 bid 2 already
    two = BidSpoofRules(num_players=2, coins=1)
    state = say(start(two, (1, 1)), 2)
    assert state.legal_actions() == [
        two.actions.call(c) for c in ("call", "cliff", "spoof")
    ]  # 2 coins in play: no higher bid


def test_players_out_the_starter_and_the_end():
    rules = BidSpoofRules(num_players=3, coins=2)
    state = say(
        start(rules, (None, 1, 1), coins=(0, 1, 2), starter=1), 3, "call"
    )  # total 2 < 3: player_1 loses, is out
    assert state.coins == [0, 0, 2] and state.current_player() == TERMINAL
    assert state.returns() == [-0.5, -0.5, 1.0]
    state = say(start(rules, (1, 1, 0), coins=(1, 1, 2), starter=0), 3, "call")  # total 2 < 3: player_0 loses, is out
    assert state.coins == [0, 1, 2] and state.starter == 1  # the next player in after player_0
    assert state.legal_actions(0) == [] and state.current_player() == 1
    one = BidSpoofRules(num_players=3, objective="round")
    assert say(start(one, (1, 1, 1)), 4, "call").returns() == [-1.0, 0.5, 0.5]  # player_0 bid too high
    assert say(start(one, (0, 0, 0)), "zero").returns() == [1.0, -0.5, -0.5]
    long = BidSpoofRules(num_players=2, coins=1, max_rounds=1)
    state = say(start(long, (1, 1)), 2, "spoof")
    assert state.is_truncated() and state.returns() == [0.0, 0.0]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(num_players=9), "num_players=9 is out of range; allowed: 2 to 8"),
        (dict(coins=0), "coins=0 is out of range; allowed: 1 to 5"),
        (dict(zero_call="always"), "zero_call='always' is not allowed"),
        (dict(objective="match"), "objective='match' is not allowed"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        BidSpoofRules(**kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [{}, dict(num_players=2, coins=2), dict(num_players=5, zero_call="before_own_bid"), dict(objective="round")],
)
def test_pettingzoo_api(kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(bid_spoof_v0.env(**kwargs), num_cycles=300)
        seed_test(lambda: bid_spoof_v0.env(**kwargs), num_cycles=200)


def test_random_play_invariants(rng):
    rules = BidSpoofRules(num_players=4, coins=2, max_rounds=60)
    for _ in range(200):
        state = rules.new_initial_state()
        while not state.is_terminal():
            state.apply(int(rng.choice(state.legal_actions())))
            assert all(0 <= c <= 2 for c in state.coins)
        assert sum(state.returns()) == pytest.approx(0.0)
        assert state.is_truncated() or len(state.active()) == 1


@pytest.mark.parametrize("coins", [1, 2, 3])
@pytest.mark.parametrize("zero_call", ["round_start", "before_own_bid"])
def test_round_equilibrium_has_no_best_response_gain(coins, zero_call):
    game = pyspiel.load_game(f"hiddenhand_bid_spoof(num_players=2,coins={coins},objective=round,zero_call={zero_call})")
    assert ho.nash_conv(game, BidSpoofEquilibriumAgent(game.rules)) < 1e-8


def test_round_value_matches_openspiel_lp():
    game = pyspiel.load_game("hiddenhand_bid_spoof(num_players=2,coins=1,objective=round)")
    assert solve_round(1)[0] == pytest.approx(sequence_form_lp.solve_zero_sum_game(game)[0], abs=1e-6)


@pytest.mark.parametrize("zero_call", ["round_start", "before_own_bid"])
def test_game_values_are_a_fixed_point_and_each_round_an_equilibrium(zero_call):
    solution = cached_solution(3, zero_call)
    assert solution.stochastic.residual() < 1e-9
    for key, r in solution.stochastic.rounds.items():
        assert max(abs(g) for g in r.best_response_gains()) < 1e-9, key
    assert solution.stochastic.sweeps > 2  # cliffs lead back to richer round-states: not one pass


def test_truncated_game_matches_openspiel_lp_on_the_whole_tree():
    """Two rounds then a draw, with one coin each: OpenSpiel's LP on the whole tree against
    two steps of value iteration over our round-states."""
    game = pyspiel.load_game("hiddenhand_bid_spoof(num_players=2,coins=1,max_rounds=2)")
    whole = sequence_form_lp.solve_zero_sum_game(game)[0]
    assert finite_horizon_values(BidSpoofRounds(1, "round_start"), 2)[(1, 1)] == pytest.approx(whole, abs=1e-6)


def test_unequal_coins_and_role_swaps_against_the_whole_tree():
    """Two coins each, two rounds then a draw: the whole tree solved at once against two
    steps of value iteration over the round-states (unequal coins, roles swapping)."""
    whole = solve_sequence_form(pyspiel.load_game("hiddenhand_bid_spoof(num_players=2,coins=2,max_rounds=2)")).value
    assert finite_horizon_values(BidSpoofRounds(2, "round_start"), 2)[(2, 2)] == pytest.approx(whole, abs=1e-9)


def all_states(rules):
    """Every state of the game, terminals included, depth first."""
    stack = [rules.new_initial_state()]
    while stack:
        state = stack.pop()
        yield state
        for action in state.legal_actions():
            child = state.clone()
            child.apply(action)
            stack.append(child)


def assert_one_to_one(pairs):
    """``pairs`` of (string, tensor bytes): equal strings exactly when equal tensors."""
    pairs = set(pairs)
    assert len({s for s, _ in pairs}) == len({t for _, t in pairs}) == len(pairs)


def information_state(state, player):
    """The string and the tensor's bytes, checking the tensor's length and that it starts
    with the observation."""
    tensor = state.information_state_tensor(player)
    assert tensor.dtype == np.float32 and tensor.shape == (state.rules.information_state_size,)
    assert np.array_equal(tensor[: state.rules.observation_size], state.observation_tensor(player))
    return state.information_state_string(player), tensor.tobytes()


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(num_players=2, coins=1, max_rounds=2),
        dict(num_players=2, coins=1, max_rounds=3),
        dict(num_players=2, coins=2, objective="round", zero_call="before_own_bid"),
        dict(num_players=3, coins=1, max_rounds=2),
    ],
)
def test_information_state_tensor_is_the_string_on_every_state(kwargs):
    """Perfect recall: over the whole game, for every player (to move or not, terminals too),
    equal information-state tensors exactly when equal strings."""
    rules = BidSpoofRules(**kwargs)
    assert not rules.observation_is_information_state
    assert_one_to_one(information_state(state, p) for state in all_states(rules) for p in range(rules.num_players))


def test_information_state_tensor_remembers_earlier_rounds():
    rules = BidSpoofRules(num_players=2, coins=1, max_rounds=2)
    spoofed = [say(start(rules, (1, 1)), bid, "spoof") for bid in (1, 2)]  # right spoofs: nothing changes
    strings = [s.information_state_string(1) for s in spoofed]
    assert "bids p0:1 spoof p1" in strings[0] and "bids p0:2 spoof p1" in strings[1]
    # The observation shows the last round's hands and call, not its bids; the information state does.
    assert np.array_equal(spoofed[0].observation_tensor(1), spoofed[1].observation_tensor(1))
    assert not np.array_equal(spoofed[0].information_state_tensor(1), spoofed[1].information_state_tensor(1))
    # With two players in, the direction is set as the last hand goes in: the starter, waiting
    # for the other hand, and the starter to open tell the two apart, in string and tensor alike.
    state = rules.new_initial_state()
    state.apply(rules.actions.hold(1))
    waiting = information_state(state, 0)
    state.apply(rules.actions.hold(0))
    assert state.current_player() == 0 and information_state(state, 0)[0] != waiting[0]
    assert information_state(state, 0)[1] != waiting[1]


def test_information_state_tensor_on_random_games(rng):
    rules = BidSpoofRules()
    pairs = []
    for _ in range(300):
        state = rules.new_initial_state()
        while not state.is_terminal():
            pairs.append(information_state(state, state.current_player()))
            state.apply(int(rng.choice(state.legal_actions())))
        pairs += [information_state(state, p) for p in range(rules.num_players)]
    assert_one_to_one(pairs)


def test_information_state_sizes_and_openspiel():
    # The observation, then R = max_rounds (1 for one round) blocks of N^2 C + N (C + 4) + 6.
    assert (BidSpoofRules().observation_size, BidSpoofRules().information_state_size) == (73, 73 + 200 * 54)
    assert BidSpoofRules(objective="round").information_state_size == 73 + 54
    assert BidSpoofRules(num_players=8, coins=5).information_state_size == 460 + 200 * 398
    game = pyspiel.load_game("hiddenhand_bid_spoof(num_players=2,coins=1,max_rounds=2)")
    assert game.information_state_tensor_shape() == [game.rules.information_state_size]
    assert game.observation_tensor_shape() == [game.rules.observation_size]
    state = game.new_initial_state()
    for action in (1, 1, 3, 6):  # both hold 1, player_0 bids 2, player_1 says spoof
        state.apply_action(action)
    assert np.array_equal(state.information_state_tensor(1), state.inner.information_state_tensor(1))
    assert state.inner.agent_observation(1)["information_state"].shape == (game.rules.information_state_size,)


def test_round_states_are_checked():
    rules = BidSpoofRules(num_players=3, coins=2)
    for coins, starter in [((1, 0, 0), 0), ((1, 1, 1), 3), ((0, 1, 1), 0), ((3, 1, 1), 0)]:
        with pytest.raises(ValueError, match="is not a round-state"):
            rules.new_round_state(coins, starter)
    one = BidSpoofRules(num_players=3, coins=2, objective="round")
    state = say(start(one, (None, 1, 1), coins=(0, 1, 2), starter=1), 3, "call")  # player_1 bid too high
    assert state.returns() == [0.0, -1.0, 1.0]  # the player out neither gains nor loses


def test_equilibrium_agent_plays_the_game_and_refuses_more_players():
    rules = BidSpoofRules(num_players=2)
    agent = make_agent("bid_spoof", "equilibrium", rules.params, seed=0)
    state = rules.new_initial_state()
    while not state.is_terminal():
        state.apply(agent.act(state.observation(state.current_player())))
    with pytest.raises(ValueError, match="for two players"):
        make_agent("bid_spoof", "equilibrium", {"num_players": 3})


def test_heuristic_moves():
    rules = BidSpoofRules(num_players=2, coins=3)
    heuristic = make_agent("bid_spoof", "heuristic", rules.params)
    acts = rules.actions
    state = start(rules, (2, 1))
    assert heuristic.act(state.observation(0)) == acts.bid(1)  # open low
    say(state, 1)
    # player_1 holds 1, so the total is 1 + U{0..3}: P(T >= 2) = 3/4 -> raise to 2.
    assert heuristic.act(state.observation(1)) == acts.bid(2)
    say(state, 2, 5)
    # P(T >= 5) for player_1 is 0 -> call.
    assert heuristic.act(state.observation(1)) == acts.call("call")


def test_tournament_seats_everyone_everywhere():
    rules = BidSpoofRules(num_players=3, coins=2)
    field = [
        ("heuristic", make_agent("bid_spoof", "heuristic", rules.params)),
        ("random", RandomAgent()),
        ("random", RandomAgent()),
    ]
    results = tournament(rules, field, 60, seed=1, progress=False)
    assert results["heuristic"].games == results["random"].games == 3 * 60
    assert results["heuristic"].mean > results["heuristic"].ci95 > 0  # it beats random play clearly
    # Zero-sum: the mean returns, weighted by seats, cancel.
    assert results["heuristic"].mean + 2 * results["random"].mean == pytest.approx(0.0, abs=1e-9)
    with pytest.raises(ValueError, match="seats 3 players; the field has 2"):
        tournament(rules, field[:2], 10)


def test_commands(capsys):
    assert main(["solve", "bid-spoof", "--coins", "2"]) == 0
    out = capsys.readouterr().out
    assert "probability that the round's starter wins" in out and "opens" in out
    assert main(["tournament", "bid-spoof", "--players", "3", "--coins", "2", "--games", "20"]) == 0
    out = capsys.readouterr().out
    assert "every seating (3)" in out and "heuristic" in out
