"""Multi-agent PPO on ``datacenter_ops`` with Ray RLlib (new API stack), one policy per role.

The environment is :class:`dcops.training.marl.env.RoleEnv` (the learner-facing view of
``dcops.parallel_env``) behind RLlib's own PettingZoo wrapper,
``ray.rllib.env.wrappers.pettingzoo_env.ParallelPettingZooEnv``. Two policies (RLlib modules):

- ``scheduler``: the agent ``scheduler``. Its observation is ``Dict(observations, action_mask)`` and its action
  ``MultiDiscrete([6] × 48)``; :class:`dcops.training.marl.masking.MaskedPPOTorchRLModule` adds
  ``log(action_mask)`` to the concatenated per-slot logits, so the scheduler never samples a decision that the
  environment's ``action_mask`` forbids (DEFER past the horizon).
- ``team``: shared by every learner team (``learner_0`` …), RLlib's default PPO MLP.

Per iteration, ``train_marl`` prints a progress line and appends to ``metrics.csv`` and ``metrics.jsonl`` in the
run folder: wall time (and RLlib's exponentially smoothed sampling and learner-update timers, which move slowly
between iterations), env steps, episodes, mean episode return overall and per policy, and each learner's losses
(policy, value, entropy, KL, total). Checkpoints (``Algorithm.save_to_path``) go to ``checkpoints/iter_NNNN``;
``config.json`` records the resolved configuration. Restore with
``ray.rllib.algorithms.algorithm.Algorithm.from_checkpoint(path)``, or one policy with
``ray.rllib.core.rl_module.rl_module.RLModule.from_checkpoint(path / "learner_group/learner/rl_module/scheduler")``.
"""

from __future__ import annotations

import csv
import json
import math
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dcops.training.marl.config import MarlConfig
from dcops.training.marl.env import SCHEDULER, RoleEnv
from dcops.training.marl.plain_rllib import TEAM_POLICY

ENV_ID = "dcops_datacenter_ops_v1_roles"
SCHEDULER_POLICY = "scheduler"
LOSS_KEYS = ("policy_loss", "vf_loss", "entropy", "mean_kl_loss", "total_loss")


def make_rllib_env(env_config: dict[str, Any]) -> Any:
    """RLlib env creator: ``RoleEnv`` (``env_config`` = the config's ``env`` section) in ``ParallelPettingZooEnv``."""
    from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv

    return ParallelPettingZooEnv(RoleEnv(**dict(env_config)))


def policy_for(agent_id: str, *args: Any, **kwargs: Any) -> str:
    """Policy mapping: the scheduler has its own policy, every learner team shares ``team``."""
    return SCHEDULER_POLICY if agent_id == SCHEDULER else TEAM_POLICY


def policies_for(config: MarlConfig) -> list[str]:
    """The policies this configuration trains (a scripted scheduler or no learner team drops one)."""
    probe = RoleEnv(**config.env)
    return sorted({policy_for(agent) for agent in probe.possible_agents})


def build_algorithm_config(config: MarlConfig) -> Any:
    """The RLlib ``PPOConfig`` for ``config`` (module docstring)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    from dcops.training.marl.masking import MaskedPPOTorchRLModule

    register_env(ENV_ID, make_rllib_env)
    policies = policies_for(config)
    model = DefaultModelConfig(fcnet_hiddens=list(config.model.fcnet_hiddens),
                               vf_share_layers=config.model.vf_share_layers)
    specs = {p: RLModuleSpec(module_class=MaskedPPOTorchRLModule) if p == SCHEDULER_POLICY else RLModuleSpec()
             for p in policies}
    er, lr, tr = config.env_runners, config.learners, config.training
    return (
        PPOConfig()
        .environment(ENV_ID, env_config=dict(config.env))
        .framework("torch")
        .env_runners(num_env_runners=er.num_env_runners, num_envs_per_env_runner=er.num_envs_per_env_runner,
                     num_cpus_per_env_runner=er.num_cpus_per_env_runner,
                     rollout_fragment_length=er.rollout_fragment_length, sample_timeout_s=er.sample_timeout_s)
        .learners(num_learners=lr.num_learners, num_gpus_per_learner=lr.num_gpus_per_learner,
                  num_cpus_per_learner=lr.num_cpus_per_learner)
        .training(train_batch_size_per_learner=tr.train_batch_size_per_learner, minibatch_size=tr.minibatch_size,
                  num_epochs=tr.num_epochs, lr=tr.lr, gamma=tr.gamma, lambda_=tr.lambda_, clip_param=tr.clip_param,
                  entropy_coeff=tr.entropy_coeff, vf_loss_coeff=tr.vf_loss_coeff, grad_clip=tr.grad_clip)
        .multi_agent(policies=set(policies), policy_mapping_fn=policy_for, policies_to_train=list(policies))
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs), model_config=model)
        .debugging(seed=config.run.seed)
    )


def scripted_scheduler_return(env_config: dict[str, Any], scheduler: str, seeds: range) -> float:
    """Mean episode return (the sum of the scheduler's window rewards) of a scripted baseline scheduler on the
    same environment, learner teams stating honestly: the reference for the ``scheduler`` policy's return."""
    from dcops.agents.schedulers import BASELINES
    from dcops.env import parallel_env

    env = parallel_env(**{k: v for k, v in env_config.items() if k != "scheduler"})
    policy = BASELINES[scheduler]()
    totals = []
    for seed in seeds:
        _, infos = env.reset(seed=seed)
        total = 0.0
        while env.agents:
            _, rewards, _, _, infos = env.step({SCHEDULER: policy.decide(infos[SCHEDULER]["view"])})
            total += rewards[SCHEDULER]
        totals.append(total)
    return float(sum(totals) / len(totals))


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def iteration_metrics(result: dict[str, Any], policies: list[str]) -> dict[str, float]:
    """The per-iteration row (module docstring) from an RLlib result dict; missing values are NaN."""
    runners = result.get("env_runners", {}) or {}
    learners = result.get("learners", {}) or {}
    module_returns = runners.get("module_episode_returns_mean", {}) or {}
    timers = result.get("timers", {}) or {}
    row: dict[str, float] = {
        "iteration": int(result.get("training_iteration", 0)),
        "time_this_iter_s": _number(result.get("time_this_iter_s")),
        "env_steps_lifetime": _number(result.get("num_env_steps_sampled_lifetime",
                                                 runners.get("num_env_steps_sampled_lifetime"))),
        "episodes": _number(runners.get("num_episodes")),
        "episode_return_mean": _number(runners.get("episode_return_mean")),
        "sampling_s_smoothed": _number(timers.get("env_runner_sampling_timer")),
        "learner_update_s_smoothed": _number(timers.get("learner_update_timer")),
    }
    for policy in policies:
        row[f"{policy}/episode_return_mean"] = _number(module_returns.get(policy))
        stats = learners.get(policy, {}) or {}
        for key in LOSS_KEYS:
            row[f"{policy}/{key}"] = _number(stats.get(key))
    return row


def init_ray(config: MarlConfig) -> bool:
    """Start or join Ray as the ``ray`` section says (``RAY_ADDRESS`` in the environment also joins), unless Ray is
    already up; True if this call started or joined it (and should shut it down)."""
    import ray

    if ray.is_initialized():
        return False
    r = config.ray
    kwargs: dict[str, Any] = {"include_dashboard": r.include_dashboard, "log_to_driver": True}
    address = r.address
    if address is None and not os.environ.get("RAY_ADDRESS"):  # a new local instance (never a stray cluster): size it
        address = "local"
        kwargs.update(num_cpus=r.num_cpus, num_gpus=r.num_gpus)
        if r.object_store_memory_mb:
            kwargs["object_store_memory"] = int(r.object_store_memory_mb) * 1024 * 1024
    ray.init(address=address, **kwargs)
    return True


def train_marl(config: MarlConfig, out: str | Path,
               progress: Callable[[dict[str, float]], None] | None = None) -> list[dict[str, float]]:
    """Train ``config.run.iterations`` iterations, writing metrics and checkpoints to ``out`` (module docstring).

    Starts Ray from the config unless it is already running (a test or a user may have started it) and shuts
    down only what it started. Returns the per-iteration rows.
    """
    import ray

    out = Path(out)
    (out / "checkpoints").mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(config.as_dict(), indent=2, default=str))
    policies = policies_for(config)
    started = init_ray(config)
    algo = None
    rows: list[dict[str, float]] = []
    threads = torch_threads_for_local_learner(config)
    t0 = time.perf_counter()
    try:
        algo = build_algorithm_config(config).build_algo()
        build_s = time.perf_counter() - t0
        for i in range(1, config.run.iterations + 1):
            row = iteration_metrics(algo.train(), policies)
            row["wall_s"] = time.perf_counter() - t0
            row["build_s"] = build_s
            rows.append(row)
            _append(out, row)
            if progress is not None:
                progress(row)
            every = config.run.checkpoint_every
            if (every and i % every == 0) or i == config.run.iterations:
                algo.save_to_path(str((out / "checkpoints" / f"iter_{i:04d}").resolve()))
    finally:
        if threads is not None:
            threads()
        if algo is not None:
            algo.stop()
        if started:
            ray.shutdown()
    return rows


def torch_threads_for_local_learner(config: MarlConfig) -> Callable[[], None] | None:
    """With ``num_learners`` 0 the learner runs in this process: give torch as many threads as the learner has
    CPUs (``num_cpus_per_learner``, 1 for ``"auto"`` without a GPU, as RLlib accounts it). Torch's default (all
    cores) makes every small op wait on thread hand-offs when env runners hold the other cores: on the 2-core
    machine a laptop-config iteration took 177 s with 2 threads and 46 s with 1 (profiled, RLlib 2.60).
    Returns the undo, or None when the learners are remote (Ray sets their ``OMP_NUM_THREADS``)."""
    if config.learners.num_learners:
        return None
    import torch

    previous = torch.get_num_threads()
    cpus = config.learners.num_cpus_per_learner
    torch.set_num_threads(int(cpus) if isinstance(cpus, int | float) and cpus >= 1 else 1)
    return lambda: torch.set_num_threads(previous)


def _append(out: Path, row: dict[str, float]) -> None:
    with (out / "metrics.jsonl").open("a") as fh:
        fh.write(json.dumps({k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                             for k, v in row.items()}) + "\n")
    path = out / "metrics.csv"
    new = not path.exists()
    with path.open("a", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(row))
        if new:
            writer.writeheader()
        writer.writerow(row)


def format_row(row: dict[str, float], policies: list[str]) -> str:
    """One progress line: iteration, time, steps, and per policy its return and total loss."""
    parts = [f"iter {int(row['iteration'])}", f"{row['time_this_iter_s']:.1f} s",
             f"env steps {int(row['env_steps_lifetime']) if math.isfinite(row['env_steps_lifetime']) else '?'}"]
    for policy in policies:
        parts.append(f"{policy}: return {row[f'{policy}/episode_return_mean']:+.3f} "
                     f"loss {row[f'{policy}/total_loss']:.4f}")
    return "  ".join(parts)
