"""EggHead's bit-set deduction engine against the engine it replaced (issue 30), frozen in
``benchmarks/egghead_engine_before.py``: random truthful games at three and four players, with
everyone or only some analysing, the moderator external or rotating, and hands that take
one word or two, compared table by table after every answer, reaction phase and revealed
hand. Then what the comparison cannot see: copies that share tables stay independent, and
five players (too big for the old engine in a test) against direct evaluation."""

import pickle

import numpy as np
import pytest
from egghead_engine_before import Knowledge as Before

from hiddenhand.envs.egghead_knowledge import Knowledge


def _draw(hands, rng):
    return hands.tuples[rng.choice(len(hands), p=hands.probabilities)]


def _same(before, after, where):
    assert np.array_equal(before.public, after.public), f"behavioural tables differ after {where}"
    assert np.array_equal(before.naive, after.naive), f"naive tables differ after {where}"


@pytest.mark.parametrize(
    "players, cards, values, analysts, rotating, rounds",
    [
        (3, 3, 6, None, False, 60),
        (3, 3, 6, {0}, True, 60),
        (3, 1, 4, {0, 1}, True, 60),
        (3, 4, 6, {0, 2}, True, 25),  # 126 hands: the last player's row takes two words
        (3, 4, 6, None, False, 25),
        (4, 3, 6, None, False, 15),
        (4, 3, 6, {1, 3}, True, 15),
    ],
)
def test_the_bit_set_engine_equals_the_one_it_replaced_state_by_state(
    players, cards, values, analysts, rotating, rounds, rng
):
    before = Before(players, cards, values, analysts)
    after = Knowledge(players, cards, values, analysts)
    hands, ids = after.hands, list(after.deck)
    deal = [_draw(hands, rng) for _ in range(players)]
    phases = calls = 0
    for r in range(rounds):
        moderator = r % players if rotating else None
        question = ids[rng.integers(len(ids))]
        answer = after.answer(question, deal, moderator)
        assert answer == before.answer(question, deal, moderator)
        before.announce_answer(question, answer, moderator)
        after.announce_answer(question, answer, moderator)
        _same(before, after, f"round {r}'s answer")
        while True:
            reactions = {p: after.knows(p, deal) for p in range(players) if p != moderator}
            assert reactions == {p: before.knows(p, deal) for p in reactions}
            changed = after.announce_reactions(reactions)
            assert changed == before.announce_reactions(reactions)
            _same(before, after, f"a reaction phase of round {r}")
            phases += 1
            callers = [p for p, called in reactions.items() if called]
            for p in callers:
                before.reveal_solution(p, deal[p])
                after.reveal_solution(p, deal[p])  # (applied together, when the tables are next read)
                deal[p] = _draw(hands, rng)
                calls += 1
            _same(before, after, f"players {callers} showed their hands in round {r}")
            if not callers and not changed:
                break
        for p in range(players):
            assert after.valids(p, deal) == before.valids(p, deal)
            assert after.naive_valids(p, deal) == before.naive_valids(p, deal)
    assert calls > 0 and phases > rounds  # the games did reveal hands and run several phases


@pytest.mark.parametrize("shown", [(0, 2), (2, 1, 0), (1, 1)])
def test_hands_shown_together_equal_hands_shown_one_by_one(shown):
    """Hands shown before the tables are next read are applied in one pass (the last
    player's among them, or one player's twice): as the old engine applies them one by one."""
    deal = [(1, 2, 2), (4, 5, 6), (3, 3, 3)]
    before, after = Before(3, analysts={0}), Knowledge(3, analysts={0})
    for k in (before, after):
        k.announce_answer("total", k.answer("total", deal))
        k.announce_reactions({0: False, 1: False, 2: False})
        for p in shown:
            k.reveal_solution(p, deal[p])
    _same(before, after, f"players {shown} showed their hands")


def test_copies_share_tables_but_not_updates(rng):
    """Tables are shared on copy and written in place only while no copy holds them."""
    k = Knowledge(3, analysts={0})
    deal = [(1, 2, 2), (4, 5, 6), (3, 3, 3)]
    k.announce_answer("missing_values", 0)
    twin = k.copy()
    kept = (k.public.copy(), k.naive.copy())
    twin.announce_answer("total", twin.answer("total", deal))
    twin.settle(deal)
    twin.reveal_solution(1, deal[1])
    assert np.array_equal(k.public, kept[0]) and np.array_equal(k.naive, kept[1])
    k.announce_answer("count_3", k.answer("count_3", deal))  # and the other way round
    k.announce_reactions({0: False, 1: True, 2: False})
    k.reveal_solution(2, deal[2])
    replay = Knowledge(3, analysts={0})
    replay.announce_answer("missing_values", 0)
    replay.announce_answer("total", replay.answer("total", deal))
    replay.settle(deal)
    replay.reveal_solution(1, deal[1])
    assert np.array_equal(twin.public, replay.public) and np.array_equal(twin.naive, replay.naive)
    # A table that no live copy holds is updated in place; a dropped copy no longer counts.
    table = k._public
    other = k.copy()
    k.announce_answer("total", k.answer("total", deal))
    assert k._public is not table and other._public is table
    del other
    table = k._public
    k.announce_answer("count_1", k.answer("count_1", deal))
    assert k._public is table
    # An unpickled copy is independent and plays on alike.
    back = pickle.loads(pickle.dumps(k))
    for each in (k, back):
        each.announce_answer("highest", each.answer("highest", deal))
        each.settle(deal)
    assert np.array_equal(back.public, k.public) and np.array_equal(back.naive, k.naive)
    # Reactions teach the behavioural table only, even while both were still one object.
    fresh = Knowledge(3)
    fresh.announce_answer("missing_values", 0)
    naive = fresh.naive.copy()
    assert fresh.announce_reactions({0: False, 1: True, 2: False})
    assert np.array_equal(fresh.naive, naive) and fresh.public.sum() < naive.sum()


def test_five_players_against_direct_evaluation(rng):
    """At five players (551 million deals): after two answers every player's naive hands
    are those that answer both questions as the true deal does, evaluated directly, and
    the true deal survives the reaction phases."""
    k = Knowledge(5, analysts={0, 4})
    hands = k.hands
    deal = [_draw(hands, rng) for _ in range(5)]
    asked = []
    for question, moderator in [("total", None), ("count_2", 4)]:
        answer = k.answer(question, deal, moderator)
        k.announce_answer(question, answer, moderator)
        asked.append((question, answer, moderator))
    for p in range(5):
        direct = [
            v for v in hands.tuples if all(k.answer(q, deal[:p] + [v] + deal[p + 1 :], m) == a for q, a, m in asked)
        ]
        assert k.naive_valids(p, deal) == direct
    callers = k.settle(deal)
    for p in range(5):
        assert deal[p] in k.valids(p, deal)
        assert set(k.valids(p, deal)) <= set(k.naive_valids(p, deal))
    assert all(k.knows(p, deal) for p in callers)
