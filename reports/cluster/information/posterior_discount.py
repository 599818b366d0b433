"""How hard should the rolling planner discount a suspected team? Its ``posterior_levels`` on search seeds.

Plays ``priority_threshold`` and the rolling planner (``dcops.agents.schedulers.planner``) with a sure gamer's
stated priority discounted by 0, 0.5 (the default), 1, 2 and 3 levels, on the first 20 search seeds of
``oversubscribed`` (``dcops.training.scheduler.search.search_seeds``: disjoint from the ladder's), and writes
``posterior_discount.md`` beside this file. Run from the repository root::

    python reports/cluster/information/posterior_discount.py        # about 5 min on two workers
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

FAMILY = "oversubscribed"
LEVELS = (0.0, 0.5, 1.0, 2.0, 3.0)


def play(seed: int) -> dict[str, float]:
    from dcops.agents.schedulers import PriorityThresholdScheduler
    from dcops.agents.schedulers.planner import RollingPlanner
    from dcops.evaluation.ladder import family_env
    from dcops.evaluation.play import run_episode

    env = family_env(FAMILY)
    scores = {"priority_threshold": run_episode(PriorityThresholdScheduler(), seed, env=env)["score"]}
    for levels in LEVELS:
        scores[f"{levels:g}"] = run_episode(RollingPlanner(posterior_levels=levels), seed, env=env)["score"]
    return scores


def main(workers: int = 2) -> None:
    from dcops.evaluation.play import ordered_map
    from dcops.intervals import t_interval
    from dcops.training.scheduler.search import search_seeds

    seeds = search_seeds(FAMILY, 20)
    rows = [scores for _, scores in ordered_map(play, seeds, workers)]
    base = np.array([r["priority_threshold"] for r in rows])
    lines = ["# The rolling planner's posterior discount", "",
             "Produced by `python reports/cluster/information/posterior_discount.py` (its docstring says what it "
             f"plays): {FAMILY}, search seeds {seeds[0]}–{seeds[-1]}; Δ = paired difference of episode score with "
             f"`priority_threshold` ({base.mean():+.3f}), 95 % t-interval.", "",
             "| levels discounted for a sure gamer | score | Δ vs priority_threshold [95 % CI] |", "|---|---|---|"]
    for levels in LEVELS:
        got = np.array([r[f"{levels:g}"] for r in rows])
        mean, low, high = t_interval(got - base)
        lines.append(f"| {levels:g} | {got.mean():+.3f} | {mean:+.3f} [{low:+.3f}, {high:+.3f}] |")
    (Path(__file__).resolve().parent / "posterior_discount.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
