"""The ``dcops`` command line: the one place that lists every sub-command's home.

Each feature declares its sub-commands as ``COMMANDS`` (a list of :class:`dcops.command.Command`) in a light
module of its own above the domain layers (argparse definitions only; the heavy imports happen inside ``run``):

- ``dcops.training.<what>.commands``: train (and evaluate what was trained) for cooling, the LLM scheduler,
  multi-agent learning, queue ordering and GPU placement;
- ``dcops.evaluation.*``: the ``dcops eval`` matrix, the cluster and cooling reports, the LLM's injection test;
- ``dcops.server.commands``, ``dcops.runner`` (a policy against a server), ``dcops.bench.commands``.

Nothing in ``physics``, ``cluster``, ``agents`` or ``oversight`` declares a command.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

COMMAND_MODULES: tuple[str, ...] = (
    "dcops.evaluation.cooling_report",
    "dcops.evaluation.cooling_bound_report",
    "dcops.evaluation.cooling_knowledge_report",
    "dcops.evaluation.cooling_v2_report",
    "dcops.evaluation.cluster_report",
    "dcops.evaluation.commands",
    "dcops.evaluation.llm_commands",
    "dcops.evaluation.integrity",
    "dcops.evaluation.oversight_calibration",
    "dcops.evaluation.posterior_training",
    "dcops.evaluation.detector_aware_margin",
    "dcops.training.cooling.commands",
    "dcops.training.cooling.imitation_v2",
    "dcops.training.cooling.imitation_sb3",
    "dcops.training.scheduler.commands",
    "dcops.training.scheduler.search",
    "dcops.training.scheduler.ppo_commands",
    "dcops.training.scheduler.sft_commands",
    "dcops.training.scheduler.grpo_compact_commands",
    "dcops.training.marl.commands",
    "dcops.training.queue.commands",
    "dcops.training.placement.commands",
    "dcops.server.commands",
    "dcops.runner",
    "dcops.bench.commands",
)
"""Every module that declares sub-commands, in the order ``dcops --help`` lists them."""


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
