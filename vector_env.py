"""Vectorised environments: N episodes of a single-agent task stepped together (Gymnasium ``VectorEnv``).

``dcops.make_vec_env(task_id, num_envs, **config)`` builds one for a cooling task or ``cluster/operations``.
Both follow Gymnasium ≥ 1.0: ``num_envs``, ``single_observation_space`` / ``single_action_space``, batched
``observation_space`` / ``action_space``, ``reset(seed=int | list | None, options=None)`` (an int seeds episode
i with ``seed + i``, as ``SyncVectorEnv``), ``step(actions)`` returning arrays of shape ``(num_envs, ...)``, and
the autoreset mode in ``metadata["autoreset_mode"]``: ``NEXT_STEP`` by default (the step after an episode ends
resets it, ignores its action and returns reward 0), or ``SAME_STEP`` (``autoreset_mode=...``: the ending step
returns the next episode's first observation and puts the last one in ``infos["final_obs"]``, its info in
``infos["final_info"]``). ``options={"reset_mask": mask}`` resets only some episodes.

Each vector env holds ``num_envs`` ordinary environments as *episode builders*: their ``reset`` draws an episode
(weather, load, faults, sensor errors, teams...) from their own generator, exactly as a single environment
seeded alike would, and they keep their generators between episodes. So episode i of the vector env is, step for
step, the episode a single environment reset with the same seed produces (``tests/test_vector_env.py``).

**Cooling tasks** (:class:`CoolingVectorEnv`). Everything is batched: the per-episode series are stacked into
``(N, steps, ...)`` arrays at reset, and each step is one :func:`dcops.physics.plant.step_plant_arrays` call on
``(N, Z)`` arrays plus the reward, totals, sensor readings and telemetry of all N episodes in array operations.
Episodes of a task all have the same length, so they end together. ``infos`` per step (arrays over episodes):
``it_kw``, ``cooling_kw``, ``facility_kw``, ``pue``, ``carbon_g``, ``chiller_capacity_kw`` (N,); with
``diagnostics=True`` (as for the single env) also ``chw_supply_c`` (N,), ``inlet_c``, ``violation_minutes_27``,
``violation_minutes_32`` (N, Z); at an episode's last step also ``score`` (with its mask ``_score``). Actions ``(N, 2Z + 2)`` are clipped to the box like the single env's; a
wrong shape or a NaN/inf raises ``ValueError`` naming the episode and the field, and nothing is stepped.

**Cluster operations** (:class:`ClusterVectorEnv`). Where numba is installed and ``DCOPS_JIT`` is not ``0``, the
episodes under the PPO cooling controller step their windows' 18 physics steps together, in one set of arrays
(``dcops.agents.cooling.ppo_batched``, handed them by ``dcops.cluster.compiled_window.step_batches``): each
physics step is three kernel calls for all of them (telemetry, features and the first layer; the hidden layers;
the action head, set-points and plant step) and numpy's ``tanh`` over the episodes' block of activations after
each hidden layer. An
episode under another compiled controller (the rule's fast path) steps through the per-episode kernels on its own
(``ClusterEpisode.step_compiled``, less than a batched array step costs per episode); the plants of the others
run batched, each physics step one ``step_plant_arrays`` call on ``(N, Z)``. The rest of a window (decisions,
queue ordering and placement, completions and audits, reward, oversight, the teams' next requests and the
observations) is per-episode Python logic over variable-length job lists and stays per episode; it is about nine
tenths of a 16-episode window now, so N episodes run at little more than N single environments' speed
(``dcops bench``: ``cluster_vector_16_over_single_env``, and ``cluster_vector_physics_share_16`` for the share
batching could still remove; PPO cooling, no structured view, CPU time). Observations are the scheduler's ``Dict`` batched; ``infos``
gathers each episode's scheduler info as Gymnasium does (a key per field with its ``_key`` mask). Scheduler
actions never raise (invalid decisions are penalised, as in the single env); a batch of the wrong length raises
``ValueError``. Either way an episode gives the bits of the same episode stepped alone
(``tests/test_vector_env.py`` checks batched and compiled vector episodes against Python and compiled single ones).

**Stable-Baselines3** (:func:`make_sb3_vec_env`, also ``dcops.make_sb3_vec_env``). SB3's algorithms step their
own ``VecEnv`` API, not Gymnasium's ``VectorEnv``: ``make_sb3_vec_env(task_id, n)`` gives SB3's ``DummyVecEnv``
(or ``SubprocVecEnv``) of ``n`` Monitor-wrapped ``gymnasium.make(dcops.gym_id(task_id))`` environments, for any
task::

    model = PPO("MultiInputPolicy", dcops.make_sb3_vec_env("cluster/operations", 8, seed=0,
                                                           structured_view=False))
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array, iterate
from numpy.typing import NDArray

from dcops.boundary import split_info
from dcops.cluster.compiled_window import step_batches
from dcops.cooling_env import TASKS as COOLING_V0_TASKS  # the cooling tasks with a vector form (v1: none yet)
from dcops.physics.interface import setpoint_bounds, setpoint_field_names
from dcops.physics.plant import PlantBoundary, PlantControl, PlantState, step_plant_arrays
from dcops.registry import gym_id, make_env

_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)


def _seeds(seed: int | list[int | None] | None, n: int) -> list[int | None]:
    if seed is None:
        return [None] * n
    if isinstance(seed, int | np.integer):
        return [int(seed) + i for i in range(n)]
    seeds = list(seed)
    if len(seeds) != n:
        raise ValueError(f"seed: a list of seeds needs {n} entries (one per episode), got {len(seeds)}")
    return seeds


def _reset_mask(options: dict[str, Any] | None, n: int) -> tuple[NDArray[np.bool_], dict[str, Any] | None]:
    if not options or "reset_mask" not in options:
        return np.ones(n, dtype=bool), options
    options = dict(options)
    mask = np.asarray(options.pop("reset_mask"))
    if mask.shape != (n,) or mask.dtype != np.bool_:
        raise ValueError(f"options['reset_mask'] must be a bool array of shape ({n},), got {mask.dtype} {mask.shape}")
    return mask, options or None


def _autoreset_mode(mode: AutoresetMode | str) -> AutoresetMode:
    mode = AutoresetMode(mode) if isinstance(mode, str) else mode
    if mode not in _MODES:
        raise ValueError(f"autoreset_mode must be one of {[m.value for m in _MODES]}, got {mode!r}")
    return mode


class CoolingVectorEnv(VectorEnv):
    """N episodes of one cooling task in one set of arrays (module docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, task_id: str, num_envs: int, autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 **config: Any) -> None:
        from dcops.cooling_env import CoolingEnv

        if int(num_envs) < 1:
            raise ValueError(f"num_envs must be at least 1, got {num_envs}")
        if config.get("render_mode") is not None:
            raise ValueError("render_mode: vector environments do not render; use make_env for a rendered episode")
        self.num_envs = int(num_envs)
        self.envs = [make_env(task_id, **config) for _ in range(self.num_envs)]
        if not isinstance(self.envs[0], CoolingEnv):
            raise ValueError(f"{task_id!r} is not a cooling task")
        self.metadata = {**type(self).metadata, "autoreset_mode": _autoreset_mode(autoreset_mode)}
        self.autoreset_mode = self.metadata["autoreset_mode"]
        first = self.envs[0]
        self.task = first.task
        self.single_observation_space = first.observation_space
        self.single_action_space = first.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.render_mode = None
        spec, n, z = self.task, self.num_envs, self.task.plant.n_zones
        steps, chillers = spec.n_steps, spec.plant.n_chillers
        self._weights = first._weights
        self._obs_low, self._obs_high = first._obs_low, first._obs_high
        self._act_low, self._act_high = setpoint_bounds(z)
        self._field_names = setpoint_field_names(z)
        self._rows = np.arange(n)
        # Per-episode series, (N, steps, ...), filled from the episode builders at reset.
        self._dry = np.zeros((n, steps))
        self._wet = np.zeros((n, steps))
        self._carbon = np.zeros((n, steps))
        self._sin = np.zeros((n, steps))
        self._cos = np.zeros((n, steps))
        self._it = np.zeros((n, steps, z))
        self._chillers = np.zeros((n, steps, chillers))
        self._fans_alive = np.zeros((n, steps, z))
        self._drift = np.zeros((n, steps, z))
        self._inlet_noise = np.zeros((n, steps + 1, z))
        self._return_noise = np.zeros((n, steps + 1, z))
        self._chw_noise = np.zeros((n, steps + 1))
        self._inlet_bias = np.zeros((n, z))
        self._return_bias = np.zeros((n, z))
        self._chw_bias = np.zeros(n)
        self._zone_temp = np.zeros((n, z))
        self._chw = np.zeros(n)
        self._fan = np.zeros((n, z))
        self._k = np.zeros(n, dtype=np.int64)
        self._totals = {key: np.zeros(n) for key in ("it_kwh", "cooling_kwh", "facility_kwh", "carbon_g",
                                                     "violation_sum", "max_rate_k_per_h")}
        self._minutes = np.zeros((3, n, z))
        self._obs = np.zeros((n, *self.single_observation_space.shape), dtype=np.float32)
        self._autoreset = np.zeros(n, dtype=bool)
        self._started = False

    # ------------------------------------------------------------------ episodes
    def _load(self, i: int, seed: int | None, options: dict[str, Any] | None) -> None:
        """Draw episode i from its builder and copy its series into row i."""
        env = self.envs[i]
        obs, _ = env.reset(seed=seed, options=options)
        self._dry[i] = env._dry_bulb
        self._wet[i] = env._wet_bulb
        self._carbon[i] = env._carbon_g_per_kwh
        self._sin[i] = env._hour_sin
        self._cos[i] = env._hour_cos
        self._it[i] = env._it_kw
        timeline = env._timeline
        self._chillers[i] = timeline.chiller_available
        self._fans_alive[i] = timeline.fan_units_alive
        self._drift[i] = timeline.inlet_sensor_offset_k
        self._inlet_noise[i] = env._inlet_errors.noise_k
        self._inlet_bias[i] = env._inlet_errors.bias_k
        self._return_noise[i] = env._return_errors.noise_k
        self._return_bias[i] = env._return_errors.bias_k
        self._chw_noise[i] = env._chw_errors.noise_k[:, 0]
        self._chw_bias[i] = env._chw_errors.bias_k[0]
        self._zone_temp[i] = env._state.zone_temp_c
        self._chw[i] = env._state.chw_supply_c
        self._fan[i] = env._control.fan_speed
        self._k[i] = 0
        for total in self._totals.values():
            total[i] = 0.0
        self._minutes[:, i] = 0.0
        self._obs[i] = obs
        self._autoreset[i] = False

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None):
        """Start episodes (all, or those in ``options["reset_mask"]``); returns (observations, infos)."""
        mask, options = _reset_mask(options, self.num_envs)
        if not self._started and not mask.all():
            raise ValueError("options['reset_mask']: the first reset must reset every episode")
        seeds = _seeds(seed, self.num_envs)
        for i in np.flatnonzero(mask):
            self._load(int(i), seeds[i], options)
        self._started = True
        return self._obs.copy(), {}

    # ------------------------------------------------------------------ stepping
    def _decode(self, actions: Any) -> NDArray[np.float64]:
        """Validate and clip a batch of set-point vectors (as ``decode_setpoints`` does for one)."""
        width = self.single_action_space.shape[0]
        try:
            a = np.asarray(actions, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"actions must be a numeric array of shape ({self.num_envs}, {width})") from None
        if a.shape != (self.num_envs, width):
            raise ValueError(f"actions must have shape ({self.num_envs}, {width}) (one set-point vector per "
                             f"episode: {', '.join(self._field_names)}), got {a.shape}")
        bad = np.argwhere(~np.isfinite(a))
        if bad.size:
            i, j = (int(v) for v in bad[0])
            raise ValueError(f"actions[{i}] field {self._field_names[j]} is not finite: {a[i, j]}")
        return np.minimum(np.maximum(a, self._act_low), self._act_high)

    def step(self, actions: Any):
        if not self._started:
            raise RuntimeError("call reset() before step()")
        a = self._decode(actions)
        spec = self.task
        n, z, steps = self.num_envs, spec.plant.n_zones, spec.n_steps
        resetting = self._autoreset.copy() if self.autoreset_mode == AutoresetMode.NEXT_STEP else np.zeros(n, bool)
        rows, k = self._rows, np.minimum(self._k, steps - 1)
        fan = a[:, :z]
        control = PlantControl(fan, a[:, z:2 * z], a[:, 2 * z], a[:, 2 * z + 1])
        boundary = PlantBoundary(self._it[rows, k], self._dry[rows, k], self._wet[rows, k], self._chillers[rows, k],
                                 self._fans_alive[rows, k])
        state, out = step_plant_arrays(spec.plant, PlantState(self._zone_temp, self._chw), control, boundary,
                                       spec.dt_s)
        self._zone_temp, self._chw = state.zone_temp_c, state.chw_supply_c
        self._fan = fan

        # Reward and totals (CoolingEnv.step, for every episode at once).
        from dcops.cooling_env import _THRESHOLDS_C, OVERHEAD_WEIGHT

        minutes, hours = spec.dt_s / 60.0, spec.dt_s / 3600.0
        f27, f32, f18 = fractions = _fractions(out.inlet_start_c, out.inlet_c, _THRESHOLDS_C[:, :, None])
        f18 = fractions[2] = 1.0 - f18
        violation = (f27 + 4.0 * f32 + f18) @ self._weights
        it_kw, cooling_kw = out.it_kw, out.cooling_kw
        overhead = np.divide(cooling_kw, it_kw, out=np.zeros(n), where=it_kw > 0)
        rewards = -(violation + OVERHEAD_WEIGHT * overhead)
        facility_kwh = out.facility_kw * hours
        carbon_g = facility_kwh * self._carbon[rows, k]
        t = self._totals
        t["it_kwh"] += it_kw * hours
        t["cooling_kwh"] += cooling_kw * hours
        t["facility_kwh"] += facility_kwh
        t["carbon_g"] += carbon_g
        t["violation_sum"] += violation
        self._minutes += fractions * minutes
        rate = np.max(np.abs(out.inlet_c - out.inlet_start_c), axis=-1) / hours
        np.maximum(t["max_rate_k_per_h"], rate, out=t["max_rate_k_per_h"])
        self._k = k + 1  # rows being reset (NEXT_STEP) ran a throw-away step at their last index
        terminated = self._k >= steps

        # Observations (CoolingEnv._observe at reading k + 1).
        reading = self._k
        kk = np.minimum(reading, steps - 1)
        inlet = out.inlet_c + self._inlet_bias + self._drift[rows, reading - 1] + self._inlet_noise[rows, reading]
        ret = self._zone_temp + self._return_bias + 0.0 + self._return_noise[rows, reading]
        chw = self._chw + self._chw_bias + 0.0 + self._chw_noise[rows, reading]
        plant = spec.plant
        width = 5 * z
        vector = np.empty((n, width + 11))
        zones = vector[:, :width].reshape(n, z, 5)
        zones[:, :, 0] = inlet
        zones[:, :, 1] = ret
        zones[:, :, 2] = self._it[rows, kk] / plant.zone_design_it_kw
        zones[:, :, 3] = fan
        zones[:, :, 4] = out.supply_air_c
        values = vector[:, width:]
        values[:, 0] = chw
        values[:, 1] = self._chillers[rows, kk].sum(axis=-1) / plant.n_chillers
        values[:, 2] = out.economiser_fraction
        values[:, 3] = self._dry[rows, kk]
        values[:, 4] = self._wet[rows, kk]
        values[:, 5] = self._carbon[rows, kk] / 1000.0
        values[:, 6] = self._sin[rows, kk]
        values[:, 7] = self._cos[rows, kk]
        values[:, 8] = reading / steps
        values[:, 9] = cooling_kw / plant.design_it_kw
        values[:, 10] = out.pue
        observations = np.minimum(np.maximum(vector, self._obs_low), self._obs_high).astype(np.float32)

        infos: dict[str, Any] = {
            "it_kw": it_kw, "cooling_kw": cooling_kw, "facility_kw": out.facility_kw, "pue": out.pue,
            "inlet_c": out.inlet_c, "carbon_g": carbon_g, "violation_minutes_27": f27 * minutes,
            "violation_minutes_32": f32 * minutes, "chiller_capacity_kw": out.chiller_capacity_kw,
            "chw_supply_c": out.chw_supply_c,
        }
        if not self.envs[0].diagnostics:  # the same boundary as the single environments'
            infos = split_info("cooling", infos)[0]
        if terminated.any():
            infos["score"] = self._scores(terminated)
            infos["_score"] = terminated.copy()
        truncated = np.zeros(n, dtype=bool)
        self._obs = observations
        if resetting.any():
            for i in np.flatnonzero(resetting):
                self._load(int(i), None, None)
            rewards = np.where(resetting, 0.0, rewards)
            terminated = terminated & ~resetting
        if self.autoreset_mode == AutoresetMode.SAME_STEP and terminated.any():
            final_obs = np.full(n, None, dtype=object)
            for i in np.flatnonzero(terminated):
                final_obs[i] = observations[i].copy()
                self._load(int(i), None, None)
            infos = {**infos, "final_obs": final_obs, "_final_obs": terminated.copy(),
                     "final_info": dict(infos), "_final_info": terminated.copy()}
        else:
            self._autoreset = terminated.copy()
        return self._obs.copy(), rewards, terminated, truncated, infos

    def _scores(self, ended: NDArray[np.bool_]) -> NDArray[np.float64]:
        from dcops.cooling_env import thermal_and_energy_score

        t, steps = self._totals, self.task.n_steps
        scores = np.zeros(self.num_envs)
        for i in np.flatnonzero(ended):
            scores[i] = thermal_and_energy_score(float(t["violation_sum"][i]) / steps, float(t["cooling_kwh"][i]),
                                                 float(t["it_kwh"][i]))
        return scores

    def summaries(self) -> list[dict[str, Any]]:
        """Each episode's running totals (as ``CoolingEnv``'s ``info["summary"]``: energies kWh, carbon kg)."""
        t, steps = self._totals, np.maximum(self._k, 1)
        names = ("minutes_above_27", "minutes_above_32", "minutes_below_18")
        return [{
            "it_kwh": float(t["it_kwh"][i]), "cooling_kwh": float(t["cooling_kwh"][i]),
            "facility_kwh": float(t["facility_kwh"][i]),
            "pue": float(t["facility_kwh"][i] / t["it_kwh"][i]) if t["it_kwh"][i] > 0 else 0.0,
            "carbon_kg": float(t["carbon_g"][i]) / 1000.0,
            **{name: self._minutes[j, i].tolist() for j, name in enumerate(names)},
            "max_inlet_rate_k_per_h": float(t["max_rate_k_per_h"][i]),
            "mean_violation": float(t["violation_sum"][i] / steps[i]) if self._k[i] else 0.0,
        } for i in range(self.num_envs)]


def _fractions(start: NDArray[np.float64], end: NDArray[np.float64], thresholds: NDArray[np.float64]
               ) -> NDArray[np.float64]:
    from dcops.cooling_env import fraction_above

    return fraction_above(start, end, thresholds)


class ClusterVectorEnv(VectorEnv):
    """N episodes of ``cluster/operations`` with their plant physics batched (module docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, num_envs: int, autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 **config: Any) -> None:
        from dcops.env import SchedulerEnv

        if int(num_envs) < 1:
            raise ValueError(f"num_envs must be at least 1, got {num_envs}")
        if config.get("render_mode") is not None:
            raise ValueError("render_mode: vector environments do not render; use make_env for a rendered episode")
        self.num_envs = int(num_envs)
        self.envs = [SchedulerEnv(**config) for _ in range(self.num_envs)]
        self.metadata = {**type(self).metadata, "autoreset_mode": _autoreset_mode(autoreset_mode)}
        self.autoreset_mode = self.metadata["autoreset_mode"]
        self.single_observation_space = self.envs[0].observation_space
        self.single_action_space = self.envs[0].action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.render_mode = None
        self._observations = create_empty_array(self.single_observation_space, self.num_envs)
        self._obs: list[Any] = [None] * self.num_envs
        self._autoreset = np.zeros(self.num_envs, dtype=bool)
        self._started = False

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None):
        mask, options = _reset_mask(options, self.num_envs)
        if not self._started and not mask.all():
            raise ValueError("options['reset_mask']: the first reset must reset every episode")
        seeds = _seeds(seed, self.num_envs)
        items: list[tuple[int, dict[str, Any]]] = []
        for i in np.flatnonzero(mask):
            self._obs[i], info = self.envs[i].reset(seed=seeds[i], options=options)
            self._autoreset[i] = False
            items.append((int(i), info))
        self._started = True
        return self._batch(), merge_infos(self, items)

    def _batch(self) -> Any:
        self._observations = concatenate(self.single_observation_space, self._obs, self._observations)
        return {key: value.copy() for key, value in self._observations.items()}

    def step(self, actions: Any):
        if not self._started:
            raise RuntimeError("call reset() before step()")
        n = self.num_envs
        if isinstance(actions, np.ndarray) and actions.shape[:1] != (n,):
            raise ValueError(f"actions must have {n} rows (one scheduler action per episode), got {actions.shape}")
        per_env = list(iterate(self.action_space, actions)) if isinstance(actions, np.ndarray) else list(actions)
        if len(per_env) != n:
            raise ValueError(f"actions must hold {n} scheduler actions (one per episode), got {len(per_env)}")
        rewards = np.zeros(n)
        terminated = np.zeros(n, dtype=bool)
        truncated = np.zeros(n, dtype=bool)
        items: list[tuple[int, dict[str, Any]]] = []  # each episode's info, merged at the end (merge_infos)
        resetting = self._autoreset & (self.autoreset_mode == AutoresetMode.NEXT_STEP)
        stepping = [i for i in range(n) if not resetting[i]]
        results = run_windows([self.envs[i].parallel for i in stepping], [per_env[i] for i in stepping])
        for i, (obs, reward, term, trunc, info) in zip(stepping, results, strict=True):
            self._obs[i], rewards[i], terminated[i], truncated[i] = obs, reward, term, trunc
            if self.autoreset_mode == AutoresetMode.SAME_STEP and (term or trunc):
                items.append((i, {"final_obs": obs, "final_info": info}))
                self._obs[i], info = self.envs[i].reset()
            items.append((i, info))
        for i in np.flatnonzero(resetting):
            self._obs[i], info = self.envs[i].reset()
            items.append((int(i), info))
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            self._autoreset = terminated | truncated
        return self._batch(), rewards, terminated, truncated, merge_infos(self, items)


def merge_infos(env: VectorEnv, items: list[tuple[int, dict[str, Any]]]) -> dict[str, Any]:
    """The vector ``infos`` that Gymnasium's ``VectorEnv._add_info`` builds from ``items`` (episode index, its
    info) added in order: a key's array takes the first value's type (an ``ndarray``'s dtype and shape, an
    ``int``/``float``/``bool``/numpy scalar's type, else ``object``), later values are assigned into it, and
    ``_key`` masks the episodes that gave it; a dict recurses, ``final_obs`` is an object array. Built key by key
    rather than info by info: ``_add_info`` costs about 90 µs an episode a step on a cluster info (a fresh mask
    array per key and call), several per cent of a 16-episode window. Where a key holds a dict in one info and
    not in another, or a key is named as another's mask (``_key``), ``_add_info`` itself runs, in order. Values
    that cannot share a key's array raise, as there (the first such key may differ)."""
    keys: dict[str, list[tuple[int, Any]]] = {}
    for env_num, info in items:
        for key, value in info.items():
            keys.setdefault(key, []).append((env_num, value))
    n = env.num_envs
    if any(f"_{key}" in keys for key in keys):  # a key named as another's mask: _add_info writes into it
        return _added_in_order(env, items)
    merged: dict[str, Any] = {}
    for key, entries in keys.items():
        nested = [isinstance(value, dict) for _, value in entries]
        if key != "final_obs" and any(nested):
            if not all(nested):
                return _added_in_order(env, items)
            array: Any = merge_infos(env, entries)
        else:
            first = entries[0][1]
            if key != "final_obs" and isinstance(first, np.ndarray):
                array = np.zeros((n, *first.shape), dtype=first.dtype)
            elif key != "final_obs" and (type(first) in (int, float, bool) or issubclass(type(first), np.number)):
                array = np.zeros(n, dtype=type(first))
            else:  # final_obs, and any other object
                array = np.full(n, fill_value=None, dtype=object)
            for env_num, value in entries:
                array[env_num] = value
        mask = np.zeros(n, dtype=np.bool_)
        mask[[env_num for env_num, _ in entries]] = True
        merged[key], merged[f"_{key}"] = array, mask
    return merged


def _added_in_order(env: VectorEnv, items: list[tuple[int, dict[str, Any]]]) -> dict[str, Any]:
    """Gymnasium's own merge: ``VectorEnv._add_info`` for each (episode, info) in order."""
    merged: dict[str, Any] = {}
    for env_num, info in items:
        merged = env._add_info(merged, info, env_num)
    return merged


def run_windows(envs: list[Any], actions: list[Any]) -> list[tuple[Any, float, bool, bool, dict[str, Any]]]:
    """One admission window of several ``datacenter_ops`` episodes (scheduler actions only), their plant
    physics batched: the scheduler's (obs, reward, terminated, truncated, info) of each, as ``SchedulerEnv.step``
    returns them."""
    if not envs:
        return []
    begun = [env.begin_step({"scheduler": action}) for env, action in zip(envs, actions, strict=True)]
    all_episodes = [env.episode for env in envs]
    all_windows = [episode.begin_window() for episode in all_episodes]
    # Episodes under the PPO controller step together through compiled kernels, its MLP batched across them
    # (``dcops.agents.cooling.ppo_batched``); another episode whose controller has a compiled form (the rule) steps it
    # on its own (``ClusterEpisode.step_compiled``: the same bits, several times faster than its share of a
    # batched array step); the others share one array step.
    together = step_batches(all_episodes, all_windows)
    batched = [b for b, (episode, window) in enumerate(zip(all_episodes, all_windows, strict=True))
               if not together[b] and not episode.step_compiled(window)]
    episodes = [all_episodes[b] for b in batched]
    windows = [all_windows[b] for b in batched]
    _step_batched(episodes, windows)
    results = []
    for env, episode, window, pre in zip(envs, all_episodes, all_windows, begun, strict=True):
        result = episode.end_window(window)
        obs, rewards, terminations, truncations, infos = env.finish_step(pre, result)
        results.append((obs["scheduler"], rewards["scheduler"], terminations["scheduler"],
                        truncations["scheduler"], infos["scheduler"]))
    return results


def _step_batched(episodes: list[Any], windows: list[Any]) -> None:
    """Step the plants of ``episodes`` through their begun ``windows`` as one batch of arrays."""
    if not episodes:
        return
    plant = episodes[0].plant
    dt = episodes[0].dt_s
    n_steps = len(windows[0].rows)
    zone_temp = np.array([episode.state.zone_temp_c for episode in episodes])
    chw = np.array([float(episode.state.chw_supply_c) for episode in episodes])
    for j in range(n_steps):
        controls = [episode.controller.control(j, episode.state) for episode in episodes]
        inputs = [window.step_inputs[j] for window in windows]
        control = PlantControl(np.array([c.fan_speed for c in controls]),
                               np.array([np.broadcast_to(c.supply_setpoint_c, zone_temp.shape[1:]) for c in controls]),
                               np.array([float(c.chw_setpoint_c) for c in controls]),
                               np.array([float(c.economiser_on) for c in controls]))
        boundary = PlantBoundary(np.array([window.rows[j] for window in windows]),
                                 np.array([float(x[0]) for x in inputs]), np.array([float(x[1]) for x in inputs]),
                                 np.array([x[2] for x in inputs]), np.array([x[3] for x in inputs]))
        state, out = step_plant_arrays(plant, PlantState(zone_temp, chw), control, boundary, dt)
        zone_temp, chw = state.zone_temp_c, state.chw_supply_c
        for b, (episode, control_b) in enumerate(zip(episodes, controls, strict=True)):
            out_b = type(out)(*(field[b] for field in out))
            episode.record_step(PlantState(zone_temp[b], out_b.chw_supply_c), control_b, out_b)


def make_vec_env(task_id: str, num_envs: int, autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 **config: Any) -> VectorEnv:
    """A vectorised environment of ``num_envs`` episodes of ``task_id`` (a cooling task or
    ``cluster/operations``), configured as ``make_env(task_id, **config)`` would be (module docstring)."""
    if task_id in COOLING_V0_TASKS:
        return CoolingVectorEnv(task_id, num_envs, autoreset_mode, **config)
    if task_id == "cluster/operations":
        return ClusterVectorEnv(num_envs, autoreset_mode, **config)
    raise KeyError(f"no vector form of task {task_id!r}; vectorised tasks: "
                   f"{', '.join([*COOLING_V0_TASKS, 'cluster/operations'])}")


def _gym_make(task_id: str, normalized: bool = False, **config: Any) -> Any:
    """``gymnasium.make`` of the task's registered id (``dcops.gym_id``); module-level, so that SB3's
    ``SubprocVecEnv`` can pickle it (unpickling it in a fresh process imports ``dcops``, which registers the ids)."""
    import gymnasium

    return gymnasium.make(gym_id(task_id, normalized=normalized), **config)


def make_sb3_vec_env(task_id: str, num_envs: int, seed: int | None = None, normalized: bool = False,
                     vec_env_cls: Any = None, **config: Any) -> Any:
    """A Stable-Baselines3 ``VecEnv`` of ``num_envs`` environments of ``task_id``, for SB3 algorithms (whose
    rollouts need SB3's ``VecEnv`` API, not Gymnasium's ``VectorEnv``): ``stable_baselines3.common.env_util.
    make_vec_env`` over ``gymnasium.make(dcops.gym_id(task_id, normalized), **config)``, each env in SB3's
    ``Monitor`` (episode returns and lengths in ``model.ep_info_buffer``). Any task works, not only those with a
    :func:`make_vec_env` form. Needs the ``train`` extra (stable-baselines3).

    :param task_id: a registered task id (``dcops.tasks()``).
    :param num_envs: environments stepped in turn (``DummyVecEnv``) or in parallel processes (``SubprocVecEnv``).
    :param seed: env i is reset with ``seed + i`` at the first reset (SB3's rule); None: unseeded.
    :param normalized: the ``[-1, 1]`` action form of a cooling task (the id ``dcops.gym_id(task, True)``).
    :param vec_env_cls: ``DummyVecEnv`` (default: one process, best when a step is cheap, as here) or
        ``SubprocVecEnv``.
    :param config: the task's keyword arguments, as for :func:`dcops.make_env`.
    """
    from functools import partial

    from stable_baselines3.common.env_util import make_vec_env as sb3_make_vec_env

    if int(num_envs) < 1:
        raise ValueError(f"num_envs must be at least 1, got {num_envs}")
    factory = partial(_gym_make, task_id, normalized)  # a callable: SB3 would otherwise ask for rgb_array renders
    return sb3_make_vec_env(factory, n_envs=int(num_envs), seed=seed, env_kwargs=config, vec_env_cls=vec_env_cls)


__all__ = ["ClusterVectorEnv", "CoolingVectorEnv", "make_sb3_vec_env", "make_vec_env", "run_windows"]
