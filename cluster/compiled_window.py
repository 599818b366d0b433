"""A cluster window's physics steps through compiled kernels: telemetry, the controller, the plant, to the bit.

Why: with the PPO cooling controller a window is 18 rounds of telemetry → features → MLP → set-points → plant
step, each a few dozen operations on a handful of numbers; in Python floats that was about 50 µs a step, most of
a window's time. Here the telemetry (:func:`telemetry_kernel`) and the plant step
(``dcops.physics.compiled_plant.plant_kernel``) are compiled, and the controller's compiled form (its
``compiled`` actor, ``dcops.agents.cooling.ppo_compiled``) runs its own kernels around the policy's numpy
forward pass, whose bits come from numpy's BLAS and ``tanh`` and so stay in numpy.

Two loops use these kernels. An actor that steps whole windows itself, several episodes at once (a
:class:`BatchedActor`: the PPO controller's, ``dcops.agents.cooling.ppo_batched``, which fuses the kernels and
the MLP's products into three kernel calls a step), is handed its episodes by :func:`step_batches`; this layer
does not import it. Any other compiled actor (the rule's fast path, or the PPO controller's where the batched
kernels would not give its bits) steps one episode here, in :func:`run_window_compiled`'s loop, one kernel
call per part.

Exactness: every value is the one :meth:`ClusterEpisode.run_window` computes through ``telemetry_values``, the
controller (``act_values`` and ``decode_setpoint_values`` for PPO; ``RuleFastPath.control`` for the rule, whose
actor hands over the set-points it made at ``begin_window``) and ``step_plant``: the same operations in the same
order, numpy's ``maximum``/``minimum`` rules in the telemetry clip (NaN propagates; a tie gives the bound, so a
signed zero takes the bound's sign), float32 where the vectors are float32. A step the compiled plant declines (a
non-finite input or result) is run by ``step_plant`` instead, as the float path hands it to the array path.
``tests/cluster/test_compiled_window.py`` replays whole episodes both ways and compares every record byte for
byte.

The episode's Python state (``state``, ``last_control``, ``last_outputs``, ``last_inlet_true``) and the
controller's (its actor's ``load_state``/``store_state``) are read at the start of each window and written back
at its end, so windows run here and windows run in Python mix in one episode (tested). Runs where numba is
importable, ``DCOPS_JIT`` is not ``0``, the plant has at most 7 zones and 7 chillers, and the controller has a
compiled form (the stock PPO controller up to 7 zones, the rule's fast path).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from dcops.physics.compiled_plant import PLANT_ROWS, compiled, outputs_of, plant_kernel
from dcops.physics.plant import PlantBoundary, PlantControl, PlantState, step_plant

_ECONOMISER, _COOLING, _PUE = (PLANT_ROWS.index(name) for name in ("economiser_fraction", "cooling_kw", "pue"))
_IT, _FACILITY = PLANT_ROWS.index("it_kw"), PLANT_ROWS.index("facility_kw")


class CompiledActor(Protocol):
    """A cooling controller's compiled form: the decoded set-point vector ((2Z+2,) float64, the float32 values
    ``decode_setpoint_values`` gives) for a telemetry vector ((5Z+11,) float64 holding its float32 values); the
    vector may be a buffer that the next call overwrites. ``load_state`` takes the controller's episode state
    before a window and ``store_state`` hands it back after, so the controller's Python path can take over."""

    def act(self, telemetry: NDArray[np.float64]) -> NDArray[np.float64]: ...

    def load_state(self) -> None: ...

    def store_state(self) -> None: ...


class BatchedActor(CompiledActor, Protocol):
    """A compiled actor that steps whole windows, several episodes at once (:func:`step_batches`)."""

    def batch_key(self, episode: Any, window: Any) -> tuple[Any, ...] | None:
        """Episodes whose actors give equal keys step together; None where this episode cannot be."""
        ...

    def step_windows(self, episodes: list[Any], windows: list[Any]) -> None:
        """Step ``episodes`` (equal keys) through their begun ``windows``."""
        ...


@dataclass(frozen=True)
class TelemetryArrays:
    """An episode's sensor errors and per-step boundary values as arrays for :func:`telemetry_kernel` (the
    values of ``ClusterEpisode``'s telemetry series).

    :param zone_noise: (2, n+1, Z) inlet and return-air noise per reading, K.
    :param inlet_drift: (n, Z) inlet sensor drift after each step, K.
    :param zone_constants: (3, Z) inlet bias, return-air bias (K) and design IT load (kW).
    :param step_values: (6, n) chillers available (fraction), dry-bulb, wet-bulb (°C), carbon (kg/kWh), sin and
        cos of the hour.
    :param chw_noise: (n+1,) chilled-water noise, K.
    :param scalars: (3,) chilled-water bias (K), design IT load (kW), the episode's step count.
    :param low, high: the telemetry vector's bounds (5Z+11,) as float64.
    """

    zone_noise: NDArray[np.float64]
    inlet_drift: NDArray[np.float64]
    zone_constants: NDArray[np.float64]
    step_values: NDArray[np.float64]
    chw_noise: NDArray[np.float64]
    scalars: NDArray[np.float64]
    low: NDArray[np.float64]
    high: NDArray[np.float64]


def telemetry_arrays(episode: Any) -> TelemetryArrays:
    """The telemetry inputs of ``episode`` (a ``ClusterEpisode``, after its reset; not imported here, since the
    episode module imports this one), computed by the expressions of its telemetry series."""
    plant = episode.plant
    return TelemetryArrays(
        zone_noise=np.ascontiguousarray([episode.inlet_errors.noise_k, episode.return_errors.noise_k]),
        inlet_drift=np.ascontiguousarray(episode.timeline.inlet_sensor_offset_k, dtype=np.float64),
        zone_constants=np.ascontiguousarray([episode.inlet_errors.bias_k, episode.return_errors.bias_k,
                                             plant.zone_design_it_kw], dtype=np.float64),
        step_values=np.ascontiguousarray([
            episode.timeline.chiller_available.sum(axis=1) / plant.n_chillers, episode.dry_bulb, episode.wet_bulb,
            episode.carbon / 1000.0, episode.hour_sin, episode.hour_cos], dtype=np.float64),
        chw_noise=np.ascontiguousarray(episode.chw_errors.noise_k[:, 0], dtype=np.float64),
        scalars=np.array([float(episode.chw_errors.bias_k[0]), plant.design_it_kw, float(episode.n_steps)]),
        low=episode._tel_low.astype(np.float64), high=episode._tel_high.astype(np.float64),
    )


def telemetry_kernel(k: int, zone_noise: Any, inlet_drift: Any, zone_constants: Any, step_values: Any,
                     chw_noise: Any, scalars: Any, low: Any, high: Any, last_zone: Any, last_plant: Any,
                     last_fan: Any, it_row: Any, out: Any) -> None:
    """``ClusterEpisode.telemetry_values(k, it_row)`` into ``out`` (5Z+11,), from the last step's zone rows
    ``last_zone`` (8, Z: supply air, the true inlet and the zone temperatures are read), plant entries
    ``last_plant`` (21,: chilled water, economiser, cooling and PUE are read) and fan set-points ``last_fan``."""
    z = it_row.shape[0]
    n = int(scalars[2])
    kk = k if k < n - 1 else n - 1
    chw_bias = scalars[0]
    j = 0
    for i in range(z):
        d = inlet_drift[k - 1, i] if k > 0 else 0.0
        out[j] = last_zone[2, i] + zone_constants[0, i] + d + zone_noise[0, k, i]
        out[j + 1] = last_zone[3, i] + zone_constants[1, i] + 0.0 + zone_noise[1, k, i]
        out[j + 2] = it_row[i] / zone_constants[2, i]
        out[j + 3] = last_fan[i]
        out[j + 4] = last_zone[0, i]
        j += 5
    out[j] = last_plant[0] + chw_bias + 0.0 + chw_noise[k]
    out[j + 1] = step_values[0, kk]
    out[j + 2] = last_plant[3]
    out[j + 3] = step_values[1, kk]
    out[j + 4] = step_values[2, kk]
    out[j + 5] = step_values[3, kk]
    out[j + 6] = step_values[4, kk]
    out[j + 7] = step_values[5, kk]
    out[j + 8] = k / n
    out[j + 9] = last_plant[14] / scalars[1]
    out[j + 10] = last_plant[16]
    for i in range(out.shape[0]):
        v = out[i]
        lo, hi = low[i], high[i]
        v = v if (v > lo or v != v) else lo  # np.maximum: NaN propagates; a tie gives the bound (signed zeros)
        v = v if (v < hi or v != v) else hi  # np.minimum, likewise
        out[i] = np.float64(np.float32(v))


def step_batches(episodes: list[Any], windows: list[Any]) -> list[bool]:
    """Step every episode whose compiled actor steps whole windows in batches (the PPO controller's:
    ``dcops.agents.cooling.ppo_batched``) through its begun window, those whose actors give equal ``batch_key``
    together; return, per episode, whether it was stepped (the others are untouched, for the caller)."""
    groups: dict[tuple[Any, ...], list[int]] = {}
    for index, (episode, window) in enumerate(zip(episodes, windows, strict=True)):
        key_of = getattr(getattr(episode.controller, "compiled_actor", None), "batch_key", None)
        key = key_of(episode, window) if key_of is not None else None
        if key is not None:
            groups.setdefault(key, []).append(index)
    stepped = [False] * len(episodes)
    for members in groups.values():
        for m in members:
            stepped[m] = True
        actor: BatchedActor = episodes[members[0]].controller.compiled_actor
        actor.step_windows([episodes[m] for m in members], [windows[m] for m in members])
    return stepped


def run_window_compiled(episode: Any, window: Any, actor: CompiledActor,
                        packed: tuple[NDArray[np.float64], NDArray[np.float64]], tel: TelemetryArrays) -> None:
    """Step the plant through ``window`` (the ``PlantWindow`` of ``episode.begin_window()``) with the compiled
    actor, and leave the episode's state, the controller's and the window's records as the Python loop and
    ``record_step`` would (then call ``end_window``). If the actor raises mid-window (set-points that are not
    finite), the steps done so far are handed back, as the Python loop would have recorded them."""
    loop = _WindowLoop(episode, window, actor, packed, tel)
    actor.load_state()
    try:
        loop.run()
    finally:
        actor.store_state()
        loop.hand_back()


class _WindowLoop:
    """One window's buffers and its step loop (:func:`run_window_compiled`)."""

    def __init__(self, episode: Any, window: Any, actor: CompiledActor,
                 packed: tuple[NDArray[np.float64], NDArray[np.float64]], tel: TelemetryArrays) -> None:
        self.episode, self.actor, self.packed, self.tel = episode, actor, packed, tel
        z = self.z = episode.plant.n_zones
        self.first, self.steps = window.first_step, len(window.rows)
        self.last_zone = np.zeros((8, z))
        self.last_plant = np.zeros(len(PLANT_ROWS))
        self.last_fan = read_last_step(episode, self.last_zone, self.last_plant)
        self.it = np.array(window.rows)
        self.out_zone, self.out_plant = np.empty((self.steps, 8, z)), np.empty((self.steps, len(PLANT_ROWS)))
        self.setpoints: NDArray[np.float64] | None = None  # the last step's decoded set-points, once a step is done
        self.done = 0

    def run(self) -> None:
        episode, z, dt = self.episode, self.z, float(self.episode.dt_s)
        zones, scalars = self.packed
        tel = self.tel
        timeline = episode.timeline
        alive, chillers = timeline.fan_units_alive, timeline.chiller_available
        dry, wet = episode.dry_bulb, episode.wet_bulb
        it, out_zone, out_plant = self.it, self.out_zone, self.out_plant
        last_zone, last_plant, last_fan = self.last_zone, self.last_plant, self.last_fan
        telemetry = np.empty(tel.low.shape[0])
        telemetry_step, plant_step = compiled(telemetry_kernel), compiled(plant_kernel)
        act = self.actor.act
        for i in range(self.steps):
            k = self.first + i
            telemetry_step(k, tel.zone_noise, tel.inlet_drift, tel.zone_constants, tel.step_values, tel.chw_noise,
                           tel.scalars, tel.low, tel.high, last_zone, last_plant, last_fan, it[i], telemetry)
            setpoints = act(telemetry)
            try:
                ok = plant_step(zones, scalars, last_zone[3], last_plant[0], setpoints[:z], setpoints[z:2 * z],
                                setpoints[2 * z], setpoints[2 * z + 1], it[i], alive[k], dry[k], wet[k],
                                chillers[k], dt, out_zone[i], out_plant[i])
            except (ArithmeticError, ValueError):
                ok = False
            if not ok:  # the float path declines this step: the array path runs it, as step_plant would
                step_declined(episode, k, last_zone, last_plant, setpoints, it[i], out_zone[i], out_plant[i])
            last_zone, last_plant = out_zone[i], out_plant[i]
            self.setpoints = setpoints.copy()  # the actor may overwrite its vector at the next call
            last_fan = self.setpoints[:z]
            self.done = i + 1

    def hand_back(self) -> None:
        """The episode's state after the last step done, and the window's records if every step was done."""
        hand_back_window(self.episode, self.out_zone, self.out_plant, self.setpoints, self.done)


def step_declined(episode: Any, k: int, last_zone: NDArray[np.float64], last_plant: NDArray[np.float64],
                  setpoints: NDArray[np.float64], it_row: NDArray[np.float64], out_zone: NDArray[np.float64],
                  out_plant: NDArray[np.float64]) -> None:
    """Global step ``k`` of ``episode`` through ``step_plant`` (a step the compiled plant declines, as the float
    path hands it to the array path), from the last step's rows in the kernels' layout, with the decoded
    ``setpoints`` (2Z+2,) and the step's IT load ``it_row``; its outputs into ``out_zone`` (8, Z) and
    ``out_plant`` (21,)."""
    timeline = episode.timeline
    _, out = step_plant(episode.plant, PlantState(last_zone[3].copy(), np.float64(last_plant[0])),
                        plant_control(setpoints, episode.plant.n_zones),
                        PlantBoundary(it_row, episode.dry_bulb[k], episode.wet_bulb[k], timeline.chiller_available[k],
                                      timeline.fan_units_alive[k]), float(episode.dt_s))
    out_zone[:] = np.array(out[:8])
    out_plant[:] = [float(v) for v in out[8:]]


def read_last_step(episode: Any, last_zone: NDArray[np.float64], last_plant: NDArray[np.float64]
                   ) -> NDArray[np.float64]:
    """Write the episode's last step, from its Python state, into the kernels' layout: the zone rows
    ``last_zone`` (8, Z; supply air, true inlet, zone temperatures) and the plant entries ``last_plant`` (chilled
    water, economiser, cooling, PUE); return the last fan set-points (Z,)."""
    previous = episode.last_outputs
    last_zone[0] = episode._supply0 if previous is None else previous.supply_air_c
    if previous is not None:
        last_plant[_ECONOMISER] = float(previous.economiser_fraction)
        last_plant[_COOLING] = float(previous.cooling_kw)
        last_plant[_PUE] = float(previous.pue)
    last_zone[2] = episode.last_inlet_true
    last_zone[3] = episode.state.zone_temp_c
    last_plant[0] = float(episode.state.chw_supply_c)
    return np.array(episode.last_control.fan_speed, dtype=np.float64)


def hand_back_window(episode: Any, out_zone: NDArray[np.float64], out_plant: NDArray[np.float64],
                     setpoints: NDArray[np.float64] | None, done: int) -> None:
    """Write back the episode's state after its first ``done`` steps of the window (outputs ``out_zone`` (S, 8, Z)
    and ``out_plant`` (S, 21), the last done step's set-points ``setpoints``), and the window's records if all S
    were done; nothing if none was."""
    if done == 0 or setpoints is None:
        return
    z = episode.plant.n_zones
    new_state, outputs = outputs_of(out_zone[done - 1], out_plant[done - 1])
    episode.state = new_state
    episode.last_control = plant_control(setpoints, z)
    episode.last_outputs = outputs
    episode.last_inlet_true = outputs.inlet_c
    if done == out_zone.shape[0]:
        episode.compiled_records = (out_plant[:, _FACILITY].tolist(), out_plant[:, _IT].tolist(),
                                    out_plant[:, _COOLING].tolist(), out_zone[:, 2, :].copy(), outputs)


def plant_control(setpoints: NDArray[np.float64], z: int) -> PlantControl:
    """The ``PlantControl`` ``decode_setpoint_values`` builds from a decoded set-point vector (2Z+2,)."""
    values = setpoints.tolist()
    return PlantControl(fan_speed=np.array(values[:z]), supply_setpoint_c=np.array(values[z:2 * z]),
                        chw_setpoint_c=np.asarray(values[2 * z]), economiser_on=np.asarray(values[2 * z + 1]))
