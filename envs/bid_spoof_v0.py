"""Bid Spoof (Milan rules): bid up the total of coins in everyone's hand, or call the last bid.

| Import             | `from hiddenhand.envs import bid_spoof_v0`                    |
|--------------------|---------------------------------------------------------------|
| Registered ids     | `hiddenhand/bid-spoof-v0` (AEC), `hiddenhand_bid_spoof` (OpenSpiel) |
| Actions            | Discrete(C + 1 + N C + 6): 19 for 3 players with 3 coins      |
| Parallel API       | No (bids are answered in turn)                                |
| Agents             | `player_0` .. `player_{num_players-1}`                        |
| Observation values | [0, 1]                                                        |

## Rules

Every player starts with `coins` coins. Each round, every player still in secretly holds
0 to all of their coins (in the AEC env, consecutive hidden turns from the round's
starter). The starter then chooses the direction of play (clockwise: increasing seat
numbers; only with more than two players still in) and opens; players then take turns in
that direction. On your turn you either bid a total (the number of coins held in all hands
together) higher than the last bid, up to the coins still in play, or make a call, which
ends the round with every hand shown:

- **call** (after a bid): if the total is at least the last bid, you lose a coin;
  otherwise the last bidder does. The loser starts the next round.
- **cliff** (after a bid): you claim the total is exactly the last bid. Right: you win a
  coin, unless you already hold `coins` (the cap; then nothing changes). Wrong: you lose
  one. You start the next round.
- **spoof** (after a bid): you claim every coin in play is held. Right: nobody wins or
  loses, and you start the next round. Wrong: you lose a coin and start.
- **zero**: you claim nobody holds a coin. Right: every other player loses a coin; wrong:
  you lose one. You start the next round. When it may be said is `zero_call`:
  `"round_start"` (the original rules) only as the opening call of a round, by the starter;
  `"before_own_bid"` (a house rule noted beside the Milan rules) by any player who has not
  bid in this round.

A player with no coins is out; the last player in wins. Where the Milan rules leave a case
open we chose, and the tests check: the opener may not say call, cliff or spoof (there is no
bid to call); after a right zero call the caller starts, as after a cliff or a spoof; and
when the player due to start is out, the next player still in (clockwise) starts. The
first round is started by `player_0`.

## Arguments

    bid_spoof_v0.env(num_players=3, coins=3, zero_call="round_start", objective="game",
                     max_rounds=200, observation="full", render_mode=None)

- `num_players` (2 to 8), `coins` (1 to 5): the starting coins, also the most anyone may
  hold after a cliff.
- `zero_call`: `"round_start"` or `"before_own_bid"` (above).
- `objective`: `"game"`: the winner gets +1 and everyone else -1/(N - 1) (zero-sum);
  `"round"`: one round only, scored by the coins it moved: a player's change of coins
  minus the mean change of the others in the round, so -1 for the loser of a call and
  +1/(N - 1) for everyone else, +1 for a right cliff, and so on (zero-sum). The round is the unit the
  exact two-player solver works on.
- `max_rounds`: with `objective="game"`, a game still going after this many rounds is a
  draw (0 to everyone; a truncation in the AEC env). Cliffs that win coins can make games
  long. The exact two-player solver and the whole-game exploitability solve the unlimited
  game.
- `observation`: `"full"` (the default): the present round and the last finished one
  (below); `"markov"`: the present round only, see "Markov observation" below.
- `render_mode`: `None`, `"ansi"` (`render()` returns the table as text), `"human"`
  (printed after every move) or `"rgb_array"` (`render()` returns a 640x960x3 uint8
  picture: each hand as a card, the coins, the bids, the last round).

A bad argument raises `ValueError` naming the value and what is allowed.

## Actions

With `C = coins` and `N = num_players`: actions `0..C` hold that many coins; `C + b` bids
`b` (1 to N C); then call, cliff, spoof, zero; then clockwise, anticlockwise
(`hiddenhand.envs.bid_spoof.ActionLayout`). The mask marks what the rules allow now: your
holds while your hand is due, the direction when you start a round with more than two
players in, otherwise on your turn the higher bids up to the coins in play and the calls
allowed. An illegal action raises in `raw_env`; `env()` ends the game as a forfeit, the offender
paid -1 and everyone else +1. An action that is not an integer raises `TypeError`.

## Observation

Seats are relative to the observer (seat 0 is the observer; only "own seat" is absolute):

| section     | length            | contents                                                   |
|-------------|-------------------|------------------------------------------------------------|
| own seat    | N                 | one-hot                                                    |
| coins       | N x (C + 1)       | one-hot of each seat's coins                               |
| starter     | N                 | one-hot of this round's starter                            |
| direction   | 2                 | clockwise, anticlockwise (zeros until chosen)              |
| own hand    | C + 1             | one-hot of the coins you hold this round                   |
| bids        | N C x N           | for each bid value, one-hot of the seat that made it       |
| last round  | N (C + 2) + 4 + N | each seat's hand (or "out"), the call that ended it, who called |

Its length is `N^2 C + N (2C + 6) + C + 7` (73 for 3 players with 3 coins). Bids only go
up, so the bid table holds the round's whole public history: within a round the
observation is perfect recall. Across rounds it is a bounded window by design: the current
round and the last finished one, and of that only the hands, the call and the caller (not
its bids, starter or direction), so its size does not grow with `max_rounds`. It is
therefore not the information state: two histories that differ only in an earlier round's
bids can give the same observation.

### Markov observation

With `observation="markov"` the vector is the table above without its last section (the
last round): own seat, coins, starter, direction, own hand and the bid table,
`N^2 C + N (C + 3) + C + 3` floats (51 for 3 players with 3 coins). It is the round-state
(the coins and who starts) and the present round, all that bears on what is still to be
won, since every round ends with all hands shown (what
`hiddenhand.solvers.bid_spoof.present_round` reads, with the seat). An agent trained on it
is Markov by construction (a `PPOAgent` trained on it says so: `uses_history` is false);
with two players its exploitability is computed exactly over round-states
(`hiddenhand.solvers.round_best_response`). The information state below is the same under
either observation.

## Information state

The perfect-recall information state, what a player may know of the whole game, is
`State.information_state_tensor(player)` (`Rules.observation_is_information_state` is
False), which is also OpenSpiel's `information_state_tensor`; OpenSpiel's
`information_state_string` is its text form (two states give equal tensors exactly when
they give equal strings, for every player, to move or not). Everything that needs perfect
recall (CFR, tabular and learned policies keyed by information state, the agents'
`"information_state"` entry) reads these, never the observation. The tensor is the
observation followed by one block per finished round, in order, for up to `R` rounds
(`R = max_rounds`, or 1 with `objective="round"`; zeros for rounds not played), with
seats relative to the observer (`hiddenhand.envs.bid_spoof_observation.InformationStateLayout`):

| section, per round | length      | contents                                                 |
|--------------------|-------------|----------------------------------------------------------|
| hands              | N x (C + 2) | one-hot of each seat's hand: 0..C, or out                |
| call               | 4           | call, cliff, spoof, zero                                 |
| caller             | N           | one-hot                                                  |
| starter            | N           | one-hot                                                  |
| direction          | 2           | clockwise, anticlockwise (clockwise with two players in) |
| bids               | N C x N     | for each bid value, one-hot of the seat that made it     |

Its length (`rules.information_state_size`) is the full observation's plus
`R (N^2 C + N (C + 4) + 6)`: with the default `max_rounds=200`, 10,873 for 3 players with
3 coins and 80,060 for 8 players with 5 coins; 127 for 3 players with 3 coins on
`objective="round"`. It grows with `max_rounds`: lower it where the tensor's size matters.

## Exploitability

With two players, `hiddenhand exploitability bid-spoof` (and
`hiddenhand.games()["bid_spoof"].exploitability`) is exact under both `zero_call` rules: one
round (`objective="round"`) by OpenSpiel's best response on the round's tree; a whole game
by policy iteration over round-states with a best response inside each round
(`hiddenhand.solvers.round_best_response`), for agents that read only the round-state and
the present round (`uses_history` false: the equilibrium, the heuristic, random play, a PPO
agent trained on the Markov observation). It values the unlimited game (`max_rounds`
aside: an endless game counts as a draw) and refuses agents that may read past rounds.

## Version history

- v0: first release. The `observation` argument was added later with the full vector as
  its default, so observations, rewards and rules under the defaults are unchanged.
"""

from __future__ import annotations

from hiddenhand.envs.bid_spoof import OBJECTIVES, OBSERVATIONS, ZERO_CALLS, BidSpoofRules
from hiddenhand.pettingzoo_env import RENDER_MODES, RulesAECEnv, env_factories
from hiddenhand.registry import Benchmark, Exact, Game, Option, Solver


class raw_env(RulesAECEnv):
    """Bid Spoof AEC environment without wrappers; see the module docstring."""

    rules_class = BidSpoofRules
    configurations = {
        "tiny": {"num_players": 2, "coins": 1, "max_rounds": 3},
        "four_players": {"num_players": 4, "coins": 2, "max_rounds": 20},
        "round": {"objective": "round", "zero_call": "before_own_bid"},
        "markov": {"num_players": 2, "coins": 2, "max_rounds": 10, "observation": "markov"},
    }
    metadata = {"render_modes": list(RENDER_MODES), "name": "bid_spoof_v0", "is_parallelizable": False}


env, _ = env_factories(raw_env)


def _two_players(rules: BidSpoofRules) -> bool:
    return rules.num_players == 2


GAME = Game(
    name="bid_spoof",
    env=raw_env,
    title="Bid Spoof",
    options={
        "num_players": Option("number of players, 2 to 8", flag="--players"),
        "coins": Option("starting coins, also the most after a cliff, 1 to 5"),
        "zero_call": Option(
            "when zero may be said: only to open a round, or by anyone who has not bid in it", choices=ZERO_CALLS
        ),
        "objective": Option("the whole game, or one round scored by the coins it moves", choices=OBJECTIVES),
        "max_rounds": Option("stop the game as a draw after this many rounds"),
        "observation": Option(
            "what the observation holds: the present round and the last one (full), or only the round-state and "
            "the present round (markov: the coins, the starter, the direction, your hand and the bids)",
            choices=OBSERVATIONS,
        ),
    },
    agents={
        "heuristic": "hiddenhand.agents.bid_spoof:BidSpoofHeuristic",
        "equilibrium": "hiddenhand.agents.bid_spoof:BidSpoofEquilibriumAgent",
    },
    heuristics=("random", "heuristic"),
    opponent="heuristic",
    vector="hiddenhand.envs.bid_spoof_vector:BidSpoofVectorEnv",
    round_model="hiddenhand.envs.bid_spoof_round_model:round_model",
    exploitability=Exact(
        "hiddenhand.solvers.bid_spoof:exploitability",
        _two_players,
        "two players (one round by OpenSpiel's best response; whole games by policy iteration over round-states, "
        "for agents that do not read past rounds)",
    ),
    solver=Solver(
        "hiddenhand.solvers.bid_spoof:report",
        _two_players,
        "two players",
        parameters=("coins", "zero_call"),
        defaults={"num_players": 2},
        description="Solve two-player Bid Spoof exactly for every round-state (coins of the round's starter, coins "
        "of the other) up to COINS each, and print the starter's probability of winning the game from each, then "
        "the starter's equilibrium opening from COINS each: the hand held, and for each hand the opening move. "
        "A few seconds at 3 coins.",
    ),
    benchmark=(
        Benchmark({"num_players": 2, "coins": 3, "objective": "round"}),
        Benchmark(
            {"num_players": 2, "coins": 3, "observation": "markov"},
            tabular=False,
            learn=True,
            budgets=("full",),
        ),
        Benchmark({"num_players": 3, "coins": 2, "objective": "round"}, lineup=("heuristic", "random"), cfr=True),
    ),
)
