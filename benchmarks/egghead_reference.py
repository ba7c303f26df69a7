"""The study's conditional information tables (section 4), implemented literally: the
independent reference the deduction engine's master table is tested and timed against
(``tests/test_egghead_knowledge.py``, ``benchmarks/bench_egghead.py``)."""

import itertools

import numpy as np


class ConditionalTables:
    """The study's section 4, literally: one table per player mapping the others' hands to
    the set of hands that player would consider possible; eq. 2, 3, 4 and 5 as written."""

    def __init__(self, num_players, hands, deck, analysts=None):
        self.n, self.hands, self.deck = num_players, hands, deck
        self.analysts = set(range(num_players)) if analysts is None else set(analysts)
        self.h = len(hands)
        self.tables = [
            {rest: set(range(self.h)) for rest in itertools.product(range(self.h), repeat=num_players - 1)}
            for _ in range(num_players)
        ]

    @staticmethod
    def _with(rest, p, v):
        return rest[:p] + (v,) + rest[p:]

    def answer(self, question, deal, moderator=None):
        """Eq. 6: a playing moderator answers about the hands they see."""
        seen = [h for p, h in enumerate(deal) if p != moderator]
        counts = self.hands.counts[seen][None]
        return int(np.asarray(self.deck[question].answer(counts))[0])

    def eq2(self, question, answer, moderator=None):
        for p, table in enumerate(self.tables):
            for rest, valids in table.items():
                table[rest] = {v for v in valids if self.answer(question, self._with(rest, p, v), moderator) == answer}

    def eq3_eq4(self, reactions):
        """Eq. 3 for every player who reacted; eq. 4 for the analysts' tables only (remark A.5)."""
        for p, table in enumerate(self.tables):
            if p not in reactions:
                continue
            for rest, valids in table.items():
                if (len(valids) == 1) != reactions[p]:
                    table[rest] = set()
        new = []
        for p, table in enumerate(self.tables):
            if p not in self.analysts:
                new.append(table)
                continue
            updated = {}
            for rest, valids in table.items():
                keep = set()
                for v in valids:
                    deal = self._with(rest, p, v)
                    others = [k for k in range(self.n) if k != p]
                    if all(deal[k] in self.tables[k][deal[:k] + deal[k + 1 :]] for k in others):
                        keep.add(v)
                updated[rest] = keep
            new.append(updated)
        self.tables = new

    def eq5(self, k, shown):
        self.tables[k] = {rest: set(range(self.h)) for rest in self.tables[k]}
        for p, table in enumerate(self.tables):
            if p == k:
                continue
            kk = k if k < p else k - 1  # k's position among the others of p
            table.update({rest: table[rest[:kk] + (shown,) + rest[kk + 1 :]] for rest in list(table)})

    def valids(self, p, deal):
        return sorted(self.tables[p][tuple(deal[:p]) + tuple(deal[p + 1 :])])
