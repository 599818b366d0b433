"""``dcops bench``: speed figures as JSON and a table (modules of ``dcops.bench``; outside the test suite).

Every figure is measured in this run next to a calibration workload (``calibration_loops_per_s``) and the
single-environment figures, so ratios stay comparable on a loaded machine; absolute figures move with load.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
from pathlib import Path
from typing import Any

from dcops.command import Command


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", default="", help="also write the figures to this JSON file")
    parser.add_argument("--no-server", action="store_true", help="skip the WebSocket server benchmark")
    parser.add_argument("--server", action="store_true",
                        help="only the server under load: cluster/operations with 1 and 32 WebSocket clients and "
                             "/health probed, for each --workers count")
    parser.add_argument("--workers", default="0,2", help="worker counts for --server (default 0,2)")
    parser.add_argument("--observation", choices=["full", "arrays"], default="full",
                        help="--server: what the clients' replies hold (the cluster reset option observation: "
                             "'arrays' for a learner's replies without the structured view)")
    parser.add_argument("--clock", choices=["cpu", "wall"], default="cpu",
                        help="time rates by this process's CPU time (default: steady on a shared machine) or by "
                             "the wall clock")
    parser.add_argument("--statistic", choices=["best", "mean"], default="best",
                        help="report the fastest burst (default, as timeit) or the mean over all bursts")
    parser.add_argument("--against", default="", metavar="REV",
                        help="also measure this tree against git revision REV of this checkout side by side "
                             "(dcops.bench.compare; `make bench` passes HEAD~1); with --server, the loaded "
                             "server of both trees in turn, with the largest --workers count")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the --against comparison (default 3)")


def _print_table(figures: dict[str, Any]) -> None:
    print("| figure | value |")
    print("|---|---|")
    for key, value in figures.items():
        if isinstance(value, float):
            print(f"| {key} | {value:,.4g} |")
    for part, share in figures.get("cluster_vector_window_shares_16", {}).items():
        print(f"| share of a 16-episode cluster vector window: {part} | {share:.3f} |")
    for key, value in figures["ratios"].items():
        print(f"| ratio {key} | {value:,.3g} |")
    for key, met in figures["targets"].items():
        print(f"| target {key} | {'met' if met else 'NOT met'} |")


def _run_server_scaling(args: argparse.Namespace) -> int:
    from dcops.bench.server_bench import run_cluster_scaling

    workers = tuple(int(w) for w in args.workers.split(","))
    figures = run_cluster_scaling(workers, observation=None if args.observation == "full" else args.observation)
    print(f"Server under load ({figures['task']}, observation {figures['observation']}, WebSocket on loopback, "
          f"episode store on, clients and server on this {figures['cpus']}-CPU machine):")
    print("| workers | 1 client steps/s | 32 clients steps/s | scaling | step p50 / p99 ms (32) | /health p50 / p99 ms "
          "(32) | CPU ms per step, clients / server and workers (1 → 32) | errors |")
    print("|---|---|---|---|---|---|---|---|")

    def cpu(run: dict) -> str:
        server = run.get("server_cpu_ms_per_step")
        return f"{run['clients_cpu_ms_per_step']:.1f} / " + ("–" if server is None else f"{server:.1f}")

    for n in workers:
        row = figures[f"workers_{n}"]
        one, many = row["one_client"], row["32_clients"]
        print(f"| {n} | {one['steps_per_s']:.0f} | {many['steps_per_s']:.0f} | {row['scaling']:.2f}× | "
              f"{many['p50_ms']:.0f} / {many['p99_ms']:.0f} | {many['health_p50_ms']:.1f} / "
              f"{many['health_p99_ms']:.1f} | {cpu(one)} → {cpu(many)} | {many['errors'] + one['errors']} |")
    if args.against:
        _compare_server_against(args, workers, figures)
    print()
    print(json.dumps(figures, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


def _compare_server_against(args: argparse.Namespace, workers: tuple[int, ...], figures: dict[str, Any]) -> None:
    """``--server --against REV``: the loaded server of this tree and of REV, in turn, with the largest worker
    count asked for (skipped with a line saying why where it cannot run)."""
    from dcops.bench.compare import compare_server_revision, print_table

    n = max(workers)
    print()
    try:
        table = compare_server_revision(args.against, n, args.rounds)
    except (ValueError, OSError, RuntimeError) as error:
        print(f"Server side by side against {args.against}: skipped ({error})")
        figures["against"] = {"revision": args.against, "skipped": str(error)}
        return
    print(f"Server side by side against {args.against} ({n} workers, the default observation whatever "
          f"--observation says; the two trees in turn, alternating which goes first, median of {args.rounds} "
          "rounds):")
    print_table(table)
    figures["against"] = {"revision": args.against, "workers": n, "rounds": args.rounds, "figures": table}


def _run(args: argparse.Namespace) -> int:
    if args.rounds < 1:
        raise SystemExit(f"dcops bench: --rounds: must be at least 1, got {args.rounds}")
    if args.server:
        return _run_server_scaling(args)
    from dcops.bench import physics_bench
    from dcops.bench.cluster_bench import run_cluster_bench
    from dcops.bench.memory_bench import run_memory_bench
    from dcops.bench.physics_bench import run_physics_bench
    from dcops.bench.vector_bench import run_vector_bench

    physics_bench.CLOCK, physics_bench.STATISTIC = args.clock, args.statistic
    figures = run_physics_bench()
    cluster = run_cluster_bench()
    figures["targets"].update(cluster.pop("targets"))
    figures.update(cluster)
    vector = run_vector_bench(figures["cooling_env_steps_per_s"], figures["cluster_windows_per_s_ppo"])
    figures["ratios"].update(vector.pop("ratios"))
    figures["targets"].update(vector.pop("targets"))
    figures.update(vector)
    figures.update(run_memory_bench())
    figures["machine"] = {"python": platform.python_version(), "processor": platform.machine(),
                          "cpus": os.cpu_count(), "load_average_1min_at_end": os.getloadavg()[0],
                          "clock": physics_bench.CLOCK, "statistic": physics_bench.STATISTIC}
    _print_table(figures)
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
    if args.against:
        _compare_against(args, figures)
    print()
    print(json.dumps(figures, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


def _compare_against(args: argparse.Namespace, figures: dict[str, Any]) -> None:
    """The side-by-side figures against ``--against`` (skipped with a line saying why where it cannot run)."""
    from dcops.bench.compare import compare_revision, print_table

    print()
    try:
        table = compare_revision(args.against, args.rounds)
    except (ValueError, OSError, RuntimeError) as error:
        print(f"Side by side against {args.against}: skipped ({error})")
        figures["against"] = {"revision": args.against, "skipped": str(error)}
        return
    print(f"Side by side against {args.against} (two processes at once, median of {args.rounds} rounds; the ratio "
          "is steady under load):")
    print_table(table)
    figures["against"] = {"revision": args.against, "rounds": args.rounds, "figures": table}


COMMANDS = [Command("bench", "Speed benchmarks: physics steps/s (single and batch), env and vector-env steps/s, "
                    "cluster windows/s (rule, PPO), construction, memory, WebSocket server", _arguments, _run)]
