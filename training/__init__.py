"""Evaluation and training: matches and tournaments between agents (more to come: CFR runs,
self-play, exploitability against the exact equilibria, plots)."""

from hiddenhand.training.evaluation import MatchResult, head_to_head, play_game, play_games, round_robin

__all__ = ["MatchResult", "head_to_head", "play_game", "play_games", "round_robin"]
