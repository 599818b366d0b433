"""The ``dcops`` command line.

Each feature declares its sub-commands in a light ``commands`` module (argparse definitions only; the heavy
imports happen inside ``run``), listed in ``COMMAND_MODULES`` below.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    """One sub-command: its name, one-line help, argument declaration and entry point (returns an exit code)."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


COMMAND_MODULES: tuple[str, ...] = (
    "dcops.agents.llm.commands",
    "dcops.cooling_report",
    "dcops.bench.commands",
    "dcops.cluster.placement.commands",
    "dcops.cluster.queue.commands",
    "dcops.cluster_report",
    "dcops.evaluation.commands",
    "dcops.server.commands",
    "dcops.runner",
    "dcops.training.cooling_commands",
    "dcops.training.scheduler_commands",
    "dcops.training.marl_commands",
)


def build_parser() -> argparse.ArgumentParser:
    """Build the top-level parser with every registered sub-command."""
    parser = argparse.ArgumentParser(prog="dcops", description="Datacenter operations platform")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module_name in COMMAND_MODULES:
        for command in importlib.import_module(module_name).COMMANDS:
            command_parser = sub.add_parser(command.name, help=command.help, description=command.help)
            command.add_arguments(command_parser)
            command_parser.set_defaults(_run=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dcops`` script."""
    args = build_parser().parse_args(argv)
    return int(args._run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
