"""Sub-commands of the GPU placement benchmark (see ``dcops.cli``): ``eval-placement``, ``train-placement``.

Only argparse declarations happen at import time; the work (and matplotlib) is imported inside ``run``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dcops.command import Command


def _eval_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default="reports/placement", help="output folder (markdown, CSV, PNG)")
    parser.add_argument(
        "--generated", type=int, default=100, help="number of generated scenarios (seeds 0..N-1) to average"
    )
    parser.add_argument("--no-plot", action="store_true", help="skip the bar chart (no matplotlib needed)")
    parser.add_argument("--llm", default="", metavar="MODES",
                        help="also the LLM placement policy, comma-separated modes: constrained (base Gemma), sft "
                        "(its SFT adapter); slow: about a second a tick on this CPU (needs the llm extra)")
    parser.add_argument("--llm-adapter", default=None, help="LoRA adapter directory of mode sft (default: shipped)")


def _eval_run(args: argparse.Namespace) -> int:
    from dcops.cluster.placement.evaluate import evaluate, write_report

    if args.generated < 0:
        raise SystemExit("--generated: must be >= 0")
    factories = None
    modes = [m.strip() for m in args.llm.split(",") if m.strip()]
    if modes:
        from dcops.agents.llm.placement import PLACEMENT_MODES, llm_placement_factories
        from dcops.cluster.placement.policies import REFERENCE_NAME, policy_factories

        bad = [m for m in modes if m not in PLACEMENT_MODES]
        if bad:
            raise SystemExit(f"--llm: unknown mode(s) {bad}; known: {', '.join(PLACEMENT_MODES)}")
        if args.llm_adapter and "sft" not in modes:
            raise SystemExit("--llm-adapter: only with --llm sft")
        if args.llm_adapter and not (Path(args.llm_adapter) / "adapter_config.json").exists():
            raise SystemExit(f"--llm-adapter: no adapter_config.json in {args.llm_adapter!r} (a peft LoRA adapter "
                             "directory)")
        llm = llm_placement_factories(modes, adapter=args.llm_adapter)
        everything = policy_factories()
        reference = everything.pop(REFERENCE_NAME)
        factories = {**everything, **llm, REFERENCE_NAME: reference}  # the reference row stays last
    report = evaluate(n_generated=args.generated, factories=factories, progress=print if modes else None)
    paths = write_report(report, args.out, plot=not args.no_plot)
    print(report.markdown())
    print("wrote " + ", ".join(str(p) for p in paths))
    return 0


def _train_arguments(parser: argparse.ArgumentParser) -> None:
    from_defaults = "(default: the shipped weights' settings)"
    parser.add_argument("--out", default=None, help="weights folder (default: the package's weights/)")
    parser.add_argument("--seed", type=int, default=None, help=f"CEM seed {from_defaults}")
    parser.add_argument("--iterations", type=int, default=None, help=f"CEM iterations {from_defaults}")
    parser.add_argument("--population", type=int, default=None, help=f"candidates per iteration {from_defaults}")
    parser.add_argument("--scenarios", type=int, default=None, help=f"training scenarios {from_defaults}")


def _train_run(args: argparse.Namespace) -> int:
    from dcops.training.placement.linear import TrainConfig, train_and_save

    overrides = {
        key: value
        for key, value in (
            ("seed", args.seed),
            ("iterations", args.iterations),
            ("population", args.population),
            ("n_scenarios", args.scenarios),
        )
        if value is not None
    }
    train_and_save(TrainConfig(**overrides), out=args.out, progress=print)
    return 0


COMMANDS: list[Command] = [
    Command(
        "eval-placement",
        "GPU placement benchmark: every policy on the four canonical and N generated scenarios (report)",
        _eval_arguments,
        _eval_run,
    ),
    Command(
        "train-placement",
        "Train the linear placement policy (numpy cross-entropy method) and write its weights",
        _train_arguments,
        _train_run,
    ),
]
