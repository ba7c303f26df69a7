"""EggHead: deduce your own cards from questions about everyone's, and from how the others react.

| Import             | `from hiddenhand.envs import egghead_v0`                   |
|--------------------|------------------------------------------------------------|
| Registered ids     | `hiddenhand/egghead-v0` (AEC), `hiddenhand_egghead` (OpenSpiel) |
| Actions            | Discrete(57) for 3 cards of 6 values: pass, or call a hand |
| Parallel API       | No (rounds have chance moves between reaction phases)      |
| Agents             | `player_0` .. `player_{num_players-1}`                     |
| Observation shape  | see below (8,949 floats for the defaults)                  |
| Observation values | [0, 1]                                                     |

## Rules

Every player is dealt `cards_per_player` cards with values 1..`num_values`, drawn with
replacement from an unlimited supply, and holds them so that everyone but themselves can
see them. A hand is a multiset: one of 56 for 3 cards of 6 values.

Each round a question is drawn (uniformly, with replacement, from the `deck`) and the
moderator answers it truthfully about the hands they see. Then the players react: each
passes or calls a hand, all at once (in the AEC env, consecutive turns whose actions stay
hidden until everyone has reacted). A caller who named their hand exactly scores a point;
every caller shows their old hand, which becomes public, and is dealt a new one.

**Reaction phases.** Reactions tell the others something: a player who passes does not
know their hand, which rules out every deal in which they would have known. So a round has
several reaction phases: after a phase another follows, in the same round, whenever that
phase changed the public knowledge (someone called, or the passes ruled out deals), at most
`max_phases` (10) phases a round. This is the study's "repeat until no update", so a behavioural analyst
can act on what the others' passes revealed before the next question. "Public knowledge"
is the deduction engine's behavioural table (`hiddenhand.envs.egghead.Knowledge`), which
models every player as calling exactly when they know their hand: by behavioural analysis
for the players in `analysts`, by the answers alone for the others.

The first player to reach `target_score` wins; several players reaching it in the same
phase share the win (ties are possible).

## Arguments

    egghead_v0.env(num_players=4, cards_per_player=3, num_values=6, target_score=10,
                   moderator="external", deck="standard", max_questions=1000,
                   valids_in_observation=False, analysts="all", max_phases=10,
                   render_mode=None)

- `num_players` (3 to 5). The engine keeps every deal, one bit each: 56^5 = 551 million
  at five players, 69 MB a table.
- `cards_per_player` (1 to 4), `num_values` (2 to 9): within 56^5 deals in all.
- `target_score` (1 to 1000).
- `moderator`: `"external"`, a non-playing moderator who sees every hand (the study's
  setup); `"rotating"`: player k moderates question k (modulo the number of players),
  answers about the hands they see and does not react that round.
- `deck`: `"standard"` (30 questions for six values, listed in docs/egghead.md), or a subset
  of its question ids, in the order they are numbered as chance outcomes: a list
  (`["missing_values", "total"]`) or a string separated by commas or semicolons
  (`"missing_values,total"`). Repeated ids count once; the whole deck in its own order
  is `"standard"`.
- `max_questions`: the game stops as a draw (0 to everyone; a truncation in the AEC env)
  after this many questions.
- `valids_in_observation`: add to the observation the hands you still consider possible,
  by the answers alone (eq. 1) and by behavioural analysis. The latter assumes everyone
  reacts as the public model says (see `analysts`); if the reactions contradict it, the
  behavioural mask falls back to the answers-only one.
- `analysts`: whom the public model treats as behavioural analysts (the study's partial
  analysis): `"all"`, `"none"`, or player ids as a list or tuple (`[0, 2]`) or a string
  separated by commas or semicolons (`"0,2"`). A bare integer is refused, since it could
  mean a count as well as a player.
- A list written as a string (`deck`, `analysts`) has no spaces and no empty items, and its
  player ids are ASCII digits (`"0,,1"`, `" all"` and `"٣"` are refused); it may end with one
  separator (`"0;"`, the OpenSpiel spelling of one player below).
- `max_phases` (1 to 10): reaction phases after one question at most; a round normally
  settles in two or three. Small values make tiny games that tabular methods (and the
  conformance suite's exhaustive checks) can walk whole.
- `render_mode`: `None`, `"ansi"` (`render()` returns the table as text), `"human"`
  (printed after every move) or `"rgb_array"` (`render()` returns a 640x960x3 uint8
  picture: every hand as cards, the scores, this phase's reactions, the latest question
  and reactions).

A bad argument raises `ValueError` naming the argument, the value and what is allowed.
`rules.params` holds `deck` and `analysts` in one canonical spelling (`"standard"` or ids
joined by commas; `"all"`, `"none"` or sorted ids joined by commas), so equal
configurations compare and print alike.

**In OpenSpiel** (`pyspiel.load_game("hiddenhand_egghead(...)")`) the parameters are the
same, but commas separate a game string's parameters, so lists are separated by
semicolons: `hiddenhand_egghead(num_players=3,analysts=0;2,deck=total;missing_values)`.
OpenSpiel reads a bare `0` as an integer and refuses it for the string parameter
`analysts`, so one player is written with a trailing semicolon, `analysts=0;` (which is
how `str(game)` writes it). `pyspiel.load_game(str(game))` gives the same game back.

## Actions

Action 0 passes; action `1 + i` calls hand `i`, hands numbered in lexicographic order of
their sorted values: (1,1,1), (1,1,2), ..., (6,6,6) (`EggHeadRules.call_action(hand)`).
During a reaction phase every player who still has to react has every action legal; the
moderator and players who have reacted have an all-zero mask. An illegal action raises in
`raw_env`; `env()` ends the game as a forfeit: the offender is paid -1 and everyone else +1.
An action that is not an integer raises `TypeError`.

## Rewards

When the game ends, the winners share +1 and the others share -1 (zero-sum; 0 to everyone
if all reach the target together); 0 on every other step, and 0 to everyone at
`max_questions`.

## Observation

Seats are relative to the observer (seat 0 is the observer; only "own seat" is absolute).
With `P` players, `H` hands and `D` questions:

| section        | length              | contents                                           |
|----------------|---------------------|----------------------------------------------------|
| own seat       | P                   | one-hot                                            |
| moderator      | P + 1               | one-hot of the moderating seat, last slot external |
| scores         | P                   | each seat's score / `target_score`                 |
| others' hands  | (P - 1) x H         | one-hot of each other seat's current hand          |
| valids         | 2 x H (optional)    | hands you consider possible: answers only, then behavioural |
| events         | 32 x event          | the last 32 events since your hand was dealt       |

An event is an answer or a reaction phase: kind (2), question one-hot (D), answer /
(P x cards x values), moderator (P + 1), and per seat the reaction (none, pass, call; 3)
and the hand a caller showed (H). Older events drop out of the window; with
`valids_in_observation=True` the masks keep what they taught. 8,949 floats for the
defaults (without valids).

## Information state

The observation is a window, so it is not perfect recall. The perfect-recall information
state (OpenSpiel's information-state string and tensor, and `"information_state"` in what
our own loops hand an agent) holds the whole game: the scores, every answer and every
reaction phase (what each player did and the hand each caller showed; for your own calls
also the hand you named), the others' current hands, how many have reacted in the current
phase and how you did, and whether your (new) hand is being dealt.

Its tensor (`EggHeadState.information_state_tensor`, laid out by
`hiddenhand.envs.egghead_observation.InformationStateLayout`) is the observation followed by one slot
of P + 2 small numbers per event, room for `max_questions x (1 + max_phases)` events (an answer
and at most `max_phases` reaction phases per question), then 3 numbers for the moment (how many have
reacted in this phase, how you did, whether your hand is being dealt): 74,952
floats for the defaults, 56,683 for 3 players with 1 card of 3 values. Two states give
equal tensors exactly when they give equal information-state strings.

## Version history

- v0: first release.
"""

from __future__ import annotations

from hiddenhand.envs.egghead import MODERATORS, EggHeadRules
from hiddenhand.pettingzoo_env import RENDER_MODES, RulesAECEnv, env_factories
from hiddenhand.registry import Benchmark, Game, Option


class raw_env(RulesAECEnv):
    """EggHead AEC environment without wrappers; see the module docstring."""

    rules_class = EggHeadRules
    configurations = {
        "tiny": {
            "num_players": 3,
            "cards_per_player": 1,
            "num_values": 2,
            "target_score": 1,
            "max_questions": 1,
            "deck": "total",
            "max_phases": 1,
        },
        "small": {"num_players": 3, "cards_per_player": 1, "num_values": 3, "target_score": 3, "analysts": "0;2"},
        "rotating": {
            "num_players": 3,
            "cards_per_player": 2,
            "num_values": 3,
            "target_score": 2,
            "moderator": "rotating",
            "valids_in_observation": True,
        },
    }
    too_large_for_random_sim = {
        "default": "a random four-player game runs to thousands of steps and OpenSpiel's random_sim_test keeps "
        "every state; each update of the deduction tables is a new 1.4 MB table (a bit set) that those states hold, "
        "thousands of them",
    }
    metadata = {"render_modes": list(RENDER_MODES), "name": "egghead_v0", "is_parallelizable": False}


env, _ = env_factories(raw_env)


def seated(rules: EggHeadRules, names: tuple[str, ...]) -> EggHeadRules:
    """The rules for one seating of named agents: the public model must know which seats
    analyse behaviour to read everyone's reactions right."""
    analysts = ";".join(str(seat) for seat, name in enumerate(names) if name == "analyst") or "none"
    return EggHeadRules(**{**rules.params, "analysts": analysts})


GAME = Game(
    name="egghead",
    env=raw_env,
    title="EggHead",
    options={
        "num_players": Option("number of players, 3 to 5", flag="--players"),
        "cards_per_player": Option("cards per player", flag="--cards"),
        "num_values": Option("card values 1..VALUES", flag="--values"),
        "target_score": Option("points that win", flag="--target"),
        "moderator": Option("a non-playing moderator, or the players in turn", choices=MODERATORS),
        "deck": Option("'standard', 'total', or question ids separated by ';' or ','"),
        "max_questions": Option("stop the game as a draw after this many questions"),
        "valids_in_observation": Option(
            "put the valids masks in the observation (the computer players need them, so the command line "
            "turns them on)"
        ),
        "analysts": Option("players the public model treats as behavioural analysts: all, none or ids such as 0;2"),
        "max_phases": Option("reaction phases per question before the question is dropped, 1 to 10"),
    },
    agents={
        "naive": "hiddenhand.agents.egghead:NaiveDeducer",
        "analyst": "hiddenhand.agents.egghead:BehaviouralAnalyst",
    },
    heuristics=("random", "naive", "analyst"),
    opponent="analyst",
    seated=seated,
    command_line_defaults={"valids_in_observation": True},
    benchmark=(
        Benchmark(
            {"num_players": 3, "target_score": 10, "valids_in_observation": True},
            lineup=("analyst", "naive", "naive"),
            small={"target_score": 5},
            games_scale=1 / 3,
            title="EggHead, 3 players, one analyst",
        ),
    ),
)
