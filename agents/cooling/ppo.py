"""The pretrained PPO cooling controller, run as a plain numpy forward pass (no torch at run time).

The policy was trained with stable-baselines3 PPO (``dcops train-cooling``, :mod:`dcops.training.cooling.ppo`)
and exported to ``weights/ppo_cooling.npz`` (arrays only, read with ``np.load(allow_pickle=False)``) plus
``weights/ppo_cooling.json`` (training config, seed, timesteps, versions). The runtime needs only those two
files and numpy; the SB3 ``ppo_cooling.zip`` next to them is for audit and resuming training.

**Architecture** (why: PPO learns *when* to choose which set-points from weather, load, loop state and faults;
the fast, local work of holding each zone's inlets is done by a fixed layer, as CRAH units' own controls do it
under a supervisory optimiser in real halls):

1. :class:`FeatureBuilder` reduces the *reported* telemetry (``dcops.physics.interface``) over zones: the 25 features
   of :data:`FEATURE_NAMES`, in order: inlet max / mean / min, return-air max / mean, supply-air mean (°C);
   IT load max / mean, fan speed mean (fractions); reported chilled-water supply (°C), fraction of chiller units
   available, economiser fraction of the last step; outdoor dry-bulb and wet-bulb (°C), sin / cos of the local
   hour, cooling power over design IT power; the change since the previous step of the max inlet, the
   chilled-water supply and the mean load (0 at the first step); the largest inlet-minus-supply gap (K); the
   largest zone airflow trim (below); the policy's previous action (3 values, 0 at the first step).
2. :class:`NumpyPolicy`: ``x = clip((f − mean) / sqrt(var + 1e-8), −10, 10)`` with the running statistics of SB3's
   ``VecNormalize`` frozen at export, then the actor's tanh MLP and linear head; the action is the Gaussian's
   mean clipped to [-1, 1] (SB3's ``predict(deterministic=True)``).
3. :class:`SupervisoryLayer` maps the three actions to the plant's set-point vector: a supply-air set-point for
   every zone (15–27 °C); an inlet target (20–28 °C) turned into each zone's airflow by the nameplate
   recirculation model (:class:`SupervisoryActionMap`), times ``1 + trim`` where each zone's trim integrates its
   own reported inlet's excess over the target (:class:`ZoneAirflowTrim`; it only ever adds air, so a sensor
   reading low cannot starve a zone); chilled water a margin (0–10 K) below the warmest that lets the coils
   reach the supply set-point (5–18 °C); the waterside economiser always enabled (it only displaces chiller
   work).

Because every feature is a reduction over zones and every set-point is applied per zone through the zone's
design load and own sensor, the same weights run 1 to N zones. The policy was trained on plants of 1–6 zones of
the ``PlantConfig.default`` family (150–350 kW per zone, two chillers of 60 % or three of 45 % of design
cooling) at 5-minute control steps (the cluster environment's 2 × 50 % plant runs it too, see the tests); a
context with another control interval raises ``ValueError``.
"""

from __future__ import annotations

import json
from array import array
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from dcops.agents.cooling.base import ControllerContext
from dcops.physics.constants import CP_AIR_KJ_PER_KG_K
from dcops.physics.interface import (
    CHW_SETPOINT_RANGE_C,
    FAN_SPEED_RANGE,
    PLANT_FIELDS,
    ZONE_FIELDS,
    Telemetry,
    zone_sum,
)
from dcops.physics.single_plant import MAX_TERMS as MAX_ZONE_TERMS

if TYPE_CHECKING:
    from dcops.agents.cooling.ppo_batched import BatchedPPO

FEATURE_NAMES: tuple[str, ...] = (
    "inlet_max_c", "inlet_mean_c", "inlet_min_c", "return_max_c", "return_mean_c", "supply_mean_c",
    "load_max", "load_mean", "fan_speed_mean",
    "chw_supply_c", "chillers_available", "economiser_fraction",
    "dry_bulb_c", "wet_bulb_c", "hour_sin", "hour_cos", "cooling_over_design_it",
    "inlet_max_change_k", "chw_supply_change_k", "load_mean_change", "inlet_minus_supply_max_k",
    "airflow_trim_max", "previous_supply_action", "previous_inlet_target_action", "previous_chw_margin_action",
)
N_FEATURES = len(FEATURE_NAMES)
ACTION_NAMES: tuple[str, ...] = ("supply_c", "inlet_target_c", "chw_margin_k")
N_ACTIONS = len(ACTION_NAMES)
TRAINED_DT_S = 300.0
"""Control interval the policy was trained at, s (its rate features are per step)."""

WEIGHTS_PACKAGE = "dcops.agents.cooling"
WEIGHTS_NPZ = "weights/ppo_cooling.npz"
WEIGHTS_JSON = "weights/ppo_cooling.json"


@dataclass(frozen=True)
class SupervisoryActionMap:
    """Affine maps from the policy's actions in [-1, 1] to supervisory set-points, and from those to the plant's
    set-point vector (ranges in °C).

    The airflow follows from the inlet target through the recirculation model the operator knows from the
    nameplate (``dcops.physics.zones``): with supply air at ``T_sa`` and the servers' air temperature rise ``ΔT``,
    a zone supplied ``margin`` × its servers' airflow (margin < 1) recirculates ``1 − margin`` of its intake and
    settles at an inlet of ``T_sa + ΔT·(1 − margin)/margin``, so ``margin = ΔT / (ΔT + (T_target − T_sa))``.
    ``T_sa`` is the supply-air set-point, or the reported chilled water plus the coil approach when the coil
    cannot reach it. Targets below ``T_sa`` ask for more than the servers' airflow (up to 1.5 ×, at 4 K below).
    This is the open-loop part; :class:`ZoneAirflowTrim` closes the loop per zone.
    """

    supply_range_c: tuple[float, float] = (15.0, 27.0)
    inlet_target_range_c: tuple[float, float] = (20.0, 28.0)
    chw_margin_range_k: tuple[float, float] = (0.0, 10.0)
    margin_range: tuple[float, float] = (0.3, 1.5)

    @staticmethod
    def _scale(a: float, bounds: tuple[float, float]) -> float:
        low, high = bounds
        return low + (min(max(float(a), -1.0), 1.0) + 1.0) * 0.5 * (high - low)

    @staticmethod
    def _unscale(value: float, bounds: tuple[float, float]) -> float:
        low, high = bounds
        return 2.0 * (value - low) / (high - low) - 1.0

    def physical(self, action: NDArray[np.floating]) -> tuple[float, float, float]:
        """(supply-air set-point °C, inlet target °C, chilled-water margin K) of a normalised action."""
        return (self._scale(action[0], self.supply_range_c), self._scale(action[1], self.inlet_target_range_c),
                self._scale(action[2], self.chw_margin_range_k))

    def normalised(self, supply_c: float, inlet_target_c: float, chw_margin_k: float) -> NDArray[np.float64]:
        """The normalised action of physical set-points (the inverse of :meth:`physical` inside the ranges)."""
        return np.array([self._unscale(supply_c, self.supply_range_c),
                         self._unscale(inlet_target_c, self.inlet_target_range_c),
                         self._unscale(chw_margin_k, self.chw_margin_range_k)])

    def chw_setpoint_c(self, supply_c: float, chw_margin_k: float, context: ControllerContext) -> float:
        """Chilled water ``chw_margin_k`` below the warmest that still lets the coil reach ``supply_c``, in 5–18 °C."""
        return min(max(supply_c - context.coil_approach_k - chw_margin_k, CHW_SETPOINT_RANGE_C[0]),
                   CHW_SETPOINT_RANGE_C[1])

    def airflow_margin(self, supply_c: float, inlet_target_c: float, chw_supply_c: float,
                       context: ControllerContext) -> float:
        """Airflow as a multiple of the servers' draw that puts the inlets at ``inlet_target_c`` (class doc), with
        the reported chilled-water supply ``chw_supply_c`` (°C)."""
        supply_air_c = max(supply_c, chw_supply_c + context.coil_approach_k)
        rise_k = context.server_delta_t_k
        # The gap may go negative down to where the margin reaches its maximum (−4 K for 12 K and 1.5 ×).
        gap_k = max(inlet_target_c - supply_air_c, rise_k / self.margin_range[1] - rise_k)
        margin = rise_k / (rise_k + gap_k)
        return min(max(margin, self.margin_range[0]), self.margin_range[1])



@dataclass
class ZoneAirflowTrim:
    """Each zone's airflow multiplier ``1 + trim``: the trim integrates the zone's reported inlet excess over the
    target, ``trim ← clip(trim + gain · (T_inlet − T_target − deadband), 0, max_trim)`` once per control step.

    Why: the open-loop airflow is right for a healthy zone; a zone that loses CRAH fan units, or runs hotter than
    its nameplate, shows it in its own inlet within a step, and only that zone should get more air. Floored at
    zero, so a sensor that reads low can never take air away (one that reads high over-cools, the safe side).
    The loop gain, about 0.05 /K × 0.7 × 24 K per unit margin ≈ 0.8 per step at the usual operating point, is
    below 1: no oscillation.

    :param gain_per_k: trim added per K of excess per control step.
    :param deadband_k: excess ignored (sensor noise is ≈0.15 K).
    :param max_trim: largest trim (airflow up to ``1 + max_trim`` times the open-loop value, fans ≤ 100 %).
    """

    gain_per_k: float = 0.05
    deadband_k: float = 0.25
    max_trim: float = 1.5

    def reset(self, n_zones: int) -> None:
        self._trims = [0.0] * n_zones
        self.trim_max = 0.0

    @property
    def trim(self) -> NDArray[np.float64]:
        """Each zone's current trim (Z,)."""
        return np.array(self._trims)

    def update(self, inlet_reported_c: NDArray[np.float64], target_c: float) -> NDArray[np.float64]:
        """Advance the trims one control step on the zones' reported inlets (°C); return them (Z,)."""
        self.update_values(inlet_reported_c.tolist(), target_c)
        return self.trim

    def update_values(self, inlet_reported_c: list[float], target_c: float) -> list[float]:
        """:meth:`update` on Python floats: zone by zone, the same operations as the array form
        ``clip(trim + gain · (inlet − target − deadband), 0, max_trim)``, without numpy's per-call cost."""
        gain, deadband, top = self.gain_per_k, self.deadband_k, self.max_trim
        trims = []
        for trim, inlet in zip(self._trims, inlet_reported_c, strict=True):
            value = trim + gain * (inlet - target_c - deadband)
            value = value if value >= 0.0 else 0.0
            trims.append(value if value <= top else top)
        self._trims = trims
        self.trim_max = max(trims)
        return trims


class SupervisoryLayer:
    """Normalised actions to the plant set-point vector, with the zones' airflow trims (module doc, step 3)."""

    def __init__(self, action_map: SupervisoryActionMap | None = None, trim: ZoneAirflowTrim | None = None) -> None:
        self.action_map = action_map or SupervisoryActionMap()
        self.trim = trim or ZoneAirflowTrim()

    def reset(self, context: ControllerContext) -> None:
        self.context = context
        self.trim.reset(context.n_zones)
        self._design = context.zone_design_it_kw.tolist()
        self._max_air = context.crah_max_airflow_kg_s.tolist()

    @property
    def trim_max(self) -> float:
        return float(self.trim.trim_max)

    def setpoints(self, action: NDArray[np.floating], telemetry: Telemetry) -> NDArray[np.float32]:
        """The plant set-point vector (``dcops.physics.interface`` layout) for a normalised action."""
        return np.array(self.setpoint_values(action, telemetry.inlet_c.tolist(), telemetry.load_fraction.tolist(),
                                             telemetry.chw_supply_c), dtype=np.float32)

    def setpoint_values(self, action: NDArray[np.floating], inlet_c: list[float], load_fraction: list[float],
                        chw_supply_c: float) -> list[float]:
        """:meth:`setpoints` from the reported zone inlets (°C), load fractions and chilled-water supply (°C) as
        Python floats; the set-points in float64, before the float32 of the vector."""
        context = self.context
        supply_c, inlet_target_c, chw_margin_k = self.action_map.physical(action)
        chw_c = self.action_map.chw_setpoint_c(supply_c, chw_margin_k, context)
        margin = self.action_map.airflow_margin(supply_c, inlet_target_c, chw_supply_c, context)
        trim = self.trim.update_values(inlet_c, inlet_target_c)
        # ControllerContext.matched_fan_speed with margin·(1 + trim) per zone, clipped to the fan range, in the
        # same operations zone by zone (Python floats: a few zones do not pay for numpy calls).
        low, high = FAN_SPEED_RANGE
        per_kw = CP_AIR_KJ_PER_KG_K * context.server_delta_t_k
        fans = []
        for load, design, max_air, t in zip(load_fraction, self._design, self._max_air, trim, strict=True):
            fan = margin * (1.0 + t) * (load * design / per_kw) / max_air
            fan = fan if fan >= low else low
            fans.append(fan if fan <= high else high)
        return [*fans, *([supply_c] * context.n_zones), chw_c, 1.0]


class FeatureBuilder:
    """Turns a telemetry vector (and the previous action) into the policy's feature vector (module doc).

    Stateful: it remembers the previous step's max inlet, chilled-water supply and mean load; call
    :meth:`reset` at the start of each episode.
    """

    def __init__(self) -> None:
        self._previous: tuple[float, float, float] | None = None

    def reset(self) -> None:
        self._previous = None

    def __call__(self, telemetry: Telemetry, previous_action: NDArray[np.floating], airflow_trim_max: float = 0.0
                 ) -> NDArray[np.float64]:
        t = telemetry
        plant = [t.chw_supply_c, t.chillers_available, t.economiser_fraction, t.dry_bulb_c, t.wet_bulb_c,
                 t.carbon_kg_per_kwh, t.hour_sin, t.hour_cos, t.progress, t.cooling_over_design_it, t.pue]
        return np.array(self.values(t.inlet_c.tolist(), t.return_c.tolist(), t.load_fraction.tolist(),
                                    t.fan_speed.tolist(), t.supply_c.tolist(), plant, previous_action,
                                    airflow_trim_max))

    def values(self, inlet: list[float], ret: list[float], load: list[float], fan: list[float],
               supply: list[float], plant: list[float], previous_action: NDArray[np.floating],
               airflow_trim_max: float = 0.0) -> list[float]:
        """The features as Python floats from the telemetry's zone fields (Z each) and its plant fields (in
        ``dcops.physics.interface.PLANT_FIELDS`` order). Reductions over zones are summed in numpy's order
        (``zone_sum``): the same values as the array reductions, without a numpy call per feature."""
        chw, chillers, economiser, dry, wet, _carbon, hour_sin, hour_cos, _progress, cooling, _pue = plant
        n = len(inlet)
        inlet_max = max(inlet)
        load_mean = zone_sum(load) / n
        current = (inlet_max, chw, load_mean)
        previous = self._previous if self._previous is not None else current
        self._previous = current
        return [
            inlet_max, zone_sum(inlet) / n, min(inlet),
            max(ret), zone_sum(ret) / n, zone_sum(supply) / n,
            max(load), load_mean, zone_sum(fan) / n,
            chw, chillers, economiser, dry, wet, hour_sin, hour_cos, cooling,
            inlet_max - previous[0], chw - previous[1], load_mean - previous[2],
            max([i - s for i, s in zip(inlet, supply, strict=True)]), float(airflow_trim_max),
            *np.asarray(previous_action, dtype=np.float64)[:N_ACTIONS].tolist(),
        ]


@dataclass(frozen=True)
class NumpyPolicy:
    """The exported actor: observation normalisation, a tanh MLP and a linear action head (float64).

    :param obs_mean: running mean of the features (N_FEATURES,).
    :param obs_var: running variance of the features (N_FEATURES,).
    :param obs_clip: normalised features are clipped to ±obs_clip.
    :param weights: hidden-layer matrices, each (inputs, outputs); the action head last.
    :param biases: matching bias vectors.
    """

    obs_mean: NDArray[np.float64]
    obs_var: NDArray[np.float64]
    obs_clip: float
    weights: tuple[NDArray[np.float64], ...]
    biases: tuple[NDArray[np.float64], ...]
    obs_epsilon: float = 1e-8

    def __post_init__(self) -> None:
        # The normalisation's divisor, computed once (frozen dataclass: a private cache).
        object.__setattr__(self, "_obs_scale", np.sqrt(self.obs_var + self.obs_epsilon))

    def normalise(self, features: NDArray[np.floating]) -> NDArray[np.float64]:
        z = (np.asarray(features, dtype=np.float64) - self.obs_mean) / self._obs_scale
        return np.minimum(np.maximum(z, -self.obs_clip), self.obs_clip)  # np.clip, without its Python wrapper

    def mean_action(self, normalised: NDArray[np.floating]) -> NDArray[np.float64]:
        """The Gaussian policy's mean for already normalised observations ((N_FEATURES,) or (B, N_FEATURES))."""
        h = np.asarray(normalised, dtype=np.float64)
        for w, b in zip(self.weights[:-1], self.biases[:-1], strict=True):
            h = np.tanh(h @ w + b)
        return h @ self.weights[-1] + self.biases[-1]

    def act(self, features: NDArray[np.floating]) -> NDArray[np.float64]:
        """The deterministic action in [-1, 1] for raw features (as SB3's ``predict(deterministic=True)``)."""
        return np.minimum(np.maximum(self.mean_action(self.normalise(features)), -1.0), 1.0)

    def save(self, path: str | Path) -> None:
        arrays: dict[str, NDArray[Any]] = {
            "obs_mean": self.obs_mean, "obs_var": self.obs_var,
            "obs_clip": np.asarray(self.obs_clip), "obs_epsilon": np.asarray(self.obs_epsilon),
            "n_layers": np.asarray(len(self.weights)),
        }
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            arrays[f"w{i}"] = w
            arrays[f"b{i}"] = b
        np.savez_compressed(path, **arrays)

    @classmethod
    def from_npz(cls, source: Any, n_features: int = N_FEATURES, n_actions: int = N_ACTIONS) -> NumpyPolicy:
        """Read the arrays (``np.load(allow_pickle=False)``: no code is ever unpickled) of a policy with
        ``n_features`` inputs and ``n_actions`` outputs (by default this module's controller's)."""
        with np.load(source, allow_pickle=False) as data:
            n = int(data["n_layers"])
            policy = cls(
                obs_mean=data["obs_mean"].astype(np.float64),
                obs_var=data["obs_var"].astype(np.float64),
                obs_clip=float(data["obs_clip"]),
                weights=tuple(data[f"w{i}"].astype(np.float64) for i in range(n)),
                biases=tuple(data[f"b{i}"].astype(np.float64) for i in range(n)),
                obs_epsilon=float(data["obs_epsilon"]),
            )
        if policy.obs_mean.shape != (n_features,) or policy.weights[0].shape[0] != n_features:
            raise ValueError(f"policy expects {policy.weights[0].shape[0]} features, this runtime builds {n_features}")
        if policy.weights[-1].shape[1] != n_actions:
            raise ValueError(f"policy has {policy.weights[-1].shape[1]} actions, this runtime maps {n_actions}")
        return policy


@cache
def shipped_policy() -> NumpyPolicy:
    """The committed policy (package data), loaded once."""
    ref = resources.files(WEIGHTS_PACKAGE).joinpath(WEIGHTS_NPZ)
    if not ref.is_file():
        raise FileNotFoundError(f"no shipped PPO cooling weights at {WEIGHTS_PACKAGE}/{WEIGHTS_NPZ}; "
                                "run `dcops train-cooling` to make them")
    with ref.open("rb") as handle:
        return NumpyPolicy.from_npz(handle)


def shipped_metadata() -> dict[str, Any]:
    """Training config, seed, timesteps and versions of the shipped policy (its JSON file)."""
    ref = resources.files(WEIGHTS_PACKAGE).joinpath(WEIGHTS_JSON)
    return json.loads(ref.read_text()) if ref.is_file() else {}


class PPOController:
    """The PPO cooling policy behind the ``CoolingController`` protocol (numpy only; see the module doc).

    :param policy: a :class:`NumpyPolicy`; None loads the shipped weights.
    :param layer: the supervisory layer the policy was trained with.
    """

    name = "ppo"

    def __init__(self, policy: NumpyPolicy | None = None, layer: SupervisoryLayer | None = None) -> None:
        self.policy = policy if policy is not None else shipped_policy()
        self.layer = layer or SupervisoryLayer()
        self.features = FeatureBuilder()
        self.last_action = np.zeros(N_ACTIONS)

    @classmethod
    def from_file(cls, path: str | Path) -> PPOController:
        """A controller with weights from an exported ``.npz`` file."""
        return cls(NumpyPolicy.from_npz(path))

    def reset(self, context: ControllerContext) -> None:
        if abs(context.dt_s - TRAINED_DT_S) > 1e-6:
            raise ValueError(f"the PPO cooling policy was trained at {TRAINED_DT_S:.0f} s control steps; "
                             f"this plant steps every {context.dt_s:.0f} s")
        if context.n_zones < 1:
            raise ValueError("the PPO cooling policy needs at least one zone")
        self.context = context
        self.layer.reset(context)
        self.features.reset()
        self.last_action = np.zeros(N_ACTIONS)

    def compiled(self) -> BatchedPPO | None:
        """This controller's episode (after :meth:`reset`) in compiled form: the decoded set-points of
        :meth:`act_values` for a telemetry array, to the bit (``dcops.agents.cooling.ppo_compiled``; needs numba),
        and whole cluster windows of several episodes at once (``dcops.agents.cooling.ppo_batched``); the cluster
        episode and the vector environment step through it when they can. None where the kernels would not be
        this controller's arithmetic: a part replaced by another class, or 8 zones or more (``zone_sum``'s order
        changes there)."""
        stock = (type(self).act_values is PPOController.act_values and type(self.policy) is NumpyPolicy
                 and type(self.layer) is SupervisoryLayer and type(self.layer.trim) is ZoneAirflowTrim
                 and type(self.layer.action_map) is SupervisoryActionMap and type(self.features) is FeatureBuilder)
        if not stock or self.context.n_zones > MAX_ZONE_TERMS:
            return None
        from dcops.agents.cooling.ppo_batched import BatchedPPO

        return BatchedPPO(self)

    def act(self, telemetry: NDArray[np.float32]) -> NDArray[np.float32]:
        return np.array(self.act_values(np.asarray(telemetry, dtype=np.float64).reshape(-1).tolist()),
                        dtype=np.float32)

    def act_values(self, telemetry: list[float]) -> list[float]:
        """:meth:`act` on Python floats: the telemetry vector's values in, the set-point vector's out, each as the
        float32 the vectors carry (so the values are those of :meth:`act` to the bit). The cluster episode steps
        the plant through this every 5 minutes of plant time without building either vector."""
        n, f = self.context.n_zones, len(ZONE_FIELDS)
        m = f * n
        if len(telemetry) != m + len(PLANT_FIELDS):
            raise ValueError(f"telemetry must have {m + len(PLANT_FIELDS)} values for {n} zones, got {len(telemetry)}")
        # Zone fields interleave zone by zone (inlet, return, load, fan, supply); then the plant fields.
        inlet, load, plant = telemetry[0:m:f], telemetry[2:m:f], telemetry[m:]
        features = self.features.values(inlet, telemetry[1:m:f], load, telemetry[3:m:f], telemetry[4:m:f], plant,
                                        self.last_action, self.layer.trim_max)
        action = self.policy.act(features)
        self.last_action = action
        return array("f", self.layer.setpoint_values(action, inlet, load, plant[0])).tolist()
