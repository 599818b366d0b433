"""Sub-commands of the RL scheduler (see ``dcops.cli``): ``dcops scheduler-teacher`` (teacher data) and
``dcops train-scheduler-ppo`` (behaviour cloning on it, then MaskablePPO, then the numpy export).

The published run (``agents/schedulers/data/ppo_scheduler.json`` records its recipe; README, *RL scheduler*)::

    dcops scheduler-teacher --teachers priority_threshold --seeds 1000 --validation-seeds 200 --out runs/scheduler_teacher
    dcops scheduler-teacher --teachers truth_planner --seeds 120 --validation-seeds 40 --planner-passes 2 \\
        --planner-starts electrical --out runs/scheduler_teacher
    dcops train-scheduler-ppo --data runs/scheduler_teacher --out runs/scheduler_ppo --install

and per scenario family (``ppo_scheduler_<family>.json``; README, *RL scheduler per family*)::

    dcops scheduler-teacher --family F --teachers searched,priority_threshold --seeds 1000 --validation-seeds 84 \\
        --out runs/scheduler_teacher_F
    dcops train-scheduler-ppo --family F --teacher searched --data runs/scheduler_teacher_F --out runs/scheduler_ppo_F \\
        --timesteps 100000   # then the same with --resume --timesteps 300000 --install (oversubscribed: then 500000)

Only argparse runs at import; numpy, torch and sb3-contrib are imported inside ``run``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dcops.command import Command


def _csv(text: str) -> tuple[str, ...]:
    return tuple(t.strip() for t in text.split(",") if t.strip())


def _teacher_arguments(parser: argparse.ArgumentParser) -> None:
    p = parser.add_argument
    p("--seeds", type=int, default=200, help="training seeds 1000..1000+N-1 (default 200; at most 1000; a "
      "family's: its first ladder seed + 10000 ...)")
    p("--validation-seeds", type=int, default=40, help="validation seeds 2000..2000+M-1 (default 40; a family's: "
      "its first ladder seed + 700 ...)")
    p("--teachers", type=_csv, default=("truth_planner", "priority_threshold"),
      help="comma-separated teachers (default truth_planner,priority_threshold; with --family also searched)")
    p("--family", default="", help="play every seed in this scenario family (dcops.cluster.scenarios) instead of "
      "the evaluation matrix's scenarios (default: the matrix)")
    p("--out", type=Path, default=Path("runs/scheduler_teacher"), help="dataset folder (shards, merged .npz, manifest)")
    p("--planner-passes", type=int, default=4, help="truth planner: plans per start budget (default 4)")
    p("--planner-starts", type=_csv, default=("electrical", "probe"),
      help="truth planner: start budgets (default electrical,probe)")
    p("--workers", type=int, default=1, help="worker processes (default 1)")
    p("--team-posterior", action="store_true", help="record the observation with each team's gaming_posterior "
      "as a 16th team feature (dcops.parallel_env(team_posterior=True)), for train-scheduler-ppo --team-posterior")
    p("--no-progress", action="store_true", help="no progress bar")


def _teacher_run(args: argparse.Namespace) -> int:
    import json

    from dcops.training.scheduler.teacher import build_teacher_dataset

    try:
        manifest = build_teacher_dataset(args.out, args.seeds, args.validation_seeds, teachers=args.teachers,
                                         workers=args.workers, progress=not args.no_progress,
                                         planner_passes=args.planner_passes, planner_starts=args.planner_starts,
                                         family=args.family, team_posterior=args.team_posterior)
    except ValueError as error:
        raise SystemExit(f"dcops scheduler-teacher: {error}") from None
    print(json.dumps(manifest["teachers"], indent=2))
    print(f"wrote {args.out}/manifest.json")
    return 0


def _train_arguments(parser: argparse.ArgumentParser) -> None:
    from dcops.training.scheduler.ppo_config import SchedulerPPOConfig

    p = parser.add_argument
    p("--data", type=Path, default=Path("runs/scheduler_teacher"), help="teacher dataset folder (scheduler-teacher)")
    p("--out", type=Path, default=Path("runs/scheduler_ppo"),
      help="run folder: ppo_scheduler.npz/.json, bc_scheduler.npz, learning_curve.csv/.png, checkpoint/")
    p("--resume", action="store_true", help="continue PPO from <out>/checkpoint (no cloning)")
    p("--tensorboard", type=Path, default=None, help="TensorBoard folder (default none)")
    p("--install", action="store_true",
      help="also copy the chosen weights and recipe to the package (agents/schedulers/data/ppo_scheduler.*, or "
      "with --family ppo_scheduler_<family>.*, which the skill ladder's ppo rung plays on that family)")
    for name, default in vars(SchedulerPPOConfig()).items():
        if isinstance(default, bool):  # --x / --no-x (argparse's type=bool would read "False" as True)
            p(f"--{name.replace('_', '-')}", action=argparse.BooleanOptionalAction, default=default,
              help=f"(default {'on' if default else 'off'})")
            continue
        kind = type(default) if default is not None else float
        p(f"--{name.replace('_', '-')}", type=kind, default=default, help=f"(default {default})")


def _train_run(args: argparse.Namespace) -> int:
    import shutil
    from dataclasses import fields

    from dcops.training.scheduler.ppo import train_scheduler_ppo
    from dcops.training.scheduler.ppo_config import SchedulerPPOConfig

    try:  # refused before any work, naming the option
        config = SchedulerPPOConfig(**{f.name: getattr(args, f.name) for f in fields(SchedulerPPOConfig)})
    except ValueError as error:
        raise SystemExit(f"dcops train-scheduler-ppo: {error}") from None
    if args.resume and not (args.out / "checkpoint" / "state.json").exists():
        raise SystemExit(f"dcops train-scheduler-ppo: --resume: no checkpoint in {args.out / 'checkpoint'}")
    try:
        record = train_scheduler_ppo(args.data, args.out, config, resume=args.resume, log_dir=args.tensorboard)
    except ValueError as error:  # refusals name the option (family, or a resume with other settings)
        raise SystemExit(f"dcops train-scheduler-ppo: {error}") from None
    print(f"BC accuracy (validation decisions): {record['bc_accuracy']['validation']['decision_accuracy']:.3f}; "
          f"kept step {record['selected_timesteps']}: validation {record['selected_validation_score']:+.4f} "
          f"against priority_threshold {record['reference_validation_score']:+.4f}")
    if args.install:
        from importlib import resources

        from dcops.agents.schedulers.learned import WEIGHTS_NPZ, family_weights_name

        target = Path(str(resources.files("dcops.agents.schedulers")))
        npz = target / (family_weights_name(config.family) if config.family else WEIGHTS_NPZ)
        for suffix in (".npz", ".json"):
            shutil.copyfile(args.out / f"ppo_scheduler{suffix}", npz.with_suffix(suffix))
        print(f"installed as {npz}")
    return 0


COMMANDS = [
    Command("scheduler-teacher", "teacher data for the RL scheduler: truth planner and priority_threshold "
            "decisions beside the public observation, fixed seed split", _teacher_arguments, _teacher_run),
    Command("train-scheduler-ppo", "RL scheduler: behaviour cloning on teacher data, MaskablePPO, numpy export",
            _train_arguments, _train_run),
]
