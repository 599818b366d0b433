"""Tune the plant v2 rule, honestly, for each v1 cooling task and the v2 evaluation family (``dcops tune-rule-v2``).

The baseline a learned controller and the clairvoyant bound are measured against is the best *rule* an operator
could set for a task, chosen by the criteria the evaluation uses: the least objective ratio (the task's objective,
``dcops.cooling_env_v1``, over its weather-and-load yardstick) with 0 minutes above 32 °C in every episode and at
most 1 % of zone-time above 27 °C, on the target's tuning seeds (:data:`TUNING_SEEDS`: disjoint from the evaluation
seeds 0, 1, 2, …). Targets (:func:`targets`): every registered v1 task (``cooling/..._v1``) and
``eval_family_v1`` (the 16 cases of ``evaluation_case_spec``); and, apart (:func:`case_targets`,
``--target cases``), each case of the family alone, ``eval_family_v1/<site>/<season>/<fault>``, on the family's
tuning seeds. A rule tuned for one case knows its climate, season and fault in advance: it is a ceiling for the
rule's structure, not a controller anyone could deploy.

1. **Grid** (:data:`GRID`, every combination): supply air, chilled-water margin, airflow margin,
   condenser-water approach, chilled-water ΔT and the stage-up load.
2. **Refinement** (:data:`REFINE`): coordinate descent from the grid's winner over every parameter that acts on the
   target (the storage parameters only where the plant has a tank) on wider value lists: each pass tries every
   other value of one parameter (in parallel) and keeps the best if it lowers the objective and stays feasible;
   passes repeat until one changes nothing or :data:`MAX_PASSES`. So no winner sits on the edge of a grid it could
   not leave, and the winter-mode and storage rules are tuned like the rest.

Writes ``agents/cooling/rule_v2_tuned.json`` (read by :meth:`RuleV2Controller.tuned`), one entry per target, the
others kept. About 40 minutes for ``--target all`` on 2 cores; about 30 for ``--target cases`` on one.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

FAMILY = "eval_family_v1"
CASE_PREFIX = FAMILY + "/"
"""A case target is ``eval_family_v1/<site>/<season>/<fault>``."""
TUNING_SEEDS: dict[str, tuple[int, ...]] = {FAMILY: (1000, 1001)}
"""Tuning seeds per target; a case of the family gets the family's, a task not listed :data:`TASK_TUNING_SEEDS`."""
TASK_TUNING_SEEDS: tuple[int, ...] = tuple(range(1000, 1008))
GRID: dict[str, tuple[float, ...]] = {
    "supply_c": (18.0, 20.0, 22.0, 24.0, 26.0),
    "chw_margin_k": (0.0, 2.0, 4.0, 7.0),
    "airflow_margin": (0.75, 0.9, 1.05),
    "tower_approach_k": (3.0, 5.0, 8.0),
    "chw_delta_t_k": (6.0, 10.0),
    "stage_up_plr": (0.7, 0.95),
}
REFINE: dict[str, tuple[float, ...]] = {
    "supply_c": (16.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 26.0),
    "chw_margin_k": (0.0, 1.0, 2.0, 3.0, 5.0),
    "airflow_margin": (0.7, 0.8, 0.85, 0.9, 0.95, 1.0, 1.1, 1.2, 1.35),
    "inlet_target_c": (23.0, 24.0, 25.0, 26.0, 26.5, 27.0),
    "fan_gain": (0.02, 0.05, 0.1, 0.2, 0.4),
    "tower_approach_k": (3.0, 5.0, 6.0, 8.0, 10.0, 12.0, 15.0),
    "stage_up_plr": (0.7, 0.8, 0.9, 0.95, 1.0),
    "stage_down_plr": (0.5, 0.6, 0.75, 0.85, 0.9),
    "chw_delta_t_k": (6.0, 8.0, 10.0, 12.0, 15.0),
    "econ_margin_k": (0.0, 1.0, 3.0, 5.0, 8.0),
    "fault_chw_c": (7.0, 10.0, 13.0, 16.0),
    "free_wet_bulb_c": (-100.0, 0.0, 4.0, 8.0, 12.0),
    "free_supply_c": (15.0, 16.0, 18.0, 20.0),
    "free_airflow_margin": (0.5, 0.6, 0.7, 0.8, 0.9),
    "tank_target_c": (6.0, 8.0, 10.0, 12.0, 14.0),
    "tank_charge_price": (0.0, 0.08, 0.1, 0.14, 1.0),
    "tank_discharge_price": (0.14, 0.2, 1.0),
    "tank_charge_flow": (0.25, 0.5, 1.0),
    "tank_discharge_flow": (0.25, 0.5, 1.0),
}
STORAGE_PARAMETERS = frozenset(name for name in REFINE if name.startswith("tank_"))
MAX_PASSES = 4
MAX_ZONE_TIME_ABOVE_27_PCT = 1.0


def targets() -> list[str]:
    """The tuning targets of ``--target all``: the registered v1 tasks, then the evaluation family."""
    from dcops.cooling_env_v1 import TASK_SPECS

    return [*TASK_SPECS, FAMILY]


def case_targets() -> list[str]:
    """The targets of ``--target cases``: each case of the evaluation family alone, in the family's order."""
    from dcops.cooling_env_v1 import EVAL_SITES, FAULT_CASES, SEASONS

    return [case_target(*case) for case in itertools.product(EVAL_SITES, SEASONS, FAULT_CASES)]


def case_target(site: str, season: str, fault: str) -> str:
    """The target name of one case of the evaluation family, ``eval_family_v1/<site>/<season>/<fault>``."""
    return f"{CASE_PREFIX}{site}/{season}/{fault}"


def _specs(target: str) -> list[Any]:
    from dcops.cooling_env_v1 import EVAL_SITES, FAULT_CASES, SEASONS, TASK_SPECS, evaluation_case_spec

    if target == FAMILY:
        return [evaluation_case_spec(*case) for case in itertools.product(EVAL_SITES, SEASONS, FAULT_CASES)]
    if target in case_targets():
        return [evaluation_case_spec(*target.removeprefix(CASE_PREFIX).split("/"))]
    if target not in TASK_SPECS:
        raise KeyError(f"unknown tuning target {target!r}; known: {', '.join(targets())} and the cases "
                       f"{CASE_PREFIX}<site>/<season>/<fault>")
    return [TASK_SPECS[target]()]


def tuning_seeds(target: str) -> tuple[int, ...]:
    if target.startswith(CASE_PREFIX):
        return TUNING_SEEDS[FAMILY]
    return TUNING_SEEDS.get(target, TASK_TUNING_SEEDS)


def evaluate_parameters(params: dict[str, float], target: str = FAMILY,
                        seeds: Sequence[int] | None = None) -> dict[str, float]:
    """The rule with ``params`` over every case of ``target`` and seed (:func:`evaluate_controller`)."""
    from dcops.agents.cooling.rule_v2 import RuleV2Controller

    return evaluate_controller(lambda: RuleV2Controller(**params), target, seeds)


def evaluate_controller(make: Callable[[], Any], target: str = FAMILY,
                        seeds: Sequence[int] | None = None) -> dict[str, float]:
    """A fresh v2 controller from ``make()`` over every case of ``target`` and seed (default: the target's tuning
    seeds): mean objective ratio (objective / yardstick), mean zone-time above 27 °C (%), worst minutes above
    32 °C, mean score."""
    from dcops.agents.cooling.rule_v2 import run_controller_v2
    from dcops.cooling_env_v1 import CoolingEnvV1

    rows = []
    for spec in _specs(target):
        env = CoolingEnvV1(spec)
        for seed in seeds if seeds is not None else tuning_seeds(target):
            r = run_controller_v2(env, make(), seed)
            minutes = env.task.n_steps * env.task.dt_s / 60.0
            rows.append((r["objective"] / r["reference"], 100.0 * float(np.mean(r["minutes_above_27"])) / minutes,
                         float(max(r["minutes_above_32"])), r["score"]))
    ratio, above27, above32, score = zip(*rows, strict=True)
    return {"objective_ratio": float(np.mean(ratio)), "zone_time_above_27_pct": float(np.mean(above27)),
            "worst_minutes_above_32": float(max(above32)), "score": float(np.mean(score))}


def feasible(result: dict[str, float]) -> bool:
    return result["worst_minutes_above_32"] == 0.0 and result["zone_time_above_27_pct"] <= MAX_ZONE_TIME_ABOVE_27_PCT


def rank(result: dict[str, float]) -> tuple[bool, float, float]:
    """Feasible first, then the lower objective ratio; among infeasible ones, the less zone-time above 27 °C."""
    if feasible(result):
        return (True, -result["objective_ratio"], 0.0)
    return (False, -result["zone_time_above_27_pct"] - 100.0 * result["worst_minutes_above_32"],
            -result["objective_ratio"])


def _acting_parameters(target: str) -> list[str]:
    """The refinement's parameters for ``target``: the storage rules only where its plant has a tank."""
    has_tank = any(spec.plant.tank.installed for spec in _specs(target))
    return [name for name in REFINE if has_tank or name not in STORAGE_PARAMETERS]


def tune(target: str = FAMILY, workers: int = 2, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run the grid and the refinement (module docstring) for one target; return the winner and its figures."""
    from dcops.agents.cooling.rule_v2 import RuleV2Controller

    refine = {name: REFINE[name] for name in _acting_parameters(target)}
    best_params, best, grid_size = search(partial(evaluate_parameters, target=target),
                                          RuleV2Controller().parameters(), GRID, refine, workers, progress)
    return {"params": best_params, "tuning_result": best, "grid_size": grid_size,
            "tuning_seeds": list(tuning_seeds(target))}


def search(evaluate: Callable[[dict[str, float]], dict[str, float]], start: dict[str, float],
           grid: dict[str, tuple[float, ...]], refine: dict[str, tuple[float, ...]], workers: int,
           progress: Callable[[str], None] | None = None,
           max_passes: int = MAX_PASSES) -> tuple[dict[str, float], dict[str, float], int]:
    """Every combination of ``grid`` (the other parameters from ``start``), then coordinate refinement from the
    best by :func:`rank` over ``refine``'s values (module docstring), ``evaluate`` (picklable) in ``workers``
    processes. Returns the winner, its figures and the grid's size."""
    names = list(grid)
    combos = [dict(start, **dict(zip(names, values, strict=True)))
              for values in itertools.product(*(grid[n] for n in names))]
    best_params: dict[str, float] = start
    best: dict[str, float] | None = None
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for params, result in zip(combos, pool.map(evaluate, combos, chunksize=4), strict=True):
            if progress:
                progress("grid")
            if best is None or rank(result) > rank(best):
                best, best_params = result, params
        assert best is not None
        for _ in range(max_passes):
            changed = False
            for name, values in refine.items():
                trials = [dict(best_params, **{name: v}) for v in values if v != best_params[name]]
                for trial, result in zip(trials, pool.map(evaluate, trials), strict=True):
                    if progress:
                        progress("refine")
                    if rank(result) > rank(best):
                        best, best_params, changed = result, trial, True
            if not changed:
                break
    return best_params, best, len(combos)


def write_tuned(results: dict[str, dict[str, Any]], out: Path) -> None:
    """Write the tuned parameters where :meth:`RuleV2Controller.tuned` reads them: ``results`` (target → the
    :func:`tune` result) replace those targets' entries; every other target already in ``out`` is kept."""
    families: dict[str, Any] = {}
    if out.is_file():
        families = json.loads(out.read_text()).get("families", {})
    for target, result in results.items():
        families[target] = {"params": result["params"], "tuning_result": result["tuning_result"],
                            "tuning_seeds": result["tuning_seeds"]}
    command = "dcops tune-rule-v2 --target all"
    if any(target.startswith(CASE_PREFIX) for target in families):
        command += "; dcops tune-rule-v2 --target cases"
    document = {
        "command": command,
        "grid": {k: list(v) for k, v in GRID.items()}, "refine": {k: list(v) for k, v in REFINE.items()},
        "families": {t: families[t] for t in sorted(families)},
    }
    out.write_text(json.dumps(document, indent=2) + "\n")
