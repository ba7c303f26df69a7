"""Evaluation and training: matches and tournaments between agents, CFR runs through the
OpenSpiel adapter, the Gymnasium face and self-play PPO, the EggHead experiment and the
benchmark that measures every kind of agent against the exact equilibria."""

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
