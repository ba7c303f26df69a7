"""hiddenhand: imperfect-information games for reinforcement learning and game theory.

Importing the package registers every environment with PettingZoo
(``pettingzoo.make("aec", "hiddenhand/goofspiel-v0")``).
"""

from hiddenhand.core import CHANCE, TERMINAL, IllegalActionError, Rules, State
from hiddenhand import envs  # registers the environments

__version__ = "0.1.0"
__all__ = ["CHANCE", "TERMINAL", "IllegalActionError", "Rules", "State", "envs"]
