"""``dcops eval-cooling-v2``: a plant v2 learned controller beside the tuned rules, the PID and the clairvoyant bound.

For every registered v1 cooling task and every case of the v2 evaluation family, on evaluation seeds 0..N−1
(never used for training, tuning or checkpoint selection), these controllers play the same episodes:

- the learned controller (``--controller``), one set of weights for every task and case: ``ppo_v2``, the shipped
  plant v2 PPO controller (:class:`~dcops.agents.cooling.ppo_v2.PPOControllerV2`; the default), or
  ``imitation_v2``, the imitation of the observation-only planner
  (:class:`~dcops.agents.cooling.imitation_v2.ImitationControllerV2`);
- ``rule (task-tuned)``: :meth:`RuleV2Controller.tuned(task) <dcops.agents.cooling.rule_v2.RuleV2Controller.tuned>`
  (for a family case: the family-tuned rule);
- ``rule (family-tuned)``: the family-tuned rule on every task (the rule PPO's supervisor drives);
- ``pid (task-tuned)``: :meth:`PIDV2Controller.tuned(task) <dcops.agents.cooling.pid_v2.PIDV2Controller.tuned>`,
  per-zone supply-air reset on the reported inlet and fans on the CRAH ΔT over the task-tuned rule's plant side,
  gains from ``dcops tune-pid-v2`` (for a family case: the family's);
- ``rule (case-tuned)``: for a family case, the rule tuned for that case alone (``dcops tune-rule-v2 --target
  cases``): it knows its climate, season and fault in advance, so it is a ceiling for the rule's structure, not a
  controller anyone could deploy; for a v1 task, the task-tuned rule (a task is its own case: the same episodes,
  copied rather than replayed);
- ``clairvoyant bound``: read from ``reports/cooling/v2_bound.csv`` (``dcops cooling-bound``, same seeds).

Per task and case: score, objective over its yardstick, cooling energy (kWh), facility cost ($) and carbon (kg),
the worst zone's minutes above 27 and 32 °C (and in the CSV the share of zone-time above 27 °C, summarised over
the family's no-fault cases), and the largest rate of change of a true inlet (K/h, over one step;
ASHRAE's limit is 20 K/h), for the learned controller and the task-tuned rule; the PID's and the case-tuned rule's score and
objective in columns of their own, every controller's figures in the CSV; a summary table of each controller's
mean score and objective over the tasks and over the family. Writes ``reports/cooling/v2_ppo.md`` and
``v2_ppo.csv`` (``v2_imitation.*`` for the imitation controller).
"""

from __future__ import annotations

import argparse
import csv
import itertools
import math
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from dcops.command import Command, print_and_write, write_rows_beside

FAMILY = "eval_family_v1"
CONTROLLERS = ("ppo_v2", "rule (task-tuned)", "rule (family-tuned)", "pid (task-tuned)", "rule (case-tuned)")
LEARNED = {"ppo_v2": "PPO", "imitation_v2": "imitation"}
"""The learned controllers this report can put first (``--controller``), and their label in its tables."""
BOUND_CSV = Path(__file__).resolve().parents[1] / "reports" / "cooling" / "v2_bound.csv"


def play(env: Any, controller: Any, seed: int) -> dict[str, Any]:
    """One episode of a v1 cooling env (made with ``diagnostics=True``) under a v2 controller: its summary plus
    the largest step-to-step rate of change of a true inlet, K/h."""
    from dcops.agents.cooling.rule_v2 import controller_context_v2

    observation, info = env.reset(seed=seed)
    controller.reset(controller_context_v2(env))
    previous = np.asarray(info["inlet_c"], dtype=np.float64)
    per_hour = 3600.0 / env.unwrapped.task.dt_s
    max_rate, done = 0.0, False
    while not done:
        observation, _, done, _, info = env.step(controller.act(observation))
        inlet = np.asarray(info["inlet_c"], dtype=np.float64)
        max_rate = max(max_rate, float(np.max(np.abs(inlet - previous))) * per_hour)
        previous = inlet
    s = info["summary"]
    zone_minutes = len(s["minutes_above_27"]) * env.unwrapped.task.n_steps * env.unwrapped.task.dt_s / 60.0
    return {"score": float(info["score"]), "objective_ratio": s["objective"] / s["reference"],
            "zone_time_above_27_pct": 100.0 * float(np.sum(s["minutes_above_27"])) / zone_minutes,
            "cooling_kwh": s["cooling_kwh"], "cost_usd": s["cost_usd"], "carbon_kg": s["carbon_kg"],
            "worst_minutes_above_27": float(max(s["minutes_above_27"])),
            "worst_minutes_above_32": float(max(s["minutes_above_32"])), "max_inlet_rate_k_per_h": max_rate}


def _learned(name: str, weights: str | None) -> Any:
    """The learned controller ``name`` (:data:`LEARNED`) with ``weights`` (None: the shipped ones)."""
    from dcops.agents.cooling.imitation_v2 import ImitationControllerV2
    from dcops.agents.cooling.ppo_v2 import PPOControllerV2

    kind = {"ppo_v2": PPOControllerV2, "imitation_v2": ImitationControllerV2}[name]
    return kind.from_file(weights) if weights else kind()


def _rows(job: tuple[str, tuple[str, ...], int, str | None, float | None, str]) -> list[dict[str, Any]]:
    from dcops.agents.cooling.pid_v2 import PIDV2Controller
    from dcops.agents.cooling.rule_v2 import RuleV2Controller
    from dcops.cooling_env_v1 import TASK_SPECS, CoolingEnvV1, evaluation_case_spec

    target, case, seed, weights, shield, learned_name = job
    spec = evaluation_case_spec(*case) if target == FAMILY else TASK_SPECS[target]()
    env = CoolingEnvV1(spec, diagnostics=True)
    learned = _learned(learned_name, weights)
    if shield is not None:
        learned.shield_inlet_c = shield
    controllers = {
        learned_name: learned,
        "rule (task-tuned)": RuleV2Controller.tuned(target),
        "rule (family-tuned)": RuleV2Controller.tuned(FAMILY),
        "pid (task-tuned)": PIDV2Controller.tuned(target),
    }
    name = "/".join(case) if target == FAMILY else target
    if target == FAMILY:  # the case's own entry of `dcops tune-rule-v2 --target cases`
        controllers["rule (case-tuned)"] = RuleV2Controller.tuned(f"{FAMILY}/{name}")
    results = {c: play(env, controller, seed) for c, controller in controllers.items()}
    results.setdefault("rule (case-tuned)", results["rule (task-tuned)"])  # a v1 task is its own case
    return [{"target": target, "case": name, "seed": seed, "controller": c, **results[c]}
            for c in (learned_name, *CONTROLLERS[1:])]


def run(seeds: int, workers: int, weights: str | None = None, tasks: list[str] | None = None,
        cases: list[tuple[str, str, str]] | None = None, shield: float | None = None,
        learned: str = "ppo_v2") -> list[dict[str, Any]]:
    """Every controller on seeds 0..``seeds``−1 of ``tasks`` (default: every registered v1 task) and ``cases``
    (default: every case of the family, as (site, season, fault)); ``learned``: which learned controller plays
    first (:data:`LEARNED`); ``shield``: its shield threshold, °C (None: its default; ``inf``: unshielded)."""
    from dcops.cooling_env_v1 import EVAL_SITES, FAULT_CASES, SEASONS, TASK_SPECS

    tasks = list(TASK_SPECS) if tasks is None else tasks
    cases = list(itertools.product(EVAL_SITES, SEASONS, FAULT_CASES)) if cases is None else cases
    jobs = [(task, (), seed, weights, shield, learned) for task in tasks for seed in range(seeds)]
    jobs += [(FAMILY, tuple(case), seed, weights, shield, learned) for case in cases for seed in range(seeds)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return [row for rows in pool.map(_rows, jobs) for row in rows]


def bound_rows(path: Path = BOUND_CSV) -> dict[tuple[str, int], dict[str, float]]:
    """The clairvoyant bound's episodes of ``dcops cooling-bound`` by (case, seed)."""
    if not path.is_file():
        return {}
    with path.open() as handle:
        return {(r["case"], int(r["seed"])): {"score": float(r["score"]),
                                               "objective_ratio": float(r["objective"]) / float(r["reference"])}
                for r in csv.DictReader(handle) if r["controller"] == "clairvoyant bound"}


def markdown(rows: list[dict[str, Any]], seeds: int, weights_note: str, learned: str = "ppo_v2") -> str:
    bound = bound_rows()
    rule, family, pid, case_rule = CONTROLLERS[1:]
    ppo, L = learned, LEARNED[learned]
    by: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        by.setdefault((r["case"], r["controller"]), []).append(r)
    mean = lambda case, c, key: float(np.mean([r[key] for r in by[(case, c)]]))  # noqa: E731
    worst = lambda case, c, key: float(max(r[key] for r in by[(case, c)]))  # noqa: E731

    def bound_mean(case: str, key: str) -> float | None:
        values = [bound[(case, s)][key] for s in range(seeds) if (case, s) in bound]
        return float(np.mean(values)) if len(values) == seeds else None

    def gap_closed(case: str) -> str:
        """Share of the rule's objective gap to the bound that the learned controller closes (mean ratios, same seeds), %."""
        b = bound_mean(case, "objective_ratio")
        rule_ratio = mean(case, rule, "objective_ratio")
        if b is None or rule_ratio - b <= 0.0:
            return "–"
        return f"{100.0 * (rule_ratio - mean(case, ppo, 'objective_ratio')) / (rule_ratio - b):.1f} %"

    def saving(case: str, against: str) -> float:
        """The learned controller's objective below ``against``'s (mean ratios, same seeds), %."""
        return 100.0 * (1.0 - mean(case, ppo, "objective_ratio") / mean(case, against, "objective_ratio"))

    def table(cases: list[str], label: str) -> tuple[list[str], list[float], int, int]:
        lines = [f"| {label} | {L} score | rule score | family rule score | PID score | case-tuned rule score | "
                 f"bound score | {L} / rule objective (over yardstick) | PID / case-tuned rule objective | "
                 f"{L} saving vs rule | {L} / rule cooling kWh | {L} / rule facility cost $ | "
                 f"{L} / rule facility carbon kg | worst min > 27 °C {L} / rule | > 32 °C {L} / rule | "
                 f"max inlet K/h {L} / rule | gap to bound closed |",
                 "|---" * 17 + "|"]
        savings, score_wins, safe = [], 0, 0
        for case in cases:
            savings.append(saving(case, rule))
            score_wins += mean(case, ppo, "score") >= mean(case, rule, "score")
            safe += worst(case, ppo, "worst_minutes_above_32") == 0.0
            b = bound_mean(case, "score")
            lines.append(
                f"| {case} | {mean(case, ppo, 'score'):.3f} | {mean(case, rule, 'score'):.3f} | "
                f"{mean(case, family, 'score'):.3f} | {mean(case, pid, 'score'):.3f} | "
                f"{mean(case, case_rule, 'score'):.3f} | {'–' if b is None else f'{b:.3f}'} | "
                f"{mean(case, ppo, 'objective_ratio'):.3f} / {mean(case, rule, 'objective_ratio'):.3f} | "
                f"{mean(case, pid, 'objective_ratio'):.3f} / {mean(case, case_rule, 'objective_ratio'):.3f} | "
                f"{savings[-1]:.1f} % | {mean(case, ppo, 'cooling_kwh'):.0f} / {mean(case, rule, 'cooling_kwh'):.0f} | "
                f"{mean(case, ppo, 'cost_usd'):.0f} / {mean(case, rule, 'cost_usd'):.0f} | "
                f"{mean(case, ppo, 'carbon_kg'):.0f} / {mean(case, rule, 'carbon_kg'):.0f} | "
                f"{worst(case, ppo, 'worst_minutes_above_27'):.0f} / {worst(case, rule, 'worst_minutes_above_27'):.0f} "
                f"| {worst(case, ppo, 'worst_minutes_above_32'):.0f} / {worst(case, rule, 'worst_minutes_above_32'):.0f}"
                f" | {worst(case, ppo, 'max_inlet_rate_k_per_h'):.1f} / "
                f"{worst(case, rule, 'max_inlet_rate_k_per_h'):.1f} | {gap_closed(case)} |")
        return lines, savings, score_wins, safe

    tasks = list(dict.fromkeys(r["case"] for r in rows if r["target"] != FAMILY))
    cases = list(dict.fromkeys(r["case"] for r in rows if r["target"] == FAMILY))
    task_lines, task_savings, task_wins, task_safe = table(tasks, "task")
    case_lines, case_savings, case_wins, case_safe = table(cases, "case")
    case_rule_savings = [saving(case, case_rule) for case in cases]
    case_rule_below = sum(mean(case, case_rule, "objective_ratio") < mean(case, family, "objective_ratio")
                          for case in cases)
    family_total = lambda c: sum(r["objective_ratio"] for r in rows if r["target"] == FAMILY and r["controller"] == c)  # noqa: E731

    def no_fault_above_27(controller: str) -> float:
        """Zone-time above 27 °C over the family's no-fault episodes, % (episodes are equally long)."""
        values = [r["zone_time_above_27_pct"] for r in rows
                  if r["target"] == FAMILY and r["controller"] == controller and r["case"].endswith("/normal")]
        return float(np.mean(values)) if values else math.nan

    def summary_cell(group: list[str], controller: str | None, key: str) -> str:
        """The mean of ``key`` over ``group``'s cases (each the mean of its seeds); the bound's where it has all."""
        if controller is None:
            values = [bound_mean(case, key) for case in group]
            return "–" if not group or None in values else f"{np.mean(values):.3f}"
        return f"{np.mean([mean(case, controller, key) for case in group]):.3f}" if group else "–"

    labels = {ppo: f"{L} (one set of weights)", rule: "rule (task-tuned; on the family: family-tuned)",
              family: "rule (family-tuned)", pid: "PID (task-tuned; on the family: family-tuned)",
              case_rule: "rule (case-tuned: a ceiling, not deployable)"}
    summary = ["| controller | tasks: mean score | tasks: mean objective ratio | family: mean score | "
               "family: mean objective ratio |", "|---|---|---|---|---|"]
    for controller, label in [*labels.items(), (None, "clairvoyant bound")]:
        summary.append(f"| {label} | {summary_cell(tasks, controller, 'score')} | "
                       f"{summary_cell(tasks, controller, 'objective_ratio')} | "
                       f"{summary_cell(cases, controller, 'score')} | "
                       f"{summary_cell(cases, controller, 'objective_ratio')} |")
    return (
        f"# The plant v2 {L} cooling controller against the tuned rules, the PID and the bound\n\n"
        f"Made by `dcops eval-cooling-v2{'' if learned == 'ppo_v2' else ' --controller ' + learned} --seeds {seeds}` (evaluation seeds 0–{seeds - 1}; {weights_note}). One "
        "set of weights for every task and case. Objective = the task's own (cooling energy plus the server power "
        "warm inlets add; × the price on the cost task), over its weather-and-load yardstick; the bound's scores "
        "from `dcops cooling-bound` on the same seeds. The PID: per-zone supply-air reset on the reported inlet and "
        "fans holding the CRAH ΔT, with anti-windup, over the tuned rule's plant side (gains by `dcops "
        "tune-pid-v2` on seeds 1000+). The case-tuned rule: the rule tuned for each case of the family alone "
        "(`dcops tune-rule-v2 --target cases`, seeds 1000–1001); it knows its climate, season and fault in advance, "
        "so it is a ceiling for the rule's structure, not a controller anyone could deploy. A v1 task is its own "
        "case: there the case-tuned rule is the task-tuned rule.\n\n"
        "Means over the tasks and over the family's cases (each the mean of its seeds):\n\n"
        + "\n".join(summary) + "\n\n"
        f"**Tasks: {L}'s score is at least the task-tuned rule's on {task_wins} of {len(tasks)}; its objective is "
        f"{min(task_savings):+.1f} … {max(task_savings):+.1f} % against it (positive: {L} spends less); no minute "
        f"above 32 °C on {task_safe} of {len(tasks)}.**\n\n" + "\n".join(task_lines) + "\n\n"
        "## The evaluation family\n\n"
        f"**{L} saves {np.mean(case_savings):.1f} % of the family-tuned rule's objective per case on average "
        f"({min(case_savings):+.1f} … {max(case_savings):+.1f} %), "
        f"{100.0 * (1.0 - family_total(ppo) / family_total(rule)):.1f} % of the summed ratios; "
        f"its score is at least the rule's in {case_wins} of {len(cases)} cases; no minute above 32 °C in "
        f"{case_safe}; {no_fault_above_27(ppo):.2f} % of zone-time above 27 °C in the no-fault cases (the rule "
        f"{no_fault_above_27(rule):.2f} %). Against the case-tuned rule (a ceiling: it knows its case) {L} saves "
        f"{np.mean(case_rule_savings):.1f} % per case on average ({min(case_rule_savings):+.1f} … "
        f"{max(case_rule_savings):+.1f} %), {100.0 * (1.0 - family_total(ppo) / family_total(case_rule)):.1f} % of "
        f"the summed ratios; the case-tuned rule's own objective is below the family-tuned rule's in "
        f"{case_rule_below} of {len(cases)} cases (tuned on two seeds per case, it is no strict ceiling on other "
        "seeds).**\n\n" + "\n".join(case_lines) + "\n"
    )


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seeds", type=int, default=5, help="evaluation seeds 0..N-1 per task and case")
    parser.add_argument("--workers", type=int, default=2, help="processes")
    parser.add_argument("--controller", choices=tuple(LEARNED), default="ppo_v2",
                        help="the learned controller to evaluate (ppo_v2: `dcops train-cooling-v2`; imitation_v2: "
                        "`dcops train-cooling-imitation`)")
    parser.add_argument("--weights", default=None, help="its .npz (default: the shipped)")
    parser.add_argument("--shield", type=float, default=None,
                        help="its shield threshold, °C ('inf': none; default: the shipped one)")
    parser.add_argument("--out", default=None,
                        help="markdown report ('' for none; default reports/cooling/v2_ppo.md, or v2_imitation.md)")


def _run(args: argparse.Namespace) -> int:
    if args.shield is not None and math.isnan(args.shield):
        raise SystemExit("--shield: a temperature in °C or 'inf' (no shield), not nan")
    rows = run(args.seeds, args.workers, args.weights, shield=args.shield, learned=args.controller)
    shipped = {"ppo_v2": "ppo_cooling_v2", "imitation_v2": "imitation_v2"}[args.controller]
    note = f"weights {args.weights}" if args.weights else f"the shipped weights, agents/cooling/weights/{shipped}"
    if args.shield is not None:
        note += f", shield at {args.shield} °C"
    out = args.out if args.out is not None else (
        "reports/cooling/v2_ppo.md" if args.controller == "ppo_v2" else "reports/cooling/v2_imitation.md")
    print_and_write(markdown(rows, args.seeds, note, args.controller), out)
    write_rows_beside(rows, out)
    return 0


COMMANDS = [
    Command("eval-cooling-v2", "A plant v2 learned cooling controller (PPO or imitation) against the tuned rules and the clairvoyant "
            "bound on every v1 task and the v2 family (markdown, CSV)", _arguments, _run),
]
