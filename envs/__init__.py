"""One module per game: rules engine (``<game>.py``) and env module (``<game>_v0.py``), which
holds the PettingZoo env class and the game's declaration (``GAME``, a
:class:`hiddenhand.registry.Game`).

Importing this package imports every ``*_v0`` module here and registers its ``GAME``, so
``pettingzoo.make("aec", "hiddenhand/goofspiel-v0", num_cards=5)`` works after
``import hiddenhand``. A new game is a new pair of modules: nothing here lists games.
"""

from __future__ import annotations

import importlib
import pkgutil

from hiddenhand.registry import register


def _register_all() -> None:
    for name in sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name.endswith("_v0")):
        register(importlib.import_module(f"{__name__}.{name}").GAME)


_register_all()
