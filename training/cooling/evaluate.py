"""Evaluation of the PPO cooling policy against the tuned rule-based controller and the PID (``dcops eval-cooling``).

**The evaluation family** (:func:`case_spec`): the default 4-zone plant (4 × 250 kW of design IT, two chillers of
60 % of design cooling each, waterside economiser), 24 h from midnight at 5-minute steps, a diurnal IT load of
45–75 % of design peaking at 15:00 (2 % noise, 5 % zone spread), on

- climates :data:`EVAL_SITES` (Phoenix, Seattle, Chicago, Atlanta: hot-dry, marine, cold, hot-humid),
- seasons :data:`SEASONS` (mid-January and mid-July, start jittered by up to 14 days per seed, plus the
  climate's seeded day-to-day weather anomaly),
- faults :data:`FAULT_CASES`: ``normal`` (none) or ``chiller_trip`` (one of the two chillers trips at a seeded
  time between 08:00 and 18:00, capacity ramping to zero over 3 minutes, and restarts 2 h later).

Seeds: evaluation 0, 1, 2, … (``--seeds``); the rule-based controller is tuned on :data:`TUNING_SEEDS` and the
PPO checkpoint is selected on :data:`VALIDATION_SEEDS`, both disjoint from the evaluation seeds.

**Metrics** per episode (true temperatures, not sensor readings): cooling energy (fans, pumps, tower, chillers;
kWh), PUE, facility carbon and the cooling plant's share of it (kg CO2 at the site's grid's hourly intensity),
minutes above 27 °C and above 32 °C per zone (the tables show the worst zone and the zone-time percentage), minutes below 18 °C, and the largest
change of an inlet over any hour after the first (:func:`max_hourly_change_k`; ASHRAE's limit is 20 K/h).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from dcops.cooling_env import CoolingEnv, CoolingTaskSpec, controller_context
from dcops.intervals import t_interval
from dcops.physics.faults import ChillerTrip, Fault
from dcops.physics.it_load import LoadProfile
from dcops.physics.plant import PlantConfig

EVAL_SITES: tuple[str, ...] = ("phoenix", "seattle", "chicago", "atlanta")
SEASONS: dict[str, datetime] = {"january": datetime(2026, 1, 8, 0, 0), "july": datetime(2026, 7, 8, 0, 0)}
FAULT_CASES: tuple[str, ...] = ("normal", "chiller_trip")
EVAL_N_STEPS = 288
EVAL_LOAD = LoadProfile(pattern="diurnal", low=0.45, high=0.75, noise=0.02, zone_spread=0.05, peak_hour=15.0)
TUNING_SEEDS: tuple[int, ...] = (1000, 1001)
"""Seeds the rule-based controller is tuned on (disjoint from evaluation seeds 0, 1, 2, …)."""
VALIDATION_SEEDS: tuple[int, ...] = (2000, 2001)
"""Seeds PPO checkpoints are selected on (disjoint from evaluation and tuning seeds)."""
RULE_PARAMETERS_FILE = "rule_tuned_eval_family.json"
"""Where ``dcops tune-rule-family`` writes the family-tuned rule (in ``dcops.agents.cooling``)."""


@dataclass(frozen=True)
class Case:
    """One evaluation case."""

    site: str
    season: str
    fault: str

    @property
    def label(self) -> str:
        return f"{self.site} / {self.season} / {self.fault}"


def all_cases(sites: Sequence[str] = EVAL_SITES, seasons: Sequence[str] = tuple(SEASONS),
              faults: Sequence[str] = FAULT_CASES) -> list[Case]:
    return [Case(s, season, f) for s in sites for season in seasons for f in faults]


def _chiller_trip(rng: np.random.Generator) -> list[Fault]:
    """One of the two chillers trips between 08:00 and 18:00 and restarts 2 h later."""
    return [ChillerTrip(start_s=float(rng.uniform(8.0, 18.0) * 3600.0), chiller=int(rng.integers(2)),
                        ramp_s=180.0, duration_s=2 * 3600.0, restart_ramp_s=600.0)]


def case_spec(case: Case) -> CoolingTaskSpec:
    """The :class:`CoolingTaskSpec` of an evaluation case (module doc)."""
    if case.season not in SEASONS:
        raise ValueError(f"season must be one of {sorted(SEASONS)}, got {case.season!r}")
    if case.fault not in FAULT_CASES:
        raise ValueError(f"fault must be one of {FAULT_CASES}, got {case.fault!r}")
    plant = PlantConfig.default()
    return CoolingTaskSpec(
        task_id=f"eval/{case.site}/{case.season}/{case.fault}",
        plant=plant,
        zone_names=tuple(f"zone{i}" for i in range(plant.n_zones)),
        zone_weights=(1.0,) * plant.n_zones,
        n_steps=EVAL_N_STEPS,
        climate=case.site,
        start=SEASONS[case.season],
        start_jitter_days=14,
        load=EVAL_LOAD,
        faults=_chiller_trip if case.fault == "chiller_trip" else (),
        initial_zone_temp_c=25.0,
        initial_chw_c=12.0,
    )


def run_episode(controller: Any, case: Case, seed: int, record: bool = False) -> dict[str, Any]:
    """Play one evaluation episode; return its metrics (and, with ``record``, per-step traces)."""
    env = CoolingEnv(case_spec(case), diagnostics=True)  # the metrics read the true inlets
    telemetry, _ = env.reset(seed=seed)
    controller.reset(controller_context(env))
    trace: dict[str, list[Any]] = {"time_h": [], "inlet_c": [], "cooling_kw": [], "chw_supply_c": []}
    inlets = []
    cooling_carbon_g = 0.0
    done = False
    info: dict[str, Any] = {}
    step = 0
    while not done:
        telemetry, _, done, _, info = env.step(controller.act(telemetry))
        step += 1
        inlets.append(np.asarray(info["inlet_c"], dtype=np.float64))
        cooling_carbon_g += info["carbon_g"] * info["cooling_kw"] / info["facility_kw"]
        if record:
            trace["time_h"].append(step * env.task.dt_s / 3600.0)
            trace["inlet_c"].append(np.asarray(info["inlet_c"]).copy())
            trace["cooling_kw"].append(info["cooling_kw"])
            trace["chw_supply_c"].append(info["chw_supply_c"])
    s = info["summary"]
    minutes = EVAL_N_STEPS * env.task.dt_s / 60.0
    m27 = np.asarray(s["minutes_above_27"])
    m32 = np.asarray(s["minutes_above_32"])
    result: dict[str, Any] = {
        "controller": getattr(controller, "name", type(controller).__name__),
        "site": case.site, "season": case.season, "fault": case.fault, "seed": seed,
        "cooling_kwh": s["cooling_kwh"], "it_kwh": s["it_kwh"], "pue": s["pue"], "carbon_kg": s["carbon_kg"],
        "cooling_carbon_kg": cooling_carbon_g / 1000.0,
        "minutes_above_27": m27.tolist(), "minutes_above_32": m32.tolist(),
        "minutes_below_18": s["minutes_below_18"],
        "worst_zone_minutes_above_27": float(m27.max()), "worst_zone_minutes_above_32": float(m32.max()),
        "zone_time_above_27_pct": 100.0 * float(m27.sum()) / (minutes * m27.size),
        "max_rate_k_per_h": max_hourly_change_k(np.asarray(inlets), env.task.dt_s),
    }
    if record:
        result["trace"] = {k: np.asarray(v) for k, v in trace.items()}
    return result


def max_hourly_change_k(inlet_c: np.ndarray, dt_s: float) -> float:
    """The largest change of any zone's true inlet over any 60 minutes, K (ASHRAE's rate-of-change limit is
    20 K per hour, as a change over an hour, not an instantaneous slope). Windows that start in the first hour
    are left out: they measure the start from the episode's arbitrary initial state (25 °C zones, 12 °C loop),
    not the controller."""
    window = int(round(3600.0 / dt_s))
    later = inlet_c[window:]
    if later.shape[0] <= window:
        return 0.0
    return float(np.max(np.abs(later[window:] - later[:-window])))


# ---------------------------------------------------------------------- the three controllers
def family_rule_parameters() -> dict[str, Any]:
    """The rule parameters tuned for this family (``dcops tune-rule-family``), or {} if never tuned."""
    ref = resources.files("dcops.agents.cooling").joinpath(RULE_PARAMETERS_FILE)
    return json.loads(ref.read_text())["params"] if ref.is_file() else {}


def default_controllers(weights: str | Path | None = None) -> list[Any]:
    """PPO (``weights``, an exported ``.npz``, or the shipped policy), the rule tuned for this family, and the PID
    with its defaults."""
    from dcops.agents.cooling import PIDController, PPOController, RuleBasedController

    params = family_rule_parameters()
    if not params:
        raise FileNotFoundError(f"no family-tuned rule ({RULE_PARAMETERS_FILE}); run `dcops tune-rule-family`")
    ppo = PPOController.from_file(weights) if weights else PPOController()
    return [ppo, RuleBasedController(**params), PIDController()]


def evaluate(controllers: Sequence[Any], cases: Sequence[Case], seeds: Sequence[int],
             progress: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Every controller on every case and seed: one metrics row each (a controller with ``for_case(case)`` is
    asked for the controller of each case)."""
    rows = []
    for case in cases:
        for entry in controllers:
            # A controller with ``for_case`` is a family of controllers, one per case (the per-case tuned rule).
            controller = entry.for_case(case) if hasattr(entry, "for_case") else entry
            for seed in seeds:
                rows.append(run_episode(controller, case, seed))
                if progress is not None:
                    progress(f"{controller.name} {case.label} seed {seed}")
    return rows


# ---------------------------------------------------------------------- statistics and report
def paired_difference(rows: list[dict[str, Any]], controller: str, reference: str) -> dict[str, Any]:
    """Cooling-energy difference of ``controller`` vs ``reference``, % of the reference's energy.

    Per case, the energies are averaged over seeds and the difference taken; the summary is the mean over cases
    with a 95 % t confidence interval across cases, and the difference of the totals.
    """
    by_case: dict[tuple[str, str, str], dict[str, list[float]]] = {}
    for r in rows:
        key = (r["site"], r["season"], r["fault"])
        by_case.setdefault(key, {}).setdefault(r["controller"], []).append(r["cooling_kwh"])
    diffs = []
    totals = [0.0, 0.0]
    for entry in by_case.values():
        if controller in entry and reference in entry:
            a, b = float(np.mean(entry[controller])), float(np.mean(entry[reference]))
            diffs.append(100.0 * (a - b) / b)
            totals[0] += a
            totals[1] += b
    mean, low, high = t_interval(diffs)
    return {"mean_pct": mean, "ci_low_pct": low, "ci_high_pct": high,
            "total_pct": 100.0 * (totals[0] - totals[1]) / totals[1], "n_cases": len(diffs),
            "cases_better": sum(d < 0 for d in diffs)}


def summarise(rows: list[dict[str, Any]], controller: str, fault: str | None = None) -> dict[str, float]:
    sel = [r for r in rows if r["controller"] == controller and (fault is None or r["fault"] == fault)]
    return {
        "cooling_kwh": float(np.mean([r["cooling_kwh"] for r in sel])),
        "pue": float(np.mean([r["pue"] for r in sel])),
        "carbon_kg": float(np.mean([r["carbon_kg"] for r in sel])),
        "cooling_carbon_kg": float(np.mean([r["cooling_carbon_kg"] for r in sel])),
        "zone_time_above_27_pct": float(np.mean([r["zone_time_above_27_pct"] for r in sel])),
        "worst_zone_minutes_above_27": float(np.max([r["worst_zone_minutes_above_27"] for r in sel])),
        "worst_zone_minutes_above_32": float(np.max([r["worst_zone_minutes_above_32"] for r in sel])),
        "minutes_below_18": float(np.mean([float(np.sum(r["minutes_below_18"])) for r in sel])),
        "max_rate_k_per_h": float(np.max([r["max_rate_k_per_h"] for r in sel])),
        "episodes": len(sel),
    }


def markdown_report(rows: list[dict[str, Any]], seeds: Sequence[int], header: str = "",
                    reference: str = "rule") -> str:
    """The markdown report: headline, per-controller summary, per-case table."""
    names = list(dict.fromkeys(r["controller"] for r in rows))
    lines = [header] if header else []
    lines.append(f"Seeds {', '.join(map(str, seeds))} per case; 24 h episodes; cooling energy = fans + pumps + tower + "
                 "chillers. Differences are per case (mean over seeds), then averaged over cases with a 95 % t "
                 "confidence interval across cases.\n")
    lines.append("| controller | cooling kWh / day (mean) | vs tuned rule, % (95 % CI) | total vs rule, % | "
                 "cases better than rule | PUE | carbon kg / day (facility; of which cooling) | "
                 "zone-time > 27 °C, normal cases | zone-time > 27 °C, chiller trip | worst zone min > 32 °C | "
                 "mean zone-min < 18 °C | max inlet change K/h |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in names:
        s = summarise(rows, name)
        sn = summarise(rows, name, "normal")
        st = summarise(rows, name, "chiller_trip") if any(r["fault"] == "chiller_trip" for r in rows) else sn
        if name == reference:
            diff, total, better = "—", "—", "—"
        else:
            d = paired_difference(rows, name, reference)
            diff = f"{d['mean_pct']:+.1f} ({d['ci_low_pct']:+.1f} to {d['ci_high_pct']:+.1f})"
            total = f"{d['total_pct']:+.1f}"
            better = f"{d['cases_better']}/{d['n_cases']}"
        lines.append(
            f"| {name} | {s['cooling_kwh']:.0f} | {diff} | {total} | {better} | {s['pue']:.3f} | "
            f"{s['carbon_kg']:.0f} ({s['cooling_carbon_kg']:.0f}) | "
            f"{sn['zone_time_above_27_pct']:.2f} % | {st['zone_time_above_27_pct']:.2f} % | "
            f"{s['worst_zone_minutes_above_32']:.1f} | {s['minutes_below_18']:.1f} | {s['max_rate_k_per_h']:.1f} |"
        )
    if "ppo" in names and reference in names:
        lines.append("\n" + target_check(rows, reference))
    lines.append("\n### Per case (mean over seeds; minutes are of the worst zone, max over seeds)\n")
    lines.append("| climate | season | fault | controller | cooling kWh | vs rule | PUE | carbon kg (cooling) | "
                 "min > 27 °C | min > 32 °C | max inlet change K/h |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
    cases = list(dict.fromkeys((r["site"], r["season"], r["fault"]) for r in rows))
    for case in cases:
        in_case = [r for r in rows if (r["site"], r["season"], r["fault"]) == case]
        ref = [r for r in in_case if r["controller"] == reference]
        ref_kwh = float(np.mean([r["cooling_kwh"] for r in ref])) if ref else float("nan")
        site, season, fault = case
        for name in names:
            sel = [r for r in in_case if r["controller"] == name]
            kwh = float(np.mean([r["cooling_kwh"] for r in sel]))
            vs = "—" if name == reference else f"{100.0 * (kwh - ref_kwh) / ref_kwh:+.1f} %"
            lines.append(
                f"| {site} | {season} | {fault} | {name} | {kwh:.0f} | {vs} | "
                f"{np.mean([r['pue'] for r in sel]):.3f} | {np.mean([r['carbon_kg'] for r in sel]):.0f} "
                f"({np.mean([r['cooling_carbon_kg'] for r in sel]):.0f}) | "
                f"{max(r['worst_zone_minutes_above_27'] for r in sel):.1f} | "
                f"{max(r['worst_zone_minutes_above_32'] for r in sel):.1f} | "
                f"{max(r['max_rate_k_per_h'] for r in sel):.1f} |"
            )
    return "\n".join(lines) + "\n"


def target_check(rows: list[dict[str, Any]], reference: str = "rule") -> str:
    """The issue's target, line by line, for PPO against the tuned rule: met or not, with the figures."""
    d = paired_difference(rows, "ppo", reference)
    sn = summarise(rows, "ppo", "normal")
    s = summarise(rows, "ppo")
    energy_ok = d["mean_pct"] <= -10.0
    lines = [
        "**Target** (issue: at least 10 % less cooling energy than the tuned rule on average, 0 minutes above "
        "32 °C, at most 1 % of time above 27 °C outside fault cases):\n",
        f"- cooling energy vs tuned rule: {d['mean_pct']:+.1f} % per case on average (95 % CI "
        f"{d['ci_low_pct']:+.1f} to {d['ci_high_pct']:+.1f}; total {d['total_pct']:+.1f} %; PPO uses less in "
        f"{d['cases_better']} of {d['n_cases']} cases): **{'met' if energy_ok else 'not met'}**",
        f"- worst zone minutes above 32 °C: {s['worst_zone_minutes_above_32']:.1f}: "
        f"**{'met' if s['worst_zone_minutes_above_32'] == 0.0 else 'not met'}**",
        f"- zone-time above 27 °C in fault-free cases: {sn['zone_time_above_27_pct']:.2f} %: "
        f"**{'met' if sn['zone_time_above_27_pct'] <= 1.0 else 'not met'}**",
    ]
    if "rule_per_case" in {r["controller"] for r in rows}:
        h = paired_difference(rows, "rule_per_case", reference)
        lines.append(
            f"- headroom: the rule re-tuned for each climate and season separately (`--headroom`; not deployable, "
            f"it knows the season's weather in advance) uses {h['mean_pct']:+.1f} % per case on average (95 % CI "
            f"{h['ci_low_pct']:+.1f} to {h['ci_high_pct']:+.1f}; total {h['total_pct']:+.1f} %) against the "
            "family-tuned rule: what adapting this structure's set-points to the climate can buy."
        )
    return "\n".join(lines) + "\n"


def write_csv(rows: list[dict[str, Any]], path: Path) -> None:
    """Every episode's metrics, per-zone minutes included (one row per controller, case and seed)."""
    fields = [k for k in rows[0] if k != "trace"]
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        for r in rows:
            writer.writerow({k: ";".join(f"{v:.2f}" for v in r[k]) if isinstance(r[k], list) else r[k]
                             for k in fields})


def plot_day(controllers: Sequence[Any], case: Case, seed: int, path: Path) -> None:
    """PNG: true inlet temperatures (every zone) and cooling power over the day, one colour per controller."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_t, ax_p) = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
    colours = ["tab:blue", "tab:orange", "tab:green", "tab:red"]
    for controller, colour in zip(controllers, colours, strict=False):
        r = run_episode(controller, case, seed, record=True)
        t = r["trace"]
        inlets = np.asarray(t["inlet_c"])
        for z in range(inlets.shape[1]):
            ax_t.plot(t["time_h"], inlets[:, z], color=colour, lw=1.0, alpha=0.8,
                      label=f"{r['controller']} ({r['cooling_kwh']:.0f} kWh)" if z == 0 else None)
        ax_p.plot(t["time_h"], t["cooling_kw"], color=colour, lw=1.2, label=r["controller"])
    for level, style in ((27.0, "--"), (32.0, ":")):
        ax_t.axhline(level, color="k", ls=style, lw=0.8)
    ax_t.set_ylabel("true server inlet, °C (every zone)")
    ax_t.legend(loc="upper left", fontsize=8)
    ax_t.set_title(f"{case.label}, seed {seed}: inlets (27 °C dashed, 32 °C dotted) and cooling power")
    ax_p.set_ylabel("cooling power, kW")
    ax_p.set_xlabel("hour of day")
    ax_p.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
