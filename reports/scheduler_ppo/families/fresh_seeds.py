"""Out-of-sample checks of the public-information schedulers per family (README, *Scenario families and the skill
ladder* and *RL scheduler per family*), written to ``fresh_seeds.md`` beside this file:

1. on the 216 seeds of each six- or seven-team family that no ladder, search, teacher data or checkpoint
   selection used (its validation range past the seeds the training selected on, read from the shipped
   recipe: first ladder seed + 784 ... + 999), the paired score differences of ``searched`` and ``ppo`` (the
   family's weights) with priority_threshold, and of ``ppo`` with ``searched``;
2. on 1000 seeds of every family (its teacher seeds, first ladder seed + 10,000 ...: the search never saw
   them), ``searched`` − priority_threshold, each playing through the structured view as the ladder does.

Run from the repository root: ``python reports/scheduler_ppo/families/fresh_seeds.py`` (about 4 min)."""

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
    from dcops.agents.schedulers.learned import family_policy
    from dcops.cluster.scenarios import SCENARIOS
    from dcops.training.scheduler.search import MAX_FAMILY_VALIDATION_SEEDS, teacher_seeds

    lines = ["# Public-information schedulers on fresh seeds", "", "Produced by "
             "`python reports/scheduler_ppo/families/fresh_seeds.py`.", "",
             "## The family RL schedulers on the validation seeds their training did not select on", "",
             "| family | seeds | priority_threshold | searched − PT [95 % CI] | ppo − PT | ppo − searched |",
             "|---|---|---|---|---|---|"]
    for family in ("oversubscribed", "adversarial"):
        used = family_policy(family).metadata["config"]["n_validation_seeds"]
        seeds = list(validation_seeds(family, MAX_FAMILY_VALIDATION_SEEDS)[used:])
        scores = family_scores(family, seeds)
        lines.append(f"| {family} | {seeds[0]}–{seeds[-1]} | {scores['pt'].mean():+.4f} | "
                     f"{cell(scores, 'searched', 'pt')} | {cell(scores, 'ppo', 'pt')} | {cell(scores, 'ppo', 'searched')} |")
    lines += ["", "## The searched scheduler on 1000 seeds of each family", "",
              "| family | seeds | priority_threshold | searched − PT [95 % CI] |", "|---|---|---|---|"]
    for family in SCENARIOS:
        seeds = list(teacher_seeds(family, 1000))
        env = dcops.parallel_env(scenario=family)
        scores = {"pt": np.array([run_episode(PriorityThresholdScheduler(), s, env=env)["score"] for s in seeds]),
                  "searched": np.array([run_episode(searched_scheduler(family), s, env=env)["score"] for s in seeds])}
        lines.append(f"| {family} | {seeds[0]}–{seeds[-1]} | {scores['pt'].mean():+.4f} | "
                     f"{cell(scores, 'searched', 'pt')} |")
    (Path(__file__).parent / "fresh_seeds.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
