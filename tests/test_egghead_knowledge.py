"""EggHead's deck and deduction engine: the study's worked examples, answers against direct
evaluation, naive deduction against a replay of the answers, and behavioural analysis
against the study's per-player conditional tables implemented literally."""

import numpy as np
import pytest
from egghead_reference import ConditionalTables

from hiddenhand.envs.egghead import Knowledge
from hiddenhand.envs.egghead_deck import Hands, deck_from, standard_deck
from hiddenhand.envs.egghead_knowledge import _multisets, answer_grid

EXAMPLE = [(1, 2, 2), (4, 5, 6), (3, 3, 3)]


def test_the_studys_worked_example():
    k = Knowledge(3)
    k.announce_answer("missing_values", k.answer("missing_values", EXAMPLE))
    assert k.answer("missing_values", EXAMPLE) == 0
    assert k.knows(1, EXAMPLE) and not k.knows(0, EXAMPLE) and not k.knows(2, EXAMPLE)
    assert k.naive_valids(0, EXAMPLE) == [(1, 1, 2), (1, 2, 2), (1, 2, 3), (1, 2, 4), (1, 2, 5), (1, 2, 6)]
    assert len(k.valids(2, EXAMPLE)) == 21  # at least one 3
    assert k.settle(EXAMPLE) == [1]
    k.reveal_solution(1, EXAMPLE[1])
    assert k.valids(0, EXAMPLE) == [(1, 1, 2), (1, 2, 2), (1, 2, 3)]
    assert k.valids(2, EXAMPLE) == [(1, 1, 3), (1, 2, 3), (1, 3, 3), (2, 2, 3), (2, 3, 3), (3, 3, 3)]
    assert len(k.naive_valids(0, EXAMPLE)) == 6  # answers alone teach nothing new


def test_hands_and_deck():
    hands = Hands(3, 6)
    assert len(hands) == 56 and hands.tuples[0] == (1, 1, 1) and hands.tuples[-1] == (6, 6, 6)
    assert hands.probabilities.sum() == pytest.approx(1)
    assert hands.probabilities[hands.of((1, 1, 1))] == pytest.approx(1 / 216)
    assert hands.probabilities[hands.of((3, 1, 2))] == pytest.approx(6 / 216)
    deck = standard_deck()
    ids = [q.id for q in deck]
    assert len(deck) >= 23 and len(set(ids)) == len(ids) and "missing_values" in ids
    counts = hands.counts[[hands.of(h) for h in EXAMPLE]][None]
    answers = {q.id: int(np.asarray(q.answer(counts))[0]) for q in deck}
    # Hand-checked on (1,2,2), (4,5,6), (3,3,3).
    assert answers["total"] == 29 and answers["odd_cards"] == 5 and answers["value_pairs"] == 1
    assert answers["run_hands"] == 1 and answers["triple_hands"] == 1 and answers["largest_hand"] == 15
    assert answers["complement_hands"] == 0 and answers["count_3"] == 3 and answers["even_total"] == 0
    with pytest.raises(ValueError, match="unknown question ids \\['nope'\\]"):
        deck_from("total,nope", 3, 6)


@pytest.mark.parametrize("num_players, seen", [(3, (0, 1, 2)), (4, (0, 1, 2, 3)), (4, (0, 2, 3))])
def test_answer_grids_match_direct_evaluation(num_players, seen, rng):
    hands = Hands(3, 6)
    for question in standard_deck()[::4]:
        grid = answer_grid(hands, question, num_players, seen)
        for _ in range(20):
            deal = rng.integers(len(hands), size=num_players)
            counts = hands.counts[deal[list(seen)]][None]
            direct = int(np.asarray(question.answer(counts))[0])
            index = tuple(d if p in seen else 0 for p, d in enumerate(deal))
            assert grid[index] == direct, question.id
            # Questions do not depend on who holds what.
            assert int(np.asarray(question.answer(counts[:, ::-1]))[0]) == direct


def _random_truthful_game(knowledge, rng, rounds, history=None, moderator_every=None):
    """Play truthfully on ``knowledge``; yields the deal after each step."""
    hands = knowledge.hands
    n = knowledge.num_players
    draw = lambda: hands.tuples[rng.choice(len(hands), p=hands.probabilities)]  # noqa: E731
    deal = [draw() for _ in range(n)]
    ids = list(knowledge.deck)
    for r in range(rounds):
        mod = r % n if moderator_every else None
        q = ids[rng.integers(len(ids))]
        a = knowledge.answer(q, deal, mod)
        knowledge.announce_answer(q, a, mod)
        if history is not None:
            history.append(("answer", q, a, mod, list(deal)))
        yield deal
        while callers := knowledge.settle(deal, mod):
            for p in callers:
                knowledge.reveal_solution(p, deal[p])
                deal[p] = draw()
                if history is not None:
                    history.append(("dealt", p))
            yield deal


@pytest.mark.parametrize("analysts, rotating", [(None, False), ({0}, False), (None, True)])
def test_truth_is_never_ruled_out_and_naive_deduction_replays_the_answers(analysts, rotating, rng):
    k = Knowledge(3, analysts=analysts)
    history = []
    for deal in _random_truthful_game(k, rng, 40, history, moderator_every=rotating):
        index = tuple(k.hands.of(h) for h in deal)
        assert k.public[index] and k.naive[index]
        assert not (k.public & ~k.naive).any()  # behaviour only ever adds knowledge
        for p in range(3):
            # Eq. 1 directly: the hands consistent with every answer since p's hand was dealt.
            dealt = max([i for i, e in enumerate(history) if e == ("dealt", p)], default=-1)
            expected = []
            for v in k.hands.tuples:
                ok = all(
                    k.answer(q, [v if j == p else h for j, h in enumerate(then)], mod) == a
                    for kind, q, a, mod, then in (e for e in history[dealt + 1 :] if e[0] == "answer")
                )
                expected.append(v) if ok else None
            assert k.naive_valids(p, deal) == expected


@pytest.mark.parametrize("analysts, rotating", [(None, False), ({0}, False), ({0, 1}, True), (None, True)])
def test_behavioural_analysis_equals_the_studys_conditional_tables(analysts, rotating, rng):
    """Three players with one card of four values (4 hands, 64 deals): the master table
    against the study's per-player tables through a whole game, with everyone analysing or
    only some (remark A.5: naive players' tables get no cross-referencing), and with the
    moderator external or rotating (remark A.4). Each player's own valids must agree."""
    k = Knowledge(3, cards_per_player=1, num_values=4, analysts=analysts)
    literal = ConditionalTables(3, k.hands, k.deck, analysts)
    hands = k.hands
    deal = [int(x) for x in rng.integers(len(hands), size=3)]
    ids = list(k.deck)
    learned = 0
    for r in range(30):
        mod = r % 3 if rotating else None
        q = ids[rng.integers(len(ids))]
        a = literal.answer(q, deal, mod)
        k.announce_answer(q, a, mod)
        literal.eq2(q, a, mod)
        tuples = [hands.tuples[d] for d in deal]
        while True:
            reactions = {p: k.knows(p, tuples) for p in range(3) if p != mod}
            changed = k.announce_reactions(reactions)
            literal.eq3_eq4(reactions)
            for p in range(3):
                own = k.valids(p, tuples) if p in k.analysts else k.naive_valids(p, tuples)
                assert [hands.index[v] for v in own] == literal.valids(p, deal)
                learned += p in k.analysts and k.valids(p, tuples) != k.naive_valids(p, tuples)
            callers = [p for p, c in reactions.items() if c]
            for p in callers:
                k.reveal_solution(p, tuples[p])
                literal.eq5(p, deal[p])
                deal[p] = int(rng.integers(len(hands)))
                tuples[p] = hands.tuples[deal[p]]
            if not callers and not changed:
                break
    assert learned > 0  # behaviour did teach the analysts something


def test_multiset_numbering_beyond_256_hands():
    sets, rank = _multisets(300, 2)
    assert len(sets) == 300 * 301 // 2
    for i, j in [(0, 0), (5, 299), (299, 5), (256, 257), (299, 299)]:
        assert sorted(map(int, sets[rank[i, j]])) == sorted((i, j))


def test_clear_errors():
    with pytest.raises(ValueError, match=r"num_players=6 is not supported; allowed: 3 to 5.*do not fit in memory"):
        Knowledge(6)
    with pytest.raises(ValueError, match="analysts=\\[5\\] names players outside 0 to 2"):
        Knowledge(3, analysts=[5])
    k = Knowledge(3)
    with pytest.raises(ValueError, match="is not a hand: 3 values from 1 to 6"):
        k.valids(0, [(1, 2, 7), (1, 1, 1), (1, 1, 1)])
    with pytest.raises(ValueError, match="unknown question 'colour'"):
        k.announce_answer("colour", 1)
