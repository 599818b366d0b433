"""Train the PPO cooling policy with stable-baselines3 and export it to numpy (``dcops train-cooling``).

Pipeline (:func:`train_cooling_ppo`), every step seeded by ``config.seed`` (single-threaded torch, in-process
environments: the same seed and step count give the same weights on any machine of the same software):

1. ``n_envs`` :class:`~dcops.training.cooling.train_env.CoolingTrainEnv` (randomised plants, climates, seasons,
   loads and faults) in a ``DummyVecEnv`` (in-process: the plant step is ~0.1 ms, cheaper than inter-process
   traffic on 2 cores), wrapped in ``VecNormalize`` (running observation mean/variance, clip ±10; rewards scaled by
   a running estimate of the return's standard deviation, which only affects training).
2. SB3 ``PPO`` with an ``MlpPolicy`` (separate 64×64 tanh actor and critic), gSDE exploration held for an hour
   (``use_sde``: the plant's inertia punishes step-to-step noise), the actor's initial mean set to the
   family-tuned rule's operating point (``initial_setpoints``), TensorBoard logs under ``tensorboard_log``
   (``tensorboard --logdir runs/cooling``), a progress bar.
3. **Checkpoint selection**: every ``eval_every`` steps the current actor is exported to numpy (with the current
   normalisation statistics) and run as a :class:`~dcops.agents.cooling.ppo.PPOController` on every case of the
   evaluation family with the *validation* seeds (disjoint from evaluation and rule-tuning seeds). The kept
   checkpoint is the one with the least mean cooling energy among those with no minute above 32 °C and at most
   1 % of zone-time above 27 °C in the fault-free cases (the evaluation's own criteria); if none qualifies, the
   least violating one. The curve goes to ``learning_curve.csv`` and TensorBoard.
4. **Export** of the kept checkpoint: ``ppo_cooling.npz`` (normalisation + actor weights, the only file the
   runtime reads), ``ppo_cooling.json`` (config, seed, timesteps, wall time, versions, validation figures) and
   ``ppo_cooling.zip`` (SB3's own checkpoint of the same weights, for audit and resuming).

**Loading the SB3 checkpoint safely**: SB3 zips hold the tensors (read by SB3 with ``torch.load(weights_only=True)``)
and a JSON of the model's attributes, some of which SB3 serialises with cloudpickle (spaces, schedules, the
policy class). :func:`load_torch_policy` never deserialises that JSON: it rebuilds the policy from the recorded
architecture and reads only the tensors, through SB3's ``load_from_zip_file(load_data=False)``. The runtime never
touches the zip at all (``np.load(allow_pickle=False)`` on the ``.npz``). Only load zips you trust with
``PPO.load``.
"""

from __future__ import annotations

import csv
import json
import platform
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import stable_baselines3
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback, CallbackList, ProgressBarCallback
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.policies import ActorCriticPolicy
from stable_baselines3.common.save_util import load_from_zip_file
from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize
from torch import nn

from dcops.agents.cooling.ppo import (
    ACTION_NAMES,
    FEATURE_NAMES,
    N_ACTIONS,
    N_FEATURES,
    NumpyPolicy,
    PPOController,
    SupervisoryActionMap,
)
from dcops.training.cooling.evaluate import VALIDATION_SEEDS, all_cases, run_episode
from dcops.training.cooling.train_env import CoolingTrainEnv, RewardWeights, TrainingScenarios
from dcops.training.sb3_logging import sb3_logger

NPZ_NAME = "ppo_cooling.npz"
JSON_NAME = "ppo_cooling.json"
ZIP_NAME = "ppo_cooling.zip"
CURVE_NAME = "learning_curve.csv"


@dataclass
class CoolingPPOConfig:
    """Hyperparameters of :func:`train_cooling_ppo` (the defaults reproduce the shipped policy).

    :param seed: seeds torch, the scenario generators of the environments and SB3.
    :param timesteps: environment steps (5-minute control steps) of PPO.
    :param max_minutes: wall-clock budget; training stops at the next rollout once it is spent (None: no limit).
    :param n_envs: environments stepped together (in-process).
    :param n_steps: steps per environment per rollout.
    :param batch_size: PPO minibatch size.
    :param n_epochs: PPO epochs per rollout.
    :param learning_rate: Adam learning rate (constant).
    :param gamma: discount per 5-minute step (0.95: a horizon of about 1.7 h, the loop's and zones' time scale;
        the energy to save is mostly in each step's own set-points, and a short horizon cuts the return's variance).
    :param gae_lambda: GAE lambda.
    :param clip_range: PPO clip range.
    :param ent_coef: entropy bonus.
    :param target_kl: stop a rollout's epochs once the approximate KL to the old policy exceeds this (None: never).
    :param use_sde: generalised state-dependent exploration (gSDE): the exploration noise is a linear function of
        the actor's last hidden layer with a random matrix held for ``sde_sample_freq`` steps. Why: the plant has
        inertia (the chilled-water loop, the zones), so independent noise at every 5-minute step keeps pulling the
        loop up and down, which costs tower and pump energy (both convex in load) and teaches the policy to
        stop exploring before it has found anything; noise held for an hour explores operating points instead.
        The deterministic policy (the mean) is the same MLP either way.
    :param sde_sample_freq: steps between redraws of the gSDE noise matrix (12 = 1 h).
    :param log_std_init: initial log standard deviation (gSDE: of the noise matrix's entries; the action noise is
        that times the norm of the 64 hidden activations, a few times larger).
    :param initial_setpoints: the policy's initial mean action in physical units (supply-air set-point °C, inlet
        target °C, chilled-water margin K), set through the action head's bias (its weights start near zero, so
        the first policy is this constant plus exploration noise). The default is the operating point of the
        family-tuned rule (21.5 °C supply air, inlets at 26.5 °C, chilled water as warm as the supply allows):
        PPO starts where a competent operator is and must learn when to deviate. None keeps SB3's zero bias
        (the middle of every range).
    :param hidden: hidden layer sizes of the actor and of the critic (tanh).
    :param eval_every: environment steps between validation runs (checkpoint selection).
    :param validation_seeds: seeds of the validation episodes on the evaluation family.
    :param scenarios: ranges of the randomised training scenarios.
    :param reward: weights of the training reward.
    """

    seed: int = 0
    timesteps: int = 1_200_000
    max_minutes: float | None = 28.0
    n_envs: int = 8
    n_steps: int = 256
    batch_size: int = 512
    n_epochs: int = 10
    learning_rate: float = 3e-4
    gamma: float = 0.95
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.0
    target_kl: float | None = None
    use_sde: bool = True
    sde_sample_freq: int = 12
    log_std_init: float = -2.5
    initial_setpoints: tuple[float, float, float] | None = (21.5, 26.5, 0.5)
    hidden: tuple[int, ...] = (64, 64)
    eval_every: int = 50_000
    validation_seeds: tuple[int, ...] = VALIDATION_SEEDS
    scenarios: TrainingScenarios = field(default_factory=TrainingScenarios)
    reward: RewardWeights = field(default_factory=RewardWeights)


def make_vec_env(config: Any, env_class: Callable[..., Any] = CoolingTrainEnv) -> VecNormalize:
    """The normalised vector of ``env_class(config.scenarios, reward=config.reward)`` training environments,
    seeded ``seed, seed + 1, …`` (plant v0's and plant v2's recipes share it)."""
    def factory() -> Monitor:
        return Monitor(env_class(config.scenarios, reward=config.reward))

    venv = DummyVecEnv([factory] * config.n_envs)
    venv.seed(config.seed)
    return VecNormalize(venv, norm_obs=True, norm_reward=True, clip_obs=10.0, gamma=config.gamma)


def policy_kwargs(config: Any) -> dict[str, Any]:
    """SB3's policy arguments of a recipe with ``hidden`` and ``log_std_init`` (both plants' recipes)."""
    return {"net_arch": {"pi": list(config.hidden), "vf": list(config.hidden)}, "activation_fn": nn.Tanh,
            "log_std_init": config.log_std_init}


def export_numpy_policy(policy: ActorCriticPolicy, obs_mean: np.ndarray, obs_var: np.ndarray, clip_obs: float,
                        epsilon: float) -> NumpyPolicy:
    """The actor of an SB3 ``ActorCriticPolicy`` (tanh MLP + linear head) and its normalisation, as numpy."""
    layers = [m for m in policy.mlp_extractor.policy_net if isinstance(m, nn.Linear)] + [policy.action_net]
    weights = tuple(m.weight.detach().cpu().numpy().astype(np.float64).T.copy() for m in layers)
    biases = tuple(m.bias.detach().cpu().numpy().astype(np.float64).copy() for m in layers)
    return NumpyPolicy(np.asarray(obs_mean, dtype=np.float64).copy(), np.asarray(obs_var, dtype=np.float64).copy(),
                       float(clip_obs), weights, biases, float(epsilon))


def _export(model: PPO, venv: VecNormalize) -> NumpyPolicy:
    rms = venv.obs_rms
    return export_numpy_policy(model.policy, rms.mean, rms.var, venv.clip_obs, venv.epsilon)


def validate(policy: NumpyPolicy, seeds: tuple[int, ...] = VALIDATION_SEEDS) -> dict[str, float]:
    """The policy on every evaluation-family case with the validation seeds: energy and thermal figures."""
    controller = PPOController(policy)
    rows = [run_episode(controller, case, seed) for case in all_cases() for seed in seeds]
    normal = [r for r in rows if r["fault"] == "normal"]
    return {
        "cooling_kwh": float(np.mean([r["cooling_kwh"] for r in rows])),
        "zone_time_above_27_pct_normal": float(np.mean([r["zone_time_above_27_pct"] for r in normal])),
        "zone_time_above_27_pct": float(np.mean([r["zone_time_above_27_pct"] for r in rows])),
        "worst_minutes_above_32": float(max(r["worst_zone_minutes_above_32"] for r in rows)),
    }


def selection_key(v: dict[str, float]) -> tuple[float, float]:
    """Sort key of a validation result: feasible ones first (by energy), then by how badly they violate."""
    feasible = v["worst_minutes_above_32"] == 0.0 and v["zone_time_above_27_pct_normal"] <= 1.0
    if feasible:
        return (0.0, v["cooling_kwh"])
    return (1.0, 100.0 * v["worst_minutes_above_32"] + v["zone_time_above_27_pct_normal"])


class SelectAndBudget(BaseCallback):
    """Validates every ``eval_every`` steps, keeps the best checkpoint, stops once the time budget is spent.

    :param validate: the exported policy → validation figures.
    :param key: validation figures → a sort key (the least is kept).
    :param names: file names of the kept checkpoint: the numpy ``.npz`` (None: not saved), SB3's ``.zip``, the
        learning curve ``.csv`` and (None: not saved) the ``VecNormalize`` statistics ``.pkl``.
    :param export: (model, its ``VecNormalize``) → what ``validate`` runs; the default exports a PPO actor to a
        :class:`NumpyPolicy` (whose ``save`` writes the ``.npz``); the off-policy comparison passes a controller
        that calls ``model.predict`` (:mod:`dcops.training.cooling.offpolicy_v2`).
    """

    def __init__(self, eval_every: int, max_minutes: float | None, out: Path, start_time: float,
                 validate: Callable[[Any], dict[str, float]], key: Callable[[dict[str, float]], Any],
                 names: tuple[str | None, str, str, str | None] = (NPZ_NAME, ZIP_NAME, CURVE_NAME, None),
                 export: Callable[[Any, VecNormalize], Any] | None = None) -> None:
        super().__init__()
        self.export = export or _export
        self.eval_every, self.max_minutes = eval_every, max_minutes
        self.out = out
        self.start_time = start_time
        self.validate, self.key, self.names = validate, key, names
        self.next_eval = eval_every
        self.best: tuple[Any, int, dict[str, float]] | None = None
        self.curve: list[dict[str, float]] = []
        self.stopped_by_budget = False

    def _on_step(self) -> bool:
        if self.max_minutes is not None and time.time() - self.start_time > 60.0 * self.max_minutes:
            self.stopped_by_budget = True
            return False  # SB3 ends learn() when a callback's step returns False
        return True

    def evaluate_now(self) -> None:
        venv = self.model.get_env()
        assert isinstance(venv, VecNormalize)
        policy = self.export(self.model, venv)
        v = self.validate(policy)
        key = self.key(v)
        point = {"timesteps": float(self.num_timesteps), "wall_s": time.time() - self.start_time, **v}
        self.curve.append(point)
        npz, zip_name, curve, stats = self.names
        with (self.out / curve).open("a" if len(self.curve) > 1 else "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(point))
            if len(self.curve) == 1:
                writer.writeheader()
            writer.writerow(point)
        for k, value in v.items():
            self.logger.record(f"validation/{k}", value)
        if self.best is None or key < self.best[0]:
            self.best = (key, self.num_timesteps, v)
            if npz is not None:
                policy.save(self.out / npz)
            self.model.save(self.out / zip_name)
            if stats is not None:
                venv.save(str(self.out / stats))

    def _on_rollout_end(self) -> None:
        if self.num_timesteps >= self.next_eval:
            self.next_eval += self.eval_every
            self.evaluate_now()


def train_cooling_ppo(config: CoolingPPOConfig | None = None, out: str | Path = "agents/cooling/weights",
                      tensorboard_log: str | None = "runs/cooling", progress_bar: bool = True,
                      verbose: int = 0) -> dict[str, Any]:
    """Train, select and export the PPO cooling policy (module doc); return the JSON record that was written.

    :param config: hyperparameters (defaults: the shipped policy's).
    :param out: folder for ``ppo_cooling.npz``, ``.json``, ``.zip`` and ``learning_curve.csv``.
    :param tensorboard_log: TensorBoard log folder (None: no logs).
    :param progress_bar: show SB3's progress bar.
    :param verbose: SB3 verbosity.
    """
    config = config or CoolingPPOConfig()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    torch.manual_seed(config.seed)
    start = time.time()
    venv = make_vec_env(config)
    model = PPO(
        "MlpPolicy", venv, learning_rate=config.learning_rate, n_steps=config.n_steps,
        batch_size=config.batch_size, n_epochs=config.n_epochs, gamma=config.gamma, gae_lambda=config.gae_lambda,
        clip_range=config.clip_range, ent_coef=config.ent_coef, target_kl=config.target_kl, use_sde=config.use_sde,
        sde_sample_freq=config.sde_sample_freq, policy_kwargs=policy_kwargs(config),
        seed=config.seed, device="cpu", verbose=verbose,
    )
    model.set_logger(sb3_logger(tensorboard_log, "ppo_cooling", verbose))
    if config.initial_setpoints is not None:
        bias = SupervisoryActionMap().normalised(*config.initial_setpoints)
        with torch.no_grad():
            model.policy.action_net.bias.copy_(torch.as_tensor(bias, dtype=torch.float32))
    select = SelectAndBudget(config.eval_every, config.max_minutes, out, start,
                             lambda policy: validate(policy, config.validation_seeds), selection_key)
    callbacks: list[BaseCallback] = [select]
    if progress_bar:
        callbacks.append(ProgressBarCallback())
    model.learn(total_timesteps=config.timesteps, callback=CallbackList(callbacks))
    trained_steps = int(model.num_timesteps)
    if not select.curve or select.curve[-1]["timesteps"] < trained_steps:
        select.evaluate_now()
    assert select.best is not None
    wall_s = time.time() - start
    cfg = asdict(config)
    record = {
        "what": "PPO cooling policy (dcops.agents.cooling.ppo); runtime reads only the .npz",
        "command": f"dcops train-cooling --timesteps {config.timesteps} --seed {config.seed} --n-envs {config.n_envs}",
        "seed": config.seed,
        "timesteps_trained": trained_steps,
        "timesteps_selected": select.best[1],
        "stopped_by_time_budget": select.stopped_by_budget,
        "wall_time_s": round(wall_s, 1),
        "config": cfg,
        "features": list(FEATURE_NAMES),
        "actions": list(ACTION_NAMES),
        "validation_of_selected": select.best[2],
        "versions": {"python": platform.python_version(), "numpy": np.__version__, "torch": torch.__version__,
                     "stable_baselines3": stable_baselines3.__version__},
    }
    (out / JSON_NAME).write_text(json.dumps(record, indent=2, default=str) + "\n")
    venv.close()
    return record


def load_torch_policy(zip_path: str | Path, hidden: tuple[int, ...] = (64, 64),
                      use_sde: bool = True) -> ActorCriticPolicy:
    """The SB3 policy of a checkpoint, rebuilt from its architecture; only the tensors are read (module doc)."""
    import gymnasium as gym

    _, params, _ = load_from_zip_file(zip_path, load_data=False, device="cpu")
    policy = ActorCriticPolicy(
        gym.spaces.Box(-np.inf, np.inf, (N_FEATURES,), dtype=np.float32),
        gym.spaces.Box(-1.0, 1.0, (N_ACTIONS,), dtype=np.float32),
        lr_schedule=lambda _: 0.0,
        net_arch={"pi": list(hidden), "vf": list(hidden)},
        activation_fn=nn.Tanh,
        use_sde=use_sde,
    )
    policy.load_state_dict(params["policy"])
    policy.eval()
    return policy
