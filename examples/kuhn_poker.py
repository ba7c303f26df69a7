"""Kuhn poker on the hiddenhand engine: a template for adding your own game.

Three cards (J, Q, K); both players ante 1 and chance deals each one card (player 0's
first, then player 1's, as in OpenSpiel's ``kuhn_poker``). Player 0 passes or bets 1,
then player 1; after a pass and a bet player 0 may call or fold. Actions: 0 = pass
(check or fold), 1 = bet (bet or call). Zero-sum; the game is worth -1/18 to player 0.

Implement ``Rules`` and ``State``, declare the env and the ``Game``, ``register`` it: the
game then has a PettingZoo env (``hiddenhand/kuhn-poker-v0``), an OpenSpiel game
(``hiddenhand_kuhn_poker``), the Gymnasium face, CFR, tournaments and terminal play
(``hiddenhand play kuhn-poker``). Run it, or import it, before using those.
"""

from __future__ import annotations

import numpy as np

import hiddenhand
from hiddenhand.agent import Agent
from hiddenhand.core import CHANCE, TERMINAL, Rules, State
from hiddenhand.layout import Layout
from hiddenhand.pettingzoo_env import RENDER_MODES, RulesAECEnv, env_factories

CARDS = "JQK"
PASS, BET = 0, 1
# The perfect-recall information state, as OpenSpiel's Kuhn tensor: who I am, my card, and
# each of the (at most three) bets so far. The seat is in it because a tensor must tell
# apart any two information states, the players' own included (before the deal, say).
LAYOUT = Layout([("player", 2), ("card", len(CARDS)), ("bets", (3, 2))])


class KuhnRules(Rules):
    """Kuhn poker has no parameters, so it needs no ``__init__``; a game with some takes
    them as keyword arguments with defaults, validates them and passes them to
    ``super().__init__``. ``Rules`` reads the observation size off ``layout``."""

    name = "kuhn_poker"
    num_players = 2  # plain class attributes satisfy the abstract properties
    num_actions = 2
    layout = LAYOUT
    max_chance_outcomes = len(CARDS)
    max_game_length = 3  # pass, bet, call
    utility_range = (-2.0, 2.0)  # also the forfeit paid for an illegal move in env()

    def new_initial_state(self) -> KuhnState:
        return KuhnState(self)


class KuhnState(State):
    """A position: the cards dealt and the bets made. ``State`` supplies the rest (the
    returns ``_finish`` recorded, zeros before the end, among them)."""

    def __init__(self, rules: KuhnRules) -> None:
        self.rules = rules
        self.cards: list[int] = []  # dealt so far, by player
        self.bets: list[int] = []  # the players' actions, in turn

    def current_player(self) -> int:
        if self._over:
            return TERMINAL
        return CHANCE if len(self.cards) < 2 else len(self.bets) % 2

    def legal_actions(self, player: int | None = None) -> list[int]:
        mover = self.current_player()
        if player is not None and player != mover or mover == TERMINAL:
            return []
        return [a for a, _ in self.chance_outcomes()] if mover == CHANCE else [PASS, BET]

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self.current_player() != CHANCE:
            return []
        left = [c for c in range(len(CARDS)) if c not in self.cards]
        return [(c, 1.0 / len(left)) for c in left]

    def apply(self, action: int) -> None:
        legal = self.legal_actions()
        if action not in legal:
            raise self._illegal(action, legal)
        if self.current_player() == CHANCE:
            self.cards.append(int(action))
            return
        self.bets.append(int(action))
        b = self.bets
        if (len(b) >= 2 and b[-1] == PASS) or b.count(BET) == 2:
            if b[-1] == PASS and BET in b:  # a fold: the bettor takes the antes
                winner, stake = len(b) % 2, 1.0
            else:  # a showdown for the antes, and the bets if there were two
                winner, stake = int(self.cards[1] > self.cards[0]), 1.0 + (BET in b)
            self._finish([stake, -stake] if winner == 0 else [-stake, stake])

    def clone(self) -> KuhnState:
        return self._copy("cards", "bets")

    def information_state_string(self, player: int) -> str:
        card = CARDS[self.cards[player]] if len(self.cards) > player else "?"
        return f"p{player} {card} {''.join('pb'[a] for a in self.bets)}"

    def observation_tensor(self, player: int) -> np.ndarray:
        # The observation is the information state (``observation_is_information_state``).
        obs, views = LAYOUT.zeros()
        views["player"][player] = 1.0
        if len(self.cards) > player:
            views["card"][self.cards[player]] = 1.0
        for turn, action in enumerate(self.bets):
            views["bets"][turn, action] = 1.0
        return obs

    def action_to_string(self, player: int, action: int) -> str:
        return f"Deal {CARDS[action]}" if player == CHANCE else ("Pass", "Bet")[action]

    def render(self, viewer: int | None = None) -> str:
        name = self._namer(viewer)
        showdown = self._over and not (self.bets[-1] == PASS and BET in self.bets)
        shown = [CARDS[c] if viewer in (None, p) or showdown else "?" for p, c in enumerate(self.cards)]
        lines = ["Cards: " + ", ".join(f"{name(p)} {c}" for p, c in enumerate(shown))]
        lines += [f"{name(k % 2)}: {('pass', 'bet')[a]}" for k, a in enumerate(self.bets)]
        lines.append(f"Pot: {2 + sum(self.bets)}")
        if self._over:
            lines.append("Final returns: " + ", ".join(f"{name(p)} {r:+g}" for p, r in enumerate(self._returns)))
        return "\n".join(lines)


class AlwaysBet(Agent):
    """Bets and calls every time (both actions are always legal in Kuhn poker)."""

    def __init__(self, rules: Rules | None = None, seed: int | None = None) -> None:
        super().__init__(seed)  # an agent factory is called as factory(rules, seed=...)

    def policy(self, observation) -> np.ndarray:
        return np.array([0.0, 1.0])


class raw_env(RulesAECEnv):
    """Kuhn poker's AEC environment; ``env()`` adds PettingZoo's conventions."""

    rules_class = KuhnRules
    configurations = {"tiny": {}}  # the conformance suite walks every state of "tiny"
    metadata = {"render_modes": list(RENDER_MODES), "name": "kuhn_poker_v0", "is_parallelizable": False}


env, _ = env_factories(raw_env)  # no parallel env: the players do not move at once

GAME = hiddenhand.Game(
    name="kuhn_poker",
    env=raw_env,
    title="Kuhn poker",
    options={},  # the command-line help of each rules parameter: none here
    agents={"always_bet": AlwaysBet},
    heuristics=("random", "always_bet"),  # a tournament's default field needs two agents
    opponent="random",
)
hiddenhand.register(GAME)
