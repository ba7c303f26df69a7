"""Evaluation and training: matches and tournaments between agents, CFR runs through the
OpenSpiel adapter with NashConv curves and plots (self-play to come)."""

from hiddenhand.training.cfr import train_cfr
from hiddenhand.training.evaluation import MatchResult, head_to_head, play_game, play_games, round_robin, tournament

__all__ = ["MatchResult", "head_to_head", "play_game", "play_games", "round_robin", "tournament", "train_cfr"]
