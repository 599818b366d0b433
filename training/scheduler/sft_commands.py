"""Sub-commands of the LLM scheduler's SFT stage (see ``dcops.cli``): ``dcops llm-sft-data`` (the teacher's
decisions as compact per-request prompts) and ``dcops train-scheduler-sft`` (TRL ``SFTTrainer`` + LoRA on them).

The published run (``reports/llm/sft/README.md`` records its outputs)::

    dcops llm-sft-data --teachers priority_threshold --seeds 200 --validation-seeds 40 --out runs/llm_sft_data
    dcops train-scheduler-sft --data runs/llm_sft_data --out runs/llm_sft --max-steps 200 --bf16 true --install
    dcops train-scheduler-sft --plot-only runs/llm_sft --command "..."     # reports/llm/sft/README.md
    dcops llm-placement-sft-data --scenarios 300 --validation-scenarios 40 --out runs/llm_placement_data
    dcops train-scheduler-sft --task placement --teacher optimum --data runs/llm_placement_data \
        --out runs/llm_placement_sft --max-steps 200 --bf16 true --install

Only argparse runs at import; torch, transformers, trl and peft are imported inside ``run``.
"""

from __future__ import annotations

import argparse
from dataclasses import fields
from pathlib import Path

from dcops.command import Command


def _csv(text: str) -> tuple[str, ...]:
    return tuple(t.strip() for t in text.split(",") if t.strip())


def _placement_data_arguments(parser: argparse.ArgumentParser) -> None:
    p = parser.add_argument
    p("--scenarios", type=int, default=300, help="training scenarios, seeds 1,000,000 on (default 300)")
    p("--validation-scenarios", type=int, default=40, help="validation scenarios, seeds 2,000,000 on (default 40)")
    p("--out", type=Path, default=Path("runs/llm_placement_data"), help="dataset folder")


def _placement_data_run(args: argparse.Namespace) -> int:
    import json

    from dcops.training.placement.llm_sft import build_placement_sft_dataset

    try:
        manifest = build_placement_sft_dataset(args.out, args.scenarios, args.validation_scenarios)
    except ValueError as error:
        raise SystemExit(f"dcops llm-placement-sft-data: {error}") from None
    print(json.dumps(manifest["splits"], indent=2))
    print(f"wrote {args.out}/manifest.json")
    return 0


def _data_arguments(parser: argparse.ArgumentParser) -> None:
    p = parser.add_argument
    p("--seeds", type=int, default=200, help="training seeds 1000..1000+N-1 (default 200; at most 1000)")
    p("--validation-seeds", type=int, default=40, help="validation seeds 2000..2000+M-1 (default 40)")
    p("--teachers", type=_csv, default=("priority_threshold",),
      help="comma-separated teachers: priority_threshold, truth_planner (default priority_threshold)")
    p("--out", type=Path, default=Path("runs/llm_sft_data"), help="dataset folder (shards, merged .jsonl, manifest)")
    p("--planner-passes", type=int, default=2, help="truth planner: plans per start budget (default 2)")
    p("--planner-starts", type=_csv, default=("electrical",), help="truth planner: start budgets (default electrical)")
    p("--workers", type=int, default=1, help="worker processes (default 1)")
    p("--no-progress", action="store_true", help="no progress bar")


def _data_run(args: argparse.Namespace) -> int:
    import json

    from dcops.training.scheduler.sft_data import build_sft_dataset

    try:
        manifest = build_sft_dataset(args.out, args.seeds, args.validation_seeds, teachers=args.teachers,
                                     workers=args.workers, progress=not args.no_progress,
                                     planner_passes=args.planner_passes, planner_starts=args.planner_starts)
    except ValueError as error:
        raise SystemExit(f"dcops llm-sft-data: {error}") from None
    print(json.dumps(manifest["teachers"], indent=2))
    print(f"wrote {args.out}/manifest.json")
    return 0


def _train_arguments(parser: argparse.ArgumentParser) -> None:
    from dcops.training.scheduler.sft import SFTSchedulerConfig

    p = parser.add_argument
    for f in fields(SFTSchedulerConfig):
        default = getattr(SFTSchedulerConfig(), f.name)
        flag = f"--{f.name.replace('_', '-')}"
        if isinstance(default, bool):
            p(flag, action=argparse.BooleanOptionalAction, default=default, help=f"(default {default})")
        elif f.name == "task":
            from dcops.training.scheduler.sft import TASKS

            p(flag, choices=TASKS, default=default, help=f"(default {default})")
        elif isinstance(default, tuple):
            p(flag, type=_csv, default=default, help=f"comma-separated (default {','.join(default)})")
        elif f.name in ("max_minutes", "bf16"):
            kind = float if f.name == "max_minutes" else (lambda s: s.lower() in ("1", "true", "yes", "on"))
            p(flag, type=kind, default=default, help=f"(default {default})")
        else:
            p(flag, type=type(default), default=default, help=f"(default {default})")
    p("--resume", action="store_true", help="continue from the newest checkpoint-N in --out")
    p("--plot-only", type=Path, default=None, metavar="RUN_DIR",
      help="write the curve and Markdown report of RUN_DIR (no training)")
    p("--report-dir", type=Path, default=None,
      help="where the curve and report go (default reports/llm/sft with --plot-only, else the run folder)")
    p("--command", default=None, help="training command to quote in the report (with --plot-only)")
    p("--install", action="store_true",
      help="also copy the adapter (its weights, config and STEP) into the package: agents/llm/adapters/sft_gemma, or "
      "placement_sft_gemma with --task placement (gemma only)")


def _train_run(args: argparse.Namespace) -> int:
    import shlex
    import shutil
    import sys

    from dcops.agents.llm.model import resolve_model
    from dcops.training.scheduler.sft import SFTSchedulerConfig, train_sft_scheduler
    from dcops.training.scheduler.sft_report import write_sft_report

    if args.plot_only is not None:
        try:
            png, md = write_sft_report(args.plot_only, args.report_dir or Path("reports/llm/sft"),
                                       command=args.command or "")
        except FileNotFoundError as error:
            raise SystemExit(f"dcops train-scheduler-sft: --plot-only: {error}") from None
        print(f"wrote {png} and {md}")
        return 0

    try:  # refused before any work, naming the option
        config = SFTSchedulerConfig(**{f.name: getattr(args, f.name) for f in fields(SFTSchedulerConfig)})
        resolve_model(config.model)
    except ValueError as error:
        raise SystemExit(f"dcops train-scheduler-sft: {error}") from None
    if args.install and config.model != "gemma":
        raise SystemExit("dcops train-scheduler-sft: --install is for the gemma model (the shipped adapter's base)")
    if args.resume and not any(Path(config.out).glob("checkpoint-*")):
        raise SystemExit(f"dcops train-scheduler-sft: --resume: no checkpoint-N in {config.out}")
    try:
        record = train_sft_scheduler(config, resume=args.resume)
    except (FileNotFoundError, ValueError) as error:
        raise SystemExit(f"dcops train-scheduler-sft: {error}") from None
    command = "dcops " + shlex.join(sys.argv[1:]) if sys.argv[1:] else ""
    png, md = write_sft_report(config.out, args.report_dir or config.out, command=command)
    accuracy = record["validation_accuracy"]
    print(f"{record['steps_done']} SFT steps in {record['train_wall_s'] / 60:.1f} min; adapter in {config.out}/adapter"
          + (f"; validation answer accuracy {accuracy['accuracy']:.3f} on {accuracy['examples']}" if accuracy else "")
          + f"; curve {png}; report {md}")
    if args.install:
        from dcops.agents.llm.placement import SHIPPED_PLACEMENT_ADAPTER
        from dcops.agents.llm.scheduler import SHIPPED_SFT_ADAPTER

        if config.model != "gemma":
            raise SystemExit("dcops train-scheduler-sft: --install is for the gemma model (the shipped adapter's base)")
        target = SHIPPED_SFT_ADAPTER if config.task == "scheduler" else SHIPPED_PLACEMENT_ADAPTER
        target.mkdir(parents=True, exist_ok=True)
        for name in ("adapter_config.json", "adapter_model.safetensors", "STEP"):
            shutil.copyfile(Path(config.out) / "adapter" / name, target / name)
        print(f"installed into {target}")
    print(f"use it: make_llm_scheduler('sft', adapter='{config.out}/adapter')" if config.task == "scheduler" else
          f"use it: make_llm_placement_policy('sft', adapter='{config.out}/adapter')")
    return 0


COMMANDS = [
    Command("llm-sft-data", "SFT data for the LLM scheduler: a teacher's decisions as compact per-request prompts, "
            "fixed seed split", _data_arguments, _data_run),
    Command("llm-placement-sft-data", "SFT data for the LLM placement policy: the clairvoyant optimum's actions on "
            "generated scenarios, fixed seed split", _placement_data_arguments, _placement_data_run),
    Command("train-scheduler-sft", "SFT the LLM scheduler (or, --task placement, the placement policy): TRL "
            "SFTTrainer + LoRA on llm-sft-data's (llm-placement-sft-data's) examples", _train_arguments, _train_run),
]
