"""Sub-commands of the LLM scheduler's GRPO stage on compact prompts (see ``dcops.cli``): ``dcops
llm-counterfactual`` (each answer's episode return, :mod:`dcops.training.scheduler.counterfactual`) and ``dcops
train-scheduler-grpo-compact`` (GRPO from the SFT adapter, every answer in the group,
:mod:`dcops.training.scheduler.grpo_compact`).

The published run (``reports/llm/grpo_compact/README.md`` records its outputs)::

    dcops llm-counterfactual --seeds 200 --validation-seeds 20 --out runs/llm_counterfactual
    dcops train-scheduler-grpo-compact --data runs/llm_counterfactual --out runs/llm_grpo_compact \
        --max-steps 150 --bf16 true

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


def _train_run(args: argparse.Namespace) -> int:
    import json

    from dcops.training.scheduler.grpo_compact import CompactGRPOConfig, train_compact_grpo

    try:
        config = CompactGRPOConfig(**{f.name: getattr(args, f.name) for f in fields(CompactGRPOConfig)})
        summary = train_compact_grpo(config, resume=args.resume)
    except (ValueError, FileNotFoundError) as error:
        raise SystemExit(f"dcops train-scheduler-grpo-compact: {error}") from None
    print(json.dumps({k: summary[k] for k in ("steps_done", "wall_s", "validation_before", "validation_after")},
                     indent=2))
    print(f"wrote {args.out}/summary.json")
    return 0


COMMANDS = [
    Command("llm-counterfactual", "Episode return of every answer to every request (one answer changed, "
            "priority_threshold playing on): the GRPO stage's reward, fixed seed split", _data_arguments, _data_run),
    Command("train-scheduler-grpo-compact", "GRPO from the SFT adapter on compact per-request prompts, every "
            "allowed answer in the group, rewarded by llm-counterfactual's episode returns", _train_arguments,
            _train_run),
]
