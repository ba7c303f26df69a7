"""EggHead's pictures of a position: the text of ``render`` and the table of cards of ``table``.

Both show a viewer the same things: every hand but their own, the scores, who moderates,
the reactions of the current phase (hidden from the others until everyone has reacted),
the latest questions, answers and reactions, and the hands the viewer still considers
possible (or the returns, once the game is over). The rules engine
(:mod:`hiddenhand.envs.egghead`) answers the protocol's ``render`` and ``table`` from here.
Nothing here imports the engine: a function takes the state as an argument.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from hiddenhand.picture import Card, Row, Table

if TYPE_CHECKING:
    from hiddenhand.envs.egghead import EggHeadState


def render(state: EggHeadState, viewer: int | None = None) -> str:
    """The state as text: scores, the latest events, the hands ``viewer`` sees, and what they
    still consider possible."""
    rules, hands = state.rules, state.rules.hands.tuples
    name = state._namer(viewer)
    lines = [f"Question {state.questions} · scores: " + ", ".join(f"{name(p)} {s}" for p, s in enumerate(state.scores))]
    lines += _recent_events(state, name, 3)
    for p in range(rules.num_players):
        if state.hands[p] is None:
            continue
        shown = "??? (hidden from you)" if p == viewer else str(hands[state.hands[p]])
        lines.append(f"{name(p)}: {shown}")
    return "\n".join(lines + _closing_lines(state, viewer))


def table(state: EggHeadState, viewer: int | None = None) -> Table:
    """Every player's hand, facing the others (the viewer's own face down), their score
    and their reaction this phase (hidden from the others until everyone has reacted);
    the latest questions, answers and reactions below."""
    rules, name = state.rules, state._namer(viewer)
    mover = state.current_player()
    over = state.is_terminal()
    rows = []
    for p in range(rules.num_players):
        hand = () if state.hands[p] is None else rules.hands.tuples[state.hands[p]]
        note = [f"{state.scores[p]} points"]
        if p == state.moderator:
            note.append("moderates")
        elif p < len(state.reactions) and not over:
            reaction = state.reactions[p]
            called = rules.called_hand(reaction)
            seen = viewer in (None, p)
            note.append(("passes" if not called else f"calls {''.join(map(str, called))}") if seen else "reacted")
        cards = tuple(Card(str(v), p != viewer) for v in hand)
        rows.append(Row(name(p), cards, note=" · ".join(note), to_move=p == mover))
    title = f"EggHead · question {state.questions} · first to {rules.params['target_score']}"
    caption = tuple(_recent_events(state, name, 2) + _closing_lines(state, viewer))
    return Table(title, tuple(rows), caption, slots=rules.params["cards_per_player"], headings=("hand", ""))


def _recent_events(state: EggHeadState, name: Callable[[int], str], count: int) -> list[str]:
    """The last ``count`` events (questions with their answers, reaction phases) in words."""
    rules, hands = state.rules, state.rules.hands.tuples
    lines = []
    for event in state.events[-count:]:
        if event.question is not None:
            who = "the moderator" if event.moderator is None else name(event.moderator)
            lines.append(f"{who} asked: {rules.deck[event.question].text} Answer: {event.answer}")
        else:
            said = []
            for p, r in enumerate(event.reactions):
                if r is not None:
                    called = rules.called_hand(r)
                    held = f" (held {hands[event.shown[p]]})" if called else ""
                    said.append(f"{name(p)} {f'called {called}' if called else 'passed'}{held}")
            lines.append("Reactions: " + "; ".join(said))
    return lines


def _closing_lines(state: EggHeadState, viewer: int | None) -> list[str]:
    """What ``viewer`` still considers possible for their own hand, or the final returns."""
    if state.is_terminal():
        name = state._namer(viewer)
        return ["Final returns: " + ", ".join(f"{name(p)} {r:+g}" for p, r in enumerate(state.returns()))]
    if viewer is not None and None not in state.hands:
        valids = state.valids(viewer)
        listed = ": " + " ".join("".join(map(str, v)) for v in valids) if len(valids) <= 10 else ""
        return [f"Hands you still consider possible: {len(valids)}{listed}"]
    return []
