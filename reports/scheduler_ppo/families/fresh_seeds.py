"""Out-of-sample checks of the public-information schedulers per family (README, *Scenario families and the skill
ladder* and *RL scheduler per family*), written to ``fresh_seeds.md`` beside this file:

1. on the 216 seeds of each family past the 84 a family's RL training selects its checkpoint on (first ladder
   seed + 784 ... + 999: no ladder, search, teacher data or checkpoint selection of a shipped scheduler used
   them; the exceptions, choices between shipped and unshipped variants, are listed under the table), the paired
   score differences of ``searched`` and ``ppo`` with priority_threshold, and of ``ppo`` with ``searched``;
   ``ppo`` plays what the ladder's rung plays (the family's own weights where they ship,
   ``ppo_scheduler_<family>.npz``, else the matrix-trained ``ppo_scheduler.npz``), named in the table;
2. on 1000 seeds of every family (its teacher seeds, first ladder seed + 10,000 ...: the search never saw
   them), ``searched`` − priority_threshold, each playing through the structured view as the ladder does.

Run from the repository root: ``python reports/scheduler_ppo/families/fresh_seeds.py`` (about 3 min);
``--weights FAMILY=NPZ`` prints the first table's row of a trained network that does not ship instead, with one
more column, its paired difference with the network the ladder plays there (and a header, so the output can be
kept beside the network); it writes no report."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np

import dcops
from dcops.agents.schedulers import LearnedScheduler, PriorityThresholdScheduler
from dcops.agents.schedulers.parametric import searched_scheduler
from dcops.evaluation.play import run_episode
from dcops.intervals import t_interval
from dcops.training.scheduler.search import MAX_FAMILY_VALIDATION_SEEDS, teacher_seeds, validation_seeds

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


TABLE_HEAD = ["| family | seeds | ppo weights | priority_threshold | searched − PT [95 % CI] | ppo − PT | ppo − searched |",
              "|---|---|---|---|---|---|---|"]
REUSED = ["Seeds of the first table that chose between a shipped scheduler and a variant that does not ship: "
          "oversubscribed 2784–2899 validated the 128-seed search ([reports/cluster/search_seeds128]"
          "(../../cluster/search_seeds128/README.md)); classic 784–999 and chiller_fault 3784–3999 showed the RL "
          "networks trained on those families no better than the matrix's, which the ladder plays there "
          "([classic/](classic/), [chiller_fault/](chiller_fault/))."]


def fresh_row(family: str, weights: str | None = None) -> str:
    """The first table's row of ``family``: ``ppo`` is the ladder's network, or the ``weights`` file."""
    import hashlib

    from dcops.agents.schedulers.learned import SlotPolicy, family_policy, family_weights, family_weights_name
    from dcops.cluster.scenarios import scenario

    try:
        scenario(family)  # an unknown family is refused before anything is played
    except ValueError as error:
        raise SystemExit(f"{family}: {error}") from None
    if weights is None:
        name, digest = family_weights(family)
        label, recipe = name, None
        if name == family_weights_name(family):  # the family's own run selected on the first of its seeds
            recipe = family_policy(family).metadata
    else:
        path = Path(weights)
        try:
            policy = SlotPolicy.load(path)  # refuses a missing file or arrays that are not a slot policy
        except ValueError as error:
            raise SystemExit(f"--weights {family}={weights}: {error}") from None
        if not policy.fits(dcops.parallel_env(scenario=family).observation_space("scheduler"), posterior_from_view=True):
            raise SystemExit(f"--weights {family}={weights}: the network does not read {family}'s observation")
        label, digest, recipe = weights, hashlib.sha256(path.read_bytes()).hexdigest(), policy.metadata
    if recipe is not None and recipe.get("config", {}).get("n_validation_seeds") != SELECTED_ON:
        raise SystemExit(f"{label}: its recipe (the .json beside it) does not say it selected its checkpoint on "
                         f"the first {SELECTED_ON} validation seeds, the seeds this table leaves out")
    seeds = list(validation_seeds(family, MAX_FAMILY_VALIDATION_SEEDS)[SELECTED_ON:])
    scores = family_scores(family, seeds, weights)
    row = (f"| {family} | {seeds[0]}–{seeds[-1]} | `{label}` sha256:{digest[:12]} | {scores['pt'].mean():+.4f} | "
           f"{cell(scores, 'searched', 'pt')} | {cell(scores, 'ppo', 'pt')} | {cell(scores, 'ppo', 'searched')} |")
    if weights is None:
        return row
    env = dcops.parallel_env(scenario=family)  # the other network, paired: what the ladder's rung plays there
    scores["ladder"] = np.array([run_episode(LearnedScheduler(family=family), s, env=env)["score"] for s in seeds])
    return row + f" {cell(scores, 'ppo', 'ladder')} |"


def main() -> None:
    from dcops.cluster.scenarios import SCENARIOS

    lines = ["# Public-information schedulers on fresh seeds", "", "Produced by "
             "`python reports/scheduler_ppo/families/fresh_seeds.py`.", "",
             "## The RL scheduler (the ladder's `ppo` rung) on seeds past every checkpoint selection", "",
             *TABLE_HEAD, *(fresh_row(family) for family in SCENARIOS), "", *REUSED]
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
        pairs = [pair.partition("=") for pair in args.weights]
        if any(not sep or not family or not path for family, sep, path in pairs):
            raise SystemExit(f"--weights: give FAMILY=NPZ, not {args.weights}")
        print("\n".join([f"Produced by `python reports/scheduler_ppo/families/fresh_seeds.py --weights "
                         f"{' --weights '.join(args.weights)}`.", "", TABLE_HEAD[0] + " ppo − the ladder's ppo |",
                         TABLE_HEAD[1] + "---|", *(fresh_row(family, path) for family, _, path in pairs)]))
    else:
        main()
