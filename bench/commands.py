"""``dcops bench``: speed figures as JSON and a table (see ``dcops.bench.physics_bench``)."""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

from dcops.cli import Command


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", default="", help="also write the figures to this JSON file")
    parser.add_argument("--no-server", action="store_true", help="skip the WebSocket server benchmark")


def _run(args: argparse.Namespace) -> int:
    from dcops.bench.cluster_bench import run_cluster_bench
    from dcops.bench.physics_bench import run_physics_bench

    figures = run_physics_bench()
    cluster = run_cluster_bench(figures.get("physics_steps_per_s_single_plant"))
    figures["targets"].update(cluster.pop("targets"))
    figures.update(cluster)
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
    if not args.no_server:
        from dcops.bench.server_bench import run_server_bench

        server = run_server_bench()
        figures["server"] = server
        print()
        print(f"Server ({server['task']}, WebSocket on loopback, episode store on):")
        print("| mode | steps/s | p50 ms | p99 ms |")
        print("|---|---|---|---|")
        for key, row in server.items():
            if isinstance(row, dict):
                print(f"| {key} | {row['steps_per_s']:,.0f} | {row['p50_ms']:.3f} | {row['p99_ms']:.3f} |")
        print(f"| overhead ratio (in-process / 1 WS client steps/s) | {server['overhead_ratio_steps_per_s']:.2f} | | |")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


COMMANDS = [Command("bench", "Speed benchmarks: physics steps/s (single and batch), env steps/s, construction",
                    _arguments, _run)]
