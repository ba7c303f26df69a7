"""The Spoof advisor's old home: it lives beside its solver, in
:mod:`hiddenhand.solvers.spoof_advisor`; the old spellings still work, with a warning."""

from hiddenhand.moved import moved

__getattr__ = moved(
    __name__,
    dict.fromkeys(
        ("Advice", "MODELS", "SEATS", "advise", "outcome_utilities", "uniform_strategy"),
        "hiddenhand.solvers.spoof_advisor",
    ),
)
