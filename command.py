"""The declaration of one ``dcops`` sub-command: the small piece that ``dcops.cli`` and every feature's
``commands`` module share.

A feature (training, evaluation, the server, the benchmarks) lists its sub-commands as ``COMMANDS`` in a light
module of its own, above the domain layers: argparse declarations only, the heavy imports inside ``run``.
``dcops.cli`` collects those modules; neither side imports the other, both import this one. The one output
helper those commands share, :func:`print_and_write`, lives here too.
"""

from __future__ import annotations

import argparse
import csv
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Command:
    """One sub-command: its name, one-line help, argument declaration and entry point (returns an exit code)."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def print_and_write(text: str, out: str | Path | None) -> None:
    """Print a command's markdown and, unless ``out`` is empty, write it there (folders made as needed)."""
    text = text.rstrip("\n")
    print(text)
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(text + "\n")


def write_rows_beside(rows: list[dict[str, Any]], out: str | Path | None) -> None:
    """Write a report's rows as CSV beside its markdown (``out`` with the suffix ``.csv``), unless ``out`` is empty."""
    if not out or not rows:
        return
    with Path(out).with_suffix(".csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
