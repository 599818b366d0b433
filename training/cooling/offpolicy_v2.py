"""SAC and TQC against the plant v2 PPO recipe, like for like (``dcops train-cooling-offpolicy``; issue #24).

What is the same as :mod:`dcops.training.cooling.ppo_v2` (so that only the learning algorithm differs):

- the environment: :class:`~dcops.training.cooling.train_env_v2.CoolingTrainEnvV2` with the same scenarios and the
  same reward, in the same ``DummyVecEnv`` + ``VecNormalize`` (observations and rewards, clip ±10, seeded
  ``seed, seed + 1, …``: :func:`~dcops.training.cooling.ppo.make_vec_env`). SB3's off-policy algorithms store the
  raw observations and rewards in the replay buffer and normalise a sampled batch with the current statistics;
- the starting point: the family-tuned rule through the supervisor (below);
- the checkpoint selection: every ``eval_every`` environment steps the *deterministic* actor runs on the same
  validation episodes (:func:`~dcops.training.cooling.ppo_v2.validation_episodes`, seeds 2000+), summarised and
  ranked the same way (:func:`~dcops.training.cooling.ppo_v2.summarise`,
  :func:`~dcops.training.cooling.ppo_v2.selection_key_v2`); the start (the rule) is a candidate too. The actor is
  run by :func:`offpolicy_controller` (the PPO controller with :class:`ResidualSB3Policy`), which calls ``model.predict`` (torch: this is a comparison, not a shipped
  runtime). The curve has PPO's columns (``timesteps, wall_s, objective_ratio, zone_time_above_27_pct,
  worst_minutes_above_32, score``);
- single-threaded torch, one process, ``timesteps`` and ``max_minutes`` bounding the run.

**Starting at the rule: the residual action** (:class:`ResidualRuleAction`). PPO starts at the rule by setting its
Gaussian's mean bias to :func:`~dcops.agents.cooling.ppo_v2.rule_action`. SAC's and TQC's actions are squashed by a
tanh, so that trick would start them on the tanh's slopes (the rule's chilled-water margin is at −1, the edge of its
range). Instead the learner's action ``a ∈ [−1, 1]⁷`` is a *residual*: the environment receives
``clip(rule_action() + a, −1, 1)``, so ``a = 0`` is the rule action exactly, and the actor's mean layer starts at
zero weights and bias (:func:`start_at_the_rule`), so its deterministic action *is* the rule action until it
learns. "The rule" here is PPO's start too: the family-tuned rule through the supervisor, whose tank flow is the
policy's (0 at the rule action), so the rule's own tank discharge while a chiller is lost is off there (which is why
that start has minutes above 32 °C in the cascading-failure task, where the family rule alone has none). The reach:
every action within ±1 (half its range) of the rule's, and more on the side away from the range's edge.

**Hyperparameters** (:class:`CoolingOffPolicyV2Config`; the runs of ``reports/cooling/v2_offpolicy.md`` are the
defaults with the training reward's energy weight at 2, ``--energy-weight 2``, the PPO recipe's weight then):

- one environment, one gradient step per environment step (``train_freq 1``, ``gradient_steps 1``): SAC's and
  TQC's published and SB3-default update-to-data ratio. More environments per gradient step would only lower that
  ratio; the environment step (~0.2 ms) is cheap next to a gradient step, so the wall budget buys gradient steps,
  not samples, and PPO's 8 environments exist to decorrelate on-policy batches, which a replay buffer does anyway;
- Adam 3·10⁻⁴, batch 256, τ 0.005, a 300 k-step buffer (about 2,000 episodes: the whole run at this budget),
  5,000 warm-up steps of uniform random residuals (SB3's warm-up: they give the critic the consequences of bad
  set-points, which the rule's neighbourhood never shows; measured in a 15 k-step SAC pilot, 1,000 warm-up steps
  did worse: validation score 0.458 against 0.503 at 15 k steps), γ 0.98 (PPO's: about 4 h);
- the actor is PPO's: 64×64 tanh (the same function class, so a winner could be exported to the numpy runtime);
  the critics SAC's usual 256×256 (tanh here too: SB3 shares one activation), 2 of them; TQC: 25 quantiles each,
  the top 2 per net dropped (sb3-contrib's defaults);
- exploration: the Gaussian's log-σ starts at −2 (σ ≈ 0.14, PPO's), the entropy coefficient is learnt from 0.01
  towards a target entropy of −7 (−dim A, SB3's default), which near a = 0 means σ ≈ 0.09 per action: below PPO's
  fixed 0.14, which PPO trained with. Why small: with larger noise PPO learnt to over-cool against its own noise
  (module doc of :mod:`~dcops.training.cooling.ppo_v2`); SB3's default start (α = 1) would reward entropy far above
  the normalised rewards (a few hundredths per step) until Adam had brought α down, thousands of steps.
- ``eval_every`` 10,000 steps: at the off-policy speed (70 steps/s for SAC, 40 for TQC on one thread of the
  shared 2-core machine in the report's runs; a gradient step of the 256×256 critics is most of it: about 10 ms
  for SAC's two, 25 ms for TQC's quantile critics) that is a validation every 2–4 minutes, PPO's every 1–1.5
  (every 200 k steps), and still 5 trained checkpoints for TQC in 20 minutes.

Outputs in ``out``: ``learning_curve_<algorithm>_v2.csv``, ``<algorithm>_cooling_v2.json`` (the recipe, steps,
wall time, steps/s, the start's and the kept checkpoint's validation, versions), and the kept checkpoint as SB3's
``<algorithm>_cooling_v2.zip`` with ``<algorithm>_cooling_v2_vecnormalize.pkl`` (only load files you made).
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import sb3_contrib
import stable_baselines3
import torch
from numpy.typing import NDArray
from sb3_contrib import TQC
from stable_baselines3 import SAC
from stable_baselines3.common.callbacks import BaseCallback, CallbackList, ProgressBarCallback
from stable_baselines3.common.vec_env import VecNormalize
from torch import nn

from dcops.agents.cooling.ppo_v2 import (
    ACTION_NAMES_V2,
    FEATURE_NAMES_V2,
    N_ACTIONS_V2,
    PPOControllerV2,
    rule_action,
)
from dcops.training.cooling.ppo import SelectAndBudget, make_vec_env
from dcops.training.cooling.ppo_v2 import (
    TASK_VALIDATION_SEEDS,
    VALIDATION_SEEDS,
    selection_key_v2,
    summarise,
    validation_episodes,
)
from dcops.training.cooling.train_env_v2 import CoolingTrainEnvV2, RewardWeightsV2, TrainingScenariosV2
from dcops.training.sb3_logging import sb3_logger

ALGORITHMS: dict[str, type[SAC] | type[TQC]] = {"sac": SAC, "tqc": TQC}


def curve_name(algorithm: str) -> str:
    return f"learning_curve_{algorithm}_v2.csv"


def record_name(algorithm: str) -> str:
    return f"{algorithm}_cooling_v2.json"


def residual_action(residual: NDArray[np.floating], rule: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """The supervisor's action for a residual ``a``: ``clip(rule_action() + a, −1, 1)`` (module doc)."""
    rule = rule_action() if rule is None else rule
    return np.clip(rule + np.asarray(residual, dtype=np.float64).reshape(N_ACTIONS_V2), -1.0, 1.0)


class ResidualRuleAction(gym.ActionWrapper):
    """A :class:`CoolingTrainEnvV2` whose action is the residual from the rule's (:func:`residual_action`); the
    action space stays ``Box(−1, 1, (7,))`` and ``a = 0`` is the rule."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.rule = rule_action()

    def action(self, action: Any) -> NDArray[np.float64]:
        return residual_action(action, self.rule)


def residual_env(scenarios: TrainingScenariosV2, reward: RewardWeightsV2) -> ResidualRuleAction:
    """PPO's training environment with the residual action (what :func:`make_vec_env` builds ``n_envs`` of)."""
    return ResidualRuleAction(CoolingTrainEnvV2(scenarios, reward=reward))


@dataclass
class CoolingOffPolicyV2Config:
    """Hyperparameters of :func:`train_cooling_offpolicy_v2` (the module doc says why each default).

    :param algorithm: ``"sac"`` (stable-baselines3) or ``"tqc"`` (sb3-contrib).
    :param seed: seeds torch, SB3 and the scenario generators.
    :param timesteps: environment steps (5-minute control steps); ``max_minutes`` may stop the run first.
    :param max_minutes: wall-clock budget (None: none); checked every step, the final validation comes after.
    :param n_envs: environments stepped together.
    :param learning_rate: Adam's, for actor, critics and the entropy coefficient.
    :param buffer_size: replay buffer transitions.
    :param batch_size: transitions per gradient step.
    :param gamma: discount per 5-minute step.
    :param tau: Polyak coefficient of the target critics.
    :param learning_starts: steps of uniform random residuals before the first gradient step.
    :param train_freq: environment steps between training calls.
    :param gradient_steps: gradient steps per training call.
    :param ent_coef: the entropy coefficient (``"auto_x"``: learnt, starting at x).
    :param target_entropy: the learnt coefficient's target entropy (nats, over the 7 actions).
    :param log_std_init: the initial log standard deviation of the actor's Gaussian (before the tanh).
    :param actor_hidden: the actor's tanh hidden layers.
    :param critic_hidden: each critic's hidden layers.
    :param n_quantiles: TQC: quantiles per critic.
    :param top_quantiles_to_drop_per_net: TQC: how many of each critic's highest quantiles the target drops.
    :param eval_every: environment steps between validations.
    :param scenarios: the training scenarios (PPO's).
    :param reward: the training reward's weights (PPO's).
    """

    algorithm: str = "sac"
    seed: int = 0
    timesteps: int = 2_000_000
    max_minutes: float | None = None
    n_envs: int = 1
    learning_rate: float = 3e-4
    buffer_size: int = 300_000
    batch_size: int = 256
    gamma: float = 0.98
    tau: float = 0.005
    learning_starts: int = 5_000
    train_freq: int = 1
    gradient_steps: int = 1
    ent_coef: str | float = "auto_0.01"
    target_entropy: float = -float(N_ACTIONS_V2)
    log_std_init: float = -2.0
    actor_hidden: tuple[int, ...] = (64, 64)
    critic_hidden: tuple[int, ...] = (256, 256)
    n_quantiles: int = 25
    top_quantiles_to_drop_per_net: int = 2
    eval_every: int = 10_000
    scenarios: TrainingScenariosV2 = field(default_factory=TrainingScenariosV2)
    reward: RewardWeightsV2 = field(default_factory=RewardWeightsV2)

    def __post_init__(self) -> None:
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"unknown algorithm {self.algorithm!r}; choose one of {sorted(ALGORITHMS)}")


@dataclass
class ResidualSB3Policy:
    """An SB3 off-policy actor as the policy of :class:`~dcops.agents.cooling.ppo_v2.PPOControllerV2`: the features
    normalised by ``normalize_obs`` (the training's ``VecNormalize``), ``model.predict(deterministic=True)`` as the
    residual, the supervisor's action :func:`residual_action`. ``model`` None plays ``a = 0`` (the rule)."""

    model: Any | None
    normalize_obs: Callable[[NDArray[np.float32]], NDArray[np.float32]]

    def act(self, features: NDArray[np.float64]) -> NDArray[np.float64]:
        if self.model is None:
            return residual_action(np.zeros(N_ACTIONS_V2))
        residual, _ = self.model.predict(self.normalize_obs(features.astype(np.float32)[None]), deterministic=True)
        return residual_action(residual)


def offpolicy_controller(model: Any | None, normalize_obs: Callable[[NDArray[np.float32]], NDArray[np.float32]],
                         name: str = "offpolicy_v2") -> PPOControllerV2:
    """An SB3 off-policy actor behind the v2 controller protocol: the PPO controller's features and supervisor with
    :class:`ResidualSB3Policy` as its policy, unshielded (as every checkpoint is scored)."""
    return PPOControllerV2(ResidualSB3Policy(model, normalize_obs), name=name, shield_inlet_c=float("inf"))


def start_at_the_rule(model: SAC | TQC, log_std_init: float) -> None:
    """Zero the actor's mean layer (its deterministic action is ``a = 0``, the rule) and start its log-σ at
    ``log_std_init`` everywhere (zero weights, that bias)."""
    with torch.no_grad():
        model.actor.mu.weight.zero_()
        model.actor.mu.bias.zero_()
        model.actor.log_std.weight.zero_()
        model.actor.log_std.bias.fill_(log_std_init)


def build_model(config: CoolingOffPolicyV2Config, venv: VecNormalize) -> SAC | TQC:
    """The SAC or TQC of ``config`` on ``venv`` (not yet started at the rule)."""
    policy_kwargs: dict[str, Any] = {"net_arch": {"pi": list(config.actor_hidden), "qf": list(config.critic_hidden)},
                                     "activation_fn": nn.Tanh}
    extra: dict[str, Any] = {}
    if config.algorithm == "tqc":
        policy_kwargs["n_quantiles"] = config.n_quantiles
        extra["top_quantiles_to_drop_per_net"] = config.top_quantiles_to_drop_per_net
    return ALGORITHMS[config.algorithm](
        "MlpPolicy", venv, learning_rate=config.learning_rate, buffer_size=config.buffer_size,
        learning_starts=config.learning_starts, batch_size=config.batch_size, tau=config.tau, gamma=config.gamma,
        train_freq=config.train_freq, gradient_steps=config.gradient_steps, ent_coef=config.ent_coef,
        target_entropy=config.target_entropy, policy_kwargs=policy_kwargs, seed=config.seed, device="cpu", **extra,
    )


def _controller(model: SAC | TQC, venv: VecNormalize) -> PPOControllerV2:
    return offpolicy_controller(model, venv.normalize_obs, name=type(model).__name__.lower())


def train_cooling_offpolicy_v2(config: CoolingOffPolicyV2Config | None = None, out: str | Path = "runs/cooling_v2/sac",
                               tensorboard_log: str | None = None, progress_bar: bool = False,
                               log: Callable[[str], None] | None = print) -> dict[str, Any]:
    """Train SAC or TQC from the rule, select on validation like PPO (module doc); return the JSON record written.

    :param log: called with one line per validation (None: silent).
    """
    config = config or CoolingOffPolicyV2Config()
    algorithm = config.algorithm
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    torch.manual_seed(config.seed)
    start = time.time()
    venv = make_vec_env(config, residual_env)
    model = build_model(config, venv)
    model.set_logger(sb3_logger(tensorboard_log, f"{algorithm}_cooling_v2", 0))
    start_at_the_rule(model, config.log_std_init)

    def validate(controller: PPOControllerV2) -> dict[str, float]:
        v = summarise(validation_episodes(controller))
        if log is not None:
            log(f"{algorithm} {model.num_timesteps:>9,} steps {time.time() - start:7.0f} s: score {v['score']:.4f}, "
                f"objective ratio {v['objective_ratio']:.4f}, > 27 °C {v['zone_time_above_27_pct']:.2f} %, "
                f"worst > 32 °C {v['worst_minutes_above_32']:.0f} min")
        return v

    select = SelectAndBudget(config.eval_every, config.max_minutes, out, start, validate, selection_key_v2,
                             (None, f"{algorithm}_cooling_v2.zip", curve_name(algorithm),
                              f"{algorithm}_cooling_v2_vecnormalize.pkl"), export=_controller)
    callbacks: list[BaseCallback] = [select]
    if progress_bar:
        callbacks.append(ProgressBarCallback())
    select.init_callback(model)
    select.evaluate_now()  # the start, a = 0: the rule through the supervisor
    model.learn(total_timesteps=config.timesteps, callback=CallbackList(callbacks))
    trained = int(model.num_timesteps)
    if select.curve[-1]["timesteps"] < trained:
        select.evaluate_now()
    assert select.best is not None
    wall_s = time.time() - start
    start_point = {k: v for k, v in select.curve[0].items() if k not in ("timesteps", "wall_s")}
    record = {
        "what": f"plant v2 {algorithm.upper()} cooling policy (residual on the rule; dcops.training.cooling."
                "offpolicy_v2), a comparison with the PPO recipe",
        "command": f"dcops train-cooling-offpolicy --algorithm {algorithm} --timesteps {config.timesteps} "
                   f"--seed {config.seed}"
                   + (f" --max-minutes {config.max_minutes}" if config.max_minutes is not None else "")
                   + f" --energy-weight {config.reward.energy}",
        "algorithm": algorithm,
        "seed": config.seed,
        "timesteps_trained": trained,
        "timesteps_selected": select.best[1],
        "stopped_by_time_budget": select.stopped_by_budget,
        "wall_time_s": round(wall_s, 1),
        "steps_per_s": round(trained / wall_s, 1),
        "load_average_1_5_15_min": list(os.getloadavg()),
        "config": asdict(config),
        "features": list(FEATURE_NAMES_V2),
        "actions": list(ACTION_NAMES_V2),
        "validation_seeds": {"family": list(VALIDATION_SEEDS), "tasks": list(TASK_VALIDATION_SEEDS)},
        "validation_of_start": start_point,
        "validation_of_selected": select.best[2],
        "versions": {"python": platform.python_version(), "numpy": np.__version__, "torch": torch.__version__,
                     "stable_baselines3": stable_baselines3.__version__, "sb3_contrib": sb3_contrib.__version__},
    }
    (out / record_name(algorithm)).write_text(json.dumps(record, indent=2, default=str) + "\n")
    venv.close()
    return record
