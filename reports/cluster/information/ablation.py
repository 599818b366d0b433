"""Which stated field hides the headroom? The rolling planner told the truth of one field at a time.

On the 40 ladder seeds of the two families with the most headroom, plays ``priority_threshold``, the searched
scheduler, the rolling planner on the stated fields (``dcops.agents.schedulers.planner``) and the evaluator-only
``PresentTruthPlanner`` (``dcops.evaluation.truth_planner``) told the truth of the submitted requests' priority,
deadline, carbon flexibility or runtime alone, and of all four, and writes ``ablation.md`` beside this file:
each one's paired difference with ``priority_threshold`` (95 % t-interval over seeds). No honest twins (the
ladder has them). Run from the repository root::

    python reports/cluster/information/ablation.py [WORKERS]   # 2 workers by default; 1 took 35 min here, shared
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

FAMILIES = ("oversubscribed", "adversarial")
TOLD = (("priority",), ("deadline",), ("flexibility",), ("runtime",), ("priority", "deadline", "flexibility",
                                                                        "runtime"))
ROWS = ("searched", "rolling_planner", *("told " + "+".join(f) for f in TOLD))


def play(task: tuple[str, int]) -> dict[str, float]:
    from dcops.agents.schedulers import PriorityThresholdScheduler
    from dcops.agents.schedulers.parametric import searched_scheduler
    from dcops.agents.schedulers.planner import RollingPlanner
    from dcops.evaluation.ladder import family_env
    from dcops.evaluation.play import run_episode
    from dcops.evaluation.truth_planner import PresentTruthPlanner

    family, seed = task
    env = family_env(family)
    scores = {"priority_threshold": run_episode(PriorityThresholdScheduler(), seed, env=env)["score"],
              "searched": run_episode(searched_scheduler(family), seed, env=env)["score"],
              "rolling_planner": run_episode(RollingPlanner(), seed, env=env)["score"]}
    for fields in TOLD:
        scores["told " + "+".join(fields)] = run_episode(PresentTruthPlanner(env, fields=fields), seed,
                                                          env=env)["score"]
    return scores


def main(workers: int = 2) -> None:
    from dcops.cluster.scenarios import scenario
    from dcops.evaluation.play import ordered_map
    from dcops.intervals import t_interval

    tasks = [(family, seed) for family in FAMILIES for seed in scenario(family).seeds]
    results = {family: [] for family in FAMILIES}
    for (family, _), scores in ordered_map(play, tasks, workers):
        results[family].append(scores)
    lines = ["# Which stated field hides the headroom", "",
             "Produced by `python reports/cluster/information/ablation.py` (its docstring says what it plays). "
             "Δ = paired difference of episode score with `priority_threshold` over the family's 40 ladder seeds "
             "(95 % t-interval). `told X` = the rolling planner told the truth of field X of the requests already "
             "submitted (never of later arrivals).", ""]
    for family, rows in results.items():
        base = np.array([r["priority_threshold"] for r in rows])
        lines += [f"## `{family}` ({len(rows)} seeds; priority_threshold {base.mean():+.3f})", "",
                  "| scheduler | score | Δ vs priority_threshold [95 % CI] |", "|---|---|---|"]
        for name in ROWS:
            got = np.array([r[name] for r in rows])
            mean, low, high = t_interval(got - base)
            lines.append(f"| {name} | {got.mean():+.3f} | {mean:+.3f} [{low:+.3f}, {high:+.3f}] |")
        lines.append("")
    (Path(__file__).resolve().parent / "ablation.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
