"""The plant v2 imitation policy for stable-baselines3: ``PPO.load(...).predict(obs)`` on a v1 task, and an
environment PPO can fine-tune it in.

The policy's observation is its features (``dcops.agents.cooling.imitation_v2``: the reduced telemetry, the
fitted airflow, its previous parameters) and its action the eight scaled plant parameters; the airflow fit
needs the control each step applied, so a task is played through :class:`ImitationTaskEnv`, which keeps the
controller's own :class:`~dcops.agents.cooling.imitation_v2.ImitationFeatures` between the policy and the task::

    from dcops.training.cooling.imitation_sb3 import load_sb3_imitation
    model, env = load_sb3_imitation("cooling/daily_operations_v1")   # PPO and its VecNormalize'd task
    obs = env.reset()
    action, _ = model.predict(obs, deterministic=True)               # what ImitationControllerV2's network plays
    obs, reward, done, info = env.step(action)

The reward is the PPO v2 training reward (:class:`~dcops.training.cooling.train_env_v2.RewardWeightsV2`), so
``model.learn`` continues from the imitation policy with PPO. The zip is written by :func:`export_sb3` from the
shipped ``imitation_v2.npz`` (``dcops export-cooling-imitation-sb3``): SB3's actor-critic with the network's
layers copied into its actor (the critic starts untrained) and ``VecNormalize`` statistics equal to the network's
input normalisation. ``PPO.load`` and ``VecNormalize.load`` unpickle parts of their files: load only files you
trust. The numpy runtime needs neither torch nor SB3, and, unlike ``predict``, it has the shield.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from dcops.agents.cooling.imitation_v2 import (
    N_FEATURES_IMITATION,
    N_PARAMETERS,
    ImitationFeatures,
    physical_parameters,
    shipped_policy_imitation,
)
from dcops.agents.cooling.ppo import NumpyPolicy
from dcops.agents.cooling.rule_v2 import controller_context_v2
from dcops.boundary import split_info
from dcops.command import Command
from dcops.cooling_env_v1 import TASK_SPECS, CoolingEnvV1, CoolingTaskSpecV1
from dcops.training.cooling.train_env_v2 import RewardWeightsV2, SpecSourceV2, training_reward

ZIP_NAME = "imitation_v2_sb3.zip"
STATS_NAME = "imitation_v2_vecnormalize.pkl"
LOG_STD_INIT = -2.0
"""The Gaussian's log σ in the exported policy (the PPO v2 recipe's exploration)."""


class ImitationTaskEnv(gym.Env):
    """A v1 task (or any spec source) seen through the imitation controller's features and parameters.

    ``Box(-1000, 1000, (N_FEATURES_IMITATION,))`` observations, ``Box(-1, 1, (8,))`` actions (the parameters
    scaled to their ranges on the task's plant), the PPO v2 training reward; ``info`` has no diagnostics."""

    metadata = {"render_modes": []}

    def __init__(self, spec_source: SpecSourceV2, reward: RewardWeightsV2 | None = None) -> None:
        self.spec_source = spec_source
        self.reward_weights = reward or RewardWeightsV2()
        self.observation_space = gym.spaces.Box(-1000.0, 1000.0, (N_FEATURES_IMITATION,), dtype=np.float32)
        self.action_space = gym.spaces.Box(-1.0, 1.0, (N_PARAMETERS,), dtype=np.float32)
        self.estimator = ImitationFeatures()
        self.inner: CoolingEnvV1 | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        spec = self.spec_source(self.np_random)
        self.inner = CoolingEnvV1(spec, diagnostics=True)  # the training reward scores the true inlets
        telemetry, info = self.inner.reset(seed=int(self.np_random.integers(10_000, 2**31 - 1)))
        self.estimator.reset(controller_context_v2(self.inner))
        self._weights = np.asarray(spec.zone_weights, dtype=np.float64) / float(np.sum(spec.zone_weights))
        return self._observe(telemetry), split_info("cooling", info)[0]

    def _observe(self, telemetry: NDArray[np.float32]) -> NDArray[np.float32]:
        self._telemetry, features = self.estimator.observe(telemetry)
        return features.astype(np.float32)

    def step(self, action: Any):
        if self.inner is None:
            raise RuntimeError("call reset() before step()")
        scaled = np.asarray(action, dtype=np.float64).reshape(N_PARAMETERS)
        setpoints = self.estimator.actuate(physical_parameters(scaled, self.estimator.plant), self._telemetry)
        below_18_before = self.inner.totals.minutes_below_18.copy()
        telemetry, task_reward, terminated, truncated, info = self.inner.step(setpoints)
        reward, energy, thermal = training_reward(self.inner, task_reward, info, below_18_before, self._weights,
                                                  self.reward_weights)
        info["energy_cost"], info["thermal_cost"] = energy, thermal
        return self._observe(telemetry), reward, terminated, truncated, split_info("cooling", info)[0]


def task_env(task_id: str, **overrides: Any) -> ImitationTaskEnv:
    """The v1 task ``task_id`` (with spec ``overrides``) seen through the imitation policy's features."""
    spec: CoolingTaskSpecV1 = replace(TASK_SPECS[task_id](), **overrides)
    return ImitationTaskEnv(lambda rng: spec)


def shipped_folder() -> Path:
    from importlib import resources

    return Path(str(resources.files("dcops.agents.cooling").joinpath("weights")))


def export_sb3(policy: NumpyPolicy, folder: Path) -> tuple[Path, Path]:
    """Write ``policy`` as SB3's PPO zip and ``VecNormalize`` statistics into ``folder`` (module docstring)."""
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    hidden = [w.shape[1] for w in policy.weights[:-1]]
    venv = VecNormalize(DummyVecEnv([lambda: task_env("cooling/single_zone_recovery_v1")]), norm_reward=False,
                        clip_obs=policy.obs_clip, epsilon=policy.obs_epsilon)
    venv.obs_rms.mean, venv.obs_rms.var = policy.obs_mean.copy(), policy.obs_var.copy()
    venv.training = False
    model = PPO("MlpPolicy", venv, device="cpu", seed=0, policy_kwargs={
        "net_arch": {"pi": hidden, "vf": hidden}, "activation_fn": torch.nn.Tanh, "log_std_init": LOG_STD_INIT})
    layers = [m for m in model.policy.mlp_extractor.policy_net if isinstance(m, torch.nn.Linear)]
    layers.append(model.policy.action_net)
    with torch.no_grad():
        for layer, w, b in zip(layers, policy.weights, policy.biases, strict=True):
            layer.weight.copy_(torch.as_tensor(w.T))
            layer.bias.copy_(torch.as_tensor(b))
    folder.mkdir(parents=True, exist_ok=True)
    model.save(folder / ZIP_NAME)
    venv.save(str(folder / STATS_NAME))
    return folder / ZIP_NAME, folder / STATS_NAME


def load_sb3_imitation(task_id: str, folder: str | Path | None = None, **overrides: Any):
    """SB3's PPO with the imitation policy and the task wrapped for it, its statistics frozen (module doc)."""
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    folder = Path(folder) if folder is not None else shipped_folder()
    venv = VecNormalize.load(str(folder / STATS_NAME), DummyVecEnv([lambda: task_env(task_id, **overrides)]))
    venv.training = False
    venv.norm_reward = False
    return PPO.load(folder / ZIP_NAME, env=venv, device="cpu"), venv


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--weights", default=None, help="an imitation .npz (default: the shipped one)")
    parser.add_argument("--out", default=None, help="folder for the zip and statistics (default: beside the "
                        "shipped weights)")


def _run(args: argparse.Namespace) -> int:
    policy = (NumpyPolicy.from_npz(args.weights, N_FEATURES_IMITATION, N_PARAMETERS) if args.weights
              else shipped_policy_imitation())
    for path in export_sb3(policy, Path(args.out) if args.out else shipped_folder()):
        print(path)
    return 0


COMMANDS = [
    Command("export-cooling-imitation-sb3", "Write the plant v2 imitation policy as a stable-baselines3 PPO zip and "
            "VecNormalize statistics (PPO.load(...).predict on a task; PPO can fine-tune it)", _arguments, _run),
]
