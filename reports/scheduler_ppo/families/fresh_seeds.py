"""Out-of-sample checks of the public-information schedulers per family (README, *Scenario families and the skill
ladder* and *RL scheduler per family*), written to ``fresh_seeds.md`` beside this file:

1. on the 216 seeds of each family that no ladder, search, teacher data or checkpoint selection used (its
   validation range past the 84 seeds a family's RL training selects on: first ladder seed + 784 ... + 999),
   the paired score differences of ``searched`` and ``ppo`` with priority_threshold, and of ``ppo`` with
   ``searched``; ``ppo`` plays what the ladder's rung plays (the family's own weights where they ship,
   ``ppo_scheduler_<family>.npz``, else the matrix-trained ``ppo_scheduler.npz``), named in the table;
2. on 1000 seeds of every family (its teacher seeds, first ladder seed + 10,000 ...: the search never saw
   them), ``searched`` − priority_threshold, each playing through the structured view as the ladder does.

Run from the repository root: ``python reports/scheduler_ppo/families/fresh_seeds.py`` (about 4 min);
``--weights FAMILY=NPZ`` prints the first table's row of a trained network that does not ship instead."""

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

SELECTED_ON = 84
"""Validation seeds a family's RL training selects its checkpoint on (``--n-validation-seeds``, the default)."""


def family_scores(family: str, seeds: list[int], weights: str | None = None) -> dict[str, np.ndarray]:
    """Episode scores of priority_threshold, searched and ppo (the ladder's, or the ``weights`` file) on ``seeds``
    of ``family``."""
    env = dcops.parallel_env(scenario=family)
    ppo = partial(LearnedScheduler, family=family) if weights is None else partial(LearnedScheduler, weights=weights)
    makers = {"pt": PriorityThresholdScheduler, "searched": partial(searched_scheduler, family), "ppo": ppo}
    return {name: np.array([run_episode(make(), s, env=env)["score"] for s in seeds]) for name, make in makers.items()}


def cell(scores: dict[str, np.ndarray], a: str, b: str) -> str:
    return "{:+.4f} [{:+.4f}, {:+.4f}]".format(*t_interval(scores[a] - scores[b]))


def other_weights(pairs: list[str]) -> None:
    """Print the first table's row of each ``FAMILY=NPZ`` with that network as ``ppo`` (a trained run that does not
    ship, e.g. ``classic=runs/scheduler_ppo_classic/ppo_scheduler.npz``); ``fresh_seeds.md`` is left as it is."""
    import hashlib

    from dcops.training.scheduler.search import MAX_FAMILY_VALIDATION_SEEDS

    for pair in pairs:
        family, _, path = pair.partition("=")
        seeds = list(validation_seeds(family, MAX_FAMILY_VALIDATION_SEEDS)[SELECTED_ON:])
        scores = family_scores(family, seeds, weights=path)
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        print(f"| {family} | {seeds[0]}–{seeds[-1]} | `{path}` ({digest[:12]}) | {scores['pt'].mean():+.4f} | "
              f"{cell(scores, 'searched', 'pt')} | {cell(scores, 'ppo', 'pt')} | {cell(scores, 'ppo', 'searched')} |")


def main() -> None:
    from dcops.agents.schedulers.learned import family_policy, family_weights, family_weights_name
    from dcops.cluster.scenarios import SCENARIOS
    from dcops.training.scheduler.search import MAX_FAMILY_VALIDATION_SEEDS, teacher_seeds

    lines = ["# Public-information schedulers on fresh seeds", "", "Produced by "
             "`python reports/scheduler_ppo/families/fresh_seeds.py`.", "",
             "## The RL scheduler (the ladder's `ppo` rung) on seeds no training, search or selection used", "",
             "| family | seeds | ppo weights | priority_threshold | searched − PT [95 % CI] | ppo − PT | ppo − searched |",
             "|---|---|---|---|---|---|---|"]
    for family in SCENARIOS:
        file, digest = family_weights(family)
        if file == family_weights_name(family):  # the family's own run selected on the first of its seeds
            assert family_policy(family).metadata["config"]["n_validation_seeds"] == SELECTED_ON
        seeds = list(validation_seeds(family, MAX_FAMILY_VALIDATION_SEEDS)[SELECTED_ON:])
        scores = family_scores(family, seeds)
        lines.append(f"| {family} | {seeds[0]}–{seeds[-1]} | `{file}` ({digest[:12]}) | {scores['pt'].mean():+.4f} | "
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
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--weights", action="append", default=[], metavar="FAMILY=NPZ",
                        help="print the RL row of FAMILY played by NPZ instead (repeatable; writes no report)")
    args = parser.parse_args()
    if args.weights:
        other_weights(args.weights)
    else:
        main()
