"""The scheduler's observation: fixed-size arrays with masks for RL, and a structured view for language agents.

Both are built from public material only: stated request fields, the control room's readings (reported sensor
values, meters, chiller capacity), the operator's own commitments, team histories, audits of finished jobs and
oversight flags. Nothing here receives a :class:`~dcops.cluster.requests.RequestTruth`.

**Arrays** (``gymnasium.spaces.Dict``, float32 unless noted; S = ``max_slots``, A = 2 + ``max_defer``,
Z zones, T teams; values are clipped to their boxes):

- ``requests`` (S, 26): per pending request, in arrival order: valid, team index / (T − 1), job type one-hot
  (10), kW / 200, stated duration h / 8, GPUs / 128, GPU model one-hot (3), stated priority / 3, stated
  deadline − now (windows) / n_windows, stated slack (deadline − earliest completion if started now) /
  n_windows, stated carbon-flexible, chargeback / 50, windows waited / n_windows, a zone fits it now, flags
  against its team last window / 4.
- ``request_mask`` (S,) int8: 1 for a slot holding a pending request.
- ``action_mask`` (S·A,) int8: the valid codes, slot after slot (entry ``slot · A + code``): one entry per logit
  of the ``MultiDiscrete([A] × S)`` action, the layout of ``dcops.registry``'s mask convention (sb3-contrib's
  ``MaskablePPO``, RLlib masking modules). A code is valid when it decides the slot's request: ACCEPT, REJECT,
  DEFER by k while ``now + k`` < n_windows; an empty slot allows only code 0, which is ignored, so every slot
  has a valid code. The action space (:class:`dcops.cluster.decisions.SlotDecisions`) samples with it.
- ``cluster`` (20,): progress, last window's peak facility power / cap, mean IT / cap, planning PUE − 1,
  chiller capacity / cap, chillers available, safe job power / cap, committed job power / cap, headroom / cap,
  base load / cap, this window's carbon intensity and the next three windows' (kg/kWh), outdoor dry-bulb / 50,
  last window incident, last window's throughput term and reward, pending / S, queued / S.
- ``zones`` (Z, 7): free GPU fraction, free job power fraction, reported inlet / 40, CRAH fan units alive, GPU
  model one-hot (3).
- ``teams`` (T, 15): budget left / budget, requests so far / (n_windows · max_requests_per_team), stated
  HIGH/CRITICAL share, stated inflexible share, urgent-description share, flags last window by kind (4), flags
  so far by kind / n_windows (4), audited jobs / 20, audited mean deadline gap / 3; with ``team_posterior``
  (an option of the environment, version 1 only) a 16th column, the team's ``gaming_posterior`` (the
  calibrated P(gaming | public evidence so far) the structured view carries, ``dcops.oversight.posterior``).

**Structured view** (``info["scheduler"]["view"]``, JSON-able): window, time, pending requests (public fields
plus slot, windows waited and whether a zone fits now), overflow ids, queued and running jobs, plant readings
and the power estimate (``dcops.cluster.power``), zones, the carbon forecast per window, team statistics, the
flags raised at the end of the last window, the audits of jobs that finished in it, and the last window's
reward terms and invalid-decision report.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from dcops.cluster.config import ClusterConfig
from dcops.cluster.decisions import SlotDecisions
from dcops.cluster.job_types import GPU_TYPE_NAMES, JOB_TYPE_INDEX
from dcops.cluster.ledger import AuditRecord
from dcops.cluster.requests import Priority, Request

N_REQUEST_FEATURES = 26
N_CLUSTER_FEATURES = 20
N_ZONE_FEATURES = 7

def view_catalogue(view: Any) -> str:
    """The public job catalogue a structured view was made under: its ``catalogue`` entry, which a view of the
    default (``classic``) leaves out so that classic views stay as they were (``ClusterConfig.catalogue``)."""
    return str(view.get("catalogue", "classic"))


N_TEAM_FEATURES = 15
_GPU_INDEX = {name: i for i, name in enumerate(GPU_TYPE_NAMES)}


def _clip(array: NDArray[np.float32], low: float, high: float) -> None:
    """Clip in place (two ufunc calls; ``np.clip``'s Python wrapper costs more than the work here)."""
    np.maximum(array, low, out=array)
    np.minimum(array, high, out=array)


class TeamStats:
    """Public per-team statistics, updated from stated requests and audits."""

    __slots__ = ("requests", "high", "inflexible", "urgent", "audits", "gap_sum", "flags_last", "flags_total")

    def __init__(self, n_kinds: int) -> None:
        self.requests = 0
        self.high = 0
        self.inflexible = 0
        self.urgent = 0
        self.audits = 0
        self.gap_sum = 0.0
        self.flags_last = [0] * n_kinds
        self.flags_total = [0] * n_kinds

    def add_request(self, request: Request) -> None:
        self.requests += 1
        self.high += request.priority >= Priority.HIGH
        self.inflexible += not request.carbon_flexible
        self.urgent += "URGENT" in request.description

    def add_audit(self, audit: AuditRecord) -> None:
        self.audits += 1
        self.gap_sum += audit.true_deadline_window - audit.request.deadline_window


class ObservationBuilder:
    """Builds the scheduler's spaces, arrays and structured view for one config (module docstring)."""

    def __init__(self, config: ClusterConfig, flag_kinds: tuple[str, ...], team_posterior: bool = False) -> None:
        self.config = config
        self.flag_kinds = flag_kinds
        self.team_posterior = team_posterior
        """Whether ``teams`` carries the posterior column (module docstring): ``arrays`` then needs the values."""
        self.n_team_features = N_TEAM_FEATURES + int(team_posterior)
        self._kind_index = {k: i for i, k in enumerate(flag_kinds)}
        s, a = config.max_slots, 2 + config.max_defer
        z, t = config.n_zones, config.n_teams
        self.n_codes = a
        self.space = gym.spaces.Dict({
            "requests": gym.spaces.Box(-1.0, 5.0, (s, N_REQUEST_FEATURES), np.float32),
            "request_mask": gym.spaces.Box(0, 1, (s,), np.int8),
            "action_mask": gym.spaces.Box(0, 1, (s * a,), np.int8),
            "cluster": gym.spaces.Box(-2.0, 5.0, (N_CLUSTER_FEATURES,), np.float32),
            "zones": gym.spaces.Box(-1.0, 5.0, (z, N_ZONE_FEATURES), np.float32),
            "teams": gym.spaces.Box(-1.0, 5.0, (t, self.n_team_features), np.float32),
        })
        self.action_space = SlotDecisions(np.full(s, a, dtype=np.int64))
        self._zone_kw = np.maximum(np.asarray(config.zone_job_kw, dtype=np.float64), 1e-9)
        self._budget = max(config.team_budget, 1e-9)
        self.team_order: list[str] = [f"team_{i}" for i in range(t)]
        self.reset()
        self._zone_static = np.zeros((z, 3), dtype=np.float32)
        for i, zone in enumerate(config.zones):
            self._zone_static[i, _GPU_INDEX[zone.gpu_type]] = 1.0

    # ------------------------------------------------------------------ per-request cache
    def reset(self) -> None:
        """Forget the previous episode's requests."""
        self._rows: dict[str, list[float]] = {}
        self._public: dict[str, dict[str, Any]] = {}
        self._windows_needed: dict[str, int] = {}

    def register(self, request: Request, team_position: float) -> None:
        """Precompute a new request's static features (once per request, not per window)."""
        row = [0.0] * N_REQUEST_FEATURES
        row[0] = 1.0
        row[1] = team_position
        row[2 + JOB_TYPE_INDEX[request.job_type]] = 1.0
        row[12] = request.kw / 200.0
        row[13] = request.duration_h / 8.0
        row[14] = request.gpus / 128.0
        row[15 + _GPU_INDEX[request.gpu_type]] = 1.0
        row[18] = int(request.priority) / 3.0
        row[21] = float(request.carbon_flexible)
        row[22] = request.chargeback / 50.0
        self._rows[request.request_id] = row
        self._windows_needed[request.request_id] = max(1, math.ceil(request.duration_h / self.config.window_h - 1e-9))

    def _public_dict(self, request: Request) -> dict[str, Any]:
        """A request's wire form, made at its first structured view (an array-only episode never needs it) and
        kept: a pending request appears in several views. Read it, never change it."""
        public = self._public.get(request.request_id)
        if public is None:
            public = self._public[request.request_id] = request.public_dict()
        return public

    # ------------------------------------------------------------------ arrays
    def arrays(self, episode: Any, pending: list[Request], fits: list[bool], stats: dict[str, TeamStats],
               power: Any, inlet_reported: NDArray[np.float64], last: dict[str, Any],
               posteriors: dict[str, float] | None = None) -> dict[str, NDArray[Any]]:
        """The observation's arrays (module docstring); ``posteriors`` (team id -> P(gaming)) fills the
        ``teams`` posterior column, and is required exactly when the builder has one."""
        if (posteriors is not None) != self.team_posterior:
            raise ValueError("posteriors: the teams array has a posterior column exactly when the builder was made "
                             f"with team_posterior=True (here {self.team_posterior})")
        config = self.config
        s, n = config.max_slots, config.n_windows
        w = episode.window
        cap = config.power_cap_kw
        requests = np.zeros((s, N_REQUEST_FEATURES), dtype=np.float32)
        request_mask = np.zeros(s, dtype=np.int8)
        slot_codes = np.zeros((s, self.n_codes), dtype=np.int8)  # row-major: flattened below without a copy
        slot_codes[:, 0] = 1
        shown = pending[:s]
        k = len(shown)
        if k:
            rows = []
            for r, fit in zip(shown, fits, strict=False):
                row = self._rows[r.request_id].copy()
                row[19] = (r.deadline_window - w) / n
                row[20] = (r.deadline_window - w - self._windows_needed[r.request_id] + 1) / n
                row[23] = (w - r.submitted_window) / n
                row[24] = 1.0 if fit else 0.0
                row[25] = sum(stats[r.team].flags_last) / 4.0
                rows.append(row)
            requests[:k] = rows
            request_mask[:k] = 1
            valid = min(config.max_defer, n - 1 - w)
            slot_codes[:k, 1] = 1
            if valid > 0:
                slot_codes[:k, 2 : 2 + valid] = 1
            _clip(requests, -1.0, 5.0)

        forecast = episode._forecast_list
        status = episode.status_outputs
        has_steps = episode.step_index > 0
        last_slice = slice(max(0, episode.step_index - config.steps_per_window), episode.step_index)
        step = min(episode.step_index, episode.n_steps - 1)
        cluster = np.array([
            w / n,
            (episode.facility_kw[last_slice].max() if has_steps else float(status.facility_kw)) / cap,
            (episode.it_kw_total[last_slice].sum() / config.steps_per_window if has_steps else float(status.it_kw)) / cap,
            power.planning_pue - 1.0,
            power.cooling_capacity_kw / cap,
            episode.timeline.chiller_available[step].sum() / episode.plant.n_chillers,
            power.safe_job_kw / cap,
            power.committed_job_kw / cap,
            power.headroom_kw / cap,
            config.base_kw / cap,
            *[forecast[i] / 1000.0 if i < n else 0.0 for i in range(w, w + 4)],
            episode.dry_bulb[step] / 50.0,
            float(last.get("incident", False)),
            last.get("throughput", 0.0),
            last.get("reward", 0.0),
            len(pending) / s,
            len(episode.ledger.queue) / s,
        ], dtype=np.float32)
        _clip(cluster, -2.0, 5.0)

        pool = episode.pool
        zones = np.empty((config.n_zones, N_ZONE_FEATURES), dtype=np.float32)
        zones[:, 0] = np.divide(pool.free_gpus, pool.gpus_total)
        zones[:, 1] = np.divide(pool.free_kw, self._zone_kw)
        zones[:, 2] = inlet_reported / 40.0
        zones[:, 3] = episode.timeline.fan_units_alive[step]
        zones[:, 4:] = self._zone_static
        _clip(zones, -1.0, 5.0)

        ledger = episode.ledger
        per_team = max(1, n * config.max_requests_per_team)
        rows = []
        for team in self.team_order:
            st = stats[team]
            r = max(st.requests, 1)
            rows.append([ledger.budget_left[team] / self._budget, st.requests / per_team, st.high / r,
                         st.inflexible / r, st.urgent / r, *st.flags_last, *[f / n for f in st.flags_total],
                         st.audits / 20.0, (st.gap_sum / st.audits / 3.0) if st.audits else 0.0])
            if posteriors is not None:
                rows[-1].append(posteriors[team])
        teams = np.array(rows, dtype=np.float32)
        _clip(teams, -1.0, 5.0)
        return {"requests": requests, "request_mask": request_mask, "action_mask": slot_codes.reshape(-1),
                "cluster": cluster, "zones": zones, "teams": teams}

    # ------------------------------------------------------------------ structured view
    def view(self, episode: Any, pending: list[Request], fits: list[bool], stats: dict[str, TeamStats],
             power: Any, inlet_reported: NDArray[np.float64], flags: list[dict[str, Any]], audits: list[AuditRecord],
             last: dict[str, Any]) -> dict[str, Any]:
        config = self.config
        w = episode.window
        ledger = episode.ledger
        pool = episode.pool
        s = config.max_slots
        pending_view = []
        for slot, request in enumerate(pending):
            item = dict(self._public_dict(request))
            item["slot"] = slot if slot < s else None
            item["windows_waited"] = w - request.submitted_window
            item["fits_now"] = fits[slot]
            pending_view.append(item)
        running = []
        for request_id in ledger.running:
            job = ledger.jobs[request_id]
            req = job.request
            running.append({"request_id": request_id, "team": req.team, "zone": config.zones[job.zone].name,
                            "kw": req.kw, "gpus": req.gpus, "started_window": job.start_window,
                            "stated_end_window": job.start_window + self._windows_needed[request_id] - 1})
        status = episode.status_outputs
        step = min(episode.step_index, episode.n_steps - 1)
        inlet_list = inlet_reported.tolist()
        plant = {
            "facility_kw": float(status.facility_kw),
            "it_kw": float(status.it_kw),
            "cooling_kw": float(status.cooling_kw),
            "pue": float(status.pue),
            "chillers_available": float(episode.timeline.chiller_available[step].sum()),
            "chiller_capacity_kw": float(status.chiller_capacity_kw),
            "outdoor_dry_bulb_c": float(episode.dry_bulb[step]),
            "base_load_kw": config.base_kw,
            **power.as_dict(),
        }
        fans = episode.timeline.fan_units_alive[step].tolist()
        zones = [{"name": zone.name, "gpu_type": zone.gpu_type, "gpus_total": zone.gpus,
                  "gpus_free": pool.free_gpus[i], "job_kw_free": pool.free_kw[i], "fan_units_alive": fans[i],
                  "inlet_c_reported": inlet_list[i]} for i, zone in enumerate(config.zones)]
        teams = {}
        for team, st in stats.items():
            r = max(st.requests, 1)
            teams[team] = {
                "budget_left": ledger.budget_left[team], "requests": st.requests,
                "stated_high_share": st.high / r, "stated_inflexible_share": st.inflexible / r,
                "urgent_share": st.urgent / r, "audited_jobs": st.audits,
                "audited_mean_deadline_gap": st.gap_sum / st.audits if st.audits else None,
                "flags_last_window": dict(zip(self.flag_kinds, st.flags_last, strict=True)),
                "flags_so_far": dict(zip(self.flag_kinds, st.flags_total, strict=True)),
            }
        view = {
            "window": w,
            "n_windows": config.n_windows,
            "window_h": config.window_h,
            "time": episode.time_of_window(w),
            "power_cap_kw": config.power_cap_kw,
            "pending": pending_view,
            "overflow": [r.request_id for r in pending[s:]],
            "queued": [{"request_id": rid, "gpu_type": ledger.jobs[rid].request.gpu_type,
                        "gpus": ledger.jobs[rid].request.gpus, "kw": ledger.jobs[rid].request.kw}
                       for rid in ledger.queue],
            "running": running,
            "plant": plant,
            "zones": zones,
            "carbon_forecast_g_per_kwh": list(episode._forecast_list),
            "teams": teams,
            "flags": flags,
            "audits": [{**self._public_dict(a.request), **a.revealed_dict()} for a in audits],
            "last_window": last,
        }
        if config.catalogue != "classic":  # named only off the default: a classic view stays as it was
            view["catalogue"] = config.catalogue
        return view

    def count_flags(self, stats: dict[str, TeamStats], flags: list[Any]) -> None:
        """Update the per-team flag counters with the flags raised at the end of a window."""
        for st in stats.values():
            st.flags_last = [0] * len(self.flag_kinds)
        for flag in flags:
            st = stats.get(flag.team)
            if st is None:
                continue
            i = self._kind_index[flag.kind]
            st.flags_last[i] += 1
            st.flags_total[i] += 1


def view_to_text(view: dict[str, Any]) -> str:
    """A plain-text rendering of the structured view for a language-model prompt (public fields only)."""
    last = view["n_windows"] - 1
    lines = [f"Window {view['window']} (windows are numbered 0 to {last}; {view['time']}); power cap "
             f"{view['power_cap_kw']:.0f} kW."]
    p = view["plant"]
    lines.append(
        f"Plant: facility {p['facility_kw']:.0f} kW, IT {p['it_kw']:.0f} kW, PUE {p['pue']:.2f}, chiller capacity "
        f"{p['chiller_capacity_kw']:.0f} kW; safe job power {p['safe_job_kw']:.0f} kW, committed "
        f"{p['committed_job_kw']:.0f} kW, headroom {p['headroom_kw']:.0f} kW.")
    lines.append("Carbon forecast (g/kWh per window): " + ", ".join(f"{c:.0f}" for c in view["carbon_forecast_g_per_kwh"]))
    for flag in view["flags"]:
        lines.append(f"FLAG {flag['team']} {flag['kind']} ({flag['severity']}, {flag['confidence']:.2f}): {flag['evidence']}")
    lines.append(f"Pending requests (decide every one: ACCEPT, REJECT, or DEFER to a window after {view['window']} "
                 f"and at most {last}):")
    for r in view["pending"]:
        lines.append(
            f"- {r['request_id']} {r['team']} {r['job_type']}: {r['kw']:.0f} kW, {r['gpus']}×{r['gpu_type']}, "
            f"{r['duration_h']:g} h, {r['priority']}, deadline window {r['deadline_window']}, "
            f"{'carbon-flexible' if r['carbon_flexible'] else 'not flexible'}, cost {r['chargeback']:.1f}. "
            f"\"{r['description']}\"")
    return "\n".join(lines)
