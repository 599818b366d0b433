"""Cooling training commands: train the PPO policy, evaluate it against the tuned rule and the PID, tune them.

- ``dcops train-cooling``: SB3 PPO on randomised scenarios, checkpoint selection on validation seeds, numpy export
  (:mod:`dcops.training.cooling.ppo`). Writes to ``runs/cooling/policy`` by default; the shipped policy was made
  with ``--out agents/cooling/weights``.
- ``dcops eval-cooling``: PPO vs the family-tuned rule vs the PID on the evaluation family
  (:mod:`dcops.training.cooling.evaluate`); writes ``ppo_eval.md``, ``ppo_eval.csv`` and ``ppo_day.png``.
- ``dcops train-cooling-offpolicy``: SAC or TQC on the plant v2 recipe's environment, from the rule, selected like
  PPO (:mod:`dcops.training.cooling.offpolicy_v2`); ``dcops report-cooling-offpolicy`` compares them with PPO
  (:mod:`dcops.training.cooling.offpolicy_v2_report`; writes ``reports/cooling/v2_offpolicy.md``).
- ``dcops tune-rule``: re-tune the rule-based controller per cooling task on its tuning seeds
  (:mod:`dcops.training.cooling.tune_rule`; writes ``agents/cooling/rule_tuned.json``).
- ``dcops tune-rule-family``: re-tune the rule-based controller for the evaluation family
  (:mod:`dcops.training.cooling.tune_rule_family`).
- ``dcops tune-rule-v2``: tune the plant v2 rule for each v1 cooling task and the v2 evaluation family, or for
  each case of the family alone (:mod:`dcops.training.cooling.tune_rule_v2`; writes
  ``agents/cooling/rule_v2_tuned.json``).
- ``dcops tune-pid-v2``: tune the plant v2 PID's air-side gains over each target's tuned rule plant side
  (:mod:`dcops.training.cooling.tune_pid_v2`; writes ``agents/cooling/pid_v2_tuned.json``).

Heavy imports (torch, SB3, matplotlib) happen inside ``run`` so ``dcops --help`` stays instant.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

from dcops.command import Command

_PACKAGE_ROOT = Path(__file__).resolve().parents[2]


def _train_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--timesteps", type=int, default=None, help="PPO environment steps (default: the config's)")
    parser.add_argument("--seed", type=int, default=0, help="seed of torch, SB3 and the scenario generators")
    parser.add_argument("--n-envs", type=int, default=None, help="environments stepped together (default 8)")
    parser.add_argument("--max-minutes", type=float, default=None,
                        help="wall-clock budget in minutes (default 28; 0 for none)")
    parser.add_argument("--out", default="runs/cooling/policy",
                        help="output folder (the shipped policy lives in agents/cooling/weights)")
    parser.add_argument("--tensorboard", default="runs/cooling", help="TensorBoard log folder ('' for none)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def _run_train(args: argparse.Namespace) -> int:
    from dcops.training.cooling.ppo import CoolingPPOConfig, train_cooling_ppo

    config = CoolingPPOConfig(seed=args.seed)
    if args.timesteps is not None:
        config.timesteps = args.timesteps
    if args.n_envs is not None:
        config.n_envs = args.n_envs
    if args.max_minutes is not None:
        config.max_minutes = args.max_minutes or None
    record = train_cooling_ppo(config, out=args.out, tensorboard_log=args.tensorboard or None,
                               progress_bar=not args.no_progress)
    v = record["validation_of_selected"]
    if "shield" in record:
        print(f"run-time shield at {record['shield']['shield_inlet_c']} °C (chosen on validation)")
    print(f"trained {record['timesteps_trained']} steps in {record['wall_time_s'] / 60:.1f} min; kept the checkpoint "
          f"at {record['timesteps_selected']} steps")
    print(f"validation (seeds {list(config.validation_seeds)}): {v['cooling_kwh']:.0f} kWh/day, "
          f"zone-time > 27 °C {v['zone_time_above_27_pct_normal']:.2f} % (normal cases), "
          f"worst zone minutes > 32 °C {v['worst_minutes_above_32']:.1f}")
    print(f"wrote {args.out}/ppo_cooling.npz (.json, .zip, learning_curve.csv); "
          f"compare with `dcops eval-cooling --weights {args.out}/ppo_cooling.npz`")
    return 0


def _eval_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seeds", type=int, default=3, help="evaluate on seeds 0..N-1 per case")
    parser.add_argument("--out", default="reports/cooling", help="folder for ppo_eval.md, ppo_eval.csv, ppo_day.png")
    parser.add_argument("--weights", default=None, help="an exported .npz policy (default: the shipped one)")
    parser.add_argument("--plot-case", default="phoenix/july/chiller_trip", help="site/season/fault of the day plot")
    parser.add_argument("--plot-seed", type=int, default=0, help="seed of the day plot")
    parser.add_argument("--headroom", action="store_true",
                        help="also run the rule re-tuned per climate and season on the tuning seeds (about 6 min): "
                             "what adapting set-points to the climate can save at most, with the rule's structure")


def _run_eval(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from dcops.training.cooling import evaluate as ev

    controllers = ev.default_controllers(args.weights)
    if args.headroom:
        from dcops.training.cooling.tune_rule_family import PerCaseRule, tune_per_climate_and_season

        controllers.append(PerCaseRule(tune_per_climate_and_season(ev.family_rule_parameters())))
    seeds = tuple(range(args.seeds))
    cases = ev.all_cases()
    with tqdm(total=len(cases) * len(controllers) * len(seeds), desc="eval-cooling", unit="episode") as bar:
        def progress(label: str) -> None:
            bar.set_postfix_str(label)
            bar.update(1)

        rows = ev.evaluate(controllers, cases, seeds, progress)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    site, season, fault = args.plot_case.split("/")
    header = (
        "# PPO cooling controller vs tuned rule-based vs PID\n\n"
        "Made by `dcops eval-cooling" + (f" --seeds {args.seeds}" if args.seeds != 3 else "")
        + (" --headroom" if args.headroom else "") + "` "
        "(cases, metrics and seeds: `dcops/training/cooling/evaluate.py`; the rule's parameters were tuned for this "
        "family on seeds 1000+ by `dcops tune-rule-family`; the PID runs its defaults). Climates "
        f"{', '.join(ev.EVAL_SITES)} × January and July × no fault or a 2 h chiller trip.\n"
    )
    if not args.weights:
        from dcops.agents.cooling.ppo import shipped_metadata

        meta = shipped_metadata()
        header += (
            f"\nPPO: the shipped policy (`agents/cooling/weights/ppo_cooling.npz`), made by `{meta['command']}` "
            f"(seed {meta['seed']}, {meta['timesteps_trained']:,} steps in {meta['wall_time_s'] / 60:.1f} min on one "
            f"CPU thread; the checkpoint at {meta['timesteps_selected']:,} steps was selected on validation seeds "
            f"{', '.join(map(str, meta['config']['validation_seeds']))}).\n"
        )
    report = ev.markdown_report(rows, seeds, header)
    report += (f"\n![inlets and cooling power over a day](ppo_day.png)\n\n`ppo_day.png`: {args.plot_case}, "
               f"seed {args.plot_seed}.\n")
    (out / "ppo_eval.md").write_text(report)
    ev.write_csv(rows, out / "ppo_eval.csv")
    plot_case = ev.Case(site, season, fault)
    ev.plot_day([c.for_case(plot_case) if hasattr(c, "for_case") else c for c in controllers[:3]], plot_case,
                args.plot_seed, out / "ppo_day.png")
    print(report)
    print(f"wrote {out / 'ppo_eval.md'}, {out / 'ppo_eval.csv'}, {out / 'ppo_day.png'}")
    return 0


def _cluster_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seeds", type=int, default=20, help="seeds 0..N-1 per climate")
    parser.add_argument("--out", default="reports/cooling", help="folder for cluster_plant.md and cluster_plant.csv")


def _run_cluster(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from dcops.training.cooling import cluster_eval as cc
    from dcops.training.cooling.evaluate import write_csv

    seeds = tuple(range(args.seeds))
    total = len(cc.CLUSTER_CLIMATES) * len(cc.CONTROLLERS) * len(seeds)
    with tqdm(total=total, desc="eval-cooling-cluster", unit="episode") as bar:
        def progress(label: str) -> None:
            bar.set_postfix_str(label)
            bar.update(1)

        rows = cc.evaluate(seeds, progress=progress)
    command = "dcops eval-cooling-cluster" + (f" --seeds {args.seeds}" if args.seeds != 20 else "")
    report = cc.markdown_report(rows, seeds, command)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "cluster_plant.md").write_text(report)
    write_csv(rows, out / "cluster_plant.csv")
    print(report)
    print(f"wrote {out / 'cluster_plant.md'}, {out / 'cluster_plant.csv'}")
    return 0


def _train_v2_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--timesteps", type=int, default=None, help="PPO environment steps (default: the recipe's)")
    parser.add_argument("--seed", type=int, default=0, help="seed of torch, SB3 and the scenario generators")
    parser.add_argument("--max-minutes", type=float, default=None,
                        help="wall-clock budget in minutes (default: the recipe's; 0 for none)")
    parser.add_argument("--out", default="runs/cooling_v2/policy",
                        help="output folder (the shipped policy lives in agents/cooling/weights)")
    parser.add_argument("--tensorboard", default="runs/cooling_v2", help="TensorBoard log folder ('' for none)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--energy-weight", type=float, default=None,
                        help="the training reward's energy weight (default: the recipe's, RewardWeightsV2.energy)")
    parser.add_argument("--shield-only", action="store_true",
                        help="train nothing: choose the run-time shield for the policy already in --out and add it "
                             "to its JSON")


def _energy_weight(args: argparse.Namespace, reward: Any) -> Any:
    """``reward`` (a ``RewardWeightsV2``) with ``--energy-weight`` if given; refuses a weight that is not > 0."""
    if args.energy_weight is None:
        return reward
    if not args.energy_weight > 0.0:
        raise SystemExit(f"--energy-weight: must be positive, got {args.energy_weight}")
    return replace(reward, energy=args.energy_weight)


def _run_train_v2(args: argparse.Namespace) -> int:
    from dcops.training.cooling.ppo_v2 import CoolingPPOV2Config, record_shield, train_cooling_ppo_v2

    if args.shield_only:
        shield = record_shield(args.out)
        print(f"shield: {shield['shield_inlet_c']} °C (validation figures of every candidate in "
              f"{args.out}/ppo_cooling_v2.json)")
        return 0

    config = CoolingPPOV2Config(seed=args.seed)
    if args.timesteps is not None:
        config.timesteps = args.timesteps
    if args.max_minutes is not None:
        config.max_minutes = args.max_minutes or None
    config.reward = _energy_weight(args, config.reward)
    record = train_cooling_ppo_v2(config, out=args.out, tensorboard_log=args.tensorboard or None,
                                  progress_bar=not args.no_progress)
    v = record["validation_of_selected"]
    if "shield" in record:
        print(f"run-time shield at {record['shield']['shield_inlet_c']} °C (chosen on validation)")
    print(f"trained {record['timesteps_trained']} steps in {record['wall_time_s'] / 60:.1f} min; kept the checkpoint "
          f"at {record['timesteps_selected']} steps")
    print(f"validation: objective ratio {v['objective_ratio']:.3f}, zone-time > 27 °C "
          f"{v['zone_time_above_27_pct']:.2f} %, worst zone minutes > 32 °C {v['worst_minutes_above_32']:.1f}")
    print(f"wrote {args.out}/ppo_cooling_v2.npz (.json, .zip, _vecnormalize.pkl, learning_curve_v2.csv)")
    return 0


def _train_offpolicy_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--algorithm", choices=("sac", "tqc"), default="sac", help="SB3's SAC or sb3-contrib's TQC")
    parser.add_argument("--timesteps", type=int, default=None, help="environment steps (default: the config's)")
    parser.add_argument("--seed", type=int, default=0, help="seed of torch, SB3 and the scenario generators")
    parser.add_argument("--max-minutes", type=float, default=None, help="wall-clock budget in minutes (default none)")
    parser.add_argument("--eval-every", type=int, default=None, help="environment steps between validations")
    parser.add_argument("--out", default=None, help="output folder (default runs/cooling_v2/<algorithm>)")
    parser.add_argument("--tensorboard", default="", help="TensorBoard log folder ('' for none)")
    parser.add_argument("--energy-weight", type=float, default=None,
                        help="the training reward's energy weight (default: PPO's recipe, RewardWeightsV2.energy)")


def _run_train_offpolicy(args: argparse.Namespace) -> int:
    from dcops.training.cooling.offpolicy_v2 import CoolingOffPolicyV2Config, train_cooling_offpolicy_v2

    config = CoolingOffPolicyV2Config(algorithm=args.algorithm, seed=args.seed, max_minutes=args.max_minutes)
    if args.timesteps is not None:
        config.timesteps = args.timesteps
    if args.eval_every is not None:
        config.eval_every = args.eval_every
    config.reward = _energy_weight(args, config.reward)
    out = args.out or f"runs/cooling_v2/{args.algorithm}"
    record = train_cooling_offpolicy_v2(config, out=out, tensorboard_log=args.tensorboard or None,
                                        log=lambda line: print(line, flush=True))
    v = record["validation_of_selected"]
    print(f"trained {record['timesteps_trained']} steps in {record['wall_time_s'] / 60:.1f} min "
          f"({record['steps_per_s']:.0f} steps/s); kept the checkpoint at {record['timesteps_selected']} steps: "
          f"score {v['score']:.4f}, objective ratio {v['objective_ratio']:.3f}, worst zone minutes > 32 °C "
          f"{v['worst_minutes_above_32']:.1f}")
    print(f"wrote {out}/learning_curve_{args.algorithm}_v2.csv and {args.algorithm}_cooling_v2.json (.zip, .pkl)")
    return 0


def _report_offpolicy_arguments(parser: argparse.ArgumentParser) -> None:
    for algorithm in ("ppo", "sac", "tqc"):
        parser.add_argument(f"--{algorithm}", default=None, metavar="DIR",
                            help=f"copy the {algorithm.upper()} run's curve and record from DIR into --data first, and "
                                 "replay its kept checkpoint for its mean set-points")
    parser.add_argument("--data", default="reports/cooling/v2_offpolicy", help="folder of the curves and records the report reads")
    parser.add_argument("--out", default="reports/cooling/v2_offpolicy.md", help="the markdown ('' to only print)")


def _run_report_offpolicy(args: argparse.Namespace) -> int:
    from dcops.command import print_and_write
    from dcops.training.cooling.offpolicy_v2_report import (
        Run,
        comparison_markdown,
        copy_run,
        write_kept_actions,
    )

    folders = {a: getattr(args, a) for a in ("ppo", "sac", "tqc") if getattr(args, a)}
    for algorithm, folder in folders.items():
        copy_run(folder, algorithm, args.data)
    if folders:
        write_kept_actions(folders, args.data)
    others = [Run.read(args.data, a) for a in ("sac", "tqc") if (Path(args.data) / f"{a}_cooling_v2.json").is_file()]
    print_and_write(comparison_markdown(Run.read(args.data, "ppo"), others, args.data), args.out)
    return 0


def _tune_task_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default=str(_PACKAGE_ROOT / "agents" / "cooling" / "rule_tuned.json"),
                        help="where to write the tuned parameters")


def _run_tune_task(args: argparse.Namespace) -> int:
    from dcops.training.cooling.tune_rule import tune_all

    result = tune_all(Path(args.out))
    for task_id, entry in result["tasks"].items():
        print(f"{task_id}: {entry['params']}  (tuning score {entry['tuning_score']:.4f})")
    return 0


def _tune_family_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default=str(_PACKAGE_ROOT / "agents" / "cooling" / "rule_tuned_eval_family.json"),
                        help="where to write the tuned parameters")


def _run_tune_family(args: argparse.Namespace) -> int:
    from dcops.training.cooling.tune_rule_family import tune_family

    result = tune_family(Path(args.out))
    print(f"{result['params']}\n{result['tuning_result']}")
    return 0


def _tune_v2_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--target", default="all",
                        help="a v1 cooling task id, eval_family_v1, eval_family_v1/<site>/<season>/<fault>, all "
                             "(default: every task and the family) or cases (each of the family's 16 cases alone)")
    parser.add_argument("--out", default=str(_PACKAGE_ROOT / "agents" / "cooling" / "rule_v2_tuned.json"),
                        help="where to write the tuned parameters (other targets' entries are kept)")
    parser.add_argument("--workers", type=int, default=2, help="processes")


def _tune_each(command: str, chosen: list[str], tune: Any, write_tuned: Any, shown: str,
               args: argparse.Namespace) -> int:
    """Tune each target of ``chosen`` in turn and write it as soon as it is done (an interrupted run keeps the
    finished ones); ``shown`` is the result's field printed (the rule's params, the PID's gains)."""
    from tqdm import tqdm

    for target in chosen:
        with tqdm(desc=f"{command} {target}", unit="setting") as bar:
            result = tune(target, args.workers, progress=lambda _: bar.update(1))
        print(f"{target}: {result[shown]}\n  {result['tuning_result']}")
        write_tuned({target: result}, Path(args.out))
    print(f"wrote {args.out}")
    return 0


def _run_tune_v2(args: argparse.Namespace) -> int:
    from dcops.training.cooling.tune_rule_v2 import case_targets, targets, tune, write_tuned

    chosen = {"all": targets, "cases": case_targets}.get(args.target, lambda: [args.target])()
    return _tune_each("tune-rule-v2", chosen, tune, write_tuned, "params", args)


def _tune_pid_v2_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--target", default="all", help="a v1 cooling task id, eval_family_v1, or all (default)")
    parser.add_argument("--out", default=str(_PACKAGE_ROOT / "agents" / "cooling" / "pid_v2_tuned.json"),
                        help="where to write the tuned gains (other targets' entries are kept)")
    parser.add_argument("--workers", type=int, default=1, help="processes")


def _run_tune_pid_v2(args: argparse.Namespace) -> int:
    from dcops.training.cooling.tune_pid_v2 import targets, tune, write_tuned

    chosen = targets() if args.target == "all" else [args.target]
    return _tune_each("tune-pid-v2", chosen, tune, write_tuned, "gains", args)


COMMANDS = [
    Command("train-cooling", "Train the PPO cooling policy (SB3) and export it to numpy", _train_arguments, _run_train),
    Command("train-cooling-v2", "Train the plant v2 PPO cooling policy (SB3) on the v1 tasks, the v2 family and "
            "randomised plants, and export it", _train_v2_arguments, _run_train_v2),
    Command("train-cooling-offpolicy", "Train SAC or TQC (residual on the tuned rule) on the plant v2 PPO recipe's "
            "scenarios and reward, selected on the same validation", _train_offpolicy_arguments, _run_train_offpolicy),
    Command("report-cooling-offpolicy", "Compare the SAC / TQC runs with the plant v2 PPO run on validation "
            "(markdown from their curves)", _report_offpolicy_arguments, _run_report_offpolicy),
    Command("eval-cooling", "Compare PPO, the tuned rule and the PID on the cooling evaluation family (markdown, PNG)",
            _eval_arguments, _run_eval),
    Command("eval-cooling-cluster", "Compare PPO and the rule-based controllers on the cluster plant "
            "(datacenter_ops, 4 climates, paired seeds)", _cluster_arguments, _run_cluster),
    Command("tune-rule", "Grid-search the rule-based controller's set-points per cooling task on tuning seeds",
            _tune_task_arguments, _run_tune_task),
    Command("tune-rule-family", "Tune the rule-based controller for the PPO evaluation family on tuning seeds",
            _tune_family_arguments, _run_tune_family),
    Command("tune-rule-v2", "Tune the plant v2 rule (every plant-side control) for each v1 cooling task, the v2 "
            "evaluation family, or each of its cases on tuning seeds", _tune_v2_arguments, _run_tune_v2),
    Command("tune-pid-v2", "Tune the plant v2 PID's air-side gains (over the tuned rule's plant side) for each v1 "
            "cooling task and the v2 evaluation family on tuning seeds", _tune_pid_v2_arguments, _run_tune_pid_v2),
]
