"""A stable-baselines3 logger that writes nothing, for the trainers that run its algorithms.

Left to its default, every ``learn()`` call makes an empty ``SB3-<date>`` folder in the temp
directory even with nothing to log, which piles up over a benchmark or a test run; our
trainers keep their own curves and records (:mod:`hiddenhand.training.run`).
"""

from __future__ import annotations


def without_log_folder(model):
    """``model`` (a stable-baselines3 algorithm) with a logger that writes nothing, returned."""
    from stable_baselines3.common.logger import Logger

    model.set_logger(Logger(folder=None, output_formats=[]))
    return model
