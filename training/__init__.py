"""Evaluation and training: matches and tournaments between agents, CFR runs through the
OpenSpiel adapter, the Gymnasium face and self-play PPO, the EggHead experiment and the
benchmark that measures every kind of agent against the exact equilibria.

``SingleAgentEnv``, the Gymnasium face, is :mod:`hiddenhand.gymnasium_env`'s: its old spelling
here still works, with a warning."""

from hiddenhand.moved import moved
from hiddenhand.training.cfr import train_cfr
from hiddenhand.training.evaluation import MatchResult, head_to_head, play_game, play_games, round_robin, tournament

__all__ = [
    "MatchResult",
    "head_to_head",
    "play_game",
    "play_games",
    "round_robin",
    "tournament",
    "train_cfr",
]

__getattr__ = moved(__name__, {"SingleAgentEnv": "hiddenhand.gymnasium_env"})
