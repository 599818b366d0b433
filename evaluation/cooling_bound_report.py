"""``dcops cooling-bound``: the headroom of plant v2 — the clairvoyant bound beside the tuned rule, per task and case.

For every registered v1 cooling task (``dcops.cooling_env_v1.TASK_SPECS``) and every case of the v2 evaluation
family (``evaluation_case_spec``: 4 climates × January/July × no fault/chiller trip, 24 h), and evaluation seeds
0..N−1, three controllers play the same episodes:

- the **tuned rule** (``RuleV2Controller.tuned(task)``, parameters from ``dcops tune-rule-v2`` on seeds 1000+);
- the **best constant action**: the best of :data:`N_CONSTANT` constant set-point vectors (one mid-box vector and
  random draws from the action box, seeded), picked per case by score — a check that a task cannot be won by
  not controlling;
- the **clairvoyant bound** (``dcops.evaluation.cooling_bound``): receding-horizon control with perfect
  knowledge of the state, the true plant, the load, the weather and the faults.

Reported per task and case: score, the objective (cooling energy plus the server fan and leakage energy warm
inlets add, × the price for the cost objective), plain cooling energy, worst-zone minutes above 27 and 32 °C, and
the bound's saving against the rule. Writes ``reports/cooling/v2_bound.md`` and ``v2_bound.csv``.
"""

from __future__ import annotations

import argparse
import itertools
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np

from dcops.command import Command, print_and_write, write_rows_beside

N_CONSTANT = 24


FAMILY = "eval_family_v1"
RULE, CONSTANT, BOUND = "rule_v2 (tuned)", "best constant action", "clairvoyant bound"


def _case_rows(job: tuple[str, tuple[str, ...], int]) -> list[dict[str, Any]]:
    """The three controllers on one case (a task, or a family case) and seed."""
    from dcops.agents.cooling.rule_v2 import RuleV2Controller, run_controller_v2
    from dcops.cooling_env_v1 import TASK_SPECS, CoolingEnvV1, evaluation_case_spec
    from dcops.evaluation.cooling_bound import clairvoyant_episode

    target, case, seed = job
    spec = evaluation_case_spec(*case) if target == FAMILY else TASK_SPECS[target]()
    env = CoolingEnvV1(spec)
    rows = [(RULE, run_controller_v2(env, RuleV2Controller.tuned(target), seed))]
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
    rows.append((CONSTANT, best))
    rows.append((BOUND, clairvoyant_episode(env, seed)))
    name = "/".join(case) if target == FAMILY else target
    return [{"target": target, "case": name, "seed": seed, "controller": controller, "score": r["score"],
             "objective": r["objective"], "reference": r["reference"], "cooling_kwh": r["cooling_kwh"],
             "server_overhead_kwh": r["server_overhead_kwh"], "pue": r["pue"],
             "worst_minutes_above_27": float(max(r["minutes_above_27"])),
             "worst_minutes_above_32": float(max(r["minutes_above_32"]))} for controller, r in rows]


def run_bound(seeds: int, workers: int) -> list[dict[str, Any]]:
    from dcops.cooling_env_v1 import EVAL_SITES, FAULT_CASES, SEASONS, TASK_SPECS

    cases = [(task, (), seed) for task in TASK_SPECS for seed in range(seeds)]
    cases += [(FAMILY, case, seed) for case in itertools.product(EVAL_SITES, SEASONS, FAULT_CASES)
              for seed in range(seeds)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return [row for rows in pool.map(_case_rows, cases) for row in rows]


def _table(rows: list[dict[str, Any]], label: str) -> tuple[list[str], list[float], int]:
    """Markdown rows of one group of cases; the bound's savings (%) and how many cases a constant action won."""
    by: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        by.setdefault((r["case"], r["controller"]), []).append(r)
    cases = list(dict.fromkeys(r["case"] for r in rows))
    mean = lambda case, name, key: float(np.mean([r[key] for r in by[(case, name)]]))  # noqa: E731
    worst = lambda case, name, key: float(max(r[key] for r in by[(case, name)]))  # noqa: E731
    ratio = lambda case, name: mean(case, name, "objective") / mean(case, name, "reference")  # noqa: E731
    lines = [
        f"| {label} | rule score | constant score | bound score | rule objective / yardstick | bound objective / "
        "yardstick | bound saving | rule / bound cooling kWh | worst min > 27 °C rule / const / bound | "
        "> 32 °C rule / bound |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    savings, constant_wins = [], 0
    for case in cases:
        saving = 100.0 * (1.0 - mean(case, BOUND, "objective") / mean(case, RULE, "objective"))
        savings.append(saving)
        constant_wins += mean(case, CONSTANT, "score") > mean(case, RULE, "score")
        lines.append(
            f"| {case} | {mean(case, RULE, 'score'):.3f} | {mean(case, CONSTANT, 'score'):.3f} | "
            f"{mean(case, BOUND, 'score'):.3f} | {ratio(case, RULE):.3f} | {ratio(case, BOUND):.3f} | {saving:.1f} % | "
            f"{mean(case, RULE, 'cooling_kwh'):.0f} / {mean(case, BOUND, 'cooling_kwh'):.0f} | "
            f"{worst(case, RULE, 'worst_minutes_above_27'):.0f} / {worst(case, CONSTANT, 'worst_minutes_above_27'):.0f}"
            f" / {worst(case, BOUND, 'worst_minutes_above_27'):.0f} | "
            f"{worst(case, RULE, 'worst_minutes_above_32'):.0f} / {worst(case, BOUND, 'worst_minutes_above_32'):.0f} |")
    return lines, savings, constant_wins


def markdown(rows: list[dict[str, Any]], seeds: int) -> str:
    tasks = [r for r in rows if r["target"] != FAMILY]
    family = [r for r in rows if r["target"] == FAMILY]
    task_lines, task_savings, task_wins = _table(tasks, "task")
    family_lines, savings, family_wins = _table(family, "case")
    total = lambda name: sum(r["objective"] for r in family if r["controller"] == name)  # noqa: E731
    n_tasks, n_cases = len(task_savings), len(savings)
    head = (
        "# Plant v2 headroom: the clairvoyant bound against the tuned rule\n\n"
        f"Made by `dcops cooling-bound --seeds {seeds}` (evaluation seeds 0–{seeds - 1}; the rule was tuned per "
        "task and for the family on seeds 1000+ by `dcops tune-rule-v2`). Objective = cooling energy plus the "
        "server fan and leakage energy that warm inlets add (× the price on the cost-objective daily task; "
        "`dcops.cooling_env_v1`), shown over its weather-and-load yardstick. Every episode draws its zones' "
        "bypass and recirculation, which only the bound knows.\n\n"
        f"**Tasks: the bound saves {min(task_savings):.1f}–{max(task_savings):.1f} % of the tuned rule's "
        f"objective; the best of {N_CONSTANT} constant actions beats the rule's score on {task_wins} of {n_tasks} "
        "tasks.**\n\n" + "\n".join(task_lines) + "\n\n"
        "## The evaluation family (4 climates × January/July × no fault or a 2 h chiller trip, 24 h)\n\n"
        f"**Bound saving against the tuned rule: {np.mean(savings):.1f} % per case on average (smallest "
        f"{min(savings):.1f} %, largest {max(savings):.1f} %), {100.0 * (1.0 - total(BOUND) / total(RULE)):.1f} % "
        f"of the family's total objective.** The best of {N_CONSTANT} constant actions beats the tuned rule's score "
        f"in {family_wins} of {n_cases} cases.\n\n"
    )
    return head + "\n".join(family_lines) + "\n"


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seeds", type=int, default=5, help="evaluation seeds 0..N-1 per task and case")
    parser.add_argument("--workers", type=int, default=2, help="processes")
    parser.add_argument("--out", default="reports/cooling/v2_bound.md", help="markdown report ('' for none)")


def _run(args: argparse.Namespace) -> int:
    rows = run_bound(args.seeds, args.workers)
    print_and_write(markdown(rows, args.seeds), args.out)
    write_rows_beside(rows, args.out)
    return 0


COMMANDS = [
    Command("cooling-bound", "Plant v2 headroom: the clairvoyant bound, the tuned rule and the best constant action "
            "on every v1 cooling task and the v2 evaluation family (markdown, CSV)", _arguments, _run),
]
