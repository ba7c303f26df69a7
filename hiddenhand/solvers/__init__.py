"""Exact solvers: small matrix games (``matrix_game``), the sequence-form LP of any small
two-player zero-sum game (``sequence_form``), the Goofspiel LP backward induction
(``gops``) and exact best responses to Goofspiel agents (``gops_best_response``)."""
