"""One module per game: rules engine (``<game>.py``) and PettingZoo env module (``<game>_v0.py``).

Importing this package registers every environment in PettingZoo's registries, so
``pettingzoo.make("aec", "hiddenhand/goofspiel-v0", num_cards=5)`` works after
``import hiddenhand``.
"""

from __future__ import annotations

from types import ModuleType

import pettingzoo

from hiddenhand.envs import bid_spoof_v0, egghead_v0, goofspiel_v0, spoof_v0

ENV_MODULES: dict[str, ModuleType] = {
    "goofspiel": goofspiel_v0,
    "spoof": spoof_v0,
    "egghead": egghead_v0,
    "bid_spoof": bid_spoof_v0,
}
"""Game name -> its env module (with ``raw_env``, ``env`` and, if simultaneous, ``parallel_env``)."""


def env_id(game: str) -> str:
    """PettingZoo id of a game: ``bid_spoof`` is ``hiddenhand/bid-spoof-v0``."""
    return f"hiddenhand/{game.replace('_', '-')}-v0"


def _register_all() -> None:
    for game, module in ENV_MODULES.items():
        name = env_id(game)
        if name not in pettingzoo.aec_registry:
            pettingzoo.register("aec", name, f"{module.__name__}:env")
        if hasattr(module, "parallel_env") and name not in pettingzoo.parallel_registry:
            pettingzoo.register("parallel", name, f"{module.__name__}:parallel_env")


_register_all()

__all__ = ["ENV_MODULES", "bid_spoof_v0", "egghead_v0", "env_id", "goofspiel_v0", "spoof_v0"]
