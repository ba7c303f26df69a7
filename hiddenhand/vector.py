"""The batched ("array") face: many games of one kind stepped at once as numpy arrays.

Training a policy by self-play wants millions of decisions, and stepping the rules
engine's Python objects one game at a time, with the network called for each game's move
separately or in small batches, is what limits such a loop (docs/performance.md). A
batched env keeps the positions of ``num_envs`` games as integer arrays and steps every
game's current decision in one compiled call, so one network forward pass serves them
all (``benchmarks/bench_selfplay_throughput.py`` measures both loops). It is a face like
the others, checked move for move against the PettingZoo env on random games
(``tests/test_vector_env.py``), and meant for users as much as for our learners.

Which games have one: a game declares it next to its rules (``Game.vector``, a
:class:`RulesVectorEnv` subclass); :func:`vector_env` makes it by the game's name and
refuses, naming the games that have one, for a game that has none. Goofspiel, Spoof and
Bid Spoof have one, in every configuration and with both observations (``"full"`` and
``"markov"``); see their modules ``hiddenhand.envs.<game>_vector``. EggHead has none (its
deduction engine is not a small integer position).

Usage (a Gymnasium-style vector env of a turn-based multi-agent game)::

    from hiddenhand.vector import vector_env

    envs = vector_env("goofspiel", num_envs=1024, num_cards=6, observation="markov")
    obs, info = envs.reset(seed=0)
    actions = policy(obs["observation"], obs["action_mask"])   # one action per game
    obs, rewards, terminations, truncations, info = envs.step(actions)

- ``reset(seed=None)`` starts every game and returns ``(obs, info)``; ``seed`` seeds the
  env's generator (chance: Goofspiel's prize deck), so the same seed and the same actions
  give the same games, as ``reset(seed=...)`` does in the PettingZoo env.
- ``obs`` is what the PettingZoo env's ``observe(agent)`` gives the player to move in each
  game, batched: ``{"observation": float32 (num_envs, size), "action_mask": int8
  (num_envs, num_actions)}``; ``info["player"]`` (int64, ``num_envs``) is who that player is
  (``agent_selection`` as a seat number). Every game always has a player to move: chance
  is drawn inside the step, and a finished game is restarted at once (below).
- ``step(actions)`` plays one action in every game (an integer array, one per game: the
  move of the player to move there). Simultaneous bids are consecutive turns, as in the
  AEC env (Goofspiel: player 0, then 1, ... each round; each sees the others' hands as the
  round began). It returns ``(obs, rewards, terminations, truncations, info)``:
  ``rewards`` is float64 ``(num_envs, num_players)``, every seat's return in each game that
  ended at this step and 0 elsewhere (our games pay only at the end), ``terminations`` and
  ``truncations`` (bool, ``num_envs``) say which games ended (a truncation when a limit
  such as ``max_rounds`` cut it short, as in the AEC env). A game that ends is restarted
  in the same step (Gymnasium's ``AutoresetMode.SAME_STEP``): its ``obs`` and
  ``info["player"]`` are already the new game's first decision. The finished game's last
  observation is not returned (nobody decides there).
- An illegal action in any game raises :class:`~hiddenhand.core.IllegalActionError` (a
  ``ValueError``) naming the game's index, the player, the action and the legal actions,
  before any game moves; actions that are not integers, or not one per game, raise
  ``TypeError``/``ValueError`` saying what is expected; ``step`` before ``reset()`` raises
  ``RuntimeError``. There is no forfeit convention here (``raw_env``'s behaviour): a batch
  with an illegal move is a bug in the caller.
- The spaces are Gymnasium's: ``single_observation_space`` is the PettingZoo env's
  observation space, ``observation_space`` its batch, ``single_action_space``
  ``Discrete(num_actions)``, ``action_space`` ``MultiDiscrete``; ``metadata["autoreset_mode"]``
  is ``SAME_STEP``. Unlike a single-agent Gymnasium vector env the rewards have a column
  per seat, so Gymnasium's reward wrappers do not apply; a self-play learner credits each
  game's decisions with the return of the seat that made them (``info["player"]``).
- ``info["banked"]`` (float64, ``(num_envs, num_players)``) is the part of each seat's
  return that the game to move has already settled: Goofspiel with additive scoring
  (``point_difference``, ``total_points``) counts the points won so far as its return would
  count them; it is 0 in games that settle nothing before their end (Spoof, Bid Spoof,
  Goofspiel's ``win_loss``). A decision's return still to come is its game's return minus
  its ``banked``: credit that leaves out what no later move can change (the self-play
  learners use it; see ``docs/training.md``).
- ``info["round_state"]`` (int64, ``num_envs``) is, where a game is played as a chain of
  rounds whose future depends only on the public round-state (Spoof's and Bid Spoof's
  rounds; Goofspiel's turns when the bids are shown and the scoring adds points up), that
  round-state's key (>= 0) when the game to move is at a round's start, and -1 elsewhere
  (always -1 in a Goofspiel with hidden bids or win/loss scoring, whose future depends on
  more, and where the key would pass 62 bits): what ``State.round_state()`` gives in the
  rules engine. A
  learner can learn a value per key and credit a round's decisions with the value of the
  round-state they lead to (sampled regret matching's ``bootstrap``, ``docs/training.md``).
- The env pickles, generator included, like every face.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from hiddenhand.core import IllegalActionError, Rules
from hiddenhand.validation import check_int, shown

MAX_ENVS = 1 << 24
"""Most games one env holds (16 million): a bound on memory, not on speed."""


class RulesVectorEnv(VectorEnv):
    """``num_envs`` games of ``rules_class`` (made with ``game_kwargs``, checked as the
    rules check them) stepped at once; see the module docstring for the interface.

    A game's subclass sets ``rules_class`` and implements :meth:`_reset_games` and
    :meth:`_step_games` (typically one compiled call each) on its own arrays; this class
    checks the arguments, draws the uniforms chance needs, allocates the outputs and keeps
    the player to move and the mask that actions are checked against."""

    rules_class: ClassVar[type[Rules]]
    metadata: ClassVar[dict[str, Any]] = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, num_envs: int, **game_kwargs: Any) -> None:
        self.num_envs = check_int("num_envs", num_envs, 1, MAX_ENVS)
        self.rules = self.rules_class(**game_kwargs)
        self.num_players = self.rules.num_players
        self.num_actions = self.rules.num_actions
        self.single_observation_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (self.rules.observation_size,), np.float32),
                "action_mask": spaces.Box(0, 1, (self.num_actions,), np.int8),
            }
        )
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.single_action_space = spaces.Discrete(self.num_actions)
        self.action_space = spaces.MultiDiscrete(np.full(self.num_envs, self.num_actions))
        self._player = np.zeros(self.num_envs, dtype=np.int64)
        self._mask: np.ndarray | None = None  # the masks last returned: what actions are checked against

    # ------------------------------------------------------------------ the interface
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        """Start every game; returns ``(obs, info)`` (see the module docstring)."""
        super().reset(seed=seed)  # seeds self.np_random as Gymnasium's envs do
        obs, mask = self._outputs()
        self._reset_games(self._uniforms(), obs, mask)
        self._mask = mask
        return {"observation": obs, "action_mask": mask.copy()}, self._info()

    def step(self, actions: Any) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Play one action in every game; returns ``(obs, rewards, terminations,
        truncations, info)`` (see the module docstring)."""
        if self._mask is None:
            raise RuntimeError("step() before reset(): call reset() first")
        actions = self._check_actions(actions)
        obs, mask = self._outputs()
        rewards = np.zeros((self.num_envs, self.num_players), dtype=np.float64)
        terminations = np.zeros(self.num_envs, dtype=bool)
        truncations = np.zeros(self.num_envs, dtype=bool)
        self._step_games(actions, self._uniforms(), obs, mask, rewards, terminations, truncations)
        self._mask = mask
        return {"observation": obs, "action_mask": mask.copy()}, rewards, terminations, truncations, self._info()

    # ------------------------------------------------------------------ for subclasses
    def _reset_games(self, uniforms: np.ndarray, obs: np.ndarray, mask: np.ndarray) -> None:
        """Start every game: draw its chance from ``uniforms`` (one per game, in [0, 1)),
        set ``self._player`` and write the first decision's observation and mask (``obs``
        and ``mask`` are zeros)."""
        raise NotImplementedError

    def _step_games(
        self,
        actions: np.ndarray,
        uniforms: np.ndarray,
        obs: np.ndarray,
        mask: np.ndarray,
        rewards: np.ndarray,
        terminations: np.ndarray,
        truncations: np.ndarray,
    ) -> None:
        """Play the (checked, legal) ``actions``, one per game; chance draws from
        ``uniforms`` (one per game: a game's step never needs two). A game that ends writes
        its returns to ``rewards`` and marks ``terminations`` or ``truncations``, and is
        restarted. Then set ``self._player`` and write every game's next decision to the
        zeroed ``obs`` and ``mask``."""
        raise NotImplementedError

    def _banked(self) -> np.ndarray:
        """Each game's settled part of every seat's return (``info["banked"]``): none, for a
        game that pays only at its end."""
        return np.zeros((self.num_envs, self.num_players))

    def _round_state(self) -> np.ndarray:
        """Each game's round-state key (``info["round_state"]``): none (-1), for a game
        that is not a chain of rounds."""
        return np.full(self.num_envs, -1, dtype=np.int64)

    # ------------------------------------------------------------------ helpers
    def _info(self) -> dict[str, np.ndarray]:
        return {"player": self._player.copy(), "banked": self._banked(), "round_state": self._round_state()}

    def _outputs(self) -> tuple[np.ndarray, np.ndarray]:
        obs = np.zeros((self.num_envs, self.rules.observation_size), dtype=np.float32)
        return obs, np.zeros((self.num_envs, self.num_actions), dtype=np.int8)

    def _uniforms(self) -> np.ndarray:
        return self.np_random.random(self.num_envs)

    def _check_actions(self, actions: Any) -> np.ndarray:
        """``actions`` as an int64 array with one legal action per game, or the error that
        says what is wrong (the first illegal game's index, player, action, legal actions)."""
        array = np.asarray(actions)
        if array.dtype.kind not in "iu":
            raise TypeError(
                f"actions must be integers, one per game (an array of {self.num_envs}); got {shown(actions)} "
                f"of dtype {array.dtype}"
            )
        if array.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), one per game; got shape {array.shape}")
        # Checked before the cast to int64, which would show a uint64 past 2**63 as a negative action.
        inside = (array >= 0) & (array < self.num_actions)
        legal = inside.copy()
        rows = np.flatnonzero(inside)
        legal[rows] = self._mask[rows, array[rows]] == 1
        if not legal.all():
            bad = np.flatnonzero(~legal)
            i = int(bad[0])
            more = f" ({len(bad) - 1} more games have illegal actions)" if len(bad) > 1 else ""
            raise IllegalActionError(
                f"game {i}: action {int(array[i])} is illegal for player {int(self._player[i])} in {self.rules}; "
                f"legal actions: {np.flatnonzero(self._mask[i]).tolist()}{more}"
            )
        return np.ascontiguousarray(array, dtype=np.int64)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(num_envs={self.num_envs}, {self.rules!r})"


def vector_env(game: str | Rules, num_envs: int, **params: Any) -> RulesVectorEnv:
    """The batched env of ``game`` (its registered name, with ``params``: the PettingZoo
    env's keyword arguments; or its Rules) with ``num_envs`` games. A game without one
    raises ``ValueError`` naming the games that have one."""
    from hiddenhand.registry import game_of, games, get, resolve

    if isinstance(game, Rules):
        declared, params = game_of(game), {**game.params, **params}
    else:
        declared = get(game)
    if declared.vector is None:
        have = [name for name, g in games().items() if g.vector is not None]
        raise ValueError(
            f"{declared.name} has no batched env; the games that have one: {', '.join(have) or 'none'} "
            "(any game can be played through its PettingZoo env)"
        )
    return resolve(declared.vector)(num_envs, **params)


__all__ = ["MAX_ENVS", "RulesVectorEnv", "vector_env"]
