"""The PPO cooling controller's compiled form: :meth:`PPOController.act_values` on arrays, to the bit.

Why: the cluster environment asks the controller for set-points every physics step (18 times a window); in
Python floats the feature reductions, the supervisory layer and the decoding cost about 25 µs a step, far more
than their arithmetic. (Cluster windows call these kernels from ``dcops.agents.cooling.ppo_batched``, which
steps several episodes' windows at once; :meth:`CompiledPPO.act` below is the per-episode form it falls back
to.) Here two numba kernels do them (:func:`features_kernel`: the features and their
normalisation; :func:`setpoints_kernel`: the supervisory layer, the zones' airflow trims, the float32 of the
set-point vector and ``decode_setpoint_values``' clip), and the policy's MLP runs between them in numpy, as
:class:`~dcops.agents.cooling.ppo.NumpyPolicy` runs it: its bits come from numpy's BLAS and ``tanh``, which
a compiled loop would not reproduce.

Exactness: the same operations in the same order as ``FeatureBuilder.values``, ``NumpyPolicy.normalise``,
``SupervisoryLayer.setpoint_values``, ``ZoneAirflowTrim.update_values`` and ``decode_setpoint_values`` (Python's
``max``/``min`` as its ``>``/``<`` scans; numpy's ``maximum``/``minimum`` with their NaN rule where the float path
calls numpy). Set-points that are not finite are handed to ``decode_setpoint_values``, which raises the float
path's ``ValueError``. ``tests/cluster/test_compiled_window.py`` compares the set-points step by step, and whole
episodes.

The episode state (the previous step's features, action and trims) is the controller's: the actor takes it in
arrays before a window (:meth:`CompiledPPO.load_state`) and hands it back after (:meth:`CompiledPPO.store_state`),
so windows stepped here and through ``act_values`` mix. :meth:`PPOController.compiled` gives no actor for a
controller whose parts are not the stock classes (their arithmetic is what the kernels copy) or for 8 zones or
more (``zone_sum`` switches to numpy's pairwise order there).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from dcops.physics.compiled_plant import compiled
from dcops.physics.constants import CP_AIR_KJ_PER_KG_K
from dcops.physics.interface import (
    CHW_SETPOINT_RANGE_C,
    FAN_SPEED_RANGE,
    decode_setpoint_values,
    setpoint_bounds,
)

N_PREVIOUS_ACTIONS = 3


def features_kernel(telemetry: Any, state: Any, mean: Any, scale: Any, clip: float, out: Any) -> None:
    """The normalised features (``NumpyPolicy.normalise(FeatureBuilder.values(...))``) into ``out``.

    ``state`` (8,): whether a previous step exists, its max inlet, chilled water and mean load, then the
    previous action (3) and the largest airflow trim; the first four are updated."""
    z = (telemetry.shape[0] - 11) // 5
    m = 5 * z
    inlet_max = telemetry[0]
    inlet_min = telemetry[0]
    return_max = telemetry[1]
    load_max = telemetry[2]
    gap_max = telemetry[0] - telemetry[4]
    inlet_sum = 0.0
    return_sum = 0.0
    supply_sum = 0.0
    load_sum = 0.0
    fan_sum = 0.0
    for i in range(z):
        inlet, ret, load, fan, supply = (telemetry[5 * i], telemetry[5 * i + 1], telemetry[5 * i + 2],
                                         telemetry[5 * i + 3], telemetry[5 * i + 4])
        if inlet > inlet_max:
            inlet_max = inlet
        if inlet < inlet_min:
            inlet_min = inlet
        if ret > return_max:
            return_max = ret
        if load > load_max:
            load_max = load
        if inlet - supply > gap_max:
            gap_max = inlet - supply
        inlet_sum += inlet
        return_sum += ret
        supply_sum += supply
        load_sum += load
        fan_sum += fan
    load_mean = load_sum / z
    chw = telemetry[m]
    if state[0] > 0.5:
        previous_inlet, previous_chw, previous_load = state[1], state[2], state[3]
    else:
        previous_inlet, previous_chw, previous_load = inlet_max, chw, load_mean
    state[0] = 1.0
    state[1] = inlet_max
    state[2] = chw
    state[3] = load_mean
    out[0] = inlet_max
    out[1] = inlet_sum / z
    out[2] = inlet_min
    out[3] = return_max
    out[4] = return_sum / z
    out[5] = supply_sum / z
    out[6] = load_max
    out[7] = load_mean
    out[8] = fan_sum / z
    out[9] = chw
    out[10] = telemetry[m + 1]  # chillers available
    out[11] = telemetry[m + 2]  # economiser fraction
    out[12] = telemetry[m + 3]  # dry-bulb
    out[13] = telemetry[m + 4]  # wet-bulb
    out[14] = telemetry[m + 6]  # hour sin
    out[15] = telemetry[m + 7]  # hour cos
    out[16] = telemetry[m + 9]  # cooling over design IT
    out[17] = inlet_max - previous_inlet
    out[18] = chw - previous_chw
    out[19] = load_mean - previous_load
    out[20] = gap_max
    out[21] = state[7]
    out[22] = state[4]
    out[23] = state[5]
    out[24] = state[6]
    for j in range(out.shape[0]):
        v = (out[j] - mean[j]) / scale[j]
        v = v if (v > -clip or v != v) else -clip  # np.maximum: NaN propagates, a tie gives the bound
        out[j] = v if (v < clip or v != v) else clip  # np.minimum, likewise


def setpoints_kernel(mean: Any, telemetry: Any, state: Any, trims: Any, constants: Any, design: Any,
                     max_air: Any, low: Any, high: Any, out: Any) -> bool:
    """``decode_setpoint_values(array("f", SupervisoryLayer.setpoint_values(action, ...)))`` into ``out`` (2Z+2,)
    for the policy's mean ``mean`` (3,), whose clip to [-1, 1] is the action (``NumpyPolicy.act``: numpy's
    ``minimum(maximum(·, -1), 1)``); the trims advance and ``state[4:8]`` takes the action and the largest trim.
    False (``out`` holding the float32 set-points, unclipped) where a set-point is not finite: the caller hands
    them to ``decode_setpoint_values``."""
    z = trims.shape[0]
    # The action: np.minimum(np.maximum(mean, -1), 1) (NaN propagates, a tie gives the bound).
    a0, a1, a2 = mean[0], mean[1], mean[2]
    a0 = a0 if (a0 > -1.0 or a0 != a0) else -1.0
    a0 = a0 if (a0 < 1.0 or a0 != a0) else 1.0
    a1 = a1 if (a1 > -1.0 or a1 != a1) else -1.0
    a1 = a1 if (a1 < 1.0 or a1 != a1) else 1.0
    a2 = a2 if (a2 > -1.0 or a2 != a2) else -1.0
    a2 = a2 if (a2 < 1.0 or a2 != a2) else 1.0
    action0, action1, action2 = a0, a1, a2
    (supply_lo, supply_hi, target_lo, target_hi, margin_lo, margin_hi, airflow_lo, airflow_hi, approach, rise,
     chw_lo, chw_hi, gain, deadband, top, fan_lo, fan_hi, per_kw) = (
        constants[0], constants[1], constants[2], constants[3], constants[4], constants[5], constants[6],
        constants[7], constants[8], constants[9], constants[10], constants[11], constants[12], constants[13],
        constants[14], constants[15], constants[16], constants[17])
    # SupervisoryActionMap.physical: low + (min(max(a, -1), 1) + 1) · 0.5 · (high − low), per action.
    a0 = -1.0 if -1.0 > a0 else a0
    a0 = 1.0 if 1.0 < a0 else a0
    a1 = -1.0 if -1.0 > a1 else a1
    a1 = 1.0 if 1.0 < a1 else a1
    a2 = -1.0 if -1.0 > a2 else a2
    a2 = 1.0 if 1.0 < a2 else a2
    supply_c = supply_lo + (a0 + 1.0) * 0.5 * (supply_hi - supply_lo)
    target_c = target_lo + (a1 + 1.0) * 0.5 * (target_hi - target_lo)
    chw_margin = margin_lo + (a2 + 1.0) * 0.5 * (margin_hi - margin_lo)
    chw_c = supply_c - approach - chw_margin
    if chw_lo > chw_c:
        chw_c = chw_lo
    if chw_hi < chw_c:
        chw_c = chw_hi
    chw_reported = telemetry[5 * z]
    supply_air = supply_c
    if chw_reported + approach > supply_air:
        supply_air = chw_reported + approach
    gap = target_c - supply_air
    if rise / airflow_hi - rise > gap:
        gap = rise / airflow_hi - rise
    margin = rise / (rise + gap)
    if airflow_lo > margin:
        margin = airflow_lo
    if airflow_hi < margin:
        margin = airflow_hi
    trim_max = 0.0
    total = 0.0
    for i in range(z):
        value = trims[i] + gain * (telemetry[5 * i] - target_c - deadband)
        value = value if value >= 0.0 else 0.0
        value = value if value <= top else top
        trims[i] = value
        if i == 0 or value > trim_max:
            trim_max = value
        fan = margin * (1.0 + value) * (telemetry[5 * i + 2] * design[i] / per_kw) / max_air[i]
        fan = fan if fan >= fan_lo else fan_lo
        fan = fan if fan <= fan_hi else fan_hi
        out[i] = np.float64(np.float32(fan))
        out[z + i] = np.float64(np.float32(supply_c))
        total += out[i]
    for i in range(z):
        total += out[z + i]
    out[2 * z] = np.float64(np.float32(chw_c))
    out[2 * z + 1] = 1.0
    total += out[2 * z] + out[2 * z + 1]
    state[4] = action0
    state[5] = action1
    state[6] = action2
    state[7] = trim_max
    if not np.isfinite(total):
        return False
    for i in range(out.shape[0]):
        v, lo, hi = out[i], low[i], high[i]
        out[i] = lo if v < lo else (hi if v > hi else v)
    return True



class CompiledPPO:
    """A :class:`~dcops.agents.cooling.ppo.PPOController`'s episode stepped through the kernels (module doc).

    Built by :meth:`PPOController.compiled` after its ``reset`` (``controller``: that ``PPOController``; not
    imported here, since ``ppo`` imports this module); starts from its state."""

    def __init__(self, controller: Any) -> None:
        context, layer, policy = controller.context, controller.layer, controller.policy
        amap, trim = layer.action_map, layer.trim
        z = context.n_zones
        self._policy = policy
        self._mean = np.ascontiguousarray(policy.obs_mean, dtype=np.float64)
        self._scale = np.ascontiguousarray(policy._obs_scale, dtype=np.float64)
        self._clip = float(policy.obs_clip)
        self._controller = controller
        self._state = np.zeros(8)
        self._trims = np.zeros(z)
        self.load_state()
        self._constants = np.array([
            *amap.supply_range_c, *amap.inlet_target_range_c, *amap.chw_margin_range_k, *amap.margin_range,
            context.coil_approach_k, context.server_delta_t_k, *CHW_SETPOINT_RANGE_C, trim.gain_per_k,
            trim.deadband_k, trim.max_trim, *FAN_SPEED_RANGE, CP_AIR_KJ_PER_KG_K * context.server_delta_t_k,
        ], dtype=np.float64)
        self._design = np.ascontiguousarray(context.zone_design_it_kw, dtype=np.float64)
        self._max_air = np.ascontiguousarray(context.crah_max_airflow_kg_s, dtype=np.float64)
        low, high = setpoint_bounds(z)
        self._low, self._high = np.array(low), np.array(high)
        self._features = np.empty(len(self._mean))
        self._setpoints = np.empty(2 * z + 2)
        self._z = z
        self._features_kernel = compiled(features_kernel)
        self._setpoints_kernel = compiled(setpoints_kernel)

    def load_state(self) -> None:
        """Take the controller's episode state: ``FeatureBuilder._previous``, ``last_action``, the trims."""
        controller = self._controller
        previous = controller.features._previous
        self._state[:] = 0.0
        if previous is not None:
            self._state[0:4] = (1.0, *previous)
        self._state[4:7] = np.asarray(controller.last_action, dtype=np.float64)[:N_PREVIOUS_ACTIONS]
        self._state[7] = float(controller.layer.trim_max)
        self._trims[:] = controller.layer.trim._trims

    def store_state(self) -> None:
        """Hand the episode state back to the controller (the values ``act_values`` would have left)."""
        controller, state = self._controller, self._state
        controller.features._previous = (float(state[1]), float(state[2]), float(state[3])) if state[0] > 0.5 \
            else None
        controller.last_action = state[4:7].copy()
        trim = controller.layer.trim
        trim._trims = self._trims.tolist()
        trim.trim_max = float(state[7])

    def act(self, telemetry: NDArray[np.float64]) -> NDArray[np.float64]:
        """The decoded set-points ((2Z+2,), float32 values) for a telemetry vector ((5Z+11,) float32 values), in
        a buffer the next call overwrites."""
        x = self._features
        self._features_kernel(telemetry, self._state, self._mean, self._scale, self._clip, x)
        out = self._setpoints
        if not self._setpoints_kernel(self._policy.mean_action(x), telemetry, self._state, self._trims,
                                      self._constants, self._design, self._max_air, self._low, self._high, out):
            out = decode_not_finite(out, self._z)
        return out


def decode_not_finite(setpoints: NDArray[np.float64], z: int) -> NDArray[np.float64]:
    """Set-points ``setpoints_kernel`` found not finite, through the float path's decoding: its error, or, for a
    sum that only overflowed, the decoded vector (2Z+2,)."""
    control = decode_setpoint_values(setpoints.tolist(), z)
    return np.concatenate([control.fan_speed, control.supply_setpoint_c,
                           [float(control.chw_setpoint_c), float(control.economiser_on)]])
