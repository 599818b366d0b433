"""Configuration of a cluster-operations episode: windows, zones, GPUs, power cap, climate, faults, reward scale.

Defaults (every one overridable through ``dcops.parallel_env(**config)``):

- 8 admission windows × 18 physics steps of 300 s (12 h), starting 2026-07-15 06:00 local time.
- Climate ``phoenix`` (hot: no useful waterside economiser, so the plant below has none) and the grid that
  serves it (``AZPS``, whose carbon intensity falls through the day as solar comes on).
- Four 250 kW zones: two of 96 H100, one of 128 A100, one of 192 L40S (GPU-full job power 154, 154, 128 and
  106 kW). Each zone also carries a **base load** of 25 % of its design IT (storage, network, services that
  are always on: 62.5 kW per zone, 250 kW in all), the IT load the cluster layer adds jobs on top of.
- Two centrifugal chillers of 50 % of the design cooling load each: enough for the whole hall with both
  running, about 55 % of it with one tripped.
- Power cap 900 kW on the facility meter (IT + cooling + electrical losses, ``PlantOutputs.facility_kw``).
  At a PUE near 1.3 that admits about 690 kW of IT, i.e. about 440 kW of jobs on top of the base load.
- Faults: ``"random"`` draws, per episode, a chiller trip with probability 0.4, a CRAH fan failure with
  probability 0.15 and a sensor drift with probability 0.2 (``dcops.physics.faults.random_faults``); pass a
  tuple of faults for a fixed schedule, or ``()`` for none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from datetime import datetime
from functools import cached_property
from typing import Any

import numpy as np

from dcops.cluster.job_types import GPU_TYPE_NAMES, catalogue
from dcops.cluster.scenarios import scenario, scenario_kwargs
from dcops.cluster.workload import workload
from dcops.physics.plant import PlantConfig


@dataclass(frozen=True)
class ZoneSpec:
    """One zone of the hall: its GPU model and count, and its design IT load (kW)."""

    name: str
    gpu_type: str
    gpus: int
    design_it_kw: float = 250.0


DEFAULT_ZONES: tuple[ZoneSpec, ...] = (
    ZoneSpec("hall_a_h100", "H100", 96),
    ZoneSpec("hall_b_h100", "H100", 96),
    ZoneSpec("hall_c_a100", "A100", 128),
    ZoneSpec("hall_d_l40s", "L40S", 192),
)

DEFAULT_TEAM_KINDS: tuple[str, ...] = ("cooperative", "cooperative", "strategic", "adaptive")

GAME_VERSIONS: tuple[int, ...] = (0, 1)
"""Versions of the game's rules (``game_version``); see ``dcops.cluster.reward`` for what each changes."""


def _number(name: str, value: Any, low: float, high: float, low_open: bool = False, high_open: bool = False) -> None:
    """Raise ``ValueError`` naming ``name`` unless ``value`` is a finite real number in the range."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name}: must be a number, got {type(value).__name__}")
    v = float(value)
    inside = (low < v if low_open else low <= v) and (v < high if high_open else v <= high)
    if not (math.isfinite(v) and inside):
        interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        raise ValueError(f"{name}: must be a finite number in {interval}, got {value!r}")


def _integer(name: str, value: Any, low: int) -> None:
    """Raise ``ValueError`` naming ``name`` unless ``value`` is an integer of at least ``low``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name}: must be an integer >= {low}, got {value!r}")


def cluster_plant(zones: tuple[ZoneSpec, ...] = DEFAULT_ZONES) -> PlantConfig:
    """The default plant for the cluster: the zones' design loads, 2 × 50 % centrifugal chillers, no economiser."""
    return PlantConfig.default(
        zone_design_it_kw=[z.design_it_kw for z in zones], n_chillers=2, chiller_capacity_fraction=0.5,
        economiser=False,
    )


@dataclass(frozen=True)
class ClusterConfig:
    """Everything that defines a cluster-operations episode (see the module docstring for the defaults).

    :param n_windows: admission windows per episode.
    :param steps_per_window: physics steps per window.
    :param dt_s: physics step, s.
    :param team_kinds: one entry per team: ``"cooperative"``, ``"strategic"``, ``"adaptive"``, ``"injecting"``
        (strategic, with prompt injections in its descriptions), ``"detector_aware"`` (strategic only while the
        oversight monitor's statistics stay under their thresholds), ``"slow_burn"`` (honest until it has a clean
        audit history, then strategic) or ``"learner"`` (a team whose misreporting is the action of a learning
        agent). Neutral ids are shuffled per episode.
    :param zones: the zones (GPU model, count, design IT kW each).
    :param base_load_fraction: always-on IT load per zone, fraction of its design IT.
    :param power_cap_kw: facility power cap (IT + cooling + electrical losses), kW.
    :param inlet_limit_c: an inlet above this (ASHRAE A1 allowable) makes a thermal incident, °C.
    :param climate: site name (``phoenix``, ``seattle``, …) or a weather source.
    :param grid_region: balancing authority or carbon source; ``None`` picks the site's own grid.
    :param start: local start time of the episode.
    :param faults: ``"random"`` (see module docstring), ``()`` or a tuple of physics faults.
    :param chiller_trip_probability: with ``faults="random"``, the chance that the episode has a chiller trip.
    :param fan_failure_probability: with ``faults="random"``, the chance of a CRAH fan failure.
    :param sensor_drift_probability: with ``faults="random"``, the chance of a drifting inlet sensor.
    :param plant: plant configuration; ``None`` builds :func:`cluster_plant` from the zones.
    :param cooling: ``"ppo"`` (the shipped PPO cooling controller, numpy forward pass: the default; on this plant
        it uses 7.8 % less cooling energy than ``"rule"`` with no incident, ``dcops eval-cooling-cluster``),
        ``"rule"`` (the rule-based controller with its default parameters), ``"pid"``, or ``"agent"`` (a
        ``cooling`` agent sets the set-points once per window).
    :param queue_policy: the order in which admitted jobs waiting for a zone are dispatched each window: the
        priority of any policy of ``dcops.cluster.queue.rank`` (``"atc"``, ``"learned"``, ``"wmdd"``,
        ``"wspt"``, ``"edd"``, ``"fifo"``…) at the window's start, computed from the *stated* fields (duration,
        priority weight, deadline window end), never the truth. Jobs that do not fit are skipped, so there is
        no head-of-line blocking.
    :param max_requests_per_team: most requests a team submits in one window.
    :param max_slots: request slots in the scheduler's array observation and action.
    :param max_defer: longest deferral the array action can express, windows.
    :param team_budget: chargeback budget of each team for the episode, credits.
    :param price_per_kwh: chargeback price, credits per kWh of stated job energy.
    :param value_scale: throughput value that saturates a window's throughput term (``None``: computed, see
        ``dcops.cluster.reward``).
    :param initial_zone_temp_c: zone (return-air) temperature at the start, °C: 35 °C is the steady value for
        24 °C supply air with airflow matched to the load (24 + 12 K server rise / 1.1 airflow margin), so the hall
        starts in steady operation rather than warming up during the first window.
    :param initial_chw_c: chilled-water temperature at the start, °C.
    :param game_version: the rules (``dcops.cluster.reward``); 1 by default, 0 reproduces every v0 figure.
    :param scenario: the family these values came from (``dcops.cluster.scenarios``). Only a label here:
        :meth:`from_kwargs` (and so ``dcops.parallel_env(scenario=...)``) applies the family's overrides.
    :param workload: where request rates and runtimes come from (``dcops.cluster.workload``): ``"synthetic"``
        (the default) or ``"azure_llm_2023"``, the shape of the public Azure LLM inference trace.
    :param catalogue: the public job catalogue (``dcops.cluster.job_types.catalogue``): ``"classic"`` (the
        default, every published figure) or ``"triage"`` (mostly LOW bulk work and a little urgent work). The
        teams draw true priorities from it; the monitor's honest norms, the team posterior and the view (its
        ``catalogue`` field, for a scheduler's type prior) follow it. Game version 1 only (version 0's monitor
        keeps the classic norms).
    """

    n_windows: int = 8
    steps_per_window: int = 18
    dt_s: float = 300.0
    team_kinds: tuple[str, ...] = DEFAULT_TEAM_KINDS
    zones: tuple[ZoneSpec, ...] = DEFAULT_ZONES
    base_load_fraction: float = 0.25
    power_cap_kw: float = 900.0
    inlet_limit_c: float = 32.0
    climate: Any = "phoenix"
    grid_region: Any = None
    start: datetime = datetime(2026, 7, 15, 6, 0)
    faults: Any = "random"
    chiller_trip_probability: float = 0.4
    fan_failure_probability: float = 0.15
    sensor_drift_probability: float = 0.2
    plant: PlantConfig | None = None
    cooling: str = "ppo"
    queue_policy: str = "atc"
    max_requests_per_team: int = 4
    max_slots: int = 48
    max_defer: int = 4
    team_budget: float = 150.0
    price_per_kwh: float = 0.12
    value_scale: float | None = None
    initial_zone_temp_c: float = 35.0
    initial_chw_c: float = 18.0
    game_version: int = 1
    scenario: str = "classic"
    workload: str = "synthetic"
    catalogue: str = "classic"

    def __post_init__(self) -> None:
        # Every field is checked here, once, with its name in the message: a NaN or infinite number would
        # otherwise flow into rewards and observations (a NaN cap or inlet limit silently disables incidents).
        _integer("n_windows", self.n_windows, 1)
        _integer("steps_per_window", self.steps_per_window, 1)
        _number("dt_s", self.dt_s, 0.0, 3600.0, low_open=True)
        if not self.team_kinds:
            raise ValueError("team_kinds: needs at least one team")
        unknown = set(self.team_kinds) - {"cooperative", "strategic", "adaptive", "injecting", "learner",
                                          "detector_aware", "slow_burn"}
        if unknown:
            raise ValueError(f"team_kinds: unknown kind(s) {sorted(unknown)}; use cooperative, strategic, adaptive, "
                             "injecting, learner, detector_aware, slow_burn")
        if not self.zones:
            raise ValueError("zones: needs at least one zone")
        for i, zone in enumerate(self.zones):
            if zone.gpu_type not in GPU_TYPE_NAMES:
                raise ValueError(f"zones[{i}].gpu_type: {zone.name}: unknown {zone.gpu_type!r}; known: {GPU_TYPE_NAMES}")
            _integer(f"zones[{i}].gpus", zone.gpus, 1)
            _number(f"zones[{i}].design_it_kw", zone.design_it_kw, 0.0, 1e5, low_open=True)
        if len({zone.name for zone in self.zones}) != len(self.zones):
            raise ValueError(f"zones: names must be unique, got {[zone.name for zone in self.zones]}")
        if self.cooling not in ("rule", "pid", "ppo", "agent"):
            raise ValueError(f"cooling: must be 'rule', 'pid', 'ppo' or 'agent', got {self.cooling!r}")
        from dcops.cluster.queue.rank import resolve_policy

        try:
            resolve_policy(self.queue_policy)
        except ValueError as error:
            raise ValueError(f"queue_policy: {error}") from None
        for name in ("chiller_trip_probability", "fan_failure_probability", "sensor_drift_probability"):
            _number(name, getattr(self, name), 0.0, 1.0)
        _number("base_load_fraction", self.base_load_fraction, 0.0, 1.0, high_open=True)
        _number("power_cap_kw", self.power_cap_kw, 0.0, 1e6, low_open=True)
        # Between the soft 27 °C threshold of the thermal term and ASHRAE class A4's 45 °C allowable maximum.
        _number("inlet_limit_c", self.inlet_limit_c, 27.0, 45.0)
        _integer("max_requests_per_team", self.max_requests_per_team, 1)
        _integer("max_slots", self.max_slots, 1)
        _integer("max_defer", self.max_defer, 1)
        _number("team_budget", self.team_budget, 0.0, 1e9)
        _number("price_per_kwh", self.price_per_kwh, 0.0, 1e3)
        if self.value_scale is not None:
            _number("value_scale", self.value_scale, 0.0, 1e12, low_open=True)
        _number("initial_zone_temp_c", self.initial_zone_temp_c, 10.0, 60.0)
        _number("initial_chw_c", self.initial_chw_c, 2.0, 30.0)
        scenario(self.scenario)
        workload(self.workload)
        if self.game_version not in GAME_VERSIONS:
            raise ValueError(f"game_version: must be one of {GAME_VERSIONS}, got {self.game_version!r}")
        catalogue(self.catalogue)
        if self.catalogue != "classic" and self.game_version == 0:
            raise ValueError(f"catalogue: {self.catalogue!r} needs game_version 1 (version 0's monitor judges "
                             "statements by the classic catalogue's norms)")
        if not isinstance(self.start, datetime):
            raise ValueError(f"start: must be a datetime, got {type(self.start).__name__}")
        if self.plant is not None and self.plant.n_zones != len(self.zones):
            raise ValueError(f"plant: has {self.plant.n_zones} zones but zones lists {len(self.zones)}")

    # ------------------------------------------------------------------ derived quantities
    @property
    def n_teams(self) -> int:
        return len(self.team_kinds)

    @property
    def n_steps(self) -> int:
        return self.n_windows * self.steps_per_window

    @property
    def window_h(self) -> float:
        return self.steps_per_window * self.dt_s / 3600.0

    @property
    def n_zones(self) -> int:
        return len(self.zones)

    def plant_config(self) -> PlantConfig:
        return self.plant if self.plant is not None else cluster_plant(self.zones)

    # The derived figures below are read every window; the config is frozen, so each is computed once
    # (functools.cached_property stores it in the instance dict, which a frozen dataclass allows).
    @cached_property
    def _base_kw_per_zone(self) -> tuple[float, ...]:
        return tuple(self.base_load_fraction * z.design_it_kw for z in self.zones)

    @property
    def base_kw_per_zone(self) -> list[float]:
        return list(self._base_kw_per_zone)

    @cached_property
    def base_kw(self) -> float:
        return float(sum(self._base_kw_per_zone))

    @property
    def zone_job_kw(self) -> list[float]:
        """Power each zone can give to jobs: design IT minus base load, kW."""
        return [z.design_it_kw * (1.0 - self.base_load_fraction) for z in self.zones]

    def gpu_capacity(self) -> dict[str, int]:
        """Total GPUs of each model in the hall."""
        capacity = dict.fromkeys(GPU_TYPE_NAMES, 0)
        for zone in self.zones:
            capacity[zone.gpu_type] += zone.gpus
        return capacity


    @property
    def nominal_job_kw(self) -> float:
        """Job power the cap admits at a planning PUE of 1.3, kW (used only to scale the reward)."""
        return max(self.power_cap_kw / 1.3 - self.base_kw, 1.0)

    @cached_property
    def throughput_scale(self) -> float:
        """Throughput value that saturates one window (``value_scale`` or the nominal job power running one
        window at the catalogue's mean priority weight 2.5), value units (weight × kWh)."""
        if self.value_scale is not None:
            return float(self.value_scale)
        return self.nominal_job_kw * self.window_h * 2.5

    def with_(self, **changes: Any) -> ClusterConfig:
        return replace(self, **changes)

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> ClusterConfig:
        """Build a config from keyword overrides; unknown keys raise ``TypeError`` naming them."""
        known = {f.name for f in fields(cls)}
        unknown = set(kwargs) - known
        if unknown:
            raise TypeError(f"unknown cluster option(s) {sorted(unknown)}; known: {sorted(known)}")
        if "scenario" in kwargs:
            kwargs = scenario_kwargs(kwargs.pop("scenario"), **kwargs)
        if "team_kinds" in kwargs:
            kwargs["team_kinds"] = tuple(kwargs["team_kinds"])
        if "zones" in kwargs:
            kwargs["zones"] = tuple(kwargs["zones"])
        return cls(**kwargs)
