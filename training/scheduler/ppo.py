"""Train the RL scheduler: behaviour cloning on teacher data, then MaskablePPO (sb3-contrib), then export.

Pipeline (:func:`train_scheduler_ppo`), every step seeded:

1. **Behaviour cloning** on a teacher split of ``dcops scheduler-teacher`` (:mod:`dcops.training.scheduler.
   teacher`): maximise the masked log-probability of the teacher's per-slot codes
   (``policy.evaluate_actions(obs, codes, action_masks)``, MaskablePPO's own masked distribution) and fit the
   critic to the windows' rewards-to-go. Reports the accuracy on the validation split: per decision (valid
   slots whose greedy code is the teacher's) and per window (every slot right).
2. **MaskablePPO** from the cloned policy, on :class:`MixedScenarioEnv` (the evaluation matrix's mixes and
   conditions, one drawn per episode, or with ``config.family`` that scenario family's game; seeds from the
   environment's own generator in [10⁴, 2³¹), never 0–19, a family's ladder seeds nor the validation range).
   The cloned head is first softened by ``warm_start_temperature`` (logits / T: the greedy action is
   unchanged; PPO needs the alternatives sampled to learn anything).
3. **Checkpoint selection** on validation seeds (the teacher data's validation range: ``2000 …``, or a family's
   first ladder seed + 700 …): every ``eval_every`` steps the actor is exported to numpy and played greedily;
   the best mean episode score wins (the cloned policy is a candidate, step 0), so PPO is kept only where it
   helped on validation. Each row of the curve carries the paired difference with ``priority_threshold`` on
   the same seeds.
4. **Export** the winner to ``<out>/ppo_scheduler.npz`` + ``.json`` (recipe: config, seeds, steps, wall time,
   BC accuracy, validation figures, versions), the cloned policy to ``<out>/bc_scheduler.npz``, the curve to
   ``<out>/learning_curve.csv`` (and ``.png`` with matplotlib).

**Resumable**: ``<out>/checkpoint/`` holds the SB3 model, the curve so far, the best parameters and the run's
configuration after every validation; ``resume=True`` skips the cloning and continues PPO to ``timesteps``, with
the same configuration (any other difference is refused, naming the fields: the model keeps the hyperparameters
it was built with). The environments are seeded again with the run seed on resume, so a resumed segment draws
its episodes from the start of the same scenario stream as the first segment (the shipped run, 100k then
resumed to 160k, was made so; its recipe reproduces it).

The network is :class:`dcops.agents.schedulers.learned.SlotPolicy`'s, in torch (:class:`SlotActorCritic`, same
parameter names, plus a critic on the pooled slots and the global context); the export copies the actor's
tensors into the numpy runtime, so the shipped scheduler runs without torch.
"""

from __future__ import annotations

import csv
import json
import time
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableMultiInputActorCriticPolicy
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from stable_baselines3.common.vec_env import DummyVecEnv
from torch import nn

from dcops.agents.schedulers.learned import N_SLOT_EXTRA, SlotPolicy
from dcops.cluster.observation import N_CLUSTER_FEATURES, N_REQUEST_FEATURES, N_TEAM_FEATURES, N_ZONE_FEATURES
from dcops.evaluation.report import versions
from dcops.training.sb3_logging import sb3_logger
from dcops.training.scheduler.ppo_config import SchedulerPPOConfig
from dcops.training.scheduler.teacher import (
    MATRIX,
    OBS_KEYS,
    episode_env_kwargs,
    episode_key,
    load_split,
    validation_split,
)

FEATURE_KEYS: tuple[str, ...] = ("requests", "request_mask", "cluster", "zones", "teams")
"""Observation arrays the network reads, flattened end to end in this order by :class:`SlotObsExtractor`."""


# -- networks ----------------------------------------------------------------------------------------------
class SlotObsExtractor(BaseFeaturesExtractor):
    """The observation arrays of :data:`FEATURE_KEYS`, flattened end to end (the actor-critic unpacks them)."""

    def __init__(self, observation_space: gym.spaces.Dict) -> None:
        size = sum(int(np.prod(observation_space[key].shape)) for key in FEATURE_KEYS)
        super().__init__(observation_space, features_dim=size)

    def forward(self, observations: dict[str, torch.Tensor]) -> torch.Tensor:
        return torch.cat([observations[key].float().flatten(1) for key in FEATURE_KEYS], dim=1)


class SlotActorCritic(nn.Module):
    """Torch twin of :class:`dcops.agents.schedulers.learned.SlotPolicy` (same parameter names), plus a critic:
    ``tanh([pooled slots, global embedding] Wv + bv)`` (the value head is SB3's ``value_net``)."""

    def __init__(self, n_slots: int, n_zones: int, n_teams: int, n_codes: int, hidden: int,
                 n_team_features: int = N_TEAM_FEATURES) -> None:
        super().__init__()
        self.n_slots, self.n_zones, self.n_teams, self.n_codes = n_slots, n_zones, n_teams, n_codes
        self.n_team_features = n_team_features  # 15, or 16 with the team posterior (dcops.env team_posterior)
        n_slot_in = N_REQUEST_FEATURES + n_team_features + N_SLOT_EXTRA
        n_global = N_CLUSTER_FEATURES + n_zones * N_ZONE_FEATURES + n_teams * n_team_features
        self.glob = nn.Linear(n_global, hidden)  # Wg, bg
        self.slot1 = nn.Linear(n_slot_in, hidden)  # W1, b1
        self.ctx1 = nn.Linear(hidden, hidden, bias=False)  # U1
        self.slot2 = nn.Linear(hidden, hidden)  # W2, b2
        self.ctx2 = nn.Linear(hidden, hidden, bias=False)  # U2
        self.head = nn.Linear(hidden, n_codes)  # W3, b3
        self.critic = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.Tanh())
        self.latent_dim_pi = n_slots * n_codes
        self.latent_dim_vf = hidden

    def _unpack(self, features: torch.Tensor) -> tuple[torch.Tensor, ...]:
        s, z, t, f = self.n_slots, self.n_zones, self.n_teams, self.n_team_features
        sizes = [s * N_REQUEST_FEATURES, s, N_CLUSTER_FEATURES, z * N_ZONE_FEATURES, t * f]
        requests, valid, cluster, zones, teams = torch.split(features, sizes, dim=1)
        return (requests.view(-1, s, N_REQUEST_FEATURES), valid, cluster, zones, teams.view(-1, t, f))

    def _encode(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Per-slot embeddings ``e``, their masked mean, the global embedding, the valid mask (numpy twin:
        ``SlotPolicy.logits``)."""
        requests, valid, cluster, zones, teams = self._unpack(features)
        n_teams = teams.shape[1]
        index = torch.round(requests[..., 1] * (n_teams - 1)).clamp(0, n_teams - 1).long()
        team_rows = torch.gather(teams, 1, index[..., None].expand(-1, -1, self.n_team_features))
        priority = requests[..., 18]
        kw = requests[..., 12] * valid
        s = requests.shape[1]
        earlier = torch.ones(s, s, dtype=torch.bool, device=features.device).tril(-1)  # [s, j]: j < s
        ahead = (priority[:, None, :] > priority[:, :, None]) | (
            (priority[:, None, :] == priority[:, :, None]) & earlier)
        gpu = requests[..., 15:18]
        same = ahead & ((gpu[:, :, None, :] * gpu[:, None, :, :]).sum(-1) > 0.5)
        gpus = requests[..., 14] * valid
        extra = [(ahead.float() * kw[:, None, :]).sum(-1), (same.float() * kw[:, None, :]).sum(-1),
                 (same.float() * gpus[:, None, :]).sum(-1)]
        x = torch.cat([requests, team_rows, torch.stack(extra, dim=-1)], dim=-1)
        g = torch.cat([cluster, zones, teams.flatten(1)], dim=1)
        g_e = torch.tanh(self.glob(g))
        e = torch.tanh(self.slot1(x) + self.ctx1(g_e)[:, None, :])
        v = valid[..., None]
        pooled = (e * v).sum(1) / v.sum(1).clamp_min(1.0)
        return e, pooled, g_e, v

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        """Logits ``(B, S · A)``, slot after slot: the action mask's layout."""
        e, pooled, _, _ = self._encode(features)
        h = torch.tanh(self.slot2(e) + self.ctx2(pooled)[:, None, :])
        return self.head(h).flatten(1)

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        _, pooled, g_e, _ = self._encode(features)
        return self.critic(torch.cat([pooled, g_e], dim=1))

    def numpy_params(self) -> dict[str, np.ndarray]:
        """The arrays of :data:`dcops.agents.schedulers.learned.PARAM_NAMES` ((inputs, outputs) matrices)."""

        def arr(t: torch.Tensor) -> np.ndarray:
            return t.detach().cpu().double().numpy().copy()

        return {"Wg": arr(self.glob.weight).T, "bg": arr(self.glob.bias),
                "W1": arr(self.slot1.weight).T, "U1": arr(self.ctx1.weight).T, "b1": arr(self.slot1.bias),
                "W2": arr(self.slot2.weight).T, "U2": arr(self.ctx2.weight).T, "b2": arr(self.slot2.bias),
                "W3": arr(self.head.weight).T, "b3": arr(self.head.bias)}


class SlotScoringPolicy(MaskableMultiInputActorCriticPolicy):
    """MaskablePPO policy whose action logits are the slot network's (no extra linear layer)."""

    def __init__(self, *args: Any, hidden: int = 64, **kwargs: Any) -> None:
        self._hidden = hidden
        kwargs.setdefault("ortho_init", False)
        kwargs.setdefault("features_extractor_class", SlotObsExtractor)
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        space = self.observation_space
        n_slots = space["requests"].shape[0]
        self.mlp_extractor = SlotActorCritic(n_slots, space["zones"].shape[0], space["teams"].shape[0],
                                             int(space["action_mask"].shape[0]) // n_slots, self._hidden,
                                             space["teams"].shape[1])

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        self.action_net = nn.Identity()  # the actor already returns one logit per (slot, code)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(hidden=self._hidden)
        return data


# -- environments -------------------------------------------------------------------------------------------
EPISODE_SEED_LOW = 10_000
"""PPO episodes draw their seeds from [this, 2³¹): above every ladder, search and validation seed of the matrix and
of every family (tested)."""


class MixedScenarioEnv(gym.Env):
    """``SchedulerEnv`` over the evaluation matrix's scenarios, or one scenario family's: each reset draws a seed
    from the environment's generator (in [10⁴, 2³¹): never an evaluation, ladder or validation seed) and plays
    it in that seed's (mix, condition) (``teacher.scenario_of``), or in ``family``. No structured view is built
    (faster); ``action_masks`` as ``SchedulerEnv``'s."""

    metadata = {"render_modes": []}

    def __init__(self, family: str = MATRIX, team_posterior: bool = False) -> None:
        self.family = family
        self.team_posterior = team_posterior
        self._envs: dict[tuple[str, ...], Any] = {}
        self._env = self._scenario_env(validation_split(1, family)[0])
        self.observation_space = self._env.observation_space
        self.action_space = self._env.action_space

    def _scenario_env(self, seed: int) -> Any:
        from dcops.env import SchedulerEnv

        key = episode_key(seed, self.family, self.team_posterior)
        if key not in self._envs:
            self._envs[key] = SchedulerEnv(structured_view=False,
                                           **episode_env_kwargs(seed, self.family, self.team_posterior))
        return self._envs[key]

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        episode_seed = int(self.np_random.integers(EPISODE_SEED_LOW, 2**31 - 1))
        self.episode_seed = episode_seed
        self._env = self._scenario_env(episode_seed)
        return self._env.reset(seed=episode_seed)

    def step(self, action: Any):
        return self._env.step(action)

    def action_masks(self) -> np.ndarray:
        return self._env.action_masks()


def _monitored(family: str = MATRIX, team_posterior: bool = False) -> gym.Env:
    """A :class:`MixedScenarioEnv` under SB3's ``Monitor`` (the rollout's episode returns: sums of window rewards;
    it replaces the environment's own ``info["episode"]`` summary at the end, which training does not read)."""
    from stable_baselines3.common.monitor import Monitor

    return Monitor(MixedScenarioEnv(family, team_posterior))


def play_validation(policy: SlotPolicy, seeds: list[int], family: str = MATRIX,
                    team_posterior: bool = False) -> np.ndarray:
    """Episode scores of the numpy policy played greedily on ``seeds`` (each in its own scenario, or ``family``;
    ``team_posterior``: the observation the policy was trained on carries the team posterior)."""
    from dcops.env import SchedulerEnv

    envs: dict[tuple[str, ...], Any] = {}
    scores = []
    for seed in seeds:
        key = episode_key(seed, family, team_posterior)
        if key not in envs:
            envs[key] = SchedulerEnv(structured_view=False, **episode_env_kwargs(seed, family, team_posterior))
        env = envs[key]
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            obs, _, done, _, info = env.step(policy.act(obs))
        scores.append(info["episode"]["score"])
    return np.asarray(scores)


def baseline_scores(seeds: list[int], name: str = "priority_threshold", family: str = MATRIX) -> np.ndarray:
    """Episode scores of a baseline on ``seeds`` (the same scenarios as :func:`play_validation`)."""
    import dcops
    from dcops.agents.schedulers import BASELINES
    from dcops.evaluation.play import run_episode

    envs: dict[tuple[str, ...], Any] = {}
    scores = []
    for seed in seeds:
        key = episode_key(seed, family)
        if key not in envs:
            envs[key] = dcops.parallel_env(**episode_env_kwargs(seed, family))
        scores.append(run_episode(BASELINES[name](), seed, env=envs[key])["score"])
    return np.asarray(scores)


# -- behaviour cloning ---------------------------------------------------------------------------------------
def _tensors(data: dict[str, np.ndarray]) -> dict[str, torch.Tensor]:
    return {key: torch.as_tensor(data[key]) for key in OBS_KEYS}


def rewards_to_go(reward: np.ndarray, seed: np.ndarray, gamma: float) -> np.ndarray:
    """Discounted reward from each window to its episode's end (windows of an episode are consecutive rows)."""
    out = np.zeros(len(reward), dtype=np.float32)
    running = 0.0
    for i in range(len(reward) - 1, -1, -1):
        if i == len(reward) - 1 or seed[i + 1] != seed[i]:
            running = 0.0
        running = float(reward[i]) + gamma * running
        out[i] = running
    return out


def bc_accuracy(policy: SlotPolicy, data: dict[str, np.ndarray]) -> dict[str, float]:
    """Agreement of the greedy numpy policy with the teacher's codes: per decision (valid slots) and per window."""
    codes = policy.act({key: data[key] for key in OBS_KEYS})
    valid = data["request_mask"].astype(bool)
    right = (codes == data["action"]) | ~valid
    decisions = valid.sum()
    return {"decision_accuracy": float(right[valid].mean()) if decisions else float("nan"),
            "window_accuracy": float(right.all(axis=1).mean()),
            "decisions": int(decisions), "windows": int(len(codes))}


def behaviour_clone(model: MaskablePPO, train: dict[str, np.ndarray], config: SchedulerPPOConfig,
                    say: Any = print) -> dict[str, float]:
    """Fit the actor to the teacher's codes (masked log-likelihood) and the critic to rewards-to-go."""
    policy = model.policy
    obs = _tensors(train)
    actions = torch.as_tensor(train["action"].astype(np.int64))
    masks = torch.as_tensor(train["action_mask"].astype(bool))
    returns = torch.as_tensor(rewards_to_go(train["reward"], train["seed"], config.gamma))
    optimizer = torch.optim.Adam(policy.parameters(), lr=config.bc_learning_rate)
    generator = torch.Generator().manual_seed(config.seed)
    n = len(actions)
    nll = mse = float("nan")
    policy.set_training_mode(True)
    for epoch in range(config.bc_epochs):
        losses = []
        for batch in torch.randperm(n, generator=generator).split(config.bc_batch_size):
            values, log_prob, _ = policy.evaluate_actions({k: v[batch] for k, v in obs.items()}, actions[batch],
                                                          action_masks=masks[batch])
            nll_loss = -log_prob.mean()
            mse_loss = nn.functional.mse_loss(values.squeeze(-1), returns[batch])
            optimizer.zero_grad()
            (nll_loss + 0.5 * mse_loss).backward()
            nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
            optimizer.step()
            losses.append((float(nll_loss.detach()), float(mse_loss.detach())))
        nll, mse = np.mean(losses, axis=0).tolist()
        if epoch % 5 == 4 or epoch == config.bc_epochs - 1:
            say(f"BC epoch {epoch + 1}/{config.bc_epochs}: window NLL {nll:.3f}, value MSE {mse:.4f}")
    policy.set_training_mode(False)
    return {"window_nll": nll, "value_mse": mse}


DAGGER_SEED_START = 3000
"""First seed of the DAgger episodes (round r plays ``3000 + r · dagger_episodes …``)."""


def dagger_episodes(policy: SlotPolicy, seeds: list[int], teacher: str = "priority_threshold"
                    ) -> dict[str, np.ndarray]:
    """Windows the numpy ``policy`` visits on ``seeds`` (it acts), labelled with the public ``teacher``'s codes for
    the same window: the teacher-data layout of ``dcops.training.scheduler.teacher`` (rewards are the policy's)."""
    import dcops
    from dcops.agents.schedulers import BASELINES
    from dcops.training.scheduler.teacher import decisions_to_codes

    envs: dict[tuple[str, ...], Any] = {}
    rows: dict[str, list[Any]] = {key: [] for key in (*OBS_KEYS, "action", "reward", "window", "seed")}
    expert = BASELINES[teacher]()
    for seed in seeds:  # the matrix's scenarios (the configuration offers DAgger only there)
        key = episode_key(seed)
        if key not in envs:
            envs[key] = dcops.parallel_env(**episode_env_kwargs(seed))
        env = envs[key]
        cfg = env.config
        observations, infos = env.reset(seed=seed)
        while env.agents:
            obs, view = observations["scheduler"], infos["scheduler"]["view"]
            codes, _ = decisions_to_codes(expert.decide(view), view, cfg.max_slots, cfg.max_defer)
            for name in OBS_KEYS:
                rows[name].append(obs[name].copy())
            rows["action"].append(codes.astype(np.int8))
            rows["window"].append(view["window"])
            rows["seed"].append(seed)
            observations, rewards, _, _, infos = env.step({"scheduler": policy.act(obs)})
            rows["reward"].append(rewards["scheduler"])
    return {key: np.asarray(value) if key in ("reward", "window", "seed") else np.stack(value)
            for key, value in rows.items()}


def soften(model: MaskablePPO, temperature: float) -> None:
    """Divide the actor's logits by ``temperature`` (its head is the only linear path to them)."""
    head = model.policy.mlp_extractor.head
    with torch.no_grad():
        head.weight.div_(temperature)
        head.bias.div_(temperature)


def export(model: MaskablePPO, metadata: dict[str, Any] | None = None) -> SlotPolicy:
    """The actor of ``model`` as the numpy :class:`SlotPolicy`."""
    return SlotPolicy(model.policy.mlp_extractor.numpy_params(), dict(metadata or {}))


# -- PPO with validation -------------------------------------------------------------------------------------
class ValidationCallback(BaseCallback):
    """Every ``eval_every`` steps: export, play the validation seeds, log a curve row, keep the best, and write
    the checkpoint (model, curve, best parameters) so a stopped run resumes."""

    def __init__(self, evaluate: Any, eval_every: int, checkpoint: Any) -> None:
        super().__init__()
        self.evaluate = evaluate
        self.eval_every = eval_every
        self.checkpoint = checkpoint
        self._next = 0

    def _on_training_start(self) -> None:
        self._next = (self.num_timesteps // self.eval_every + 1) * self.eval_every

    def _on_step(self) -> bool:
        if self.num_timesteps >= self._next:
            self._next += self.eval_every
            buffer = self.model.ep_info_buffer
            self.evaluate(self.num_timesteps, float(np.mean([e["r"] for e in buffer])) if buffer else float("nan"))
            self.checkpoint()
        return True


def train_scheduler_ppo(data_dir: str | Path, out: str | Path, config: SchedulerPPOConfig | None = None,
                        resume: bool = False, log_dir: str | Path | None = None, verbose: bool = True,
                        ) -> dict[str, Any]:
    """Run the pipeline (module docstring); write the policies, curve and recipe to ``out``; return the recipe."""
    config = config or SchedulerPPOConfig()
    out = Path(out)
    ckpt = out / "checkpoint"
    if resume and not (ckpt / "state.json").exists():
        raise FileNotFoundError(f"resume: no checkpoint at {ckpt} to resume (run without --resume to start one)")
    check_data_family(data_dir, config.family, config.team_posterior)
    ckpt.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    torch.manual_seed(config.seed)
    started = time.perf_counter()

    def say(message: str) -> None:
        if verbose:
            print(f"[{time.perf_counter() - started:7.1f} s] {message}", flush=True)

    val_seeds = validation_split(config.n_validation_seeds, config.family)
    reference = baseline_scores(val_seeds, family=config.family)
    say(f"priority_threshold on {len(val_seeds)} validation seeds: {reference.mean():+.4f}")
    vec_env = DummyVecEnv([partial(_monitored, config.family, config.team_posterior) for _ in range(config.n_envs)])
    vec_env.seed(config.seed)
    state_path = ckpt / "state.json"
    if resume:
        state = json.loads(state_path.read_text())
        saved = state.get("config")
        if saved is not None:
            differ = config_differences(saved, config)
            if differ:
                raise ValueError(f"resume: the checkpoint was made with other settings of {differ}; resume with "
                                 "the same ones (only timesteps may change) or start a new --out")
        model = MaskablePPO.load(ckpt / "model.zip", env=vec_env, device="cpu")
        best = SlotPolicy.load(ckpt / "best.npz")
        say(f"resumed at step {model.num_timesteps} (best so far: step {state['best_step']})")
    else:
        model = MaskablePPO(
            SlotScoringPolicy, vec_env, learning_rate=config.learning_rate, n_steps=config.n_steps,
            batch_size=config.batch_size, n_epochs=config.n_epochs, gamma=config.gamma,
            gae_lambda=config.gae_lambda, clip_range=config.clip_range, ent_coef=config.ent_coef,
            target_kl=config.target_kl, policy_kwargs={"hidden": config.hidden}, seed=config.seed, device="cpu",
            verbose=0)
        train = load_split(data_dir, config.teacher, "train")
        validation = load_split(data_dir, config.teacher, "validation")
        say(f"cloning {config.teacher}: {len(train['seed'])} training windows, {len(validation['seed'])} validation")
        fit = behaviour_clone(model, train, config, say)
        if config.dagger_rounds and config.teacher != "priority_threshold":
            raise ValueError("dagger_rounds: only a public teacher (priority_threshold) can label new windows")
        for r in range(config.dagger_rounds):
            first = DAGGER_SEED_START + r * config.dagger_episodes
            visited = dagger_episodes(export(model), list(range(first, first + config.dagger_episodes)))
            train = {key: np.concatenate([train[key], visited[key].astype(train[key].dtype)]) for key in train}
            agreement = bc_accuracy(export(model), visited)["decision_accuracy"]
            say(f"DAgger round {r + 1}/{config.dagger_rounds}: {len(visited['seed'])} visited windows (agreement "
                f"{agreement:.3f} before refitting), {len(train['seed'])} in all")
            fit = behaviour_clone(model, train, SchedulerPPOConfig(
                **{**asdict(config), "bc_epochs": config.dagger_epochs, "seed": config.seed + r + 1}), say)
        bc_policy = export(model)
        accuracy = {"train": bc_accuracy(bc_policy, train), "validation": bc_accuracy(bc_policy, validation)}
        say(f"BC accuracy on validation: {accuracy['validation']['decision_accuracy']:.3f} of decisions, "
            f"{accuracy['validation']['window_accuracy']:.3f} of windows")
        bc_scores = play_validation(bc_policy, val_seeds, config.family, config.team_posterior)
        bc_policy.save(out / "bc_scheduler.npz")
        soften(model, config.warm_start_temperature)
        best = bc_policy
        state = {"curve": [], "best_step": 0, "best_score": float(bc_scores.mean()), "bc_fit": fit,
                 "bc_accuracy": accuracy, "bc_validation_score": float(bc_scores.mean()),
                 "bc_seconds": round(time.perf_counter() - started, 1), "ppo_seconds": 0.0,
                 "config": asdict(config)}
        state["curve"].append(_curve_row(0, bc_scores, reference, float("nan"), time.perf_counter() - started))
        say(f"BC policy on validation: {bc_scores.mean():+.4f} ({state['curve'][-1]['diff_vs_reference']:+.4f} "
            "vs priority_threshold)")
    model.set_logger(sb3_logger(log_dir, "scheduler_ppo"))
    holder = {"best": best}
    ppo_started = time.perf_counter()
    ppo_before = state["ppo_seconds"]

    def evaluate(step: int, episode_reward: float) -> None:
        policy = export(model)
        scores = play_validation(policy, val_seeds, config.family, config.team_posterior)
        row = _curve_row(step, scores, reference, episode_reward,
                         time.perf_counter() - started)
        state["curve"].append(row)
        if scores.mean() > state["best_score"]:
            state["best_score"], state["best_step"] = float(scores.mean()), step
            holder["best"] = policy
        say(f"step {step:>7}: validation {scores.mean():+.4f} ({row['diff_vs_reference']:+.4f} "
            f"[{row['diff_low']:+.4f}, {row['diff_high']:+.4f}]), rollout episode return {episode_reward:+.3f}")

    def checkpoint() -> None:
        state["ppo_seconds"] = round(ppo_before + time.perf_counter() - ppo_started, 1)
        model.save(ckpt / "model.zip")
        holder["best"].save(ckpt / "best.npz")
        state_path.write_text(json.dumps(state, indent=2) + "\n")

    checkpoint()
    remaining = config.timesteps - model.num_timesteps
    if remaining > 0:
        model.learn(remaining, callback=ValidationCallback(evaluate, config.eval_every, checkpoint),
                    reset_num_timesteps=False)
        if state["curve"][-1]["timesteps"] < model.num_timesteps:
            evaluate(model.num_timesteps, float("nan"))
        checkpoint()
    record = {
        "config": asdict(config),
        "teacher_data": str(data_dir),
        "teacher_manifest": _manifest(data_dir),
        "bc_accuracy": state["bc_accuracy"],
        "bc_fit": state["bc_fit"],
        "bc_validation_score": state["bc_validation_score"],
        "reference_validation_score": float(reference.mean()),
        "selected_timesteps": state["best_step"],
        "selected_validation_score": state["best_score"],
        "timesteps_done": int(model.num_timesteps),
        "seeds": {"validation": f"{val_seeds[0]}-{val_seeds[-1]}", "ppo_episodes": "[10000, 2^31) drawn by "
                  "each environment's generator (seeded by the run seed)", "evaluation_never_used": _ladder_seeds(config.family)},
        "bc_seconds": state["bc_seconds"],
        "ppo_seconds": state["ppo_seconds"],
        "wall_seconds_this_run": round(time.perf_counter() - started, 1),
        "versions": versions("torch", "stable-baselines3", "sb3-contrib", "gymnasium"),
    }
    chosen = SlotPolicy(holder["best"].params, record)
    chosen.save(out / "ppo_scheduler.npz")
    _write_curve(out, state["curve"])
    say(f"kept step {state['best_step']}: validation {state['best_score']:+.4f} against priority_threshold "
        f"{reference.mean():+.4f}")
    return record


def config_differences(saved: dict[str, Any], config: SchedulerPPOConfig) -> list[str]:
    """The fields (other than ``timesteps``) where a checkpoint's recorded configuration differs from ``config``;
    a field the checkpoint predates counts as its default (``family`` came later: an older matrix checkpoint
    resumes)."""
    defaults = asdict(SchedulerPPOConfig())
    return sorted(k for k, v in asdict(config).items() if k != "timesteps" and saved.get(k, defaults[k]) != v)


def check_data_family(data_dir: str | Path, family: str, team_posterior: bool = False) -> None:
    """Refuse teacher data of another family than the run's (``ValueError`` naming ``family``), or recorded with
    another observation (``team_posterior``); data with no manifest are left to fail where they are read."""
    manifest = _manifest(data_dir)
    if not manifest:
        return
    found = manifest.get("family", MATRIX)
    if found != family:
        raise ValueError(f"family: the teacher data in {data_dir} are of {found or 'the matrix'!r}, the run asks for "
                         f"{family or 'the matrix'!r}")
    recorded = bool(manifest.get("team_posterior", False))
    if recorded != team_posterior:
        raise ValueError(f"team_posterior: the teacher data in {data_dir} were recorded "
                         f"{'with' if recorded else 'without'} the team posterior column, the run asks for "
                         f"{'it' if team_posterior else 'none'} (dcops scheduler-teacher --team-posterior)")


def _curve_row(step: int, scores: np.ndarray, reference: np.ndarray, episode_reward: float,
               wall_s: float) -> dict[str, float]:
    from dcops.intervals import t_interval

    diff = scores - reference
    _, low, high = t_interval(diff)
    return {"timesteps": step, "validation_score": float(scores.mean()), "reference_score": float(reference.mean()),
            "diff_vs_reference": float(diff.mean()), "diff_low": float(low), "diff_high": float(high),
            "rollout_episode_return": episode_reward, "wall_s": round(wall_s, 1)}


def _ladder_seeds(family: str) -> str:
    """The seeds a run never plays: the evaluation's public seeds, or the family's ladder seeds."""
    if family == MATRIX:
        return "0-19"
    from dcops.cluster.scenarios import scenario

    seeds = scenario(family).seeds
    return f"{seeds[0]}-{seeds[-1]} (the {family} ladder)"


def _manifest(data_dir: str | Path) -> dict[str, Any]:
    path = Path(data_dir) / "manifest.json"
    return json.loads(path.read_text()) if path.exists() else {}


def _write_curve(out: Path, rows: list[dict[str, float]]) -> None:
    with (out / "learning_curve.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: (round(v, 6) if isinstance(v, float) else v) for k, v in row.items()})
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    steps = [r["timesteps"] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(steps, [r["validation_score"] for r in rows], marker="o", label="ppo (validation, greedy)")
    ax.fill_between(steps, [r["reference_score"] + r["diff_low"] for r in rows],
                    [r["reference_score"] + r["diff_high"] for r in rows], alpha=0.2,
                    label="95 % interval of the paired difference")
    ax.axhline(rows[0]["reference_score"], color="k", linestyle="--", label="priority_threshold")
    ax.set_xlabel("PPO steps (admission windows); step 0 = behaviour cloning")
    ax.set_ylabel("mean episode score")
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "learning_curve.png", dpi=110)
    plt.close(fig)
