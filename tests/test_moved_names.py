"""Every public name that moved keeps its old spelling for a release: imported from the old
module it is the same object as under the new one, with a :class:`DeprecationWarning` that
spells the new import and points at the code that used the old one (see ``hiddenhand/moved.py``
and docs/architecture.md)."""

import importlib
import re
import warnings

import pytest

MOVED = [
    ("hiddenhand.agents.base", "Agent", "hiddenhand.agent"),
    ("hiddenhand.agents.base", "Observation", "hiddenhand.agent"),
    ("hiddenhand.agents.base", "RandomAgent", "hiddenhand.agent"),
    ("hiddenhand.agents.base", "legal_mask", "hiddenhand.agent"),
    ("hiddenhand.envs.goofspiel_v0", "LEVELS", "hiddenhand.agents.goofspiel_heuristic"),
    ("hiddenhand.spoof_advisor", "Advice", "hiddenhand.solvers.spoof_advisor"),
    ("hiddenhand.spoof_advisor", "MODELS", "hiddenhand.solvers.spoof_advisor"),
    ("hiddenhand.spoof_advisor", "SEATS", "hiddenhand.solvers.spoof_advisor"),
    ("hiddenhand.spoof_advisor", "advise", "hiddenhand.solvers.spoof_advisor"),
    ("hiddenhand.spoof_advisor", "outcome_utilities", "hiddenhand.solvers.spoof_advisor"),
    ("hiddenhand.spoof_advisor", "uniform_strategy", "hiddenhand.solvers.spoof_advisor"),
    ("hiddenhand.agents.ppo", "keeping_global_rngs", "hiddenhand.global_rngs"),
    ("hiddenhand.agents.ppo", "without_log_folder", "hiddenhand.training.sb3_logger"),
    ("hiddenhand.training", "SingleAgentEnv", "hiddenhand.gymnasium_env"),
    ("hiddenhand.envs.egghead", "EVENTS", "hiddenhand.envs.egghead_observation"),
    ("hiddenhand.envs.bid_spoof", "RoundLayout", "hiddenhand.envs.bid_spoof_observation"),
    ("hiddenhand.solvers.matrix_game", "MAX_REBUILDS", "hiddenhand.solvers.simplex"),
    ("hiddenhand.solvers.matrix_game", "PIVOT_TOLERANCES", "hiddenhand.solvers.simplex"),
    ("hiddenhand.solvers.matrix_game", "SINGULAR", "hiddenhand.solvers.simplex"),
]
"""(old module, name, new module) for every name that moved."""


def _new(name: str, new: str):
    """The name under its new spelling, which warns of nothing."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return getattr(importlib.import_module(new), name)


@pytest.mark.parametrize("old, name, new", MOVED, ids=[f"{old}.{name}" for old, name, _ in MOVED])
def test_the_old_import_gives_the_same_object_and_names_the_new_home(old, name, new):
    spelled = re.escape(f"{old}.{name} has moved to {new}.{name}: write 'from {new} import {name}'")
    found = {}
    with pytest.warns(DeprecationWarning, match=spelled):
        exec(f"from {old} import {name} as found", found)
    assert found["found"] is _new(name, new)
    with pytest.warns(DeprecationWarning, match=spelled) as caught:
        attribute = getattr(importlib.import_module(old), name)
    assert attribute is _new(name, new)
    assert [w.filename for w in caught] == [__file__]  # the warning points at the old spelling's use


@pytest.mark.parametrize("old", sorted({old for old, _, _ in MOVED}))
def test_each_old_home_forwards_exactly_the_names_that_left_it(old):
    module = importlib.import_module(old)
    assert module.__getattr__.homes == {name: new for was, name, new in MOVED if was == old}
    with pytest.raises(AttributeError, match=re.escape(f"module '{old}' has no attribute 'nothing'")):
        getattr(module, "nothing")  # noqa: B009  (as a misspelt name is looked up)
    assert not hasattr(module, "nothing")
