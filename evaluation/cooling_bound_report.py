"""``dcops cooling-bound``: the headroom of plant v2 — the clairvoyant bound beside the tuned rule, per case.

For every case of the v2 evaluation family (``dcops.cooling_env_v1.evaluation_case_spec``: 4 climates ×
January/July × no fault/chiller trip, 24 h) and evaluation seeds 0..N−1, three controllers play the same
episodes:

- the **tuned rule** (``RuleV2Controller.tuned()``, parameters from ``dcops tune-rule-v2`` on seeds 1000+);
- the **best constant action**: the best of :data:`N_CONSTANT` constant set-point vectors (one mid-box vector and
  random draws from the action box, seeded), picked per case by score — a check that a task cannot be won by
  not controlling;
- the **clairvoyant bound** (``dcops.evaluation.cooling_bound``): receding-horizon control with perfect
  knowledge of the state, the load, the weather and the faults.

Reported per case: score, the objective (cooling energy plus the server fan and leakage energy warm inlets add,
kWh), plain cooling energy, worst-zone minutes above 27 and 32 °C, and the bound's saving against the rule.
Writes ``reports/cooling/v2_bound.md`` and ``v2_bound.csv``.
"""

from __future__ import annotations

import argparse
import csv
import itertools
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from dcops.command import Command, print_and_write

N_CONSTANT = 24


def _case_rows(job: tuple[tuple[str, str, str], int]) -> list[dict[str, Any]]:
    """The three controllers on one case and seed."""
    from dcops.agents.cooling.rule_v2 import RuleV2Controller, run_controller_v2
    from dcops.cooling_env_v1 import CoolingEnvV1, evaluation_case_spec
    from dcops.evaluation.cooling_bound import clairvoyant_episode

    case, seed = job
    env = CoolingEnvV1(evaluation_case_spec(*case))
    rows = [("rule_v2 (tuned)", run_controller_v2(env, RuleV2Controller.tuned(), seed))]
    rng = np.random.default_rng(10_000 + seed)
    low, high = env.action_space.low.astype(np.float64), env.action_space.high.astype(np.float64)
    constants = [(low + high) / 2.0] + [rng.uniform(low, high) for _ in range(N_CONSTANT - 1)]
    best: dict[str, Any] | None = None
    for action in constants:
        env.reset(seed=seed)
        done, info = False, {}
        while not done:
            _, _, done, _, info = env.step(action.astype(np.float32))
        result = {"score": float(info["score"]), **info["summary"]}
        if best is None or result["score"] > best["score"]:
            best = result
    assert best is not None
    rows.append(("best constant action", best))
    rows.append(("clairvoyant bound", clairvoyant_episode(env, seed)))
    return [{"case": "/".join(case), "seed": seed, "controller": name, "score": r["score"],
             "objective_kwh": r["objective"], "cooling_kwh": r["cooling_kwh"],
             "server_overhead_kwh": r["server_overhead_kwh"], "pue": r["pue"],
             "worst_minutes_above_27": float(max(r["minutes_above_27"])),
             "worst_minutes_above_32": float(max(r["minutes_above_32"]))} for name, r in rows]


def run_bound(seeds: int, workers: int) -> list[dict[str, Any]]:
    from dcops.cooling_env_v1 import EVAL_SITES, FAULT_CASES, SEASONS

    jobs = [(case, seed) for case in itertools.product(EVAL_SITES, SEASONS, FAULT_CASES) for seed in range(seeds)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return [row for rows in pool.map(_case_rows, jobs) for row in rows]


def markdown(rows: list[dict[str, Any]], seeds: int) -> str:
    by: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        by.setdefault((r["case"], r["controller"]), []).append(r)
    cases = list(dict.fromkeys(r["case"] for r in rows))
    mean = lambda case, name, key: float(np.mean([r[key] for r in by[(case, name)]]))  # noqa: E731
    worst = lambda case, name, key: float(max(r[key] for r in by[(case, name)]))  # noqa: E731
    lines = [
        "| case | rule score | constant score | bound score | rule objective kWh | bound objective kWh | "
        "bound saving | rule / bound cooling kWh | worst min > 27 °C rule / const / bound | > 32 °C rule / bound |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    savings, constant_wins = [], 0
    for case in cases:
        rule, const, bound = "rule_v2 (tuned)", "best constant action", "clairvoyant bound"
        saving = 100.0 * (1.0 - mean(case, bound, "objective_kwh") / mean(case, rule, "objective_kwh"))
        savings.append(saving)
        constant_wins += mean(case, const, "score") > mean(case, rule, "score")
        lines.append(
            f"| {case} | {mean(case, rule, 'score'):.3f} | {mean(case, const, 'score'):.3f} | "
            f"{mean(case, bound, 'score'):.3f} | {mean(case, rule, 'objective_kwh'):.0f} | "
            f"{mean(case, bound, 'objective_kwh'):.0f} | {saving:.1f} % | {mean(case, rule, 'cooling_kwh'):.0f} / "
            f"{mean(case, bound, 'cooling_kwh'):.0f} | {worst(case, rule, 'worst_minutes_above_27'):.0f} / "
            f"{worst(case, const, 'worst_minutes_above_27'):.0f} / {worst(case, bound, 'worst_minutes_above_27'):.0f} | "
            f"{worst(case, rule, 'worst_minutes_above_32'):.0f} / {worst(case, bound, 'worst_minutes_above_32'):.0f} |")
    total_rule = sum(r["objective_kwh"] for r in rows if r["controller"] == "rule_v2 (tuned)")
    total_bound = sum(r["objective_kwh"] for r in rows if r["controller"] == "clairvoyant bound")
    head = (
        "# Plant v2 headroom: the clairvoyant bound against the tuned rule\n\n"
        f"Made by `dcops cooling-bound --seeds {seeds}` (evaluation seeds 0–{seeds - 1}; the rule was tuned on "
        "seeds 1000+ by `dcops tune-rule-v2`). Objective = cooling energy plus the server fan and leakage energy "
        "that warm inlets add (`dcops.cooling_env_v1`). Cases: 4 climates × January/July × no fault or a 2 h "
        "chiller trip, 24 h at 5-minute steps, on `PlantV2Config.default()`.\n\n"
        f"**Bound saving against the tuned rule: {np.mean(savings):.1f} % per case on average (smallest "
        f"{min(savings):.1f} %, largest {max(savings):.1f} %), {100.0 * (1.0 - total_bound / total_rule):.1f} % of "
        f"the family's total objective.** The best of {N_CONSTANT} constant actions beats the tuned rule's score "
        f"in {constant_wins} of {len(cases)} cases.\n\n"
    )
    return head + "\n".join(lines) + "\n"


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seeds", type=int, default=3, help="evaluation seeds 0..N-1 per case")
    parser.add_argument("--workers", type=int, default=2, help="processes")
    parser.add_argument("--out", default="reports/cooling/v2_bound.md", help="markdown report ('' for none)")


def _run(args: argparse.Namespace) -> int:
    rows = run_bound(args.seeds, args.workers)
    print_and_write(markdown(rows, args.seeds), args.out)
    if args.out:
        with open(Path(args.out).with_suffix(".csv"), "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    return 0


COMMANDS = [
    Command("cooling-bound", "Plant v2 headroom: the clairvoyant bound, the tuned rule and the best constant action "
            "on the v2 evaluation family (markdown, CSV)", _arguments, _run),
]
