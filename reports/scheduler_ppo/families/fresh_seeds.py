"""Out-of-sample check of the family RL schedulers (README, *RL scheduler per family*): on 216 seeds of each family
that no ladder, search, teacher data or checkpoint selection used (its validation range past the 84 the training
selected on: first ladder seed + 784 ... + 999), the paired score differences of ``searched`` and ``ppo`` (the
family's weights) with priority_threshold, and of ``ppo`` with ``searched``.

Run from the repository root: ``python reports/scheduler_ppo/families/fresh_seeds.py`` (about 2 min); writes
``fresh_seeds.md`` beside this file."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np

import dcops
from dcops.agents.schedulers import LearnedScheduler, PriorityThresholdScheduler
from dcops.agents.schedulers.parametric import searched_scheduler
from dcops.evaluation.play import run_episode
from dcops.intervals import t_interval
from dcops.training.scheduler.search import validation_seeds


def family_scores(family: str, seeds: list[int]) -> dict[str, np.ndarray]:
    """Episode scores of priority_threshold, searched and the family's ppo on ``seeds`` of ``family``."""
    env = dcops.parallel_env(scenario=family)
    makers = {"pt": PriorityThresholdScheduler, "searched": partial(searched_scheduler, family),
              "ppo": partial(LearnedScheduler, family=family)}
    return {name: np.array([run_episode(make(), s, env=env)["score"] for s in seeds]) for name, make in makers.items()}


def cell(scores: dict[str, np.ndarray], a: str, b: str) -> str:
    return "{:+.4f} [{:+.4f}, {:+.4f}]".format(*t_interval(scores[a] - scores[b]))


def main() -> None:
    lines = ["# Family RL schedulers on fresh seeds", "", "Produced by "
             "`python reports/scheduler_ppo/families/fresh_seeds.py`.", "",
             "| family | seeds | priority_threshold | searched − PT [95 % CI] | ppo − PT | ppo − searched |",
             "|---|---|---|---|---|---|"]
    for family in ("oversubscribed", "adversarial"):
        seeds = list(validation_seeds(family, 300)[84:])
        scores = family_scores(family, seeds)
        lines.append(f"| {family} | {seeds[0]}–{seeds[-1]} | {scores['pt'].mean():+.4f} | "
                     f"{cell(scores, 'searched', 'pt')} | {cell(scores, 'ppo', 'pt')} | {cell(scores, 'ppo', 'searched')} |")
    (Path(__file__).parent / "fresh_seeds.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
