"""Exact solvers: small matrix games (``matrix_game``) and the Goofspiel LP backward
induction (``gops``)."""
