"""EggHead's observation codec: the layouts of the observation and of the information state, and their encoders.

The rules engine (:mod:`hiddenhand.envs.egghead`) keeps a game as the list of its events
(answers and reaction phases); the encoders here read a state and write what one player
sees of it (the window of the last :data:`EVENTS` events since their hand was dealt) and
what they know (every event, as a tensor and as the string that says the same). The
vectors are documented in :mod:`hiddenhand.envs.egghead_v0`. Nothing here imports the
engine: an encoder takes the state as an argument.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hiddenhand.layout import Layout, Views

if TYPE_CHECKING:
    from hiddenhand.envs.egghead import EggHeadRules, EggHeadState, Event

EVENTS = 32
"""Events (answers and reaction phases) since a player's hand was dealt that their
observation shows, the most recent last; the valids masks keep what older ones taught."""


class ObservationLayout(Layout):
    """An EggHead observation (see ``egghead_v0``), with the layouts of one event of its
    window (``event``) and of one seat's part of a reaction phase (``seat_block``).

    An event: its kind (answer, reaction phase), the question, the answer, the moderator,
    then per seat the reaction (none, pass, call) and the hand a caller showed. The valids
    masks are there only when ``valids``.
    """

    def __init__(self, num_players: int, num_hands: int, deck_size: int, valids: bool) -> None:
        p, h = num_players, num_hands
        self.num_players, self.valids = p, valids
        self.seat_block = Layout([("reaction", 3), ("shown", h)])
        self.event = Layout(
            [
                ("kind", 2),
                ("question", deck_size),
                ("answer", ()),
                ("moderator", p + 1),
                ("seats", (p, self.seat_block.size)),
            ]
        )
        super().__init__(
            [
                ("seat", p),
                ("moderator", p + 1),
                ("scores", p),
                ("hands", (p - 1, h)),
                *([("naive_valids", h), ("valids_mask", h)] if valids else []),
                ("events", (EVENTS, self.event.size)),
            ]
        )


class InformationStateLayout(Layout):
    """The perfect-recall information state (``information_state_tensor``): the
    observation, then one slot per event of the whole game in order (zeros past the last),
    then the state of the current phase. Seats are relative to the player, as in the
    observation. Small integers are scaled into [0, 1] by a fixed divisor, so distinct
    values stay distinct floats.

    An event slot holds ``num_players + 2`` floats, read through ``answer`` (its first four)
    or ``phase`` (all of them) by its kind:

    - ``kind``: 0 no event (yet), 0.5 an answer, 1 a reaction phase;
    - an answer: ``question`` (question + 1) / D, ``answer`` answer / (P x cards x values),
      ``moderator``: 0 external, else (seat + 1) / P;
    - a reaction phase: ``reactions[seat]`` that seat's reaction, 0 none (the moderator),
      1 pass, 2 + i a call that showed hand i, over H + 1; ``own_call`` the hand the
      player called themselves, (1 + i) / H (0 if they did not call).

    The tail: how many seats have reacted in the current phase (over P), the player's own
    reaction in it (coded as a seat's reaction above, with the hand they called rather than
    the one they hold, over H + 1), and 1 while the player waits for a new hand.
    """

    def __init__(self, observation: ObservationLayout, slots: int) -> None:
        self.answer = Layout([("kind", ()), ("question", ()), ("answer", ()), ("moderator", ())])
        self.phase = Layout([("kind", ()), ("reactions", observation.num_players), ("own_call", ())])
        super().__init__(
            [
                ("observation", observation.size),
                ("events", (slots, self.phase.size)),  # slots: the most events a game can have
                ("reacted", ()),
                ("own_reaction", ()),
                ("awaiting_hand", ()),
            ]
        )


def observation_tensor(state: EggHeadState, player: int) -> np.ndarray:
    """``player``'s observation of ``state`` (:class:`ObservationLayout`)."""
    rules, layout = state.rules, state.rules.layout
    n = rules.num_players
    obs, views = layout.zeros()
    views["seat"][player] = 1.0
    views["moderator"][n if state.moderator is None else (state.moderator - player) % n] = 1.0
    for rel in range(n):
        p = (player + rel) % n
        views["scores"][rel] = state.scores[p] / rules.params["target_score"]
        if rel and state.hands[p] is not None:
            views["hands"][rel - 1, state.hands[p]] = 1.0
    if layout.valids and None not in state.hands:
        deal = state.deal()
        masks = {"naive_valids": state.knowledge.naive_valids(player, deal), "valids_mask": state.valids(player)}
        for name, found in masks.items():
            views[name][np.array([rules.hands.index[v] for v in found], dtype=np.intp)] = 1.0
    events = layout.event.views(views["events"])  # each piece with a leading event index
    seats = layout.seat_block.views(events["seats"])  # and a seat index
    for k, event in enumerate(state.events[state.dealt_at[player] :][-EVENTS:]):
        _encode_event(rules, events, seats, k, event, player)
    return obs


def _encode_event(rules: EggHeadRules, events: Views, seats: Views, k: int, event: Event, player: int) -> None:
    """Event ``k`` of the observation's window, into the views of every event and of their seats."""
    n = rules.num_players
    if event.question is not None:
        events["kind"][k, 0] = 1.0
        events["question"][k, event.question] = 1.0
        events["answer"][k] = event.answer / rules.answer_scale
        events["moderator"][k, n if event.moderator is None else (event.moderator - player) % n] = 1.0
        return
    events["kind"][k, 1] = 1.0
    for rel in range(n):
        p = (player + rel) % n
        reaction = event.reactions[p]
        seats["reaction"][k, rel, 0 if reaction is None else 1 if reaction == 0 else 2] = 1.0
        if event.shown[p] is not None:
            seats["shown"][k, rel, event.shown[p]] = 1.0


def _reaction_code(reaction: int | None, shown: int | None) -> int:
    """A seat's reaction in a finished phase: 0 none, 1 pass, 2 + ``shown`` a call that showed that hand."""
    return 0 if reaction is None else 1 if reaction == 0 else 2 + shown


def information_state_tensor(state: EggHeadState, player: int) -> np.ndarray:
    """The observation, then every event of the game and the current phase
    (:class:`InformationStateLayout`): exactly what :func:`information_state_string` says."""
    rules, layout = state.rules, state.rules.information_layout
    n, h = rules.num_players, len(rules.hands)
    tensor, views = layout.zeros()
    views["observation"][:] = observation_tensor(state, player)
    answers = layout.answer.views(views["events"][:, : layout.answer.size])  # by event index, as below
    phases = layout.phase.views(views["events"])
    seat_scale, deck_size = float(h + 1), float(len(rules.deck))
    for k, event in enumerate(state.events):
        if event.question is not None:
            answers["kind"][k] = 0.5
            answers["question"][k] = (event.question + 1) / deck_size
            answers["answer"][k] = event.answer / rules.answer_scale
            answers["moderator"][k] = 0.0 if event.moderator is None else ((event.moderator - player) % n + 1) / n
            continue
        phases["kind"][k] = 1.0
        for rel in range(n):
            p = (player + rel) % n
            phases["reactions"][k, rel] = _reaction_code(event.reactions[p], event.shown[p]) / seat_scale
        if event.reactions[player]:
            phases["own_call"][k] = event.reactions[player] / float(h)  # the action: 1 + the hand called
    if state.reactions:
        views["reacted"][...] = len(state.reactions) / n
        own = state.reactions[player] if player < len(state.reactions) else None
        # 1 + own: 1 pass, 2 + i called i
        views["own_reaction"][...] = (0 if own is None else 1 + own) / seat_scale
    views["awaiting_hand"][...] = float(state.awaiting_hand(player))
    return tensor


def information_state_string(state: EggHeadState, player: int) -> str:
    """Scores, every answer and reaction phase (the player's own calls with the hand they
    named), the others' hands, who has reacted in the current phase (and how the player
    did: the others' reactions stay hidden until all are in), and whether the player
    waits for a new hand (at a chance node: the others' hands shown are their last)."""
    hands = state.rules.hands.tuples
    parts = [f"p{player} scores {state.scores}"]
    for event in state.events:
        parts.append(_event_text(state.rules, event, hands, player))
    others = ", ".join(f"p{p}={hands[h]}" for p, h in enumerate(state.hands) if p != player and h is not None)
    parts.append(f"now {others}")
    if state.reactions:
        reacted = f"reacted {len(state.reactions)}"
        if player < len(state.reactions) and state.reactions[player] is not None:
            own = state.reactions[player]
            called = state.rules.called_hand(own)
            reacted += f", you {f'called {called}' if called else 'passed'}"
        parts.append(reacted)
    if state.awaiting_hand(player):
        parts.append("your hand is being dealt")  # (the observation's event window restarts)
    return " | ".join(parts)


def _event_text(rules: EggHeadRules, event: Event, hands, player: int) -> str:
    """One event of the information-state string, as ``player`` knows it."""
    if event.question is not None:
        return f"{rules.deck[event.question].id}={event.answer}"
    said = []
    for p, s in enumerate(event.shown):
        r = event.reactions[p]
        if r is None:
            continue
        text = f"p{p}:{'call ' + str(hands[s]) if s is not None else 'pass'}"
        if p == player and r:
            text += f" named {rules.called_hand(r)}"  # the others do not learn what a caller named
        said.append(text)
    return f"react {','.join(said)}"
