"""``dcops cooling-bound-knowledge``: how much of plant v2's headroom needs the hidden truth.

The clairvoyant bound (``dcops.evaluation.cooling_bound``) saves about 16 % of the family rule's objective on the
v2 evaluation family, knowing what no controller knows: each zone's drawn bypass and recirculation, the true
state, and the load, weather and faults to come. This command replays the family with the same planner and its
truths withdrawn (:data:`~dcops.evaluation.cooling_bound.KNOWLEDGE_LADDER`): on the nameplate plant, on a plant
whose airflow is fitted online to the inlet readings, and finally on the observation alone (identified plant,
sensed state, the present held over the horizon: a model-predictive operator). Beside them the family's tuned
rule and the shipped PPO controller play the same episodes.

Reported per rung: each case's saving against the rule (the objective, ``dcops.cooling_env_v1``), its share of
the bound's saving, the cases where the score is at least the rule's, and the zone-time above 27 °C outside the
fault cases (the learned-cooling issue's target is at most 1 %) and above 32 °C anywhere. Writes
``reports/cooling/v2_bound_knowledge.md`` and ``.csv``.
"""

from __future__ import annotations

import argparse
import itertools
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np

from dcops.command import Command, print_and_write, write_rows_beside

RULE, PPO = "rule_v2 (family-tuned)", "ppo_v2 (shipped)"


def _case_rows(job: tuple[tuple[str, str, str], int]) -> list[dict[str, Any]]:
    """Every controller on one family case and seed."""
    from dcops.agents.cooling.ppo_v2 import PPOControllerV2
    from dcops.agents.cooling.rule_v2 import RuleV2Controller, run_controller_v2
    from dcops.cooling_env_v1 import CoolingEnvV1, evaluation_case_spec
    from dcops.evaluation.cooling_bound import KNOWLEDGE_LADDER, clairvoyant_episode

    case, seed = job
    env = CoolingEnvV1(evaluation_case_spec(*case))
    results = [(RULE, run_controller_v2(env, RuleV2Controller.tuned("eval_family_v1"), seed)),
               (PPO, run_controller_v2(env, PPOControllerV2(), seed))]
    results += [(name, clairvoyant_episode(env, seed, knowledge=knowledge))
                for name, knowledge in KNOWLEDGE_LADDER.items()]
    zones = env.task.plant.n_zones
    return [{"case": "/".join(case), "fault": case[2], "seed": seed, "controller": name, "score": r["score"],
             "objective": r["objective"], "reference": r["reference"], "cooling_kwh": r["cooling_kwh"],
             "zone_minutes_above_27": float(np.sum(r["minutes_above_27"])),
             "zone_minutes": float(zones * env.task.n_steps * env.task.dt_s / 60.0),
             "worst_minutes_above_27": float(max(r["minutes_above_27"])),
             "worst_minutes_above_32": float(max(r["minutes_above_32"]))} for name, r in results]


def run_ladder(seeds: int, workers: int) -> list[dict[str, Any]]:
    from dcops.cooling_env_v1 import EVAL_SITES, FAULT_CASES, SEASONS

    jobs = [(case, seed) for case in itertools.product(EVAL_SITES, SEASONS, FAULT_CASES) for seed in range(seeds)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return [row for rows in pool.map(_case_rows, jobs) for row in rows]


def summarise(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per controller: mean per-case saving against the rule (%), its smallest and largest, the share of the
    bound's saving (mean over cases of the saving over the bound's), cases with a score at least the rule's, the
    zone-time above 27 °C outside fault cases (%), and the worst zone-minutes above 32 °C."""
    from dcops.evaluation.cooling_bound import KNOWLEDGE_LADDER

    bound = next(iter(KNOWLEDGE_LADDER))
    cases = list(dict.fromkeys(r["case"] for r in rows))
    by: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        by.setdefault((r["case"], r["controller"]), []).append(r)
    mean = lambda case, name, key: float(np.mean([r[key] for r in by[(case, name)]]))  # noqa: E731
    out: dict[str, dict[str, float]] = {}
    for name in dict.fromkeys(r["controller"] for r in rows):
        savings = np.array([1.0 - mean(c, name, "objective") / mean(c, RULE, "objective") for c in cases])
        bound_savings = np.array([1.0 - mean(c, bound, "objective") / mean(c, RULE, "objective") for c in cases])
        normal = [r for r in rows if r["controller"] == name and r["fault"] == "normal"]
        out[name] = {
            "saving_pct": 100.0 * float(np.mean(savings)), "saving_min_pct": 100.0 * float(savings.min()),
            "saving_max_pct": 100.0 * float(savings.max()),
            "share_of_bound_pct": 100.0 * float(np.mean(savings / bound_savings)),
            "cases_at_least_rule": float(sum(mean(c, name, "score") >= mean(c, RULE, "score") for c in cases)),
            "cases": float(len(cases)),
            "above_27_normal_pct": 100.0 * sum(r["zone_minutes_above_27"] for r in normal)
            / sum(r["zone_minutes"] for r in normal),
            "worst_minutes_above_32": max(r["worst_minutes_above_32"] for r in rows if r["controller"] == name),
            "score": float(np.mean([r["score"] for r in rows if r["controller"] == name])),
        }
    return out


def markdown(rows: list[dict[str, Any]], seeds: int) -> str:
    summary = summarise(rows)
    cases = list(dict.fromkeys(r["case"] for r in rows))
    names = list(summary)
    lines = ["| controller | mean score | saving vs rule per case (min … max) | share of the bound's saving | "
             "cases scoring ≥ rule | zone-time > 27 °C, no-fault cases | worst zone-min > 32 °C |",
             "|---|---|---|---|---|---|---|"]
    for name in names:
        s = summary[name]
        lines.append(f"| {name} | {s['score']:.3f} | {s['saving_pct']:+.1f} % ({s['saving_min_pct']:+.1f} … "
                     f"{s['saving_max_pct']:+.1f}) | {s['share_of_bound_pct']:.0f} % | "
                     f"{s['cases_at_least_rule']:.0f} of {s['cases']:.0f} | {s['above_27_normal_pct']:.2f} % | "
                     f"{s['worst_minutes_above_32']:.0f} |")
    by: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        by.setdefault((r["case"], r["controller"]), []).append(r)
    mean = lambda case, name, key: float(np.mean([r[key] for r in by[(case, name)]]))  # noqa: E731
    case_lines = ["| case | " + " | ".join(f"{n}: score, saving" for n in names) + " |",
                  "|---|" + "---|" * len(names)]
    for case in cases:
        cells = []
        for name in names:
            saving = 100.0 * (1.0 - mean(case, name, "objective") / mean(case, RULE, "objective"))
            cells.append(f"{mean(case, name, 'score'):.3f}, {saving:+.1f} %")
        case_lines.append(f"| {case} | " + " | ".join(cells) + " |")
    operator = summary[names[-1]]
    head = (
        "# Plant v2 headroom without the hidden truth\n\n"
        f"Made by `dcops cooling-bound-knowledge --seeds {seeds}` (evaluation seeds 0–{seeds - 1}, the v2 "
        "evaluation family: 4 climates × January/July × no fault or a 2 h chiller trip, 24 h). The clairvoyant "
        "bound's planner (`dcops.evaluation.cooling_bound`) with its truths withdrawn: the nameplate plant; a "
        "plant whose zones' bypass and recirculation are fitted online to the inlet readings "
        "(`dcops.agents.cooling.airflow_identification`); and the observation alone (that identified plant, the "
        "sensed state, the present held over the horizon). Savings are of the objective (cooling energy plus "
        "the server fan and leakage energy warm inlets add) against the family-tuned rule, per case, averaged "
        "over cases.\n\n"
        f"**Planning on the observation alone saves {operator['saving_pct']:.1f} % per case "
        f"({operator['share_of_bound_pct']:.0f} % of the clairvoyant bound's saving), scores at least the rule's "
        f"in {operator['cases_at_least_rule']:.0f} of {operator['cases']:.0f} cases, and runs "
        f"{operator['above_27_normal_pct']:.2f} % of zone-time above 27 °C outside the fault cases; the shipped "
        f"PPO saves {summary[PPO]['saving_pct']:+.1f} %.**\n\n"
    )
    return head + "\n".join(lines) + "\n\n## Per case (mean over seeds)\n\n" + "\n".join(case_lines) + "\n"


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seeds", type=int, default=5, help="evaluation seeds 0..N-1 per case")
    parser.add_argument("--workers", type=int, default=2, help="processes")
    parser.add_argument("--out", default="reports/cooling/v2_bound_knowledge.md", help="markdown report ('' for none)")


def _run(args: argparse.Namespace) -> int:
    rows = run_ladder(args.seeds, args.workers)
    print_and_write(markdown(rows, args.seeds), args.out)
    write_rows_beside(rows, args.out)
    return 0


COMMANDS = [
    Command("cooling-bound-knowledge", "Plant v2 headroom without the hidden truth: the clairvoyant bound's planner "
            "on the nameplate, on an airflow identified online, and on the observation alone, beside the rule and "
            "the shipped PPO on the v2 evaluation family (markdown, CSV)", _arguments, _run),
]
