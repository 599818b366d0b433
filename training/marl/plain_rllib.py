"""Plain RLlib on ``datacenter_ops_v1``: RLlib's own PettingZoo wrapper, connector and PPO module, nothing of dcops.

The recipe for RLlib as it ships (new API stack), in three parts, all RLlib's:

1. **Environment**: ``datacenter_ops_v1.parallel_env(**env_config)`` unmodified (the RL entry: no structured
   view) in ``ray.rllib.env.wrappers.pettingzoo_env.ParallelPettingZooEnv``. Its agents are ``learner_0`` …
   (teams of kind ``"learner"``), ``cooling`` (with ``cooling="agent"``) and ``scheduler``.
2. **Connector**: ``ray.rllib.connectors.env_to_module.FlattenObservations(multi_agent=True)`` flattens the
   scheduler's ``Dict`` observation (its int8 ``action_mask`` included, as 288 more inputs) into one float
   vector; the other agents' ``Box`` observations pass through as they are.
3. **Module**: RLlib's default PPO module (an MLP; the scheduler's ``MultiDiscrete([6] × 48)`` as one categorical
   per slot) for each policy: ``scheduler``, ``team`` (shared by every ``learner_k``, as in ``dcops train-marl``),
   ``cooling``.

The default module does **not** apply the action mask: the scheduler may sample a forbidden code (DEFER past
the horizon), which the environment penalises and replaces with the default decision
(``dcops.cluster.decisions``), so the policy learns to avoid it only through the reward. For masked training use
``dcops train-marl``: :class:`dcops.training.marl.env.RoleEnv` and
:class:`dcops.training.marl.masking.MaskedPPOTorchRLModule`, which adds ``log(action_mask)`` to the logits.

Example::

    import ray
    from dcops.training.marl.plain_rllib import plain_ppo_config

    ray.init()
    algo = plain_ppo_config({"team_kinds": ["cooperative", "strategic", "learner", "learner"]}).build_algo()
    for _ in range(10):
        print(algo.train()["env_runners"]["episode_return_mean"])

Speed: ``python -m dcops.training.marl.plain_rllib --iterations 5`` (:data:`DEFAULT_ENV_CONFIG`: 8-window
episodes, two learner teams, scripted cooling, structured view off; two env runners, a 256-step batch, a CPU
learner) took 3.9 s per iteration (3.6 to 4.4 s, iterations 2 to 5; the first, 4.6 s, warms up) after 13 s
building the algorithm, on the 2-core development machine under a load average of 8 (RLlib 2.60).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

TEAM_POLICY = "team"
"""The policy every learner team shares (the name ``dcops train-marl`` gives it too)."""

ENV_ID = "dcops_datacenter_ops_v1"
DEFAULT_ENV_CONFIG: dict[str, Any] = {"team_kinds": ["cooperative", "strategic", "learner", "learner"],
                                      "cooling": "rule"}
"""The environment of :func:`main`: two scripted teams, two learner teams, scripted cooling."""


def make_env(env_config: dict[str, Any]) -> Any:
    """RLlib env creator: ``datacenter_ops_v1.parallel_env(**env_config)`` in RLlib's ``ParallelPettingZooEnv``."""
    from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv

    from dcops import datacenter_ops_v1

    return ParallelPettingZooEnv(datacenter_ops_v1.parallel_env(**dict(env_config)))


def flatten_observations(env: Any = None, spaces: Any = None, device: Any = None) -> Any:
    """The env-to-module connector: RLlib's ``FlattenObservations`` for every agent."""
    from ray.rllib.connectors.env_to_module import FlattenObservations

    return FlattenObservations(multi_agent=True)


def policy_for(agent_id: str, *args: Any, **kwargs: Any) -> str:
    """Policy mapping: every learner team shares ``team`` (the name ``dcops train-marl`` gives it); ``scheduler``
    and ``cooling`` have their own."""
    return TEAM_POLICY if agent_id.startswith("learner_") else agent_id


def plain_ppo_config(env_config: dict[str, Any] | None = None, num_env_runners: int = 2,
                     train_batch_size: int = 256, minibatch_size: int = 64, num_epochs: int = 4, lr: float = 3e-4,
                     gamma: float = 0.95, fcnet_hiddens: tuple[int, ...] = (256, 256), seed: int = 0) -> Any:
    """RLlib's ``PPOConfig`` for ``datacenter_ops_v1`` (module docstring); ``.build_algo()`` and ``.train()`` it.

    :param env_config: keyword arguments of ``datacenter_ops_v1.parallel_env`` (``team_kinds``, ``n_windows``,
        ``cooling``, ...); ``None``: its defaults (the scheduler is then the only agent).
    :param num_env_runners: Ray actors sampling episodes (0 samples in the driver).
    :param train_batch_size: environment steps (admission windows) per training iteration.
    :param minibatch_size: steps per SGD minibatch.
    :param num_epochs: passes over each batch.
    :param lr: Adam's learning rate.
    :param gamma: discount per window.
    :param fcnet_hiddens: hidden layer widths of every policy's MLP.
    :param seed: seed of RLlib, torch and the environments.
    """
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.tune.registry import register_env

    from dcops import datacenter_ops_v1

    env_config = dict(env_config or {})
    register_env(ENV_ID, make_env)
    policies = sorted({policy_for(agent) for agent in datacenter_ops_v1.parallel_env(**env_config).possible_agents})
    return (
        PPOConfig()
        .environment(ENV_ID, env_config=env_config)
        .framework("torch")
        .env_runners(num_env_runners=num_env_runners, env_to_module_connector=flatten_observations)
        .training(train_batch_size_per_learner=train_batch_size, minibatch_size=minibatch_size,
                  num_epochs=num_epochs, lr=lr, gamma=gamma)
        .multi_agent(policies=set(policies), policy_mapping_fn=policy_for, policies_to_train=policies)
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=list(fcnet_hiddens)))
        .debugging(seed=seed)
    )


def main(argv: list[str] | None = None) -> None:
    """Train a few iterations on a local Ray and print the seconds of each (module docstring: speed)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=4)
    parser.add_argument("--num-env-runners", type=int, default=2)
    parser.add_argument("--batch", type=int, default=256, help="environment steps per iteration")
    parser.add_argument("--n-windows", type=int, default=8, help="admission windows per episode")
    args = parser.parse_args(argv)
    import ray
    import torch

    torch.set_num_threads(1)  # the learner shares the cores with the env runners
    ray.init(num_cpus=max(2, args.num_env_runners + 1), include_dashboard=False)
    try:
        config = plain_ppo_config({**DEFAULT_ENV_CONFIG, "n_windows": args.n_windows},
                                  num_env_runners=args.num_env_runners, train_batch_size=args.batch)
        algo = config.build_algo()
        seconds = []
        for i in range(1, args.iterations + 1):
            t0 = time.perf_counter()
            result = algo.train()
            seconds.append(time.perf_counter() - t0)
            returns = result["env_runners"].get("module_episode_returns_mean", {})
            print(f"iter {i}: {seconds[-1]:.1f} s, mean episode returns "
                  f"{ {k: round(float(v), 3) for k, v in returns.items()} }", flush=True)
        steady = seconds[1:] or seconds
        print(f"mean {sum(steady) / len(steady):.2f} s per iteration of {args.batch} steps"
              f"{' after the first' if len(seconds) > 1 else ''}")
        algo.stop()
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
