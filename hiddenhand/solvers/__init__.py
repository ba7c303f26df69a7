"""Exact solvers: small matrix games (``matrix_game``), the sequence-form LP of any small
two-player zero-sum or constant-sum game (``sequence_form``), value iteration for games of
rounds that end in a full reveal (``stochastic``), the Goofspiel LP backward induction
(``gops``), exact best responses to Goofspiel agents (``gops_best_response``) and Spoof
(``spoof``)."""
