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
10 phases a round. This is the study's "repeat until no update", so a behavioural analyst
can act on what the others' passes revealed before the next question. "Public knowledge"
is the deduction engine's behavioural table (`hiddenhand.envs.egghead.Knowledge`), which
models every player as calling exactly when they know their hand: by behavioural analysis
for the players in `analysts`, by the answers alone for the others.

The first player to reach `target_score` wins; several players reaching it in the same
phase share the win (ties are possible).

## Arguments

    egghead_v0.env(num_players=4, cards_per_player=3, num_values=6, target_score=10,
                   moderator="external", deck="standard", max_questions=1000,
                   valids_in_observation=False, analysts="all", render_mode=None)

- `num_players` (3 to 5). The engine keeps every deal: 56^5 = 551 million at five players.
- `cards_per_player` (1 to 4), `num_values` (2 to 9): within 56^5 deals in all.
- `target_score` (1 to 1000).
- `moderator`: `"external"`, a non-playing moderator who sees every hand (the study's
  setup); `"rotating"`: player k moderates question k (modulo the number of players),
  answers about the hands they see and does not react that round.
- `deck`: `"standard"` (30 questions for six values, listed in the README) or
  comma-separated question ids (`"missing_values,total"`).
- `max_questions`: the game stops as a draw (0 to everyone; a truncation in the AEC env)
  after this many questions.
- `valids_in_observation`: add to the observation the hands you still consider possible,
  by the answers alone (eq. 1) and by behavioural analysis. The latter assumes everyone
  reacts as the public model says (see `analysts`); if the reactions contradict it, the
  behavioural mask falls back to the answers-only one.
- `analysts`: whom the public model treats as behavioural analysts: `"all"`, `"none"` or
  player ids such as `"0,2"` (the study's partial analysis).
- `render_mode`: `None`, `"ansi"` or `"human"`.

A bad argument raises `ValueError` naming the value and what is allowed.

## Actions

Action 0 passes; action `1 + i` calls hand `i`, hands numbered in lexicographic order of
their sorted values: (1,1,1), (1,1,2), ..., (6,6,6) (`EggHeadRules.call_action(hand)`).
During a reaction phase every player who still has to react has every action legal; the
moderator and players who have reacted have an all-zero mask. An illegal action raises in
`raw_env`; `env()` ends the game, the offender paid -1 and everyone else 0.

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
defaults (without valids). The information-state string (OpenSpiel) holds the whole
history.

## Version history

- v0: first release.
"""

from __future__ import annotations

from hiddenhand.envs.egghead import EggHeadRules
from hiddenhand.pettingzoo_env import RENDER_MODES, RulesAECEnv, env_factories


class raw_env(RulesAECEnv):
    """EggHead AEC environment without wrappers; see the module docstring."""

    rules_class = EggHeadRules
    metadata = {"render_modes": list(RENDER_MODES), "name": "egghead_v0", "is_parallelizable": False}


env, _ = env_factories(raw_env)
