"""The cluster-operations episode simulator: admission windows over the plant physics.

One :class:`ClusterEpisode` runs one episode. Per window w (the env, ``dcops.env``, calls these in order):

1. :meth:`submit` the teams' requests for w (they join the requests deferred to w);
2. :meth:`decide` with one decision per pending request (``dcops.cluster.decisions``): rejections are scored,
   accepted jobs join the queue, deferred ones come back in their window;
3. :meth:`run_window`: queued jobs, ordered by the configured queue policy's priority at the window's start
   (``dcops.cluster.queue.rank.dispatch_priority`` on the stated fields; ATC by default), start at the
   window's first step if they fit a zone; the plant advances
   ``steps_per_window`` physics steps of ``dt_s`` with IT load per zone = base load + the kW of the jobs
   running there (a job stops drawing power at the step its true runtime ends); then completions (audited),
   missed deadlines, carbon, the thermal incident check and the window reward (``dcops.cluster.reward``).

The physics knows nothing of jobs: the episode hands it IT load per zone and reads temperatures and power back
(``dcops.physics.plant.step_plant``). Weather, grid carbon, sensor errors and the fault timeline are computed
once at :meth:`reset`, so the per-step loop only indexes arrays and calls the plant. Carbon per job uses
running sums, so no Python loop runs over jobs per physics step. Where the cooling controller has a compiled form
and numba is installed, :meth:`step_compiled` runs the window's physics steps in compiled kernels
(``dcops.cluster.compiled_window``), to the same bits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dcops.cluster.allocation import ZonePool
from dcops.cluster.compiled_window import TelemetryArrays, run_window_compiled, step_batches, telemetry_arrays
from dcops.cluster.config import ClusterConfig
from dcops.cluster.cooling import PlantController
from dcops.cluster.decisions import DecisionBatch
from dcops.cluster.ledger import AuditRecord, Job, Ledger
from dcops.cluster.power import PowerEstimate, estimate
from dcops.cluster.queue.rank import priority_order, resolve_policy
from dcops.cluster.requests import Submission
from dcops.cluster.reward import PRIORITY_WEIGHT, SOFT_INLET_C, WindowScore
from dcops.physics.carbon import carbon_source
from dcops.physics.compiled_plant import pack_plant
from dcops.physics.constants import CP_AIR_KJ_PER_KG_K
from dcops.physics.faults import build_timeline, random_faults
from dcops.physics.interface import telemetry_bounds
from dcops.physics.plant import (
    PlantBoundary,
    PlantControl,
    PlantOutputs,
    PlantState,
    air_side,
    initial_state,
    step_plant,
)
from dcops.physics.sensors import SensorModel, draw_errors
from dcops.physics.weather import weather_source
from dcops.physics.zones import inlet_temperature_c

PROBE_STEPS = 1
"""Steps of the look at the plant taken at reset (on a copy of the state; see ``ClusterEpisode.reset``)."""


@dataclass(frozen=True)
class _TelemetrySeries:
    """An episode's sensor errors and per-step boundary values as Python lists, for :meth:`ClusterEpisode.telemetry`
    (indexed by reading or step; °C, K, fractions, kgCO2/kWh)."""

    inlet_noise: list[list[float]]
    inlet_bias: list[float]
    inlet_drift: list[list[float]]
    no_drift: list[float]
    return_noise: list[list[float]]
    return_bias: list[float]
    chw_noise: list[float]
    chw_bias: float
    zone_design: list[float]
    chillers: list[float]
    dry: list[float]
    wet: list[float]
    carbon_kg: list[float]
    sin: list[float]
    cos: list[float]


@dataclass(frozen=True)
class PlantWindow:
    """The physics part of a window: its first global step, the IT load of each step (Z,) and each step's
    boundary parts (dry-bulb, wet-bulb, chillers available, fan units alive)."""

    first_step: int
    rows: list[NDArray[np.float64]]
    step_inputs: list[tuple[Any, Any, Any, Any]]


@dataclass
class WindowResult:
    """What one window produced (the env turns it into rewards, observations and info)."""

    window: int
    score: WindowScore
    decisions: dict[str, list[str]]
    invalid: dict[str, Any]
    started: list[str]
    audits: list[AuditRecord]
    unfinished: list[str] = field(default_factory=list)
    facility_kwh: float = 0.0
    it_kwh: float = 0.0
    cooling_kwh: float = 0.0
    carbon_g: float = 0.0
    max_inlet_c: float = 0.0
    max_facility_kw: float = 0.0


def window_it_rows(base_kw: list[float], running: list[tuple[int, int, float]], first_step: int,
                   steps: int) -> NDArray[np.float64]:
    """A window's IT load, kW, per physics step and zone (steps, zones): each zone's base load plus every running
    job's kW until its last step, ``running`` as (end step, zone, kW) in running order.

    Each entry is summed job by job in running order, as ``it[: min(end − first, steps), zone] += kW`` job after
    job on a tiled base would sum it (the same bits), but in Python floats: a numpy slice add per running job
    costs more than its adds (2 % of a vector window)."""
    columns = [[base] * steps for base in base_kw]
    for end_step, zone, kw in running:
        steps_left = end_step - first_step
        if steps_left <= 0:
            continue
        column, kw = columns[zone], float(kw)
        if steps_left >= steps:
            columns[zone] = [value + kw for value in column]
        else:
            for j in range(steps_left):
                column[j] += kw
    return np.array(list(zip(*columns, strict=True)), dtype=np.float64)


class ClusterEpisode:
    """One episode of cluster operations over the plant (see the module docstring)."""

    def __init__(self, config: ClusterConfig, controller: PlantController) -> None:
        self.config = config
        self.controller = controller
        self.plant = config.plant_config()
        self.dt_s = config.dt_s
        self.n_steps = config.n_steps
        self._weather = weather_source(config.climate)
        self._carbon = carbon_source(config.grid_region, config.climate)
        self._tel_low, self._tel_high = telemetry_bounds(self.plant.n_zones)
        self._base_row = np.asarray(config.base_kw_per_zone, dtype=np.float64)
        self._base_list: list[float] = self._base_row.tolist()
        self._sensor_model = SensorModel()
        self._packed_plant = pack_plant(self.plant)  # None: a plant the compiled step does not take
        self._queue_policy = resolve_policy(config.queue_policy)

    def _order_queue(self, window: int) -> None:
        """Order the admitted jobs waiting for a zone with the configured queue policy (stated fields only)."""
        queue = self.ledger.queue
        if len(queue) < 2 or self.config.queue_policy == "fifo":
            return
        window_s = self.config.steps_per_window * self.dt_s
        requests = [self.ledger.jobs[i].request for i in queue]
        accepted = [self.ledger.jobs[i].accepted_window for i in queue]
        order = priority_order(
            np.array([max(r.duration_h * 3600.0, 1.0) for r in requests]),
            np.array([PRIORITY_WEIGHT[r.priority] for r in requests]),
            np.array([(r.deadline_window + 1) * window_s for r in requests]),
            np.array([min(a, window) * window_s for a in accepted]),
            self._queue_policy, window * window_s,
        )
        self.ledger.queue = [queue[int(i)] for i in order]

    # ------------------------------------------------------------------ reset
    def reset(self, rng: np.random.Generator, fault_rng: np.random.Generator, team_ids: list[str]) -> None:
        """Precompute the episode's weather, carbon, faults and sensor errors; start the plant and the ledger."""
        config, plant = self.config, self.plant
        n, dt, s = self.n_steps, self.dt_s, config.steps_per_window
        self.start = config.start
        mid = np.arange(n) * dt + dt / 2.0
        weather = self._weather.series(self.start, mid, rng)
        self.dry_bulb = weather.dry_bulb_c
        self.wet_bulb = weather.wet_bulb_c
        # Carbon beyond the horizon too: the carbon-blind reference of a late job runs past the end.
        extended = np.arange(2 * n) * dt + dt / 2.0
        self.carbon_ext = self._carbon.series(self.start, extended, rng)
        self.carbon = self.carbon_ext[:n]
        self._forecast = self.carbon.reshape(config.n_windows, s).mean(axis=1)
        self._forecast_list = self._forecast.tolist()
        self._carbon_list = self.carbon.tolist()
        self._carbon_cum = np.concatenate([[0.0], np.cumsum(self.carbon_ext)])
        if isinstance(config.faults, str):
            if config.faults != "random":
                raise ValueError(f"faults must be 'random', () or a tuple of faults, got {config.faults!r}")
            faults = random_faults(fault_rng, n * dt, plant.n_zones, plant.n_chillers,
                                   chiller_trip_probability=config.chiller_trip_probability,
                                   fan_failure_probability=config.fan_failure_probability,
                                   sensor_drift_probability=config.sensor_drift_probability)
        else:
            faults = list(config.faults)
        self.faults = tuple(faults)
        self.timeline = build_timeline(faults, n, dt, plant.n_zones, plant.n_chillers)
        # Per-step boundary parts as lists: indexing a list in the step loop is cheaper than indexing arrays.
        self._step_inputs = list(zip(list(self.dry_bulb), list(self.wet_bulb), list(self.timeline.chiller_available),
                                     list(self.timeline.fan_units_alive), strict=True))
        z = plant.n_zones
        self.inlet_errors = draw_errors(self._sensor_model, rng, n + 1, z)
        self.return_errors = draw_errors(self._sensor_model, rng, n + 1, z)
        self.chw_errors = draw_errors(self._sensor_model, rng, n + 1, 1)
        hours = self.start.hour + self.start.minute / 60.0 + (np.arange(n) + 1) * dt / 3600.0
        self.hour_sin = np.sin(2.0 * np.pi * hours / 24.0)
        self.hour_cos = np.cos(2.0 * np.pi * hours / 24.0)
        self._telemetry_series: _TelemetrySeries | None = None  # built on the first telemetry() call
        self._telemetry_arrays: TelemetryArrays | None = None  # built on the first compiled window

        self.state: PlantState = initial_state(plant, config.initial_zone_temp_c, config.initial_chw_c)
        self.pool = ZonePool(config)
        self.ledger = Ledger(team_ids, config.team_budget, s, dt, config.n_windows, config.game_version)
        self.team_ids = list(team_ids)
        self.window = 0
        self.done = False
        self.step_index = 0
        # Per-step records (filled as the plant runs).
        self.facility_kw = np.zeros(n)
        self.it_kw_total = np.zeros(n)
        self.cooling_kw = np.zeros(n)
        self.inlet_c = np.zeros((n, z))
        self._pue_ci_cum = np.zeros(n + 1)  # Σ PUE·CI·Δt_h, g/kWh·h per kW of IT
        self._pue_cum = np.zeros(n + 1)  # Σ PUE·Δt_h
        self.window_scores: list[WindowScore] = []
        self.controller.reset(self)
        # Before the first step the plant runs the cooling tasks' neutral operating point (its readings are
        # the first telemetry); a look at the plant under a nominal control (airflow matched to the load,
        # 24 °C supply, 18 °C chilled water) gives the control room its first PUE and chiller capacity. The
        # look is not a step: the state is not advanced and no controller is consulted.
        self.last_control = PlantControl(np.full(z, 0.6), np.full(z, 20.0), np.asarray(config.initial_chw_c),
                                         np.asarray(1.0))
        boundary0 = self._boundary(0, self._base_row)
        _, _, supply0, recirculation0 = air_side(plant, self.state, self.last_control, boundary0)
        self._supply0 = supply0
        self.last_inlet_true = inlet_temperature_c(supply0, self.state.zone_temp_c, recirculation0)
        self.last_outputs: PlantOutputs | None = None
        # The look is taken at the nominal load the cap admits (cap / 1.3 of IT, spread like the design), where
        # a scheduler will operate, so the first planning PUE is not the flattering one of an idle hall.
        nominal_it = np.minimum(plant.zone_design_it_kw,
                                np.maximum(self._base_row, config.power_cap_kw / 1.3 * plant.zone_design_it_kw
                                           / plant.design_it_kw))
        design_airflow = plant.zone_design_it_kw / (CP_AIR_KJ_PER_KG_K * plant.server_delta_t_k)
        fans = np.clip(1.1 * nominal_it / plant.zone_design_it_kw * design_airflow / plant.crah_max_airflow_kg_s,
                       0.2, 1.0)
        nominal = PlantControl(fans, np.full(z, 24.0), np.asarray(18.0), np.asarray(1.0))
        probe_state = self.state
        for _ in range(PROBE_STEPS):  # from the steady initial state one step gives the steady PUE (± 0.3 %)
            probe_state, probe = step_plant(plant, probe_state, nominal, self._boundary(0, nominal_it), dt)
        self.status_outputs: PlantOutputs = probe
        self.last_window_pue = float(probe.pue)

    def _boundary(self, k: int, it_row: NDArray[np.float64]) -> PlantBoundary:
        return PlantBoundary(it_row, self.dry_bulb[k], self.wet_bulb[k], self.timeline.chiller_available[k],
                             self.timeline.fan_units_alive[k])

    # ------------------------------------------------------------------ sensors and telemetry
    def reported_chw_c(self, k: int, state: PlantState) -> float:
        """The chilled-water reading before step k, as the telemetry carries it (float32, clipped)."""
        value = self.chw_errors.report(k, state.chw_supply_c[None])[0]
        return float(np.float32(min(max(value, self._tel_low[-11]), self._tel_high[-11])))

    def reported_inlet_c(self, k: int) -> NDArray[np.float64]:
        """Inlet readings after step k−1 (reading k), °C: truth + bias + noise + any drift."""
        drift = self.timeline.inlet_sensor_offset_k[k - 1] if k > 0 else 0.0
        return self.inlet_errors.report(k, self.last_inlet_true, drift)

    def _build_telemetry_series(self) -> _TelemetrySeries:
        plant, z = self.plant, self.plant.n_zones
        return _TelemetrySeries(
            inlet_noise=self.inlet_errors.noise_k.tolist(), inlet_bias=self.inlet_errors.bias_k.tolist(),
            inlet_drift=self.timeline.inlet_sensor_offset_k.tolist(), no_drift=[0.0] * z,
            return_noise=self.return_errors.noise_k.tolist(), return_bias=self.return_errors.bias_k.tolist(),
            chw_noise=self.chw_errors.noise_k[:, 0].tolist(), chw_bias=float(self.chw_errors.bias_k[0]),
            zone_design=plant.zone_design_it_kw.tolist(),
            chillers=(self.timeline.chiller_available.sum(axis=1) / plant.n_chillers).tolist(),
            dry=self.dry_bulb.tolist(), wet=self.wet_bulb.tolist(), carbon_kg=(self.carbon / 1000.0).tolist(),
            sin=self.hour_sin.tolist(), cos=self.hour_cos.tolist(),
        )

    def telemetry(self, k: int, it_row: NDArray[np.float64]) -> NDArray[np.float32]:
        """The cooling telemetry vector before step k (``dcops.physics.interface`` layout), as the cooling
        tasks build it: reported values, the load about to run, the last step's plant figures."""
        return np.array(self.telemetry_values(k, it_row), dtype=np.float32)

    def telemetry_values(self, k: int, it_row: NDArray[np.float64]) -> list[float]:
        """:meth:`telemetry` as Python floats (each the float32 of the vector, exactly).

        Assembled in Python floats (a telemetry-reading controller asks for it every physics step): the same
        operations as ``SensorErrors.report`` and ``build_telemetry`` on arrays, so the same float32 values."""
        plant, out, state = self.plant, self.last_outputs, self.state
        kk = min(k, self.n_steps - 1)
        series = self._telemetry_series
        if series is None:
            series = self._telemetry_series = self._build_telemetry_series()
        drift = series.inlet_drift[k - 1] if k > 0 else series.no_drift
        if out is None:  # before the first step, as the cooling tasks do
            econ, cooling_kw, pue, supply = 0.0, 0.0, 0.0, self._supply0
        else:
            econ, cooling_kw, pue, supply = (float(out.economiser_fraction), float(out.cooling_kw), float(out.pue),
                                             out.supply_air_c)
        values: list[float] = []
        for true, bias, d, noise, zone, r_bias, r_noise, load, design, fan, sup in zip(
                self.last_inlet_true.tolist(), series.inlet_bias, drift, series.inlet_noise[k],
                state.zone_temp_c.tolist(), series.return_bias, series.return_noise[k], it_row.tolist(),
                series.zone_design, self.last_control.fan_speed.tolist(), supply.tolist(), strict=True):
            values += (true + bias + d + noise, zone + r_bias + 0.0 + r_noise, load / design, fan, sup)
        values += (
            float(state.chw_supply_c) + series.chw_bias + 0.0 + series.chw_noise[k], series.chillers[kk], econ,
            series.dry[kk], series.wet[kk], series.carbon_kg[kk], series.sin[kk], series.cos[kk],
            k / self.n_steps, cooling_kw / plant.design_it_kw, pue,
        )
        vector = np.array(values)
        return np.minimum(np.maximum(vector, self._tel_low), self._tel_high).astype(np.float32).tolist()

    # ------------------------------------------------------------------ a window
    def submit(self, submissions: list[Submission]) -> None:
        """Add requests submitted in the current window."""
        for submission in submissions:
            self.ledger.add(submission, self.window)

    def pending_ids(self) -> list[str]:
        return self.ledger.pending(self.window)

    def decide(self, batch: DecisionBatch) -> None:
        """Apply the current window's decisions (before :meth:`run_window`)."""
        self._score = WindowScore(window=self.window, n_invalid=batch.report.count,
                                  n_pending=len(self.pending_ids()))
        self._invalid = batch.report.as_dict()
        self._decisions = self.ledger.apply(batch, self.window, self._score)

    def run_window(self) -> WindowResult:
        """Advance the plant through the current window and score it (module docstring)."""
        window = self.begin_window()
        state = self.state
        plant, dt = self.plant, self.dt_s
        control_for = self.controller.control
        record = self.record_step
        if self.step_compiled(window):
            return self.end_window(window)
        rows = window.rows
        for i, (dry, wet, chillers, fans_alive) in enumerate(window.step_inputs):
            control = control_for(i, state)
            state, out = step_plant(plant, state, control, PlantBoundary(rows[i], dry, wet, chillers, fans_alive), dt)
            record(state, control, out)
        return self.end_window(window)

    def step_compiled(self, window: PlantWindow) -> bool:
        """Step the plant through ``window`` (after :meth:`begin_window`) in compiled kernels, to the same bits as
        the loop of :meth:`run_window` (``dcops.cluster.compiled_window``), where the controller has a compiled
        actor and the plant a packed form; return False, having done nothing, where not."""
        actor = getattr(self.controller, "compiled_actor", None)
        if actor is None or self._packed_plant is None:
            return False
        if hasattr(actor, "batch_key") and step_batches([self], [window])[0]:  # PPO: three kernel calls a step
            return True
        run_window_compiled(self, window, actor, self._packed_plant, self.compiled_telemetry())
        return True

    def compiled_telemetry(self) -> TelemetryArrays:
        """The episode's telemetry inputs in the kernels' arrays, built at its first compiled window."""
        if self._telemetry_arrays is None:
            self._telemetry_arrays = telemetry_arrays(self)
        return self._telemetry_arrays

    def begin_window(self) -> PlantWindow:
        """Start the current window: order the queue, start what fits, set the IT load of each of its physics
        steps and prime the controller. :meth:`run_window` then steps the plant (``dcops.vector_env`` steps
        several episodes' plants at once), calling :meth:`record_step` after each step, and :meth:`end_window`."""
        if self.done:
            raise RuntimeError("episode is over")
        config = self.config
        w, s = self.window, config.steps_per_window
        first = w * s
        self._order_queue(w)
        self._window_started = self.ledger.place_queued(self.pool, w, first)

        jobs = self.ledger.jobs
        it = window_it_rows(self._base_list, [(jobs[i].end_step, jobs[i].zone, jobs[i].request.kw)  # type: ignore[misc]
                                              for i in self.ledger.running], first, s)
        self.controller.begin_window(it, first)
        self._outs: list[PlantOutputs] = []
        self.compiled_records: tuple[list[float], list[float], list[float], NDArray[np.float64], PlantOutputs] | None
        self.compiled_records = None  # a compiled window's per-step records (dcops.cluster.compiled_window)
        return PlantWindow(first, list(it), self._step_inputs[first : first + s])

    def record_step(self, state: PlantState, control: PlantControl, out: PlantOutputs) -> None:
        """Take one physics step's result (the telemetry of a controller that reads it needs these every step)."""
        self.state = state
        self.last_control = control
        self.last_outputs = out
        self.last_inlet_true = out.inlet_c
        self._outs.append(out)

    def end_window(self, window: PlantWindow) -> WindowResult:
        """Score the window whose physics steps were recorded (module docstring, step 3)."""
        config = self.config
        w, s = self.window, config.steps_per_window
        first = window.first_step
        score = self._score
        started = self._window_started
        dt_h = self.dt_s / 3600.0
        facility, it_total, cooling = self.facility_kw, self.it_kw_total, self.cooling_kw
        end = first + s
        if self.compiled_records is None:
            outs = self._outs
            out = outs[-1]
            # Per-step records, as Python floats (18 values: cheaper than a dozen tiny numpy calls).
            fac = [float(o.facility_kw) for o in outs]
            itk = [float(o.it_kw) for o in outs]
            cool = [float(o.cooling_kw) for o in outs]
            window_inlets = np.array([o.inlet_c for o in outs])
        else:
            fac, itk, cool, window_inlets, out = self.compiled_records
        self.status_outputs = out
        facility[first:end] = fac
        it_total[first:end] = itk
        cooling[first:end] = cool
        self.inlet_c[first:end] = window_inlets
        self.step_index = end

        # Running sums for per-job carbon.
        ci = self._carbon_list[first:end]
        pue = [f / max(i, 1e-9) for f, i in zip(fac, itk, strict=True)]
        pue_cum, pue_ci_cum = self._pue_cum[first], self._pue_ci_cum[first]
        for j in range(s):
            pue_cum += pue[j] * dt_h
            pue_ci_cum += pue[j] * ci[j] * dt_h
            self._pue_cum[first + j + 1] = pue_cum
            self._pue_ci_cum[first + j + 1] = pue_ci_cum
        facility_sum, it_sum = sum(fac), sum(itk)
        self.last_window_pue = facility_sum / max(it_sum, 1e-9)

        max_facility, max_inlet = max(fac), float(window_inlets.max())
        reasons, detail = [], []
        if max_facility > config.power_cap_kw:  # the facility meter is public
            reasons.append(f"facility power {max_facility:.0f} kW over the {config.power_cap_kw:.0f} kW cap")
            detail.append(reasons[-1])
        if max_inlet > config.inlet_limit_c:  # the true inlet is not: say only that the limit was crossed
            reasons.append(f"an inlet above {config.inlet_limit_c:.0f} °C")
            detail.append(f"true inlet {max_inlet:.1f} °C above {config.inlet_limit_c:.0f} °C")
        score.incident = bool(reasons)
        score.incident_reasons = reasons
        score.incident_detail = detail
        score.soft_fraction = float(np.count_nonzero(window_inlets > SOFT_INLET_C)) / window_inlets.size

        audits = self.ledger.finish_window(w, end, self.pool, score, self._job_carbon)
        unfinished: list[str] = []
        if w == config.n_windows - 1:
            unfinished = self.ledger.close_horizon(w, end, score, self._job_carbon)
            self.done = True
        if config.game_version >= 1:  # resolution audits: rejected at decide time, completed, missed, unfinished
            audits = self.ledger.take_audits()
        score.finalise(config.throughput_scale)
        self.window_scores.append(score)
        result = WindowResult(
            window=w, score=score, decisions=self._decisions, invalid=self._invalid,
            started=[j.request.request_id for j in started], audits=audits, unfinished=unfinished,
            facility_kwh=facility_sum * dt_h, it_kwh=it_sum * dt_h, cooling_kwh=sum(cool) * dt_h,
            carbon_g=sum(f * c for f, c in zip(fac, ci, strict=True)) * dt_h,
            max_inlet_c=max_inlet, max_facility_kw=max_facility,
        )
        if not self.done:
            self.window = w + 1
        return result

    def _job_carbon(self, job: Job, until_step: int) -> tuple[float, float]:
        """(actual g, carbon-blind g) of a job that ran from its start step until ``until_step``."""
        a = job.start_step
        assert a is not None
        kw = job.request.kw
        actual = kw * (self._pue_ci_cum[until_step] - self._pue_ci_cum[a])
        energy = kw * (self._pue_cum[until_step] - self._pue_cum[a])
        n = until_step - a
        blind_start = job.request.submitted_window * self.config.steps_per_window
        mean_ci = (self._carbon_cum[blind_start + n] - self._carbon_cum[blind_start]) / n
        return float(actual), float(energy * mean_ci)

    # ------------------------------------------------------------------ public status
    def power_estimate(self, margin: float = 0.0) -> PowerEstimate:
        """The control room's planning figures now (``dcops.cluster.power``)."""
        return estimate(self.config.power_cap_kw, self.last_window_pue, float(self.status_outputs.chiller_capacity_kw),
                        self.config.base_kw, self.ledger.committed_job_kw(), margin)


    def time_of_window(self, w: int) -> str:
        return (self.start + timedelta(seconds=w * self.config.steps_per_window * self.dt_s)).isoformat()

    def score(self) -> float:
        """Mean window reward so far (the episode score once done)."""
        if not self.window_scores:
            return 0.0
        return sum(s.reward for s in self.window_scores) / len(self.window_scores)
