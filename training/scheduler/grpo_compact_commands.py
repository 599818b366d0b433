"""Sub-commands of the LLM scheduler's GRPO stage on compact prompts (see ``dcops.cli``): ``dcops
llm-counterfactual`` (each answer's episode return, :mod:`dcops.training.scheduler.counterfactual`), ``dcops
train-scheduler-grpo-compact`` (GRPO from the SFT adapter, every answer in the group,
:mod:`dcops.training.scheduler.grpo_compact`) and ``dcops llm-advantage-probe`` (how much of that return the
public prompt predicts, :mod:`dcops.training.scheduler.advantage_probe`).

The published run (``reports/llm/grpo_compact/README.md`` records its outputs)::

    dcops llm-counterfactual --seeds 200 --validation-seeds 20 --out runs/llm_counterfactual
    dcops train-scheduler-grpo-compact --data runs/llm_counterfactual --out runs/llm_grpo_compact \
        --max-steps 150 --learning-rate 1e-4 --kl-beta 0.1 --bf16 true --max-minutes 55 --install
    dcops train-scheduler-grpo-compact --plot-only runs/llm_grpo_compact --command "..." --evaluation EVAL.md

Only argparse runs at import; torch, transformers and peft are imported inside ``run``.
"""

from __future__ import annotations

import argparse
from dataclasses import fields
from pathlib import Path

from dcops.command import Command


def _data_arguments(parser: argparse.ArgumentParser) -> None:
    p = parser.add_argument
    p("--seeds", type=int, default=200, help="training seeds 1000..1000+N-1 (default 200; at most 1000)")
    p("--validation-seeds", type=int, default=20, help="validation seeds 2000..2000+M-1 (default 20)")
    p("--out", type=Path, default=Path("runs/llm_counterfactual"), help="dataset folder (shards, .jsonl, manifest)")
    p("--workers", type=int, default=1, help="worker processes (default 1)")
    p("--no-progress", action="store_true", help="no progress bar")


def _data_run(args: argparse.Namespace) -> int:
    import json

    from dcops.training.scheduler.counterfactual import build_counterfactual_dataset

    try:
        manifest = build_counterfactual_dataset(args.out, args.seeds, args.validation_seeds, workers=args.workers,
                                                progress=not args.no_progress)
    except ValueError as error:
        raise SystemExit(f"dcops llm-counterfactual: {error}") from None
    print(json.dumps(manifest["splits"], indent=2))
    print(f"wrote {args.out}/manifest.json")
    return 0


def _bool(text: str) -> bool:
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def _train_arguments(parser: argparse.ArgumentParser) -> None:
    from dcops.training.scheduler.grpo_compact import CompactGRPOConfig

    p = parser.add_argument
    defaults = CompactGRPOConfig()
    types = {"bf16": _bool, "advantage_scale": float, "max_minutes": float, "init_adapter": str}
    for f in fields(CompactGRPOConfig):
        value = getattr(defaults, f.name)
        kind = types.get(f.name, type(value))
        p(f"--{f.name.replace('_', '-')}", type=kind, default=value, help=f"default {value}")
    p("--resume", action="store_true", help="continue from --out's adapter/ and state.pt")
    p("--plot-only", type=Path, default=None, metavar="RUN_DIR",
      help="write the curve and Markdown report of RUN_DIR (no training)")
    p("--report-dir", type=Path, default=None,
      help="where the curve and report go (default reports/llm/grpo_compact with --plot-only, else the run folder)")
    p("--command", default=None, help="training command to quote in the report (with --plot-only)")
    p("--evaluation", type=Path, default=None, metavar="MARKDOWN",
      help="a Markdown file of episode-level results to append to the report (with --plot-only)")
    p("--install", action="store_true",
      help="also copy the adapter (weights, config, STEP) into the package: agents/llm/adapters/sft_grpo_gemma "
      "(the sft_grpo mode's; gemma only)")


def _train_run(args: argparse.Namespace) -> int:
    import json
    import shlex
    import shutil
    import sys

    from dcops.agents.llm.model import resolve_model
    from dcops.training.scheduler.grpo_compact import CompactGRPOConfig, check_run_folder, train_compact_grpo
    from dcops.training.scheduler.grpo_compact_report import write_grpo_compact_report

    name = "dcops train-scheduler-grpo-compact"
    if args.plot_only is not None:
        ignored = [flag for flag, given in (("--install", args.install), ("--resume", args.resume)) if given]
        if ignored:
            raise SystemExit(f"{name}: {', '.join(ignored)}: not with --plot-only (which trains nothing)")
        try:
            evaluation = args.evaluation.read_text(encoding="utf-8") if args.evaluation else ""
            png, md = write_grpo_compact_report(args.plot_only, args.report_dir or Path("reports/llm/grpo_compact"),
                                                command=args.command or "", evaluation=evaluation)
        except (FileNotFoundError, ValueError) as error:
            raise SystemExit(f"{name}: --plot-only: {error}") from None
        print(f"wrote {png} and {md}")
        return 0
    ignored = [flag for flag, given in (("--evaluation", args.evaluation), ("--command", args.command)) if given]
    if ignored:
        raise SystemExit(f"{name}: {', '.join(ignored)}: only with --plot-only (a training run quotes its own "
                         "command)")
    try:  # refused before any work, naming the option
        config = CompactGRPOConfig(**{f.name: getattr(args, f.name) for f in fields(CompactGRPOConfig)})
        resolve_model(config.model)
        check_run_folder(config, args.resume)
    except (ValueError, FileNotFoundError) as error:
        raise SystemExit(f"{name}: {error}") from None
    if args.install and config.model != "gemma":
        raise SystemExit(f"{name}: --install is for the gemma model (the shipped adapter's base)")
    try:
        summary = train_compact_grpo(config, resume=args.resume)
    except (ValueError, FileNotFoundError) as error:
        raise SystemExit(f"{name}: {error}") from None
    command = "dcops " + shlex.join(sys.argv[1:]) if sys.argv[1:] else ""
    png, md = write_grpo_compact_report(config.out, args.report_dir or config.out, command=command)
    print(json.dumps({k: summary[k] for k in ("steps_done", "wall_s", "validation_before", "validation_after")},
                     indent=2))
    print(f"wrote {config.out}/summary.json, {png} and {md}")
    if args.install:
        from dcops.agents.llm.scheduler import SHIPPED_SFT_GRPO_ADAPTER

        if summary["steps_done"] < config.max_steps:
            print(f"note: the run stopped at step {summary['steps_done']} of {config.max_steps} (--max-minutes); "
                  "that adapter is what is installed")

        SHIPPED_SFT_GRPO_ADAPTER.mkdir(parents=True, exist_ok=True)
        for file in ("adapter_config.json", "adapter_model.safetensors", "STEP"):
            shutil.copyfile(Path(config.out) / "adapter" / file, SHIPPED_SFT_GRPO_ADAPTER / file)
        print(f"installed into {SHIPPED_SFT_GRPO_ADAPTER}")
    print(f"use it: make_llm_scheduler('sft_grpo', adapter='{config.out}/adapter')")
    return 0


def _probe_arguments(parser: argparse.ArgumentParser) -> None:
    p = parser.add_argument
    p("--data", type=Path, default=Path("runs/llm_counterfactual"), help="llm-counterfactual's dataset folder")
    p("--out", type=Path, default=Path("reports/llm/advantage_probe"), help="report folder (README.md, result.json)")
    p("--epochs", type=int, default=60)
    p("--hidden", type=int, default=64, help="hidden units of each of the MLP's two layers")
    p("--seed", type=int, default=0)


def _probe_run(args: argparse.Namespace) -> int:
    import json
    import shlex
    import sys

    from dcops.training.scheduler.advantage_probe import ProbeData, markdown, run_probe

    try:
        train = ProbeData.read(args.data / "train.jsonl")
        validation = ProbeData.read(args.data / "validation.jsonl")
        result = run_probe(train, validation, epochs=args.epochs, hidden=args.hidden, seed=args.seed)
    except FileNotFoundError as error:
        raise SystemExit(f"--data: {error.filename} not found; make it with `dcops llm-counterfactual`") from None
    except ValueError as error:
        raise SystemExit(f"dcops llm-advantage-probe: {error}") from None
    command = "dcops " + shlex.join(sys.argv[1:]) if sys.argv[1:] else "dcops llm-advantage-probe"
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "result.json").write_text(json.dumps({**result, "command": command}, indent=1) + "\n")
    (args.out / "README.md").write_text(markdown(result, command))
    best = result["best"]
    print(f"oracle one-step gain {result['oracle_gain']:+.5f}; probe {best['gain']:+.5f} "
          f"({100 * best['share_of_oracle']:.1f} %); wrote {args.out}")
    return 0


COMMANDS = [
    Command("llm-advantage-probe", "How much of llm-counterfactual's advantage over the teacher the public prompt "
            "predicts: an MLP on each prompt's public numbers, scored by its one-step gain on validation seeds",
            _probe_arguments, _probe_run),
    Command("llm-counterfactual", "Episode return of every answer to every request (one answer changed, "
            "priority_threshold playing on): the GRPO stage's reward, fixed seed split", _data_arguments, _data_run),
    Command("train-scheduler-grpo-compact", "GRPO from the SFT adapter on compact per-request prompts, every "
            "allowed answer in the group, rewarded by llm-counterfactual's episode returns", _train_arguments,
            _train_run),
]
