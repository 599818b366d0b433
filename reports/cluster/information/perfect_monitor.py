"""The ceiling of the team channel: public schedulers with a perfect oversight monitor (issue #22's second condition).

Plays, on the 200 validation seeds of ``oversubscribed`` and ``adversarial`` (``dcops.training.scheduler.search.
validation_seeds``: disjoint from every ladder's and search's), ``priority_threshold`` and, each with the real
monitor and with a perfect one (``dcops.evaluation.perfect_monitor``: ``kind`` knows which teams game, ``record``
each team's share of misreported submissions so far):

- ``oversight_aware`` (the baseline that discounts by the team posterior);
- the shipped searched scheduler (``agents/schedulers/data/parametric_<family>.json``, tuned with the real monitor);
- the searches re-tuned with each perfect monitor (``dcops search-scheduler --family F --parameters bayes --oracle O
  --validation-seeds 200 --workers 2``: ``searched_<family>_perfect_<oracle>.json`` beside this file), and the
  same class tuned with the real monitor (``reports/cluster/search_bayes/parametric_<family>.json``);
- the other channel, per request: the shipped searched scheduler, and the ten parameters re-tuned (``dcops
  search-scheduler --family F --oracle told:Q --validation-seeds 200 --workers 2``:
  ``searched_<family>_told-<Q>.json``), each told the truth of a share Q of the pending requests
  (``TruthHints``), for Q = 1 and 0.5.

Writes ``perfect_monitor.md`` beside this file: each scheduler's mean score and its paired difference with
``priority_threshold`` (95 % t-interval over the 200 seeds). Run from the repository root after the four searches::

    python reports/cluster/information/perfect_monitor.py        # about 5 min on two workers (9 while sharing the machine)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
FAMILIES = ("oversubscribed", "adversarial")
ORACLES = ("kind", "record")
TOLD_SHARES = ("1", "0.5")
N_SEEDS = 200


def _parameters(path: Path) -> dict[str, float]:
    return json.loads(path.read_text())["parameters"]


def rows(family: str) -> list[tuple[str, str, dict[str, float] | None, str | None]]:
    """(row label, scheduler kind, parametric parameters, oracle) for every row of ``family``'s table."""
    shipped = _parameters(ROOT / "agents/schedulers/data" / f"parametric_{family}.json")
    bayes = _parameters(ROOT / "reports/cluster/search_bayes" / f"parametric_{family}.json")
    out = [("priority_threshold", "priority_threshold", None, None),
           ("oversight_aware", "oversight_aware", None, None)]
    out += [(f"oversight_aware, perfect {o}", "oversight_aware", None, o) for o in ORACLES]
    out += [("searched (shipped)", "parametric", shipped, None)]
    out += [(f"searched (shipped), perfect {o}", "parametric", shipped, o) for o in ORACLES]
    out += [("searched, bayes set, tuned with the real monitor", "parametric", bayes, None)]
    for o in ORACLES:
        path = HERE / f"searched_{family}_perfect_{o}.json"
        if path.exists():
            out.append((f"searched, bayes set, tuned and played with perfect {o}", "parametric", _parameters(path), o))
    for q in TOLD_SHARES:
        out.append((f"searched (shipped), told {q} of the requests", "parametric", shipped, f"told:{q}"))
        path = HERE / f"searched_{family}_told-{q}.json"
        if path.exists():
            out.append((f"searched, tuned and played told {q} of the requests", "parametric", _parameters(path),
                        f"told:{q}"))
    return out


def play(task: tuple[str, int]) -> dict[str, float]:
    from dcops.agents.schedulers import OversightAwareScheduler, PriorityThresholdScheduler
    from dcops.agents.schedulers.parametric import ParametricScheduler
    from dcops.evaluation.ladder import family_env
    from dcops.evaluation.perfect_monitor import with_oracle
    from dcops.evaluation.play import run_episode

    family, seed = task
    env = family_env(family)
    scores = {}
    for label, kind, parameters, oracle in rows(family):
        if kind == "priority_threshold":
            scheduler = PriorityThresholdScheduler()
        elif kind == "oversight_aware":
            scheduler = OversightAwareScheduler()
        else:
            scheduler = ParametricScheduler(**parameters)
        if oracle is not None:
            scheduler = with_oracle(env, scheduler, oracle)
        scores[label] = run_episode(scheduler, seed, env=env)["score"]
    return scores


def main(workers: int = 2) -> None:
    from dcops.evaluation.play import ordered_map
    from dcops.intervals import t_interval
    from dcops.training.scheduler.search import validation_seeds

    lines = ["# The ceiling of the team channel: a perfect oversight monitor", "",
             "Produced by `python reports/cluster/information/perfect_monitor.py` (its docstring says what it plays "
             "and which searches it reads). Δ = paired difference of episode score with `priority_threshold` over "
             f"the family's {N_SEEDS} validation seeds, 95 % t-interval. `kind`: the monitor knows which teams "
             "game; `record`: it knows each team's share of misreported submissions so far; `told Q`: the real "
             "monitor, and a share Q of the pending requests shows its true priority, deadline, flexibility and "
             "runtime.", ""]
    for family in FAMILIES:
        seeds = validation_seeds(family, N_SEEDS)
        results = [scores for _, scores in ordered_map(play, [(family, s) for s in seeds], workers)]
        base = np.array([r["priority_threshold"] for r in results])
        lines += [f"## {family} (seeds {seeds[0]}–{seeds[-1]})", "",
                  "| scheduler | score | Δ vs priority_threshold [95 % CI] |", "|---|---|---|"]
        for label, *_ in rows(family):
            got = np.array([r[label] for r in results])
            if label == "priority_threshold":
                lines.append(f"| {label} | {got.mean():+.4f} | |")
                continue
            mean, low, high = t_interval(got - base)
            lines.append(f"| {label} | {got.mean():+.4f} | {mean:+.4f} [{low:+.4f}, {high:+.4f}] |")
        lines.append("")
    (HERE / "perfect_monitor.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
