"""Tune the plant v2 rule for the evaluation family, honestly (``dcops tune-rule-v2``).

The baseline a learned controller and the clairvoyant bound are measured against is the best *rule* an operator
could set for these sites and seasons, chosen by the criteria the evaluation uses: the least objective (cooling
energy plus the server fan and leakage energy warm inlets add, ``dcops.cooling_env_v1``) with 0 minutes above
32 °C in every episode and at most 1 % of zone-time above 27 °C, on :data:`TUNING_SEEDS` (disjoint from the
evaluation seeds 0, 1, 2, …).

1. **Grid** (:data:`GRID`, every combination, on every case of the family): supply air, chilled-water margin,
   airflow margin, condenser-water approach, chilled-water ΔT and the stage-up load.
2. **Refinement** (:data:`REFINE`: coordinate descent from the grid's winner over every parameter on wider value
   lists, each value kept if it lowers the objective and stays feasible, passes repeated until one changes
   nothing or :data:`MAX_PASSES`), so that no winner sits on the edge of a grid it could not leave.

Writes ``agents/cooling/rule_v2_tuned.json`` (read by :meth:`RuleV2Controller.tuned`). About 10 minutes on 2 cores.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

TUNING_SEEDS: tuple[int, ...] = (1000, 1001)
GRID: dict[str, tuple[float, ...]] = {
    "supply_c": (18.0, 20.0, 22.0, 24.0, 26.0),
    "chw_margin_k": (0.0, 2.0, 4.0, 7.0),
    "airflow_margin": (0.75, 0.9, 1.05),
    "tower_approach_k": (3.0, 5.0, 8.0),
    "chw_delta_t_k": (6.0, 10.0),
    "stage_up_plr": (0.7, 0.95),
}
REFINE: dict[str, tuple[float, ...]] = {
    "supply_c": (16.0, 18.0, 19.0, 20.0, 21.0, 22.0, 24.0, 26.0),
    "chw_margin_k": (0.0, 1.0, 2.0, 3.0, 5.0),
    "airflow_margin": (0.7, 0.8, 0.85, 0.9, 0.95, 1.0, 1.1),
    "inlet_target_c": (25.0, 26.0, 26.5, 27.0),
    "fan_gain": (0.02, 0.05, 0.1, 0.2),
    "tower_approach_k": (5.0, 6.0, 8.0, 10.0, 12.0, 15.0),
    "stage_up_plr": (0.8, 0.9, 0.95, 1.0),
    "stage_down_plr": (0.5, 0.6, 0.75, 0.85, 0.9),
    "chw_delta_t_k": (6.0, 8.0, 10.0, 12.0, 15.0),
    "econ_margin_k": (0.0, 1.0, 3.0, 5.0, 8.0),
    "fault_chw_c": (7.0, 10.0, 13.0, 16.0),
}
MAX_PASSES = 4
MAX_ZONE_TIME_ABOVE_27_PCT = 1.0
FAMILY = "eval_family_v1"


def family_cases() -> list[tuple[str, str, str]]:
    from dcops.cooling_env_v1 import EVAL_SITES, FAULT_CASES, SEASONS

    return list(itertools.product(EVAL_SITES, SEASONS, FAULT_CASES))


def evaluate_parameters(params: dict[str, float], seeds: Sequence[int] = TUNING_SEEDS) -> dict[str, float]:
    """The rule with ``params`` over every case and seed: mean objective ratio (objective / yardstick), mean
    zone-time above 27 °C (%), worst minutes above 32 °C, mean score."""
    from dcops.agents.cooling.rule_v2 import RuleV2Controller, run_controller_v2
    from dcops.cooling_env_v1 import CoolingEnvV1, evaluation_case_spec

    rows = []
    for case in family_cases():
        env = CoolingEnvV1(evaluation_case_spec(*case))
        for seed in seeds:
            r = run_controller_v2(env, RuleV2Controller(**params), seed)
            minutes = env.task.n_steps * env.task.dt_s / 60.0
            rows.append((r["objective"] / r["reference"], 100.0 * float(np.mean(r["minutes_above_27"])) / minutes,
                         float(max(r["minutes_above_32"])), r["score"]))
    ratio, above27, above32, score = zip(*rows, strict=True)
    return {"objective_ratio": float(np.mean(ratio)), "zone_time_above_27_pct": float(np.mean(above27)),
            "worst_minutes_above_32": float(max(above32)), "score": float(np.mean(score))}


def feasible(result: dict[str, float]) -> bool:
    return result["worst_minutes_above_32"] == 0.0 and result["zone_time_above_27_pct"] <= MAX_ZONE_TIME_ABOVE_27_PCT


def _better(a: dict[str, float] | None, b: dict[str, float]) -> bool:
    """Whether result ``b`` beats ``a``: feasible first, then the lower objective ratio."""
    if a is None:
        return True
    return (feasible(b), -b["objective_ratio"]) > (feasible(a), -a["objective_ratio"])


def tune(workers: int = 2, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run the grid and the refinement (module docstring); return the winner and its tuning figures."""
    from dcops.agents.cooling.rule_v2 import RuleV2Controller

    defaults = RuleV2Controller().parameters()
    names = list(GRID)
    combos = [dict(defaults, **dict(zip(names, values, strict=True)))
              for values in itertools.product(*(GRID[n] for n in names))]
    best_params: dict[str, float] = defaults
    best: dict[str, float] | None = None
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for params, result in zip(combos, pool.map(evaluate_parameters, combos, chunksize=4), strict=True):
            if progress:
                progress("grid")
            if _better(best, result):
                best, best_params = result, params
    for _ in range(MAX_PASSES):
        changed = False
        for name, values in REFINE.items():
            for value in values:
                if value == best_params[name]:
                    continue
                trial = dict(best_params, **{name: value})
                result = evaluate_parameters(trial)
                if progress:
                    progress("refine")
                if _better(best, result):
                    best, best_params, changed = result, trial, True
        if not changed:
            break
    return {"params": best_params, "tuning_result": best, "grid_size": len(combos)}


def write_tuned(result: dict[str, Any], out: Path) -> None:
    """Write the tuned parameters where :meth:`RuleV2Controller.tuned` reads them."""
    document = {
        "command": "dcops tune-rule-v2", "tuning_seeds": list(TUNING_SEEDS),
        "grid": {k: list(v) for k, v in GRID.items()}, "refine": {k: list(v) for k, v in REFINE.items()},
        "families": {FAMILY: {"params": result["params"], "tuning_result": result["tuning_result"]}},
    }
    out.write_text(json.dumps(document, indent=2) + "\n")
