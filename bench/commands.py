"""``dcops bench``: speed figures as JSON and a table (see ``dcops.bench.physics_bench``)."""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

from dcops.cli import Command


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", default="", help="also write the figures to this JSON file")


def _run(args: argparse.Namespace) -> int:
    from dcops.bench.physics_bench import run_physics_bench

    figures = run_physics_bench()
    figures["machine"] = {"python": platform.python_version(), "processor": platform.machine()}
    print(json.dumps(figures, indent=2))
    print()
    print("| figure | value |")
    print("|---|---|")
    for key, value in figures.items():
        if isinstance(value, float):
            print(f"| {key} | {value:,.4g} |")
    for key, value in figures["ratios"].items():
        print(f"| {key} | {value:,.4g} |")
    for key, met in figures["targets"].items():
        print(f"| target {key} | {'met' if met else 'NOT met'} |")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


COMMANDS = [Command("bench", "Speed benchmarks: physics steps/s (single and batch), env steps/s, construction",
                    _arguments, _run)]
