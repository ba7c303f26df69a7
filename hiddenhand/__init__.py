"""hiddenhand: imperfect-information games for reinforcement learning and game theory.

Importing the package registers every game, ours and those installed packages declare
(entry-point group ``hiddenhand.games``), with PettingZoo
(``pettingzoo.make("aec", "hiddenhand/goofspiel-v0")``) and with OpenSpiel
(``pyspiel.load_game("hiddenhand_goofspiel")``). :func:`register` adds a game of one's own
to every face; :func:`games` lists what is registered.
"""

from hiddenhand.interrupt import end_the_command_on_ctrl_c

end_the_command_on_ctrl_c()  # the imports below take a second: Ctrl-C in them ends the command in one line

from hiddenhand import (  # noqa: E402
    envs,  # registers our games
    openspiel,
    registry,
)
from hiddenhand.core import CHANCE, TERMINAL, IllegalActionError, Rules, State  # noqa: E402
from hiddenhand.registry import (  # noqa: E402
    Benchmark,
    BenchmarkSection,
    Exact,
    Factory,
    Game,
    Option,
    Solver,
    games,
    load_entry_points,
    register,
)

registry.subscribe(openspiel.register_game)  # every game, registered so far or later, with OpenSpiel
load_entry_points()

__version__ = "0.1.0"
__all__ = [
    "CHANCE",
    "TERMINAL",
    "Benchmark",
    "BenchmarkSection",
    "Exact",
    "Factory",
    "Game",
    "IllegalActionError",
    "Option",
    "Rules",
    "Solver",
    "State",
    "envs",
    "games",
    "openspiel",
    "register",
]
