"""Train the learned queue-ordering policy: imitation of ATC, then MaskablePPO (sb3-contrib), then export.

Pipeline (:func:`train_queue_policy`), every step seeded:

1. **Tune ATC's k** on the tuning seeds (training range); the features and the expert use it.
2. **Imitation warm start**: run ATC in the environment on training episodes, record (observation, ATC's
   slot, discounted return); fit the actor by cross-entropy to ATC's choice and the critic to the returns.
   The actor scores each job as ``atc_gain * atc_rel + correction`` (see
   :mod:`dcops.cluster.queue.scoring_policy`), so this only has to sharpen ``atc_gain`` and keep the
   correction near zero, and the critic starts calibrated, which keeps PPO's first updates from wrecking it.
3. **PPO** (MaskablePPO, invalid slots masked) from the warm start, softened by ``warm_start_temperature`` so
   that it explores alternatives to ATC's choice; rewards scaled to 1 per 10,000 weight-seconds of tardiness
   (``reward_scale``), which keeps returns of order 1-10 (at 1e-3 the critic's loss dominated the shared
   gradient clipping).
4. **Checkpoint selection** on validation seeds (training range, disjoint from tuning and test seeds):
   every ``eval_every`` steps the actor is exported to numpy and run greedily; the best mean weighted
   tardiness wins (the warm start itself is a candidate, so PPO can only be kept if it helped on validation).
5. **Export** the winner to ``<out>/queue_policy.npz`` + ``.json`` (config, seeds, tuned k, curve summary) and
   the learning curve to ``<out>/learning_curve.csv``. TensorBoard logs go to ``runs/queue_ppo``.

Runs in about six minutes on one CPU thread with the defaults (``torch.set_num_threads(1)``); the same seed
on the same software gives bit-identical weights (checked: two runs, identical ``.npz``).
"""

from __future__ import annotations

import csv
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableMultiInputActorCriticPolicy
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from stable_baselines3.common.vec_env import DummyVecEnv
from torch import nn

from dcops.cluster.queue.env import QueueEnv
from dcops.cluster.queue.features import N_FEATURES
from dcops.cluster.queue.heuristics import atc_log_index, make_rule
from dcops.cluster.queue.jobs import streaming_instance
from dcops.cluster.queue.scoring_policy import ATC_FEATURE, DEFAULT_WEIGHTS, ScoringPolicy
from dcops.cluster.queue.seeds import tuning_seeds, validation_seeds
from dcops.cluster.queue.simulator import simulate
from dcops.cluster.queue.tuning import tune_parameter
from dcops.training.sb3_logging import sb3_logger


@dataclass
class QueueTrainConfig:
    """Hyperparameters of :func:`train_queue_policy` (the defaults reproduce the shipped weights).

    :param seed: seeds torch, the environments and the imitation episodes.
    :param timesteps: PPO environment steps (decisions) after the warm start.
    :param hidden: hidden units H of the scoring network.
    :param max_slots: jobs offered per decision.
    :param atc_k: ATC look-ahead; None tunes it on ``n_tuning_seeds`` training seeds.
    :param n_tuning_seeds: scenarios for tuning k.
    :param imitation_episodes: ATC episodes recorded for the warm start.
    :param imitation_epochs: passes over the imitation data.
    :param warm_start_temperature: the imitated actor's logits are divided by this before PPO (the greedy
        choice is unchanged; a softer policy explores the alternatives to ATC's choice, which PPO needs to
        see to learn anything: at temperature 1 the warm start agrees with ATC on ~99.9 % of decisions).
    :param n_envs: parallel (sequential, in-process) environments for PPO.
    :param n_steps: steps per environment per PPO rollout.
    :param batch_size: PPO minibatch size.
    :param n_epochs: PPO epochs per rollout.
    :param learning_rate: PPO Adam learning rate.
    :param gamma: discount per decision.
    :param gae_lambda: GAE lambda.
    :param clip_range: PPO clip range.
    :param ent_coef: entropy bonus.
    :param target_kl: early stop of PPO epochs beyond this KL (None: no early stop).
    :param reward_scale: reward per weight-second of tardiness.
    :param eval_every: PPO steps between validation evaluations.
    :param n_validation_seeds: validation scenarios for checkpoint selection.
    """

    seed: int = 0
    timesteps: int = 400_000
    hidden: int = 64
    max_slots: int = 32
    atc_k: float | None = None
    n_tuning_seeds: int = 300
    imitation_episodes: int = 300
    imitation_epochs: int = 8
    warm_start_temperature: float = 4.0
    n_envs: int = 8
    n_steps: int = 256
    batch_size: int = 256
    n_epochs: int = 4
    learning_rate: float = 1e-4
    gamma: float = 0.97
    gae_lambda: float = 0.9
    clip_range: float = 0.2
    ent_coef: float = 0.0
    target_kl: float | None = None
    reward_scale: float = 1e-4
    eval_every: int = 25_000
    n_validation_seeds: int = 200


# -- networks ----------------------------------------------------------------------------------------------
class QueueObsExtractor(BaseFeaturesExtractor):
    """Pass the padded job matrix through (flattened; the actor-critic reshapes it)."""

    def __init__(self, observation_space, max_slots: int) -> None:
        super().__init__(observation_space, features_dim=max_slots * (N_FEATURES + 1))

    def forward(self, observations: dict[str, torch.Tensor]) -> torch.Tensor:
        return observations["jobs"].flatten(1)


class ScoringActor(nn.Module):
    """Torch twin of :func:`dcops.cluster.queue.scoring_policy.forward_logits` (same parameter names)."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.lin1 = nn.Linear(N_FEATURES, hidden)
        self.lin2 = nn.Linear(hidden, hidden)
        self.ctx2 = nn.Linear(hidden, hidden, bias=False)
        self.lin3 = nn.Linear(hidden, 1)
        self.atc_gain = nn.Parameter(torch.tensor(5.0))
        nn.init.zeros_(self.lin3.weight)
        nn.init.zeros_(self.lin3.bias)

    def forward(self, jobs: torch.Tensor) -> torch.Tensor:
        """Logits ``(B, K)`` from a padded job matrix ``(B, K, 1 + F)`` (column 0 marks occupied slots)."""
        valid = jobs[..., :1]
        x = jobs[..., 1:]
        h1 = torch.tanh(self.lin1(x))
        context = (h1 * valid).sum(1) / valid.sum(1).clamp_min(1.0)
        h2 = torch.tanh(self.lin2(h1) + self.ctx2(context).unsqueeze(1))
        return self.atc_gain * x[..., ATC_FEATURE] + self.lin3(h2).squeeze(-1)

    def numpy_params(self) -> dict[str, np.ndarray]:
        """The arrays of :data:`dcops.cluster.queue.scoring_policy.PARAM_SHAPES`."""

        def arr(t: torch.Tensor) -> np.ndarray:
            return t.detach().cpu().double().numpy().copy()

        return {
            "W1": arr(self.lin1.weight).T,
            "b1": arr(self.lin1.bias),
            "W2": arr(self.lin2.weight).T,
            "U2": arr(self.ctx2.weight).T,
            "b2": arr(self.lin2.bias),
            "w3": arr(self.lin3.weight)[0],
            "b3": arr(self.lin3.bias)[0],
            "atc_gain": arr(self.atc_gain),
        }


class SetCritic(nn.Module):
    """Value of a queue: per-job encoder, masked mean and max pooling, then an MLP."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.encode = nn.Sequential(
            nn.Linear(N_FEATURES, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh()
        )
        self.head = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.Tanh())
        self.latent_dim = hidden

    def forward(self, jobs: torch.Tensor) -> torch.Tensor:
        valid = jobs[..., :1]
        h = self.encode(jobs[..., 1:])
        mean = (h * valid).sum(1) / valid.sum(1).clamp_min(1.0)
        peak = torch.where(valid > 0, h, torch.full_like(h, -1.0)).max(1).values
        return self.head(torch.cat([mean, peak], dim=-1))


class QueueActorCritic(nn.Module):
    """The ``mlp_extractor`` of the SB3 policy: actor logits as the policy latent, critic latent for values."""

    def __init__(self, max_slots: int, hidden: int) -> None:
        super().__init__()
        self.max_slots = max_slots
        self.actor = ScoringActor(hidden)
        self.critic = SetCritic(hidden)
        self.latent_dim_pi = max_slots
        self.latent_dim_vf = hidden

    def _jobs(self, features: torch.Tensor) -> torch.Tensor:
        return features.view(features.shape[0], self.max_slots, N_FEATURES + 1)

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self.actor(self._jobs(features))

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.critic(self._jobs(features))


class QueueScoringPolicy(MaskableMultiInputActorCriticPolicy):
    """MaskablePPO policy whose action logits are the per-job scores (no extra linear layer)."""

    def __init__(self, *args, max_slots: int = 32, hidden: int = 64, **kwargs) -> None:
        self._max_slots = max_slots
        self._hidden = hidden
        kwargs.setdefault("ortho_init", False)
        kwargs.setdefault("features_extractor_class", QueueObsExtractor)
        kwargs.setdefault("features_extractor_kwargs", {"max_slots": max_slots})
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = QueueActorCritic(self._max_slots, self._hidden)

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        self.action_net = nn.Identity()  # the actor already returns one logit per slot
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict:
        data = super()._get_constructor_parameters()
        data.update(max_slots=self._max_slots, hidden=self._hidden)
        return data


# -- helpers ------------------------------------------------------------------------------------------------
def export_policy(
    model: MaskablePPO, atc_k: float, max_slots: int, metadata: dict | None = None
) -> ScoringPolicy:
    """The actor of ``model`` as a numpy :class:`ScoringPolicy`."""
    actor = model.policy.mlp_extractor.actor
    return ScoringPolicy(actor.numpy_params(), atc_k, max_slots, "PPO", dict(metadata or {}))


def mean_weighted_tardiness(policy, seeds: list[int]) -> np.ndarray:
    """Per-seed total weighted tardiness of ``policy`` on streaming scenarios (greedy)."""
    return np.array([simulate(streaming_instance(s), policy).weighted_tardiness for s in seeds])


def collect_imitation_data(
    config: QueueTrainConfig, atc_k: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """ATC episodes in the environment: job matrices, masks, ATC's slots and discounted returns."""
    env = QueueEnv(atc_k=atc_k, max_slots=config.max_slots, reward_scale=config.reward_scale)
    rng = np.random.default_rng(config.seed)
    seeds = rng.choice(500_000, size=config.imitation_episodes, replace=False)
    jobs, masks, actions, returns = [], [], [], []
    for seed in seeds:
        obs, info = env.reset(seed=int(seed), options={"instance_seed": int(seed)})
        rewards = []
        while True:
            decision = env.decision_state()
            if decision is None:
                action = 0
            else:
                state, positions = decision
                # ATC's choice in float64 over all waiting jobs: always among the slots (top-K by ATC).
                best = int(np.argmax(atc_log_index(state, atc_k)))
                action = int(np.flatnonzero(positions == best)[0])
                jobs.append(obs["jobs"])
                masks.append(obs["action_mask"].astype(bool))
                actions.append(action)
            obs, reward, terminated, _, _ = env.step(action)
            if decision is not None:
                rewards.append(reward)
            else:
                rewards[-1] += reward if rewards else 0.0
            if terminated:
                break
        discounted = np.zeros(len(rewards))
        running = 0.0
        for i in range(len(rewards) - 1, -1, -1):
            running = rewards[i] + config.gamma * running
            discounted[i] = running
        returns.extend(discounted)
    return np.stack(jobs), np.stack(masks), np.asarray(actions), np.asarray(returns, dtype=np.float32)


def imitation_warm_start(model: MaskablePPO, data, config: QueueTrainConfig) -> dict[str, float]:
    """Fit the actor to ATC's choices (cross-entropy) and the critic to the returns (MSE)."""
    jobs, masks, actions, returns = (torch.as_tensor(a) for a in data)
    policy = model.policy
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
    generator = torch.Generator().manual_seed(config.seed)
    n = len(actions)
    ce = mse = float("nan")
    for _ in range(config.imitation_epochs):
        for batch in torch.randperm(n, generator=generator).split(256):
            features = jobs[batch].flatten(1)
            logits = policy.mlp_extractor.forward_actor(features).masked_fill(~masks[batch], -1e9)
            values = policy.value_net(policy.mlp_extractor.forward_critic(features)).squeeze(-1)
            ce_loss = nn.functional.cross_entropy(logits, actions[batch])
            mse_loss = nn.functional.mse_loss(values, returns[batch])
            optimizer.zero_grad()
            (ce_loss + 0.5 * mse_loss).backward()
            nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
            optimizer.step()
            ce, mse = float(ce_loss.detach()), float(mse_loss.detach())
    with torch.no_grad():
        logits = policy.mlp_extractor.forward_actor(jobs.flatten(1)).masked_fill(~masks, -1e9)
        agreement = float((logits.argmax(1) == actions).float().mean())
    actor = policy.mlp_extractor.actor
    with torch.no_grad():  # logits / T: atc_gain and the output layer are the only linear paths to the logit
        for tensor in (actor.atc_gain, actor.lin3.weight, actor.lin3.bias):
            tensor.div_(config.warm_start_temperature)
        logits = policy.mlp_extractor.forward_actor(jobs.flatten(1)).masked_fill(~masks, -1e9)
        sampled_agreement = float(torch.softmax(logits, 1).gather(1, actions[:, None]).mean())
    gain = float(actor.atc_gain.detach())
    return {
        "cross_entropy": ce,
        "value_mse": mse,
        "agreement": agreement,
        "sampled_agreement": sampled_agreement,
        "atc_gain": gain,
    }


class ProgressCallback(BaseCallback):
    """A tqdm progress bar over PPO steps (SB3's own bar needs ``rich``, which the project does not install)."""

    def __init__(self, total: int) -> None:
        super().__init__()
        self.total = total
        self.bar = None

    def _on_training_start(self) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=self.total, desc="PPO", unit="step", smoothing=0.1)

    def _on_step(self) -> bool:
        self.bar.update(self.model.n_envs)
        return True

    def _on_training_end(self) -> None:
        self.bar.close()


class ValidationCallback(BaseCallback):
    """Every ``eval_every`` steps: export, run greedily on validation seeds, keep the best, log a curve row."""

    def __init__(self, evaluate, eval_every: int, initial: dict) -> None:
        super().__init__()
        self.evaluate = evaluate
        self.eval_every = eval_every
        self.rows: list[dict] = [initial]
        self.best_value = initial["validation_mean_wt"]
        self.best_params = initial.pop("_params")
        self.best_step = 0
        self._next = eval_every

    def consider(self, row: dict) -> None:
        """Record a curve row; keep its parameters if it is the best so far on validation."""
        params = row.pop("_params")
        self.rows.append(row)
        if row["validation_mean_wt"] < self.best_value:
            self.best_value, self.best_params, self.best_step = (
                row["validation_mean_wt"],
                params,
                row["timesteps"],
            )

    def _on_step(self) -> bool:
        if self.num_timesteps >= self._next:
            self._next += self.eval_every
            row = self.evaluate(self.num_timesteps)
            buffer = self.model.ep_info_buffer
            row["episode_reward_mean"] = float(np.mean([e["r"] for e in buffer])) if buffer else float("nan")
            self.logger.record("validation/mean_weighted_tardiness", row["validation_mean_wt"])
            self.logger.record("validation/gain_vs_atc", row["gain_vs_atc"])
            self.consider(row)
        return True


def _make_env(config: QueueTrainConfig, atc_k: float, rank: int):
    def thunk():
        from stable_baselines3.common.monitor import Monitor

        env = Monitor(QueueEnv(atc_k=atc_k, max_slots=config.max_slots, reward_scale=config.reward_scale))
        env.reset(seed=config.seed * 1000 + rank)
        return env

    return thunk


def train_queue_policy(
    config: QueueTrainConfig | None = None,
    out: Path | None = None,
    log_dir: Path | None = Path("runs/queue_ppo"),
    progress_bar: bool = True,
    verbose: bool = True,
) -> dict:
    """Run the whole pipeline; write the weights and the learning curve to ``out``; return a summary."""
    config = config or QueueTrainConfig()
    out = Path(out) if out is not None else DEFAULT_WEIGHTS.parent
    torch.set_num_threads(1)
    torch.manual_seed(config.seed)
    started = time.perf_counter()

    def say(message: str) -> None:
        if verbose:
            print(f"[{time.perf_counter() - started:6.1f} s] {message}", flush=True)

    if config.atc_k is None:
        tuning = tune_parameter("atc", tuning_seeds(config.n_tuning_seeds))
        atc_k = tuning.best_k
        say(f"ATC k tuned on {config.n_tuning_seeds} training seeds: k = {atc_k}")
    else:
        atc_k = float(config.atc_k)
    val_seeds = validation_seeds(config.n_validation_seeds)
    atc_val = mean_weighted_tardiness(make_rule("atc", atc_k), val_seeds)
    atc_val_mean = float(atc_val.mean())

    data = collect_imitation_data(config, atc_k)
    say(f"imitation data: {len(data[2])} decisions from {config.imitation_episodes} ATC episodes")

    vec_env = DummyVecEnv([_make_env(config, atc_k, i) for i in range(config.n_envs)])
    model = MaskablePPO(
        QueueScoringPolicy,
        vec_env,
        learning_rate=config.learning_rate,
        n_steps=config.n_steps,
        batch_size=config.batch_size,
        n_epochs=config.n_epochs,
        gamma=config.gamma,
        gae_lambda=config.gae_lambda,
        clip_range=config.clip_range,
        ent_coef=config.ent_coef,
        target_kl=config.target_kl,
        policy_kwargs={"max_slots": config.max_slots, "hidden": config.hidden},
        seed=config.seed,
        device="cpu",
        verbose=0,
    )
    model.set_logger(sb3_logger(log_dir, "queue_ppo"))
    warm = imitation_warm_start(model, data, config)
    say(
        f"warm start: agreement with ATC {warm['agreement']:.3f} (greedy), {warm['sampled_agreement']:.3f} "
        f"(sampled), atc_gain {warm['atc_gain']:.1f}, "
        f"value MSE {warm['value_mse']:.3f}"
    )

    def evaluate(timesteps: int) -> dict:
        policy = export_policy(model, atc_k, config.max_slots)
        values = mean_weighted_tardiness(policy, val_seeds)
        mean = float(values.mean())
        say(f"step {timesteps:>8}: validation mean WT {mean:,.0f} (ATC {atc_val_mean:,.0f})")
        return {
            "timesteps": timesteps,
            "validation_mean_wt": mean,
            "atc_validation_mean_wt": atc_val_mean,
            "gain_vs_atc": 1.0 - mean / atc_val_mean,
            "episode_reward_mean": float("nan"),
            "_params": policy.params,
        }

    callback = ValidationCallback(evaluate, config.eval_every, evaluate(0))
    if config.timesteps > 0:
        callbacks = [callback, ProgressCallback(config.timesteps)] if progress_bar else [callback]
        model.learn(config.timesteps, callback=callbacks)
        if callback.rows[-1]["timesteps"] < model.num_timesteps:  # the final policy is a candidate too
            callback.consider(evaluate(model.num_timesteps))
    if log_dir is not None:
        Path(log_dir).mkdir(parents=True, exist_ok=True)
        model.save(Path(log_dir) / "queue_ppo_last.zip")

    record = {
        "config": asdict(config),
        "atc_k": atc_k,
        "max_slots": config.max_slots,
        "selected_timesteps": callback.best_step,
        "validation_mean_wt": callback.best_value,
        "atc_validation_mean_wt": atc_val_mean,
        "warm_start": warm,
        "seeds": {
            "tuning": "500000..500000+n_tuning_seeds-1",
            "validation": "600000..600000+n_validation_seeds-1",
            "episodes": "0..499999 (imitation: drawn with numpy default_rng(seed); PPO: env.np_random)",
            "test_never_used": "1000000..1000299",
        },
        "train_seconds": round(time.perf_counter() - started, 1),
        "torch_version": torch.__version__,
    }
    best = ScoringPolicy(callback.best_params, atc_k, config.max_slots, "PPO", record)
    out.mkdir(parents=True, exist_ok=True)
    best.save(out / "queue_policy.npz")
    with (out / "learning_curve.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(callback.rows[0]))
        writer.writeheader()
        for row in callback.rows:
            writer.writerow({k: (round(v, 6) if isinstance(v, float) else v) for k, v in row.items()})
    say(
        f"kept step {callback.best_step}: validation mean WT {callback.best_value:,.0f} vs ATC {atc_val_mean:,.0f}"
    )
    return record
