"""The SB3 logger every training run here uses: TensorBoard in the run's own folder, or no files at all.

Why: left to itself, SB3 (``stable_baselines3.common.utils.configure_logger``) gives a model trained without
``tensorboard_log`` a logger whose folder is ``$TMPDIR/SB3-<date>``, created on the first ``learn`` and never
removed, so every run (and every training test) leaves an empty folder behind. Setting the logger explicitly
(``model.set_logger(sb3_logger(...))``) keeps TensorBoard output where it was asked for and writes nothing
anywhere else.
"""

from __future__ import annotations

import sys
from pathlib import Path

from stable_baselines3.common.logger import HumanOutputFormat, Logger
from stable_baselines3.common.utils import configure_logger


def sb3_logger(tensorboard_log: str | Path | None, tb_log_name: str, verbose: int = 0) -> Logger:
    """SB3's own logger for ``tensorboard_log/<tb_log_name>_<run>`` (as ``PPO(tensorboard_log=...)`` would
    make it), or, with no TensorBoard folder, a logger with no folder that prints to stdout only if
    ``verbose`` is at least 1.

    :param tensorboard_log: TensorBoard root folder, or None for none.
    :param tb_log_name: run name inside it (SB3 appends ``_1``, ``_2``, ...).
    :param verbose: SB3 verbosity (1 also prints the training table).
    """
    if tensorboard_log is not None:
        return configure_logger(verbose, str(tensorboard_log), tb_log_name)
    return Logger(folder=None, output_formats=[HumanOutputFormat(sys.stdout)] if verbose >= 1 else [])
