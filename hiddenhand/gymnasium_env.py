"""The Gymnasium face: one seat of any game, the others played by agents.

Standard single-agent RL libraries (stable-baselines3, sb3-contrib's MaskablePPO) train on
it unchanged: observations are the learner's observation vector, ``action_masks()`` gives
its legal actions, and the reward is its return, paid when the game ends, whoever ends it:
the opponents' moves and chance are played inside :meth:`SingleAgentEnv.step` until the
learner is to move again or the game is over, so the step that the learner's move ends
with always carries the final reward, even when an opponent made the last move.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from hiddenhand.agent import Agent
from hiddenhand.core import IllegalActionError, advance
from hiddenhand.picture import draw
from hiddenhand.registry import get
from hiddenhand.validation import check_choice

MAX_GAMES_PER_RESET = 100
"""Games ``reset`` plays before giving up on one in which the learner gets a move."""

Opponents = Agent | Sequence[Agent] | Callable[[np.random.Generator], Sequence[Agent]]
"""One agent for every other seat, one per other seat, or a function that draws the
opponents of each episode (self-play against a pool of snapshots)."""


class SingleAgentEnv(gymnasium.Env):
    """``game`` (an ``hiddenhand.envs`` name) seen from one seat; see the module docstring.

    ``seat`` is the learner's player id, or ``"random"`` for a new seat every episode
    (drawn from the env's seeded generator). ``game_kwargs`` configure the game as the
    PettingZoo env's arguments do. An illegal action (an unmasked learner; a random
    action from an env checker) follows PettingZoo's convention with
    ``illegal_action="terminate"``: the episode ends and the learner gets the worst return
    the game allows; ``"raise"`` raises :class:`~hiddenhand.core.IllegalActionError`.

    ``render_mode="ansi"`` makes ``render()`` return the table as text, ``"rgb_array"`` as an
    ``HxWx3`` uint8 picture of the same size every frame (what Gymnasium's ``RecordVideo``
    records), both as the learner's seat sees it: the others' hidden cards face down.
    ``step`` before ``reset()``, or after the episode ended, raises ``RuntimeError``.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 2}

    def __init__(
        self,
        game: str,
        opponents: Opponents,
        seat: int | str = "random",
        render_mode: str | None = None,
        illegal_action: str = "terminate",
        **game_kwargs: Any,
    ) -> None:
        self.game = get(game).name
        self.rules = get(game).rules(**game_kwargs)
        n = self.rules.num_players
        if self.rules.max_game_length == 0:
            raise ValueError(f"{self.rules} has no decision to learn")
        if seat != "random" and not (isinstance(seat, int) and 0 <= seat < n):
            raise ValueError(f"seat={seat!r} is not allowed; choose 'random' or a player id from 0 to {n - 1}")
        self.render_mode = check_choice("render_mode", render_mode, (None, *self.metadata["render_modes"]))
        self.illegal_action = check_choice("illegal_action", illegal_action, ("terminate", "raise"))
        self._draw_opponents = _opponent_sampler(opponents, n)
        self.seat_choice = seat
        self.observation_space = spaces.Box(0.0, 1.0, (self.rules.observation_size,), np.float32)
        self.action_space = spaces.Discrete(self.rules.num_actions)
        self.state = None  # the game; None until reset()
        self.forfeited = False  # whether the learner's illegal action ended the game
        self.seat = 0
        self.opponents: list[Agent | None] = []

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        n = self.rules.num_players
        self.seat = int(self.np_random.integers(n)) if self.seat_choice == "random" else self.seat_choice
        others = list(self._draw_opponents(self.np_random))
        for agent in others:
            agent.seed(int(self.np_random.integers(2**63)))
        self.opponents = others[: self.seat] + [None] + others[self.seat :]
        # A game can end before the learner's first move (in EggHead the others may score
        # while the learner moderates): such a game has nothing to learn from, and Gymnasium
        # needs an observation to act on, so the episode starts with a new game.
        self.forfeited = False
        for _ in range(MAX_GAMES_PER_RESET):
            self.state = self.rules.new_initial_state()
            self._play_others()
            if not self.state.is_terminal():
                return self._observation(), {"seat": self.seat}
        raise RuntimeError(
            f"{MAX_GAMES_PER_RESET} games of {self.rules} in a row ended before seat {self.seat} had a move"
        )

    def step(self, action):
        self._check_reset("step")
        if self._over():
            raise RuntimeError("the episode is over; call reset() to play again")
        action = self.state.check_action(action)
        try:
            self.state.apply(action)
        except IllegalActionError:
            if self.illegal_action == "raise":
                raise
            self.forfeited = True  # the episode is over; the state stays as it was, for render()
            obs = np.zeros(self.rules.observation_size, dtype=np.float32)
            return obs, float(self.rules.utility_range[0]), True, False, {"seat": self.seat, "illegal_action": True}
        self._play_others()
        done = self.state.is_terminal()
        reward = float(self.state.returns()[self.seat]) if done else 0.0
        truncated = done and self.state.is_truncated()
        return self._observation(), reward, done and not truncated, truncated, {"seat": self.seat}

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as booleans (what MaskablePPO asks for).

        Once the episode is over (however it ended) every action is allowed: Gymnasium's
        vector envs reset on the step after the end and ignore its action, and a masked
        sampler asked for that action needs a non-empty mask."""
        if self.state is None or self._over():
            return np.ones(self.rules.num_actions, dtype=bool)
        return self.state.action_mask(self.seat).astype(bool)

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            return None
        self._check_reset("render")
        return draw(self.state.table(self.seat)) if self.render_mode == "rgb_array" else self.state.render(self.seat)

    def _check_reset(self, call: str) -> None:
        if self.state is None:
            raise RuntimeError(f"{call}() before reset(): call reset() first")

    def _over(self) -> bool:
        return self.forfeited or self.state.is_terminal()

    def _observation(self) -> np.ndarray:
        return self.state.observation_tensor(self.seat)

    def _play_others(self) -> None:
        advance(self.state, self.opponents, self.np_random)  # the learner's seat holds None


class _SameOpponents:
    """The same opponents every episode (a class rather than a closure, so the env pickles)."""

    def __init__(self, opponents: Sequence[Agent]) -> None:
        self.opponents = list(opponents)

    def __call__(self, rng: np.random.Generator) -> Sequence[Agent]:
        return self.opponents


def _opponent_sampler(opponents: Opponents, num_players: int) -> Callable[[np.random.Generator], Sequence[Agent]]:
    if isinstance(opponents, Agent):
        return _SameOpponents([opponents] * (num_players - 1))
    if callable(opponents):
        return opponents
    opponents = list(opponents)
    if len(opponents) != num_players - 1 or not all(isinstance(a, Agent) for a in opponents):
        raise ValueError(f"give {num_players - 1} opponent agents (or one for every seat); got {opponents!r}")
    return _SameOpponents(opponents)
