"""The declaration of one ``dcops`` sub-command: the small piece that ``dcops.cli`` and every feature's
``commands`` module share.

A feature (training, evaluation, the server, the benchmarks) lists its sub-commands as ``COMMANDS`` in a light
module of its own, above the domain layers: argparse declarations only, the heavy imports inside ``run``.
``dcops.cli`` collects those modules; neither side imports the other, both import this one.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    """One sub-command: its name, one-line help, argument declaration and entry point (returns an exit code)."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
