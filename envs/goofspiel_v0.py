"""Goofspiel (the Game of Pure Strategy).

| Import             | `from hiddenhand.envs import goofspiel_v0`        |
|--------------------|---------------------------------------------------|
| Registered ids     | `hiddenhand/goofspiel-v0` (AEC and Parallel)      |
| Actions            | Discrete(num_cards)                               |
| Parallel API       | Yes                                               |
| Agents             | `player_0` .. `player_{num_players-1}`            |
| Observation shape  | see below (590 floats for 13 cards, 2 players)    |
| Observation values | [0, 1]                                            |

## Rules

Every player holds the cards 1..`num_cards`; a prize deck holds the same values. Each
round one prize is turned face up and every player secretly bids one card from their hand.
The single highest bid takes the prize and scores its value; if the highest bid is shared,
nobody takes it (the prize is discarded). Bid cards are spent. After `num_cards` rounds the
game ends. The last round, with one card left in every hand, plays itself: nobody is asked.

In the AEC env the bids of one round are consecutive turns in seat order (`player_0`
first); a bid stays hidden from the other players until everyone has bid, so moving later
in the round gives no information. With `reveal_bids=True` all bids are shown when the
round ends; with `reveal_bids=False` each player learns only their own bid and who won
the round (OpenSpiel's `imp_info=True`).

## Arguments

    goofspiel_v0.env(num_cards=13, num_players=2, prize_order="random",
                     scoring="point_difference", reveal_bids=True, observation="full",
                     render_mode=None)

- `num_cards` (2 to 13): cards per hand and in the prize deck. One card is refused by every
  face (env, Parallel env, OpenSpiel, Gymnasium): its only round would play itself, leaving
  a game with no decision in it.
- `num_players` (2 to 6).
- `prize_order`: `"random"` (shuffled by the env's seeded generator, one card per round),
  `"ascending"` or `"descending"` (known in advance).
- `scoring`: `"point_difference"`: own points minus the mean of the other players'
  points, so for two players the raw difference (OpenSpiel's goofspiel reports half of
  it); `"win_loss"`: the players with the most points share +1, the others share -1, all
  0 if everyone ties (zero-sum); `"total_points"`: own points (not zero-sum).
- `reveal_bids` (bool): whether all bids are shown after each round.
- `observation`: `"full"` (the default): everything the player knows, with perfect recall
  (below); `"markov"`: only the position, see "Markov observation" below. Markov needs
  `reveal_bids=True` and `point_difference` or `total_points` scoring (under `win_loss`
  the score matters too); other combinations are refused.
- `render_mode`: `None`, `"ansi"` (`render()` returns the table as text), `"human"`
  (printed after every move) or `"rgb_array"` (`render()` returns a 640x960x3 uint8
  picture: the prize, every hand and this round's bids as cards, the points, the last
  round).

A bad argument raises `ValueError` naming the value and what is allowed.

## Actions

Action `i` bids the card `i + 1`. The action mask marks the cards in hand while the
player's bid for the current round is still due, and is all zeros otherwise. In `raw_env`
an illegal action raises `hiddenhand.core.IllegalActionError` (a `ValueError`) naming the
legal actions; `env()` follows PettingZoo's convention for illegal moves (what its
`TerminateIllegalWrapper` does, done inside the env for speed): the game ends, as a
forfeit: the offender is paid the worst return the scoring allows and everyone else the
best (-91 and +91 for 13 cards and point difference, -1 and +1 for win/loss, 0 and 91 for
total points), so the offender is always strictly worst off. The Parallel env does the
same whichever bidder's action is illegal. An action that is not an integer (Python's,
numpy's, or a 0-d integer array) raises `TypeError` in every env.

## Rewards

Paid once, when the game ends, by `scoring`. Every other step pays 0.

## Observation

`{"observation": float32[size], "action_mask": int8[num_cards]}`. With `n = num_cards` and
`P = num_players`, seats are relative to the observer (seat 0 is the observer, seat `k` the
player `k` seats after them; only the "own seat" section is absolute) and the vector
holds, in order:

| section            | length                          | contents                                     |
|--------------------|---------------------------------|----------------------------------------------|
| reveal flag        | 1                               | 1 if bids are revealed after each round      |
| own seat           | P                               | one-hot of the observer's seat number        |
| current prize      | n                               | one-hot of the prize on the table (or zeros) |
| own hand           | n                               | 1 for each card still held                   |
| prizes to come     | n                               | 1 for each prize not yet turned              |
| points             | P                               | points won per seat / (n(n+1)/2)             |
| history            | n rounds x (2n + P + 1 + (P-1)n) | one block per round, in play order          |

Each round block holds: the prize (one-hot, n), the observer's own bid (one-hot, n), the
winner (one-hot over P seats and a last slot for a tie), and the other seats' bids
(one-hot, n each, in seat order; all zeros when `reveal_bids=False`). A block is filled
when its prize is turned (the prize) and when the round ends (the rest), so the vector
holds everything the player knows, with perfect recall, and an agent can act from it
alone: `hiddenhand.envs.goofspiel_observation.ObservationLayout` gives the offsets and recovers `P`
from the length. The size is `1 + 2P + 3n + n(2n + P + 1 + (P-1)n)`: 590 for 13 cards and
two players.

### Markov observation

With `observation="markov"` the vector is only the position, which is all that matters to
what is still to be won when bids are revealed and scoring is by points:

| section        | length     | contents                                                     |
|----------------|------------|--------------------------------------------------------------|
| current prize  | n          | one-hot of the prize on the table (or zeros)                 |
| own hand       | n          | 1 for each card still held                                   |
| others' hands  | (P-1) x n  | each other seat's cards at the start of the round, in seat order |
| prizes to come | n          | 1 for each prize not yet turned                              |

`n(P + 2)` floats: 26 for 13 cards and two players. A bid made earlier in the same round
stays hidden (the others' hands are as the round began). No seat, score or history is
shown, so an agent trained on it is Markov by construction (a `PPOAgent` trained on it
says so: `uses_score` and `uses_history` are false), and its exploitability is computed
exactly over positions. The perfect-recall information state (OpenSpiel's
information-state tensor, what tabular policies are keyed by) is still the full vector
above; `State.information_state_tensor` gives it.

## Version history

- v0: first release. The `observation` argument was added later with the full vector as
  its default, so observations, rewards and rules under the defaults are unchanged.
"""

from __future__ import annotations

from hiddenhand.envs.goofspiel import OBSERVATIONS, PRIZE_ORDERS, SCORINGS, GoofspielRules
from hiddenhand.moved import moved
from hiddenhand.pettingzoo_env import RENDER_MODES, RulesAECEnv, env_factories
from hiddenhand.registry import Benchmark, BenchmarkSection, Exact, Factory, Game, Option, Solver


class raw_env(RulesAECEnv):
    """Goofspiel AEC environment without wrappers; see the module docstring."""

    rules_class = GoofspielRules
    configurations = {
        "tiny": {"num_cards": 3},
        "three_hidden": {"num_cards": 4, "num_players": 3, "reveal_bids": False},
        "total_points": {"num_cards": 4, "scoring": "total_points", "prize_order": "descending"},
        "markov": {"num_cards": 4, "observation": "markov"},
    }
    metadata = {"render_modes": list(RENDER_MODES), "name": "goofspiel_v0", "is_parallelizable": True}


env, parallel_env = env_factories(raw_env)


def _solved(rules: GoofspielRules) -> bool:
    """Whether the exact solver covers ``rules`` (:mod:`hiddenhand.solvers.goofspiel.coverage`,
    imported when asked: the solver is not loaded with the env)."""
    from hiddenhand.solvers.goofspiel.coverage import covers

    return covers(rules)


def _exploitability(rules: GoofspielRules, agent):
    """:func:`hiddenhand.solvers.goofspiel.exploitability_report`: over positions for a
    Markov agent, else over histories."""
    from hiddenhand.solvers.goofspiel import exploitability_report

    return exploitability_report(agent, rules)


_LEVELS = ("easy", "medium", "hard")
"""The heuristic's levels by name (``hiddenhand.agents.goofspiel_heuristic.LEVELS``, which a test
holds them to): declaring the game imports no agent."""

_SOLVED = "two players, point difference or win/loss, random prize order, bids revealed"

GAME = Game(
    name="goofspiel",
    env=raw_env,
    title="Goofspiel",
    options={
        "num_cards": Option("cards per hand and in the prize deck, 2 to 13", flag="--cards"),
        "num_players": Option("number of players, 2 to 6", flag="--players"),
        "prize_order": Option("order in which prizes are turned", choices=PRIZE_ORDERS),
        "scoring": Option(
            "returns: own points minus the others' mean, +1/-1 for most points, or own points", choices=SCORINGS
        ),
        "reveal_bids": Option("show every bid after each round (--no-reveal-bids: only who won, OpenSpiel's imp_info)"),
        "observation": Option(
            "what the observation holds: everything known (full), or only the position (markov: the hands, the "
            "prizes left and the prize on the table; needs revealed bids and no win_loss scoring)",
            choices=OBSERVATIONS,
        ),
    },
    agents={
        **{level: Factory("hiddenhand.agents.goofspiel_heuristic:heuristic", level=level) for level in _LEVELS},
        "equilibrium": "hiddenhand.agents.goofspiel_equilibrium:GoofspielEquilibriumAgent",
    },
    heuristics=("random", *_LEVELS),
    opponent="medium",
    exploitability=Exact(
        _exploitability,
        _solved,
        f"{_SOLVED} (exact: over positions for Markov agents up to 10 cards, over histories for the others up to "
        "about 6 cards)",
    ),
    solver=Solver(
        "hiddenhand.solvers.goofspiel.report:report",
        _solved,
        _SOLVED,
        parameters=("num_cards", "scoring"),
        defaults={"num_cards": 5},
        options={
            "out": Option("save the solution here (.npz; usable as an agent: --opponent FILE)", path="file"),
            "csv": Option("print the table as CSV (bid,upcard_1..upcard_n)", default=False),
            "workers": Option("threads (default: every core)", type=int),
            "checkpoint": Option(
                "directory for completed levels: an interrupted solve resumes from it (use it from 11 cards)",
                path="dir",
            ),
            "load": Option("read this saved solution (from --out) instead of solving; --cards must match it"),
            "certify": Option(
                "then compute the equilibrium's exact exploitability by a best-response backward induction over "
                "the same states, and check that the values are a fixed point (about as long as the solve; half "
                "as long with --bases)",
                default=False,
            ),
            "bases": Option(
                "directory for the optimal basis of every matrix game (4 bytes each: 0.3 GB at 11 cards, 11 GB at "
                "13): the solve writes it, --certify reads it and rebuilds each strategy without the simplex",
                path="dir",
            ),
            "ray": Option(
                "solve each level's patterns as Ray tasks (pip install 'hiddenhand[ray]'): the same values bit for "
                "bit as threads, on a local instance (127.0.0.1) or the cluster at --address; pays across machines",
                default=False,
            ),
            "address": Option("with --ray: the Ray cluster to join (ray start --head prints it), e.g. 10.0.0.1:6379"),
        },
        description="Solve two-player Goofspiel (point difference or, with --scoring win_loss, win/loss; random "
        "prize order, bids revealed) by LP backward induction and print the first-move table as the published "
        "solution does: rows are bids, columns upcards; * marks, in each column, the parity (odd or even bids) that "
        "carries more probability. Points: seconds up to 10 cards, about 6 times longer per extra card; win/loss "
        "takes longer (the score is part of the state).",
    ),
    agent_file="hiddenhand.agents.goofspiel_equilibrium:load_solution_agent",
    vector="hiddenhand.envs.goofspiel_vector:GoofspielVectorEnv",
    round_model="hiddenhand.envs.goofspiel_round_model:round_model",
    benchmark=(
        Benchmark({"num_cards": 4, "observation": "markov"}, learn=True),
        Benchmark({"num_cards": 6, "observation": "markov"}, tabular=False, learn=True, steps_scale=2),
        Benchmark(
            {"num_cards": 8, "observation": "markov"}, tabular=False, learn=True, steps_scale=3, budgets=("full",)
        ),
    ),
    benchmark_sections=(
        BenchmarkSection(
            "hiddenhand.training.goofspiel_full_game:full_game",
            {"num_cards": 13},
            "Goofspiel with 13 cards",
            option="gops13",
            help="a 13-card Goofspiel solution (hiddenhand solve goofspiel --cards 13 --out FILE): the 13-card learner "
            "also plays the exact equilibrium (full budget only)",
            check="hiddenhand.training.goofspiel_full_game:check_solution",
        ),
    ),
)

__getattr__ = moved(__name__, {"LEVELS": "hiddenhand.agents.goofspiel_heuristic"})
