"""Tune the plant v2 PID's gains, honestly, for each v1 cooling task and the v2 evaluation family (``dcops tune-pid-v2``).

The PID (:class:`~dcops.agents.cooling.pid_v2.PIDV2Controller`) runs its own air-side loops over the plant side of
the rule tuned for the same target (:meth:`RuleV2Controller.tuned(target)
<dcops.agents.cooling.rule_v2.RuleV2Controller.tuned>`, held fixed here). Its gains are chosen as the rule's
parameters are (:mod:`dcops.training.cooling.tune_rule_v2`, same targets, same tuning seeds 1000+, never the
evaluation seeds 0, 1, 2, …): the least objective ratio with 0 minutes above 32 °C in every episode and at most
1 % of zone-time above 27 °C.

1. **Grid** (:data:`GRID`, every combination, 108 points): inlet target, supply-air bias, the supply loop's
   proportional and integral gains, and the CRAH ΔT target; the fan loop's gains from v0's PID.
2. **Refinement** (:data:`REFINE`): coordinate descent from the grid's winner over every gain on wider value lists,
   at most :data:`MAX_PASSES` passes (:func:`~dcops.training.cooling.tune_rule_v2.search`).

A first look on the family's tuning seeds, before the grid was fixed, set its ranges: v0's gains and ΔT target
(kp 0.5, ki 2 /h, 11 K) gave an objective ratio of 1.47; a 13–14 K ΔT with lower gains (kp ≤ 0.25, ki ≤ 1 /h)
1.22–1.24; higher gains chase the inlet sensors' noise (and the chilled water follows the coldest zone). Writes
``agents/cooling/pid_v2_tuned.json`` (read by :meth:`PIDV2Controller.tuned`), one entry per target, the others
kept. About 10 minutes for every target on one core.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

FAMILY = "eval_family_v1"
GRID: dict[str, tuple[float, ...]] = {
    "target_inlet_c": (24.0, 25.0, 26.0),
    "supply_bias_c": (20.0, 22.0),
    "kp": (0.1, 0.25, 0.5),
    "ki": (0.25, 1.0),
    "target_delta_t_k": (12.0, 13.0, 14.0),
}
REFINE: dict[str, tuple[float, ...]] = {
    "target_inlet_c": (23.0, 23.5, 24.0, 24.5, 25.0, 25.5, 26.0, 26.5),
    "supply_bias_c": (18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0),
    "kp": (0.05, 0.1, 0.25, 0.5, 1.0),
    "ki": (0.1, 0.25, 0.5, 1.0, 2.0),
    "target_delta_t_k": (10.0, 11.0, 12.0, 12.5, 13.0, 13.5, 14.0, 15.0),
    "fan_bias": (0.4, 0.5, 0.6, 0.7),
    "kp_fan": (0.01, 0.02, 0.05),
    "ki_fan": (0.05, 0.1, 0.2),
}
MAX_PASSES = 2


def targets() -> list[str]:
    """The tuning targets of ``--target all``: the rule's (every registered v1 task, then the family)."""
    from dcops.training.cooling.tune_rule_v2 import targets as rule_targets

    return rule_targets()


def evaluate_gains(gains: dict[str, float], plant: dict[str, float], target: str = FAMILY,
                   seeds: Sequence[int] | None = None) -> dict[str, float]:
    """The PID with ``gains`` over the rule with ``plant`` parameters on every case of ``target`` and seed
    (:func:`~dcops.training.cooling.tune_rule_v2.evaluate_controller`)."""
    from dcops.agents.cooling.pid_v2 import PIDV2Controller
    from dcops.agents.cooling.rule_v2 import RuleV2Controller
    from dcops.training.cooling.tune_rule_v2 import evaluate_controller

    return evaluate_controller(lambda: PIDV2Controller(**gains, plant=RuleV2Controller(**plant)), target, seeds)


def tune(target: str = FAMILY, workers: int = 1, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run the grid and the refinement (module docstring) for one target over the plant side of its tuned rule;
    return the winner and its figures."""
    from dcops.agents.cooling.pid_v2 import PIDV2Controller
    from dcops.agents.cooling.rule_v2 import RuleV2Controller
    from dcops.training.cooling.tune_rule_v2 import search, tuning_seeds

    plant = RuleV2Controller.tuned(target).parameters()
    evaluate = partial(evaluate_gains, plant=plant, target=target)
    gains, result, grid_size = search(evaluate, PIDV2Controller().gains(), GRID, REFINE, workers, progress,
                                      MAX_PASSES)
    return {"gains": gains, "tuning_result": result, "grid_size": grid_size,
            "tuning_seeds": list(tuning_seeds(target)), "plant": plant}


def write_tuned(results: dict[str, dict[str, Any]], out: Path) -> None:
    """Write the tuned gains where :meth:`PIDV2Controller.tuned` reads them: ``results`` (target → the :func:`tune`
    result) replace those targets' entries; every other target already in ``out`` is kept. Each entry records the
    plant-side rule it was tuned over."""
    entries: dict[str, Any] = {}
    if out.is_file():
        entries = json.loads(out.read_text()).get("targets", {})
    for target, result in results.items():
        entries[target] = {"gains": result["gains"], "tuning_result": result["tuning_result"],
                           "tuning_seeds": result["tuning_seeds"], "plant_rule_params": result["plant"]}
    document = {
        "command": "dcops tune-pid-v2 --target all",
        "plant_side": "RuleV2Controller.tuned(target) (agents/cooling/rule_v2_tuned.json)",
        "grid": {k: list(v) for k, v in GRID.items()}, "refine": {k: list(v) for k, v in REFINE.items()},
        "targets": {t: entries[t] for t in sorted(entries)},
    }
    out.write_text(json.dumps(document, indent=2) + "\n")
