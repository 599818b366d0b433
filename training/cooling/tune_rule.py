"""Tune the rule-based cooling controller per task by exhaustive grid search on tuning seeds.

A competent operator tunes set-points to the site; this does the same, honestly: every combination in
:data:`GRID` is scored by the mean final score over :data:`TUNING_SEEDS` (disjoint from the evaluation seeds
0–9 used in reports), and the best combination per task is written to
``agents/cooling/rule_tuned.json``, which :meth:`RuleBasedController.for_task` reads.

Run: ``dcops tune-rule`` (about 5–10 minutes on 2 cores for the three tasks).
"""

from __future__ import annotations

import itertools
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

TUNING_SEEDS = tuple(range(1000, 1010))
"""Seeds used only for tuning; reports evaluate on seeds 0–9."""

GRID: dict[str, tuple[Any, ...]] = {
    "supply_c": (18.0, 20.0, 22.0, 24.0, 26.0),
    "chw_margin_k": (0.0, 3.0, 6.0, 9.0),
    "airflow_margin": (0.7, 0.8, 0.9, 1.0),
    "fault_chw_c": (5.0, 10.0),
    "fault_airflow_margin": (1.0, 1.3),
    "triage_margin_k": (0.0,),
    "triage_zones": (0, 1),
}


def tune_task(task_id: str, seeds: tuple[int, ...] = TUNING_SEEDS, progress: bool = True) -> tuple[dict[str, Any], float]:
    """Return the best rule parameters for ``task_id`` and their mean score on ``seeds``."""
    import dcops
    from dcops.agents.cooling.rule_based import RuleBasedController
    from dcops.cooling_env import run_controller

    env = dcops.make_env(task_id)
    names = list(GRID)
    combos = list(itertools.product(*(GRID[n] for n in names)))
    best: tuple[float, dict[str, Any]] = (-np.inf, {})
    for values in tqdm(combos, desc=task_id, disable=not progress):
        params = dict(zip(names, values, strict=True))
        controller = RuleBasedController(**params)
        score = float(np.mean([run_controller(env, controller, seed).score for seed in seeds]))
        if score > best[0]:
            best = (score, params)
    return best[1], best[0]


def tune_all(out_path: Path, progress: bool = True) -> dict[str, Any]:
    """Tune every plant v0 cooling task and write the JSON file; return what was written."""
    from dcops.agents.cooling.rule_based import RuleBasedController
    from dcops.cooling_env import TASKS

    result: dict[str, Any] = {"tuning_seeds": list(TUNING_SEEDS), "grid": {k: list(v) for k, v in GRID.items()}, "tasks": {}}
    defaults = asdict(RuleBasedController())
    for task_id in TASKS:
        params, score = tune_task(task_id, progress=progress)
        result["tasks"][task_id] = {"params": {**{k: defaults[k] for k in GRID}, **params}, "tuning_score": score}
    out_path.write_text(json.dumps(result, indent=2) + "\n")
    return result
