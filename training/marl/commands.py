"""``dcops train-marl``: multi-agent PPO with Ray RLlib on ``datacenter_ops`` (:mod:`dcops.training.marl.rllib`).

``--config laptop`` (local Ray, default) or ``--config cluster`` (an existing Ray cluster, GPU learners) or a
path to a YAML/JSON file (:mod:`dcops.training.marl.config`); a few flags override the file. Writes
``metrics.csv``, ``metrics.jsonl``, ``config.json`` and ``checkpoints/`` to ``--out``. Ray is imported inside
``run`` so ``dcops --help`` stays instant.
"""

from __future__ import annotations

import argparse

from dcops.command import Command


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", default="laptop",
                        help="laptop, cluster, or a YAML/JSON file (fields: dcops/training/marl/config.py)")
    parser.add_argument("--out", default="runs/marl", help="run folder for metrics, config and checkpoints")
    parser.add_argument("--iterations", type=int, default=None, help="training iterations (default: the config's)")
    parser.add_argument("--address", default=None,
                        help="Ray address to join ('auto', 'ray://host:10001'); default: the config's")
    parser.add_argument("--num-env-runners", type=int, default=None, help="env runner actors (default: the config's)")
    parser.add_argument("--n-windows", type=int, default=None, help="admission windows per episode (default: config)")
    parser.add_argument("--seed", type=int, default=None, help="seed (default: the config's)")
    parser.add_argument("--baselines", type=int, default=0, metavar="N",
                        help="first print the episode return of scripted schedulers on seeds 0..N-1 of the same env "
                             "(learner teams honest), the reference for the scheduler policy's return")


def _run(args: argparse.Namespace) -> int:
    from dcops.training.marl.config import load_config
    from dcops.training.marl.rllib import format_row, policies_for, train_marl

    try:
        config = load_config(args.config)
    except (FileNotFoundError, ValueError) as error:
        print(f"train-marl: {error}")
        return 2
    if args.iterations is not None:
        config.run.iterations = args.iterations
    if args.address is not None:
        config.ray.address = args.address
    if args.num_env_runners is not None:
        config.env_runners.num_env_runners = args.num_env_runners
    if args.n_windows is not None:
        config.env["n_windows"] = args.n_windows
    if args.seed is not None:
        config.run.seed = args.seed
    try:
        config.revalidate(f"--config {args.config} with overrides")
    except ValueError as error:
        print(f"train-marl: {error}")
        return 2
    policies = policies_for(config)
    if args.baselines:
        from dcops.training.marl.rllib import scripted_scheduler_return

        for name in ("priority_threshold", "accept_all", "reject_all"):
            value = scripted_scheduler_return(config.env, name, range(args.baselines))
            print(f"reference: {name} scheduler episode return {value:+.3f} (seeds 0-{args.baselines - 1})", flush=True)
    print(f"train-marl: policies {policies}, {config.env_runners.num_env_runners} env runners × "
          f"{config.env_runners.num_envs_per_env_runner} envs, {config.learners.num_learners or 'local'} learner(s), "
          f"{config.run.iterations} iterations -> {args.out}", flush=True)
    rows = train_marl(config, args.out, progress=lambda row: print(format_row(row, policies), flush=True))
    last = rows[-1]
    print(f"done: {int(last['iteration'])} iterations in {last['wall_s']:.0f} s (of which {last['build_s']:.0f} s "
          f"building the algorithm); wrote {args.out}/metrics.csv, metrics.jsonl, config.json, checkpoints/")
    return 0


COMMANDS = [
    Command("train-marl", "Multi-agent PPO (Ray RLlib): scheduler and learner teams, one policy per role",
            _arguments, _run),
]
