"""Cooling reports: the demo run, the reference controllers' scores, the annual PUE table.

- ``dcops demo``: the hard cooling task with the tuned rule-based controller, a progress bar and a summary.
- ``dcops cooling-baselines``: rule-based and PID scores on the three cooling tasks over seeds 0–9 (markdown).
- ``dcops annual-pue``: annual PUE by climate of the rule-based controller on a steady-load plant (markdown).

Heavy work happens inside ``run`` functions so ``dcops --help`` stays instant.
"""

from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from dcops.command import Command, print_and_write

EVAL_SEEDS = tuple(range(10))
"""Seeds of every published cooling figure (tuning uses 1000+)."""


def controllers_for(task_id: str) -> list[Any]:
    """The reference controllers evaluated on a task: the tuned rule and the PID."""
    from dcops.agents.cooling import PIDController, RuleBasedController

    return [RuleBasedController.for_task(task_id), PIDController()]


def baseline_table(seeds: tuple[int, ...] = EVAL_SEEDS) -> tuple[str, list[dict[str, Any]]]:
    """Markdown table and rows of the reference controllers' scores on the cooling tasks."""
    import dcops
    from dcops.cooling_env import TASKS, run_controller

    rows: list[dict[str, Any]] = []
    for task_id in TASKS:
        env = dcops.make_env(task_id)
        for controller in controllers_for(task_id):
            results = [run_controller(env, controller, seed) for seed in seeds]
            scores = np.array([r.score for r in results])
            rows.append({
                "task": task_id,
                "controller": controller.name,
                "score_mean": float(scores.mean()),
                "score_std": float(scores.std(ddof=1)) if len(scores) > 1 else 0.0,
                "pue": float(np.mean([r.summary["pue"] for r in results])),
                "cooling_kwh": float(np.mean([r.summary["cooling_kwh"] for r in results])),
                "minutes_above_27": float(np.mean([sum(r.summary["minutes_above_27"]) for r in results])),
                "minutes_above_32": float(np.mean([sum(r.summary["minutes_above_32"]) for r in results])),
            })
    lines = [
        f"| task | controller | score (mean ± sd, seeds {seeds[0]}–{seeds[-1]}) | PUE | cooling kWh | "
        "zone-minutes > 27 °C | zone-minutes > 32 °C |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['task']} | {r['controller']} | {r['score_mean']:.3f} ± {r['score_std']:.3f} | {r['pue']:.3f} | "
            f"{r['cooling_kwh']:.0f} | {r['minutes_above_27']:.1f} | {r['minutes_above_32']:.1f} |"
        )
    return "\n".join(lines), rows


LEGACY_OPERATION = {"supply_c": 16.0, "chw_margin_k": 6.0, "airflow_margin": 1.3}
"""How a legacy hall is run: 16 °C supply air, 7 °C chilled water, over-provisioned airflow."""


def annual_pue(
    site: str, plant: Any = None, rule: dict[str, float] | None = None, load_fraction: float = 0.7,
    dt_s: float = 3600.0,
) -> dict[str, float]:
    """Annual PUE of a rule-based controller (``rule`` parameters, default set-points otherwise) at a steady
    IT load on a typical year.

    Runs 8760 hourly steps (or 365 days at ``dt_s``) of the default 4-zone plant with plain typical days (no
    day-to-day variation), so the figure is reproducible without a seed.
    """
    from dcops.agents.cooling import ControllerContext, RuleBasedController
    from dcops.physics.interface import build_telemetry, decode_setpoints, telemetry_bounds
    from dcops.physics.plant import PlantBoundary, PlantConfig, initial_state, step_plant
    from dcops.physics.weather import TypicalDayClimate

    plant = plant or PlantConfig.default()
    z = plant.n_zones
    n = int(round(365 * 86400 / dt_s))
    weather = TypicalDayClimate(site, variation=False).series(
        datetime(2026, 1, 1), np.arange(n) * dt_s + dt_s / 2, np.random.default_rng(0)
    )
    controller = RuleBasedController(**(rule or {}))
    controller.reset(ControllerContext.from_plant(plant, [1.0] * z, dt_s))
    state = initial_state(plant, 25.0, 12.0)
    low, high = telemetry_bounds(z)
    it_kw = plant.zone_design_it_kw * load_fraction
    chillers = np.ones(plant.n_chillers)
    fans_alive = np.ones(z)
    facility_kwh = it_kwh = cooling_kwh = 0.0
    supply = np.full(z, 20.0)
    econ = 0.0
    for k in range(n):
        telemetry = build_telemetry(
            state.zone_temp_c, state.zone_temp_c, np.full(z, load_fraction), np.full(z, 0.6), supply,
            [float(state.chw_supply_c), 1.0, econ, weather.dry_bulb_c[k], weather.wet_bulb_c[k], 0.4, 0.0, 1.0,
             k / n, 0.0, 0.0], low, high,
        )
        control = decode_setpoints(controller.act(telemetry), z)
        boundary = PlantBoundary(it_kw, weather.dry_bulb_c[k], weather.wet_bulb_c[k], chillers, fans_alive)
        state, out = step_plant(plant, state, control, boundary, dt_s)
        supply, econ = out.supply_air_c, float(out.economiser_fraction)
        hours = dt_s / 3600.0
        facility_kwh += float(out.facility_kw) * hours
        it_kwh += float(out.it_kw) * hours
        cooling_kwh += float(out.cooling_kw) * hours
    return {"pue": facility_kwh / it_kwh, "cooling_kwh": cooling_kwh, "it_kwh": it_kwh}


def annual_pue_table() -> tuple[str, dict[str, dict[str, float]]]:
    """Markdown table of annual PUE by climate: the economiser plant under the rule-based controller's default
    set-points, and a legacy plant (no economiser, reciprocating chillers) under legacy operation."""
    from dcops.physics.plant import PlantConfig
    from dcops.physics.profiles import sites

    results: dict[str, dict[str, float]] = {}
    lines = [
        "| climate | economiser plant, rule-based defaults (24 °C supply, 18 °C chilled water) | "
        "legacy plant and operation (no economiser, reciprocating, 16 °C supply, 7 °C chilled water) |",
        "|---|---|---|",
    ]
    for site in sites():
        modern = annual_pue(site)["pue"]
        legacy = annual_pue(site, plant=PlantConfig.legacy(), rule=LEGACY_OPERATION)["pue"]
        results[site] = {"economiser": modern, "legacy": legacy}
        lines.append(f"| {site} | {modern:.3f} | {legacy:.3f} |")
    return "\n".join(lines), results


# ---------------------------------------------------------------------- commands
def _run_demo(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    import dcops
    from dcops.agents.cooling import RuleBasedController
    from dcops.cooling_env import run_controller

    env = dcops.make_env(args.task, diagnostics=True)  # the summary shows the true inlets
    controller = RuleBasedController.for_task(args.task)
    trace: list[dict[str, Any]] = []
    with tqdm(total=env.unwrapped.task.n_steps, desc=f"{args.task} (rule-based)", unit="step") as bar:
        def progress(info: dict[str, Any]) -> None:
            trace.append(info)
            bar.set_postfix(inlet=f"{np.max(info['inlet_c']):.1f}°C", pue=f"{info['pue']:.2f}")
            bar.update(1)

        result = run_controller(env, controller, args.seed, progress)
    worst_inlet = [max(float(np.max(info["inlet_c"])) for info in trace)]
    s = result.summary
    print(f"\n{args.task}, seed {args.seed}, tuned rule-based controller")
    print(f"  faults:            {', '.join(repr(f) for f in env.unwrapped.faults) or 'none'}")
    print(f"  final score:       {result.score:.3f}  (0–1, thermal × (0.6 + 0.4 · energy))")
    print(f"  IT energy:         {s['it_kwh']:.0f} kWh   cooling: {s['cooling_kwh']:.0f} kWh   PUE {s['pue']:.3f}")
    print(f"  carbon:            {s['carbon_kg']:.0f} kg CO2")
    print(f"  worst true inlet:  {worst_inlet[0]:.1f} °C")
    for zone, m27, m32 in zip(env.unwrapped.zone_ids, s["minutes_above_27"], s["minutes_above_32"], strict=True):
        print(f"  {zone:<12} minutes > 27 °C: {m27:6.1f}   > 32 °C: {m32:6.1f}")
    if args.plot:
        plot_episode(trace, f"{args.task}, seed {args.seed}, tuned rule-based controller", Path(args.plot))
        print(f"  plot:              {args.plot}")
    return 0


def plot_episode(trace: list[dict[str, Any]], title: str, path: Path) -> None:
    """Plot true inlet temperatures against the 18/27/32 °C bands and the plant's power over an episode."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    hours = np.arange(1, len(trace) + 1) * 5.0 / 60.0
    inlets = np.array([info["inlet_c"] for info in trace])
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    top.axhspan(18, 27, color="tab:green", alpha=0.08, label="ASHRAE recommended 18–27 °C")
    top.axhline(32, color="tab:red", lw=1, ls="--", label="allowable limit 32 °C")
    for z, zone in enumerate(trace[0]["zone_ids"]):
        top.plot(hours, inlets[:, z], lw=1.5, label=zone)
    top.set_ylabel("true inlet (°C)")
    top.legend(loc="upper left", fontsize=8, ncol=3)
    top.set_title(title)
    bottom.plot(hours, [info["cooling_kw"] for info in trace], label="cooling power (kW)")
    bottom.plot(hours, [info["chiller_capacity_kw"] for info in trace], label="chiller capacity available (kW)")
    bottom.plot(hours, [info["it_kw"] for info in trace], label="IT power (kW)", color="grey", lw=1)
    bottom.set_xlabel("hours into the episode")
    bottom.set_ylabel("kW")
    bottom.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _run_baselines(args: argparse.Namespace) -> int:
    print_and_write(baseline_table(tuple(range(args.seeds)))[0], args.out)
    return 0


def _run_annual(args: argparse.Namespace) -> int:
    print_and_write(annual_pue_table()[0], args.out)
    return 0


def _demo_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--task", default="cooling/cascading_chiller_failure", help="cooling task id")
    parser.add_argument("--seed", type=int, default=0, help="episode seed")
    parser.add_argument("--plot", default="", help="also save a PNG of inlets and power (needs matplotlib)")


def _baseline_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seeds", type=int, default=len(EVAL_SEEDS), help="evaluate on seeds 0..N-1")
    parser.add_argument("--out", default="reports/cooling/baselines.md", help="markdown output ('' for none)")


def _annual_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default="reports/cooling/annual_pue.md", help="markdown output ('' for none)")


COMMANDS = [
    Command("demo", "Run a cooling task (default: the hard one) with the tuned rule-based controller",
            _demo_arguments, _run_demo),
    Command("cooling-baselines", "Score the rule-based and PID controllers on the cooling tasks (markdown)",
            _baseline_arguments, _run_baselines),
    Command("annual-pue", "Annual PUE by climate of the rule-based controller (markdown)",
            _annual_arguments, _run_annual),
]
