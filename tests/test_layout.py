"""The declared layouts and action codecs (:mod:`hiddenhand.layout`), on their own and as
every game reads its own observations back: named pieces after hand-chosen moves."""

import numpy as np
import pytest
from conftest import play_out

from hiddenhand.core import TERMINAL, Rules, State
from hiddenhand.envs.bid_spoof import BidSpoofRules
from hiddenhand.envs.egghead import EggHeadRules
from hiddenhand.envs.goofspiel import GoofspielRules
from hiddenhand.envs.goofspiel_observation import ObservationLayout
from hiddenhand.envs.spoof import SpoofRules
from hiddenhand.layout import ActionCodec, Layout, one_hot_index

BLOCK = Layout([("prize", 3), ("winner", ())])
LAYOUT = Layout([("flag", ()), ("hand", 3), ("table", (2, 3)), ("history", (4, BLOCK.size))])


def one_hot(size, *hot):
    out = np.zeros(size, dtype=np.float32)
    out[list(hot)] = 1.0
    return out


def test_offsets_and_sizes_follow_the_pieces():
    assert LAYOUT.size == 1 + 3 + 6 + 4 * 4
    assert LAYOUT.names == ("flag", "hand", "table", "history")
    assert [LAYOUT.offset(name) for name in LAYOUT.names] == [0, 1, 4, 10]
    assert LAYOUT.slice("table") == slice(4, 10)
    assert LAYOUT.pieces[2] == ("table", (2, 3))
    with pytest.raises(KeyError, match="no piece 'hands'; pieces: flag, hand, table, history"):
        LAYOUT.offset("hands")


def test_declaring_a_piece_twice_or_a_bad_shape_is_refused():
    with pytest.raises(ValueError, match="piece 'a' is declared twice"):
        Layout([("a", 1), ("a", 2)])
    with pytest.raises(ValueError, match=r"piece 'b' has shape \(2, -1\)"):
        Layout([("b", (2, -1))])


def test_views_write_through_to_the_buffer():
    buffer, views = LAYOUT.zeros()
    views["flag"][...] = 1.0
    views["hand"][2] = 1.0
    views["table"][1, 0] = 1.0
    BLOCK.views(views["history"])["winner"][3] = 0.5  # the last round's block, through the block's layout
    expected = np.zeros(LAYOUT.size, dtype=np.float32)
    expected[[0, 3, 7]] = 1.0
    expected[LAYOUT.offset("history") + 3 * BLOCK.size + BLOCK.offset("winner")] = 0.5
    assert buffer.dtype == np.float32 and np.array_equal(buffer, expected)


def test_views_lead_with_the_buffers_leading_dimensions_even_when_strided():
    wide = np.zeros((2, 2 * LAYOUT.size), dtype=np.float32)
    views = LAYOUT.views(wide[:, ::2])  # every other float: a buffer with strides
    assert views["table"].shape == (2, 2, 3) and views["flag"].shape == (2,)
    views["table"][1, 1, 2] = 1.0
    assert np.flatnonzero(wide[1]) == [2 * (LAYOUT.offset("table") + 5)]


def test_decode_round_trips_and_is_read_only():
    buffer, views = LAYOUT.zeros()
    views["hand"][:] = [0.0, 1.0, 0.0]
    views["table"][0] = [0.25, 0.5, 0.75]
    decoded = LAYOUT.decode(buffer.tolist())  # any sequence of numbers
    assert set(decoded) == set(LAYOUT.names)
    for name in LAYOUT.names:
        assert np.array_equal(decoded[name], views[name])
    assert one_hot_index(decoded["hand"]) == 1 and one_hot_index(decoded["flag"].reshape(1)) is None
    with pytest.raises(ValueError, match="read-only"):
        LAYOUT.decode(buffer)["hand"][0] = 1.0
    assert buffer.flags.writeable  # the caller's array is untouched


@pytest.mark.parametrize(
    "vector, got", [(np.zeros(25), "25 numbers"), (np.zeros(27), "27 numbers"), (np.float32(1), "a scalar")]
)
def test_decode_and_views_name_the_expected_and_the_actual_length(vector, got):
    message = rf"expected a vector of 26 numbers \(flag, hand, table, history\), got {got}"
    with pytest.raises(ValueError, match=message):
        LAYOUT.decode(vector)
    with pytest.raises(ValueError, match=message):
        LAYOUT.views(np.asarray(vector))


CODEC = ActionCodec([("hold", 3), ("bid", range(1, 5)), ("call", ("call", "cliff"))])


def test_action_codec_round_trips():
    assert CODEC.size == 9 and CODEC.kinds == ("hold", "bid", "call")
    pairs = [("hold", 0), ("hold", 1), ("hold", 2), ("bid", 1), ("bid", 2), ("bid", 3), ("bid", 4)]
    pairs += [("call", "call"), ("call", "cliff")]
    assert [CODEC.decode(a) for a in range(CODEC.size)] == pairs
    assert [CODEC.encode(*pair) for pair in pairs] == list(range(CODEC.size))
    assert CODEC.decode(np.int64(3)) == ("bid", 1)


@pytest.mark.parametrize(
    "kind, value, message",
    [
        ("bid", 0, "bid 0 is not an action; allowed: 1 to 4"),
        ("hold", 3, "hold 3 is not an action; allowed: 0 to 2"),
        ("call", "zero", "call 'zero' is not an action; allowed: call, cliff"),
        ("hold", [1], r"hold \[1\] is not an action"),
        ("raise", 1, "no action kind 'raise'; kinds: hold, bid, call"),
    ],
)
def test_action_codec_names_a_bad_value_and_what_is_allowed(kind, value, message):
    with pytest.raises(ValueError, match=message):
        CODEC.encode(kind, value)


@pytest.mark.parametrize("action", [9, -1, True, 1.0])
def test_action_codec_refuses_an_action_out_of_range(action):
    with pytest.raises(ValueError, match=rf"action {action!r} is out of range; allowed: 0 to 8"):
        CODEC.decode(action)


def test_action_codec_refuses_a_kind_declared_twice_or_a_repeated_value():
    with pytest.raises(ValueError, match="action kind 'bid' is declared twice"):
        ActionCodec([("bid", 2), ("bid", 3)])
    with pytest.raises(ValueError, match="repeats a value"):
        ActionCodec([("call", ("call", "call"))])


# ---------------------------------------------------------------------- the games


def test_goofspiel_observation_decodes_to_named_pieces():
    rules = GoofspielRules(num_cards=4, prize_order="ascending")
    state = rules.new_initial_state()  # prize 1 is turned
    state.apply(rules.actions.encode("bid", 2))
    obs = rules.layout.decode(state.observation_tensor(0))
    assert np.array_equal(obs["hand"], [1, 0, 1, 1])  # card 2 is gone
    assert np.array_equal(obs["prize"], one_hot(4, 0)) and np.array_equal(obs["prizes_to_come"], [0, 1, 1, 1])
    assert not rules.layout.round.decode(obs["history"])["own_bid"].any()  # the bid shows when the round ends
    play_out(state, [(3,)])  # player 1 bids 3 and takes prize 1; prize 2 is turned
    obs = rules.layout.decode(state.observation_tensor(0))
    assert obs["reveal"] == 1.0 and np.array_equal(obs["seat"], [1, 0])
    assert np.array_equal(obs["points"], np.float32([0, 1 / 10]))  # own, then the opponent's, of the 10 points
    rounds = rules.layout.round.decode(obs["history"])
    assert np.array_equal(rounds["prize"][:2], [one_hot(4, 0), one_hot(4, 1)])
    assert np.array_equal(rounds["own_bid"][0], one_hot(4, 1))
    assert np.array_equal(rounds["winner"][0], one_hot(3, 1))  # the seat after the observer
    assert np.array_equal(rounds["others"][0], [one_hot(4, 2)])
    assert ObservationLayout.for_vector(rules.observation_size, 4).pieces == rules.layout.pieces


def test_spoof_observation_decodes_to_named_pieces():
    rules = SpoofRules(matches=2, max_rounds=3)
    state = rules.new_initial_state()
    for action in (rules.hold_action(2), rules.hold_action(1), rules.bid_action(3), rules.bid_action(2)):
        state.apply(action)  # player 0 bids the total, 3, and drops a match; they bid first again
    assert rules.actions.decode(rules.bid_action(3)) == ("bid", 3)
    obs = rules.layout.decode(state.observation_tensor(1))
    assert np.array_equal(obs["seat"], [0, 1])
    assert np.array_equal(obs["matches"], [one_hot(3, 2), one_hot(3, 1)])  # own 2, the opponent's 1
    assert np.array_equal(obs["first"], [0, 1])  # the opponent bids first
    assert not obs["hold"].any() and not obs["bids"].any()  # nothing chosen yet this round
    last = rules.layout.round.decode(obs["history"])
    assert np.array_equal(last["first"][0], [0, 1])
    assert np.array_equal(last["holds"][0], [one_hot(3, 1), one_hot(3, 2)])
    assert np.array_equal(last["bids"][0], [one_hot(5, 2), one_hot(5, 3)])
    assert not last["first"][1:].any()  # rounds not played


def test_bid_spoof_observation_and_information_state_decode_to_named_pieces():
    rules = BidSpoofRules(num_players=3, coins=2)
    acts = rules.actions
    state = rules.new_initial_state()
    for action in (acts.hold(1), acts.hold(2), acts.hold(0), acts.direction("clockwise"), acts.bid(2), acts.bid(3)):
        state.apply(action)
    obs = rules.layout.decode(state.observation_tensor(2))
    assert np.array_equal(obs["seat"], one_hot(3, 2)) and np.array_equal(obs["coins"], [one_hot(3, 2)] * 3)
    assert np.array_equal(obs["starter"], one_hot(3, 1)) and np.array_equal(obs["direction"], [1, 0])
    assert np.array_equal(obs["hold"], one_hot(3, 0))
    bids = np.zeros((6, 3))
    bids[2 - 1, 1] = bids[3 - 1, 2] = 1.0  # bid 2 by player_0 (seat 1), bid 3 by player_1 (seat 2)
    assert np.array_equal(obs["bids"], bids) and not obs["last_round"].any()

    state.apply(acts.call("call"))  # 3 coins are held: player_2 loses a coin and starts
    obs = rules.layout.decode(state.observation_tensor(0))
    assert np.array_equal(obs["coins"], [one_hot(3, 2), one_hot(3, 2), one_hot(3, 1)])
    last = rules.layout.last_round.decode(obs["last_round"])
    assert np.array_equal(last["hands"], [one_hot(4, 1), one_hot(4, 2), one_hot(4, 0)])
    assert np.array_equal(last["call"], one_hot(4, 0)) and np.array_equal(last["caller"], one_hot(3, 2))
    info = rules.information_layout.decode(state.information_state_tensor(0))
    assert np.array_equal(info["observation"], state.observation_tensor(0))
    first = rules.information_layout.round.decode(info["rounds"][0])
    assert np.array_equal(first["starter"], one_hot(3, 0)) and np.array_equal(first["direction"], [1, 0])
    bids = np.zeros((6, 3))
    bids[2 - 1, 0] = bids[3 - 1, 1] = 1.0  # the same bids, seen from player_0
    assert np.array_equal(first["bids"], bids) and not info["rounds"][1:].any()


def test_egghead_observation_and_information_state_decode_to_named_pieces():
    rules = EggHeadRules(num_players=3, valids_in_observation=True)
    index = rules.hands.of
    state = rules.new_initial_state()
    for hand in [(1, 2, 2), (4, 5, 6), (3, 3, 3)]:
        state.apply(index(hand))
    question = [q.id for q in rules.deck].index("missing_values")
    state.apply(question)  # answer: 0
    state.apply(rules.actions.encode("pass", 0))
    state.apply(rules.call_action((6, 5, 4)))  # player_1 calls their hand, right
    state.apply(0)
    state.apply(index((1, 1, 1)))  # player_1's new hand
    assert rules.called_hand(rules.call_action((4, 5, 6))) == (4, 5, 6) and rules.called_hand(0) is None

    obs = rules.layout.decode(state.observation_tensor(0))
    h = len(rules.hands)
    assert np.array_equal(obs["moderator"], one_hot(4, 3))  # external
    assert np.array_equal(obs["scores"], np.float32([0, 1 / 10, 0]))
    assert np.array_equal(obs["hands"], [one_hot(h, index((1, 1, 1))), one_hot(h, index((3, 3, 3)))])
    assert np.flatnonzero(obs["valids_mask"]).tolist() == [index(v) for v in state.valids(0)]
    events = rules.layout.event.decode(obs["events"])
    assert np.array_equal(events["kind"][:3], [[1, 0], [0, 1], [0, 0]])  # an answer, a reaction phase, nothing
    assert one_hot_index(events["question"][0]) == question and events["answer"][0] == 0.0
    seats = rules.layout.seat_block.decode(events["seats"][1])
    assert np.array_equal(seats["reaction"], [[0, 1, 0], [0, 0, 1], [0, 1, 0]])  # pass, call, pass
    assert np.array_equal(seats["shown"][1], one_hot(h, index((4, 5, 6))))
    assert not rules.layout.decode(state.observation_tensor(1))["events"].any()  # a new hand, a new window

    info = rules.information_layout.decode(state.information_state_tensor(1))
    phase = rules.information_layout.phase.decode(info["events"][1])
    # player_1 (seat 0 for them) called and showed (4, 5, 6): 2 + i over H + 1; and named it: 1 + i over H
    assert phase["kind"] == 1.0 and phase["reactions"][0] == np.float32((2 + index((4, 5, 6))) / (h + 1))
    assert phase["own_call"] == np.float32((1 + index((4, 5, 6))) / h)
    answer = rules.information_layout.answer.decode(info["events"][0, : rules.information_layout.answer.size])
    assert answer["kind"] == 0.5 and answer["question"] == np.float32((question + 1) / len(rules.deck))
    assert info["reacted"] == 0.0 and info["awaiting_hand"] == 0.0


class _Coin(Rules):
    """The least a game declares: its actions and its observation; the protocol's defaults do the rest."""

    name = "coin"
    num_players = 2
    max_game_length = 1
    utility_range = (-1.0, 1.0)
    actions = ActionCodec([("heads", 1), ("tails", 1)])
    layout = Layout([("seat", 2), ("call", 2)])

    def new_initial_state(self):
        return _CoinState(self)


class _CoinState(State):
    def __init__(self, rules):
        self.rules = rules

    def current_player(self):
        return TERMINAL if self._over else 0

    def legal_actions(self, player=None):
        return [] if self._over or player not in (None, 0) else [0, 1]

    def apply(self, action):
        self._finish([1.0, -1.0] if action == 0 else [-1.0, 1.0])

    def clone(self):
        return self._copy()

    def information_state_string(self, player):
        return f"p{player}"

    def observation_tensor(self, player):
        return self.rules.layout.zeros()[0]

    def action_to_string(self, player, action):
        return self.rules.actions.decode(action)[0]

    def render(self, viewer=None):
        return ""


def test_the_protocol_supplies_what_every_game_would_repeat():
    """Sizes read off the declared codec and layouts, no chance outcomes, zero returns until
    ``_finish`` records them; and a game that declares neither is told what to declare."""
    rules = _Coin()
    assert (rules.num_actions, rules.observation_size, rules.information_state_size) == (2, 4, 4)
    rules.information_layout = Layout([("seat", 2), ("calls", (3, 2))])
    assert (rules.observation_size, rules.information_state_size) == (4, 8)
    state = rules.new_initial_state()
    assert state.chance_outcomes() == [] and state.returns() == [0.0, 0.0]
    state.apply(1)
    assert state.returns() == [-1.0, 1.0] and state.is_terminal()
    bare = type("Bare", (_Coin,), {"actions": None, "layout": None})()
    with pytest.raises(NotImplementedError, match="Bare declares no actions: set actions or define num_actions"):
        _ = bare.num_actions
    with pytest.raises(NotImplementedError, match="Bare declares no layout: set layout or define observation_size"):
        _ = bare.observation_size
