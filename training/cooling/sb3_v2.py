"""The plant v2 PPO cooling policy from stable-baselines3: ``PPO.load(...).predict(obs)`` on a v1 task.

The policy's observation is not the task's raw telemetry but its features (``dcops.agents.cooling.ppo_v2``:
reductions over zones, what the operator knows of the task, the previous action), and its action is the
supervisor's seven set-points, so a task is played through the same wrapper it was trained in
(:class:`~dcops.training.cooling.train_env_v2.CoolingTrainEnvV2` on that task's spec)::

    from dcops.training.cooling.sb3_v2 import load_sb3_policy
    model, env = load_sb3_policy("cooling/daily_operations_v1")      # PPO and its VecNormalize'd task
    obs = env.reset()
    action, _ = model.predict(obs, deterministic=True)               # what PPOControllerV2 plays (tested)
    obs, reward, done, info = env.step(action)

``PPO.load`` unpickles parts of the zip (spaces, schedules) and ``VecNormalize.load`` unpickles its statistics:
load only files you trust (these are the repository's own, made by ``dcops train-cooling-v2``). The numpy runtime
(:class:`~dcops.agents.cooling.ppo_v2.PPOControllerV2`) reads only arrays and needs neither torch nor SB3.
"""

from __future__ import annotations

from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

from dcops.cooling_env_v1 import TASK_SPECS
from dcops.training.cooling.ppo_v2 import STATS_NAME, ZIP_NAME
from dcops.training.cooling.train_env_v2 import CoolingTrainEnvV2


def shipped_weights_dir() -> Path:
    return Path(str(resources.files("dcops.agents.cooling").joinpath("weights")))


def task_env(task_id: str, **overrides: Any) -> CoolingTrainEnvV2:
    """The v1 task ``task_id`` (with spec ``overrides``) seen through the policy's features and actions."""
    spec = replace(TASK_SPECS[task_id](), **overrides)
    return CoolingTrainEnvV2(spec_source=lambda rng: spec)


def load_sb3_policy(task_id: str, folder: str | Path | None = None, **overrides: Any) -> tuple[PPO, VecNormalize]:
    """SB3's PPO and the task wrapped for it with the training's frozen observation statistics (module doc)."""
    folder = Path(folder) if folder is not None else shipped_weights_dir()
    venv = VecNormalize.load(str(folder / STATS_NAME), DummyVecEnv([lambda: task_env(task_id, **overrides)]))
    venv.training = False
    venv.norm_reward = False
    return PPO.load(folder / ZIP_NAME, env=venv, device="cpu"), venv
