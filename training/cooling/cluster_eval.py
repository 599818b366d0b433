"""The cooling controllers on the *cluster* plant: which one should run under the scheduling layer.

``dcops eval-cooling`` compares the controllers on the cooling evaluation family (single plants, diurnal load).
This module answers the integration question of the PPO issue: on the plant of ``datacenter_ops`` (its default version; three
zones, job-driven IT load, the power cap, random faults), with a fixed scheduler (the stated-priority threshold
baseline), what does each controller cost in cooling energy and what does it do to the episode?

Controllers:

- ``ppo``: the shipped PPO policy (``cooling="ppo"``);
- ``rule``: the rule-based controller with its default parameters, the cluster's controller before PPO
  (supply 24 °C, 1 K chilled-water margin, airflow 1.1 × matched);
- ``rule_family_tuned``: the rule with the parameters tuned for the cooling evaluation family
  (``agents/cooling/rule_tuned_eval_family.json``), the strongest rule we have.

Per episode: cooling energy (kWh), IT energy (kWh), cooling overhead (cooling / IT), episode score, thermal
incident windows, zone-time share above 27 °C (%), hottest reported inlet (°C). The differences against PPO are
paired by (climate, seed) with a 95 % t interval.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

CLUSTER_CLIMATES: tuple[str, ...] = ("phoenix", "dallas", "chicago", "seattle")
CONTROLLERS: tuple[str, ...] = ("ppo", "rule", "rule_family_tuned")


def make_env(controller: str, climate: str) -> Any:
    """``datacenter_ops`` (the default version) in ``climate`` run by ``controller`` (one of :data:`CONTROLLERS`)."""
    import dcops

    if controller not in CONTROLLERS:
        raise ValueError(f"controller must be one of {CONTROLLERS}, got {controller!r}")
    env = dcops.parallel_env(cooling="ppo" if controller == "ppo" else "rule", climate=climate)
    if controller == "rule_family_tuned":
        from dcops.agents.cooling.rule_based import RuleBasedController
        from dcops.cluster.cooling import RuleFastPath
        from dcops.training.cooling.evaluate import family_rule_parameters

        rule = RuleBasedController(**family_rule_parameters())
        fast = RuleFastPath(zone_weights=env.controller.zone_weights, **asdict(rule))
        # The env builds its controller once, from the config; this swaps in the same rule with other numbers.
        env.controller = fast
        env.episode.controller = fast
    return env


def run_episode(env: Any, seed: int) -> dict[str, Any]:
    """One episode under the threshold scheduler; the cooling and episode metrics (module docstring)."""
    from dcops.agents.schedulers import PriorityThresholdScheduler

    results: list[Any] = []
    run_window = env.episode.run_window

    def recording_run_window() -> Any:
        result = run_window()
        results.append(result)
        return result

    env.episode.run_window = recording_run_window
    try:
        _, infos = env.reset(seed=seed)
        scheduler = PriorityThresholdScheduler()
        while env.agents:
            _, _, _, _, infos = env.step({"scheduler": scheduler.decide(infos["scheduler"]["view"])})
    finally:
        env.episode.run_window = run_window
    summary = infos["scheduler"]["episode"]
    cooling = sum(r.cooling_kwh for r in results)
    it = sum(r.it_kwh for r in results)
    return {
        "seed": seed, "cooling_kwh": cooling, "it_kwh": it, "cooling_overhead": cooling / max(it, 1e-9),
        "score": float(summary["score"]), "incident_windows": int(summary["incident_windows"]),
        "zone_time_above_27_pct": 100.0 * float(np.mean([w.soft_fraction for w in env.episode.window_scores])),
        "max_inlet_c": max(r.max_inlet_c for r in results),
    }


def evaluate(seeds: Sequence[int], climates: Sequence[str] = CLUSTER_CLIMATES,
             controllers: Sequence[str] = CONTROLLERS,
             progress: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Every controller × climate × seed: one row each."""
    rows = []
    for climate in climates:
        for controller in controllers:
            env = make_env(controller, climate)
            for seed in seeds:
                rows.append({"controller": controller, "climate": climate, **run_episode(env, seed)})
                if progress is not None:
                    progress(f"{controller} {climate} seed {seed}")
    return rows


def paired(rows: list[dict[str, Any]], metric: str, controller: str, reference: str,
           relative: bool = False) -> dict[str, float]:
    """Mean of ``controller − reference`` over (climate, seed) pairs, with a 95 % t interval; in % of the
    reference's value when ``relative``."""
    from dcops.intervals import t_interval

    ref = {(r["climate"], r["seed"]): r[metric] for r in rows if r["controller"] == reference}
    diffs = []
    for r in rows:
        key = (r["climate"], r["seed"])
        if r["controller"] == controller and key in ref:
            d = r[metric] - ref[key]
            diffs.append(100.0 * d / ref[key] if relative else d)
    if len(diffs) < 2:
        raise ValueError(f"need at least 2 paired episodes of {controller!r} and {reference!r}, got {len(diffs)}")
    mean, low, high = t_interval(diffs)
    return {"mean": mean, "low": low, "high": high, "n": len(diffs)}


def summary_table(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One line per controller: means over every episode, totals of incidents, the worst inlet."""
    table = []
    for controller in dict.fromkeys(r["controller"] for r in rows):
        sel = [r for r in rows if r["controller"] == controller]
        table.append({
            "controller": controller, "episodes": len(sel),
            "cooling_kwh": float(np.mean([r["cooling_kwh"] for r in sel])),
            "cooling_overhead": float(np.mean([r["cooling_overhead"] for r in sel])),
            "score": float(np.mean([r["score"] for r in sel])),
            "incident_windows": int(sum(r["incident_windows"] for r in sel)),
            "zone_time_above_27_pct": float(np.mean([r["zone_time_above_27_pct"] for r in sel])),
            "max_inlet_c": float(max(r["max_inlet_c"] for r in sel)),
        })
    return table


def markdown_report(rows: list[dict[str, Any]], seeds: Sequence[int], command: str) -> str:
    """The table and the paired differences against PPO, as markdown."""
    climates = list(dict.fromkeys(r["climate"] for r in rows))
    lines = [
        "# Cooling controllers on the cluster plant",
        "",
        f"Made by `{command}` (`dcops/training/cooling/cluster_eval.py`): `datacenter_ops_v1` with its default "
        f"configuration (random faults, power cap, three zones) in {', '.join(climates)}, seeds "
        f"{seeds[0]}–{seeds[-1]}, the stated-priority threshold scheduler deciding every window.",
        "",
        "| controller | episodes | cooling kWh / episode | cooling / IT | score | incident windows (total) "
        "| zone-time > 27 °C (%) | hottest inlet (°C) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in summary_table(rows):
        lines.append(f"| {s['controller']} | {s['episodes']} | {s['cooling_kwh']:.0f} | {s['cooling_overhead']:.3f} "
                     f"| {s['score']:.4f} | {s['incident_windows']} | {s['zone_time_above_27_pct']:.2f} "
                     f"| {s['max_inlet_c']:.1f} |")
    lines += ["", "Paired differences, PPO minus the other controller (same climate and seed), 95 % t interval:", "",
              "| against | cooling energy (%) | score | incident windows / episode |", "|---|---|---|---|"]
    for reference in dict.fromkeys(r["controller"] for r in rows):
        if reference == "ppo":
            continue
        e = paired(rows, "cooling_kwh", "ppo", reference, relative=True)
        s = paired(rows, "score", "ppo", reference)
        i = paired(rows, "incident_windows", "ppo", reference)
        lines.append(f"| {reference} | {e['mean']:+.1f} [{e['low']:+.1f}, {e['high']:+.1f}] "
                     f"| {s['mean']:+.4f} [{s['low']:+.4f}, {s['high']:+.4f}] "
                     f"| {i['mean']:+.3f} [{i['low']:+.3f}, {i['high']:+.3f}] |")
    return "\n".join(lines) + "\n"
