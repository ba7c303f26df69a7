"""Spoof: two players guess the total of matches hidden in both hands.

| Import             | `from hiddenhand.envs import spoof_v0`               |
|--------------------|------------------------------------------------------|
| Registered ids     | `hiddenhand/spoof-v0` (AEC), `hiddenhand_spoof` (OpenSpiel) |
| Actions            | Discrete(max_hold + max_total + 2): 11 for 3 matches each |
| Parallel API       | No (the second bid answers the first)                |
| Agents             | `player_0`, `player_1`                               |
| Observation shape  | see below (1,230 floats for 3 matches, 50 rounds)    |
| Observation values | [0, 1]                                               |

## Rules

Each player starts with `matches` matches. Every round:

1. Both players secretly choose how many of their matches to hold in their hand, from 0
   to all they have. (In the AEC env the round's first bidder chooses first, then the
   other; neither sees the other's choice.)
2. The first bidder bids the total number of matches in both hands, from 0 to the number
   both players have left.
3. The second bidder bids a different total.
4. The hands are revealed. If a bid equals the total, its bidder was right: they drop one
   match and bid first in the next round. If nobody was right, nothing changes and the
   same player bids first again.

The first player with no matches left wins. `player_0` bids first in the first round.
Bids that cannot be right (below your own hand, or above it plus everything the opponent
has) are legal, as at the table, though they can never win the round.

## Arguments

    spoof_v0.env(matches=3, objective="game", max_rounds=50, observation="full", render_mode=None)

- `matches` (1 to 9): each player's starting count, or a pair `(player_0's, player_1's)`
  for an unequal start. OpenSpiel takes no pairs: there it is `matches` for player 0 and
  `matches_p1` for player 1 (0, the default, means the same as `matches`), e.g.
  `hiddenhand_spoof(matches=2,matches_p1=3)`.
- `objective`: `"game"` plays to the end, +1 to the winner and -1 to the loser (zero-sum);
  `"round"` plays one round only and pays the utilities of the Hugin Spoof models' influence diagrams:
  1 to a player whose bid was right, 0 to the other, 0.5 to both when nobody was right
  (constant-sum: the two returns add up to 1).
- `max_rounds` (1 to 10000): with `objective="game"`, the game is stopped after this many
  rounds and scored as a draw (0 to both). Two players who never bid the total could
  otherwise play for ever. Under the equilibrium a game from 3 matches each outlasts 50
  rounds with probability below 1e-7 (`hiddenhand.solvers.spoof`), so the default only
  stops degenerate play. The AEC env reports the stop as a truncation (`truncations`
  true, `terminations` false). The exact solver and the whole-game exploitability solve
  the unlimited game.
- `observation`: `"full"` (the default): everything the player knows, with perfect recall
  (below); `"markov"`: the present round only, see "Markov observation" below.
- `render_mode`: `None`, `"ansi"` (`render()` returns the table as text), `"human"`
  (printed after every move) or `"rgb_array"` (`render()` returns a 640x960x3 uint8
  picture: each hand as a card, the matches left, the bids, the last round).

A bad argument raises `ValueError` naming the value and what is allowed.

## Actions

With `H` the larger starting count and `T` the starting total, action `k` for `k` in
`0..H` is "hold k matches" and action `H + 1 + b` for `b` in `0..T` is "bid b".
The mask marks the holds from 0 to your current count while your hand for the round is
still to be chosen (so during the hand phase both players have a mask), then the bids
from 0 to the current total, less the first bid, on your turn to bid; otherwise it is all
zeros. `raw_env` raises `hiddenhand.core.IllegalActionError` on an illegal action;
`env()` follows PettingZoo's convention, as a forfeit: the game ends, the offender is paid
the worst return and the other player the best (-1 and +1; 0 and 1 for one round), so the
offender is always strictly worse off. An action that is not an integer raises
`TypeError`.

## Rewards

Paid when the game ends, by `objective`; 0 on every other step.

## Observation

`{"observation": float32[size], "action_mask": int8[H + T + 2]}`. Seats are relative to
the observer (seat 0 is the observer, seat 1 the opponent; only "own seat" is absolute):

| section          | length           | contents                                             |
|------------------|------------------|------------------------------------------------------|
| own seat         | 2                | one-hot of the observer's player id                  |
| matches          | 2 x (H + 1)      | one-hot of each seat's matches left                  |
| first bidder     | 2                | one-hot of the seat bidding first this round         |
| own hand         | H + 1            | one-hot of the matches you hold this round (or zeros) |
| bids             | 2 x (T + 1)      | one-hot of each seat's bid this round (or zeros)     |
| history          | R x block        | one block per finished round, in play order          |

A history block holds the seat that bid first (2), both hands (2 x (H + 1)) and both bids
(2 x (T + 1)) of a finished round; `R` is `max_rounds` (1 with `objective="round"`). The
vector therefore holds everything the player knows, with perfect recall.
`hiddenhand.envs.spoof.SpoofView.decode` reads the present round back from it. The size
is `4 + 3(H + 1) + 2(T + 1) + R(2 + 2(H + 1) + 2(T + 1))`: 1,230 for 3 matches each and
50 rounds.

### Markov observation

With `observation="markov"` the vector is the table above without its history: own seat,
matches, first bidder, own hand and this round's bids, `4 + 3(H + 1) + 2(T + 1)` floats
(30 for 3 matches each). Every round ends with both hands shown, so the round-state (the
matches and who bids first) and the present round are all that bears on what is still to
be won; an agent trained on it is Markov by construction (a `PPOAgent` trained on it says
so: `uses_history` is false), and its exploitability is computed exactly over round-states
(`hiddenhand.solvers.round_best_response`). The vector is then no longer the information
state (`Rules.observation_is_information_state` is False): the perfect-recall vector above,
what OpenSpiel's information-state tensor and tabular policies read, is
`State.information_state_tensor`. `SpoofView.decode` reads both.

## Exploitability

`hiddenhand exploitability spoof` (and `hiddenhand.games()["spoof"].exploitability`) is
exact for every configuration: one round (`objective="round"`) by OpenSpiel's best response
on the round's tree; a whole game by policy iteration over round-states with a best
response inside each round (`hiddenhand.solvers.round_best_response`), for agents that
read only the round-state and the present round (`uses_history` false: the equilibrium,
the heuristic, random play, a PPO agent trained on the Markov observation). It values the
unlimited game (`max_rounds` aside: an endless game counts as a draw) and refuses agents
that may read past rounds. The solver's whole-game equilibrium is unexploitable to 1.4e-12
at 1 to 5 matches: the favoured player ends every round a losing first bidder would stall
(with weight 1e-10; see `hiddenhand.solvers.spoof`).

## Version history

- v0: first release. The `observation` argument was added later with the full vector as
  its default, so observations, rewards and rules under the defaults are unchanged.
"""

from __future__ import annotations

from hiddenhand.envs.spoof import OBJECTIVES, OBSERVATIONS, SpoofRules
from hiddenhand.pettingzoo_env import RENDER_MODES, RulesAECEnv, env_factories
from hiddenhand.registry import Benchmark, Exact, Game, Option, Solver
from hiddenhand.validation import integer_text


class raw_env(RulesAECEnv):
    """Spoof AEC environment without wrappers; see the module docstring."""

    rules_class = SpoofRules
    configurations = {
        "tiny": {"matches": 1, "max_rounds": 3},
        "round": {"objective": "round"},
        "unequal": {"matches": (2, 3), "max_rounds": 10},
        "markov": {"matches": 2, "max_rounds": 10, "observation": "markov"},
    }
    metadata = {"render_modes": list(RENDER_MODES), "name": "spoof_v0", "is_parallelizable": False}


env, _ = env_factories(raw_env)


def _matches(text: str) -> int | tuple[int, int] | str:
    """``--matches``: ``3`` for both players, or ``2,3`` for player_0's and player_1's; any
    other text is left as it is, for the rules to refuse naming the option and what it allows."""
    counts = [integer_text(part) for part in text.split(",")]
    if len(counts) not in (1, 2) or None in counts:
        return text
    return counts[0] if len(counts) == 1 else tuple(counts)


GAME = Game(
    name="spoof",
    env=raw_env,
    title="Spoof",
    options={
        "matches": Option(
            "starting matches, 1 to 9, of both players (3) or of player_0 and player_1 (2,3)", type=_matches
        ),
        "objective": Option(
            "play the whole game (+1/-1) or one round (1 right, 0 opponent right, 0.5 neither)", choices=OBJECTIVES
        ),
        "max_rounds": Option("stop the game as a draw after this many rounds"),
        "observation": Option(
            "what the observation holds: everything known (full), or only the round-state and the present round "
            "(markov: the matches, who bids first, your hand and this round's bids)",
            choices=OBSERVATIONS,
        ),
    },
    agents={
        "heuristic": "hiddenhand.agents.spoof:SpoofHeuristic",
        "equilibrium": "hiddenhand.agents.spoof:SpoofEquilibriumAgent",
    },
    heuristics=("random", "heuristic"),
    opponent="equilibrium",
    vector="hiddenhand.envs.spoof_vector:SpoofVectorEnv",
    round_model="hiddenhand.envs.spoof_round_model:round_model",
    exploitability=Exact(
        "hiddenhand.solvers.spoof:exploitability",
        lambda rules: True,
        "every configuration (one round by OpenSpiel's best response; whole games by policy iteration over "
        "round-states, for agents that do not read past rounds)",
    ),
    solver=Solver(
        "hiddenhand.solvers.spoof:report",
        lambda rules: True,
        "every configuration (the table covers every round-state up to the larger starting count)",
        parameters=("matches", "objective"),
        description="Solve Spoof exactly for every round-state (matches of the first bidder, matches of the "
        "other) up to MATCHES each, and print the first bidder's probability of winning the game from each, "
        "then the equilibrium's opening round from MATCHES each. With --objective round: the value of a single "
        "round (1 right, 0 opponent right, 0.5 neither) instead. Under a second at 3 matches, about a minute at 9.",
    ),
    benchmark=(
        Benchmark({"matches": 3, "objective": "round"}),
        Benchmark({"matches": 3, "observation": "markov"}, tabular=False, learn=True),
    ),
)
