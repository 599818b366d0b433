"""Learner teams of ``datacenter_ops`` sharing one stable-baselines3 PPO policy through SuperSuit.

The scheduler is scripted (the priority-threshold baseline) and only the ``"learner"`` teams act, each choosing
how to state its requests (inflate priority, compress deadlines, hide carbon flexibility). Their views are
homogeneous, so no padding is needed (``dcops.training.marl.supersuit`` explains and checks it). One machine,
no Ray.

Run: ``python examples/supersuit_sb3_teams.py --timesteps 20000`` (prints the shared policy's mean team reward
per window before and after training on held-out seeds).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class TeamRun:
    """What :func:`train_teams` returns: the model, its vector env, SB3's last logged values, evaluations."""

    model: Any
    n_envs: int
    logged: dict[str, float]
    before: float
    after: float


def mean_team_reward(model: Any, seeds: range, n_windows: int, team_kinds: tuple[str, ...]) -> float:
    """Mean learner-team reward per window over ``seeds``, deterministic actions of the shared policy."""
    from dcops.training.marl.env import RoleEnv

    env = RoleEnv(scheduler="priority_threshold", n_windows=n_windows, team_kinds=team_kinds)
    total, count = 0.0, 0
    for seed in seeds:
        obs, _ = env.reset(seed=seed)
        while env.agents:
            actions = {agent: model.predict(obs[agent], deterministic=True)[0] for agent in env.agents}
            obs, rewards, _, _, _ = env.step(actions)
            total += sum(rewards.values())
            count += len(rewards)
    return total / max(count, 1)


def train_teams(timesteps: int = 20_000, n_envs: int = 4, n_windows: int = 8, seed: int = 0,
                team_kinds: tuple[str, ...] = ("cooperative", "strategic", "learner", "learner"),
                eval_seeds: range = range(1000, 1005), n_steps: int = 64, verbose: int = 0) -> TeamRun:
    """Train one PPO policy for every learner team (parameter sharing) and evaluate it before and after."""
    import torch
    from stable_baselines3 import PPO

    from dcops.training.marl.supersuit import team_vec_env
    from dcops.training.sb3_logging import sb3_logger

    torch.set_num_threads(1)
    venv = team_vec_env(n_envs=n_envs, n_windows=n_windows, team_kinds=team_kinds)
    model = PPO("MlpPolicy", venv, n_steps=n_steps, batch_size=n_steps * venv.num_envs // 2, n_epochs=4,
                learning_rate=3e-4, gamma=0.95, seed=seed, verbose=verbose, device="cpu")
    model.set_logger(sb3_logger(None, "supersuit", verbose))  # no SB3-<date> folder in the temp directory
    before = mean_team_reward(model, eval_seeds, n_windows, team_kinds)
    model.learn(total_timesteps=timesteps)
    after = mean_team_reward(model, eval_seeds, n_windows, team_kinds)
    logged = {k: float(v) for k, v in model.logger.name_to_value.items()}
    venv.close()
    return TeamRun(model=model, n_envs=venv.num_envs, logged=logged, before=before, after=after)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=20_000, help="PPO steps summed over all team slots")
    parser.add_argument("--n-envs", type=int, default=4, help="environments stacked (each has 2 learner teams)")
    parser.add_argument("--n-windows", type=int, default=8, help="admission windows per episode")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    run = train_teams(args.timesteps, args.n_envs, args.n_windows, args.seed, verbose=1)
    print(f"{run.n_envs} team slots; mean learner-team reward per window on seeds 1000-1004: "
          f"{run.before:+.4f} before, {run.after:+.4f} after {args.timesteps} steps")
    losses = {k: v for k, v in run.logged.items() if "loss" in k}
    print("last losses:", {k: round(v, 4) for k, v in losses.items()}, "finite:",
          bool(np.all(np.isfinite(list(losses.values())))))


if __name__ == "__main__":
    main()
