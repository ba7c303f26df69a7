"""Exact solvers: small matrix games (``matrix_game``, over the dense simplex ``simplex``),
the sequence-form LP of any small two-player zero-sum or constant-sum game
(``sequence_form``), value iteration for games of rounds that end in a full reveal
(``stochastic``), Goofspiel's LP backward induction and its exact best responses (the
package ``goofspiel``), Spoof (``spoof``) and Bid Spoof (``bid_spoof``)."""
