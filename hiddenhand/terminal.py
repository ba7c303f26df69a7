"""The terminal face: a person plays any game against computer agents.

Written once over the rules protocol: the person sees ``State.render(their seat)`` (their
own cards, what is public, the last reveal and the scores), types a move that the game's
``Rules.parse_action`` understands, and is asked again, with the reason, when the move is
not legal. Input and output are injectable so the loop is testable without a terminal.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from hiddenhand.agent import Agent
from hiddenhand.core import Rules, advance
from hiddenhand.interrupt import Interrupted


def outcome_line(returns: Sequence[float], seat: int) -> str:
    """ "You win!", "You lose." or "It's a tie." for the player in ``seat``."""
    best_other = max(r for p, r in enumerate(returns) if p != seat)
    if returns[seat] > best_other:
        return "You win!"
    if returns[seat] < best_other:
        return "You lose."
    return "It's a tie."


def play_in_terminal(
    rules: Rules,
    opponents: Sequence[Agent],
    seat: int = 0,
    seed: int | None = None,
    input_fn: Callable[[str], str] = input,
    output: Callable[[str], None] = print,
) -> list[list[float]]:
    """Play games until the person declines another; returns each game's returns.

    ``opponents`` fill the other seats in order. End of input (Ctrl-D) ends the play
    cleanly; so does Ctrl-C, which then raises :class:`~hiddenhand.interrupt.Interrupted`
    carrying the results, so that the command exits with status 130 as for any Ctrl-C.
    """
    if len(opponents) != rules.num_players - 1:
        raise ValueError(f"{rules} needs {rules.num_players - 1} opponents, got {len(opponents)}")
    if not 0 <= seat < rules.num_players:
        raise ValueError(f"seat={seat} is out of range; allowed: 0 to {rules.num_players - 1}")
    seats = list(opponents)
    seats.insert(seat, None)
    rng = np.random.default_rng(seed)
    for k, agent in enumerate(opponents):
        agent.seed(None if seed is None else seed + 1 + k)
    results: list[list[float]] = []
    try:
        while True:
            state = rules.new_initial_state()
            output(f"\n==== New game of {rules.name}: you are player_{seat} ====")
            while not advance(state, seats, rng).is_terminal():  # stops where the person is to move
                output("\n" + state.render(seat))
                state.apply(_ask_move(rules, state, seat, input_fn, output))
            output("\n==== Game over ====\n" + state.render(seat))
            output(outcome_line(state.returns(), seat))
            results.append(state.returns())
            if input_fn("Play again? (y/n): ").strip().lower() not in ("y", "yes"):
                output("Thanks for playing!")
                return results
    except EOFError:
        output("\nGoodbye.")
        return results
    except KeyboardInterrupt:
        output("\nGoodbye.")
        raise Interrupted("interrupted by Ctrl-C", results) from None


def _ask_move(rules: Rules, state, seat: int, input_fn, output) -> int:
    while True:
        text = input_fn(rules.prompt(state, seat) + "\n> ")
        try:
            return rules.parse_action(text, state, seat)
        except ValueError as err:
            output(str(err))
