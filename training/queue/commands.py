"""Sub-commands ``dcops eval-queue`` and ``dcops train-queue`` (see ``dcops.cli``).

Only argparse declarations run at import time; the benchmark, torch and matplotlib are imported inside ``run``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dcops.command import Command

QUICK_TEST_SEEDS = 40
QUICK_TUNING_SEEDS = 40


def _eval_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--seeds", type=int, default=300, help="held-out test scenarios (1..300, default 300)"
    )
    parser.add_argument("--out", type=Path, default=Path("reports/queue"), help="output folder")
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"fast subset: {QUICK_TEST_SEEDS} test seeds, {QUICK_TUNING_SEEDS} tuning seeds",
    )
    parser.add_argument(
        "--tuning-seeds", type=int, default=300, help="training seeds for tuning ATC / COVERT k"
    )
    parser.add_argument(
        "--weights", type=Path, default=None, help="learned policy .npz (default: the shipped one)"
    )
    parser.add_argument(
        "--orlib", type=Path, default=None, help="OR-Library folder (default: ../shared/data/orlib-wt)"
    )
    parser.add_argument("--no-charts", action="store_true", help="skip the PNG charts")
    parser.add_argument(
        "--reference-kicks",
        type=int,
        default=None,
        help="kicks per busy period of the near-optimal ILS reference (default: ReferenceConfig's)",
    )
    parser.add_argument("--no-reference", action="store_true", help="skip the ILS reference (headroom)")


def _eval_run(args: argparse.Namespace) -> int:
    from dcops.cluster.queue.benchmark import build_heuristics, run_orlib, run_streaming, tune_heuristics
    from dcops.cluster.queue.heuristics import IndexPolicy, atc_log_index
    from dcops.cluster.queue.jobs import StreamConfig
    from dcops.cluster.queue.orlib import default_orlib_dir
    from dcops.cluster.queue.reference import ReferenceConfig
    from dcops.cluster.queue.report import draw_charts, read_curve, write_csvs, write_markdown
    from dcops.cluster.queue.scoring_policy import DEFAULT_WEIGHTS, ScoringPolicy
    from dcops.cluster.queue.seeds import held_out_seeds, tuning_seeds

    n_test = min(args.seeds, QUICK_TEST_SEEDS) if args.quick else args.seeds
    n_tuning = min(args.tuning_seeds, QUICK_TUNING_SEEDS) if args.quick else args.tuning_seeds
    config = StreamConfig()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    print(f"tuning ATC and COVERT k on {n_tuning} training seeds ...", flush=True)
    tuning = tune_heuristics(tuning_seeds(n_tuning), config)
    weights = args.weights or DEFAULT_WEIGHTS
    learned = ScoringPolicy.load(weights)
    learned.name = "PPO"
    policies = [*build_heuristics(tuning["atc"].best_k, tuning["covert"].best_k), learned]
    reference = None
    if not args.no_reference:
        reference = ReferenceConfig()
        if args.reference_kicks is not None:
            reference = ReferenceConfig(iterations=args.reference_kicks)
    print(f"running {len(policies)} policies on {n_test} held-out streaming scenarios ...", flush=True)
    result = run_streaming(
        policies, held_out_seeds(n_test), config, learned=learned.name, progress=True, reference=reference
    )
    orlib_dir = args.orlib or default_orlib_dir()
    orlib_rows = []
    if orlib_dir.exists():
        # The literature's ATC (k = 2) next to the streaming-tuned rules and the learned policy, unchanged.
        heuristics = build_heuristics(tuning["atc"].best_k, tuning["covert"].best_k)
        atc_tuned = IndexPolicy(
            f"ATC (k = {tuning['atc'].best_k:g}, streaming-tuned)", atc_log_index, tuning["atc"].best_k
        )
        static = [IndexPolicy("ATC (k = 2)", atc_log_index, 2.0), *heuristics[:-1], atc_tuned, learned]
        print(f"OR-Library static check from {orlib_dir} ...", flush=True)
        orlib_rows = run_orlib(static, orlib_dir, reference=reference, learned=learned.name, progress=True)
    else:
        print(f"OR-Library folder {orlib_dir} not found: static check skipped", file=sys.stderr)
    curve = read_curve(Path(weights).parent / "learning_curve.csv")
    write_csvs(result, orlib_rows, out)
    selected = learned.metadata.get("selected_timesteps")
    charts = [] if args.no_charts else draw_charts(result, curve, out, learned.name, selected)
    command = (
        "dcops eval-queue"
        + (" --quick" if args.quick else "")
        + (f" --seeds {args.seeds}" if args.seeds != 300 else "")
        + (f" --reference-kicks {args.reference_kicks}" if args.reference_kicks is not None else "")
        + (" --no-reference" if args.no_reference else "")
    )
    report = write_markdown(
        result, orlib_rows, tuning, learned.name, learned.metadata, curve, config, command, charts, out
    )
    for row in result.summary:
        print(
            f"{row.rank:>2}. {row.policy:<8} mean WT {row.mean:>12,.0f}  p90 {row.p90:>12,.0f}  gain vs FIFO {100 * row.gain_vs_fifo:6.2f} %"
        )
    if result.reference is not None:
        print(f"    {result.reference.name:<8} mean WT {result.reference.mean:>12,.0f}")
    print(f"report: {report}")
    return 0


def _train_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--timesteps", type=int, default=None, help="PPO steps after the warm start")
    parser.add_argument("--seed", type=int, default=0, help="training seed")
    parser.add_argument(
        "--out", type=Path, default=None, help="folder for the weights (default: the shipped ones)"
    )
    parser.add_argument("--log-dir", type=Path, default=Path("runs/queue_ppo"), help="TensorBoard logs")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def _train_run(args: argparse.Namespace) -> int:
    from dcops.training.queue.ppo import QueueTrainConfig, train_queue_policy

    config = QueueTrainConfig(seed=args.seed)
    if args.timesteps is not None:
        config.timesteps = args.timesteps
    record = train_queue_policy(config, out=args.out, log_dir=args.log_dir, progress_bar=not args.no_progress)
    print(
        f"kept step {record['selected_timesteps']}: validation mean WT {record['validation_mean_wt']:,.0f} "
        f"(ATC {record['atc_validation_mean_wt']:,.0f})"
    )
    return 0


COMMANDS: list[Command] = [
    Command(
        "eval-queue",
        "Queue-ordering benchmark: every policy on the held-out streaming scenarios and OR-Library",
        _eval_arguments,
        _eval_run,
    ),
    Command(
        "train-queue",
        "Train the learned queue-ordering policy (reproduces the shipped weights)",
        _train_arguments,
        _train_run,
    ),
]
