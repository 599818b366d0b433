"""The last scenario lever of the headroom sweep: the value spread of the job catalogue.

The headroom sweep (``dcops eval-cluster --headroom``, this folder's README) moved every lever the
configuration had and found none that gives the truth planner +0.10 of score over priority_threshold. The one
it named last is the catalogue: a site whose excess demand is mostly truly LOW bulk work with a little urgent
production work, so that a stated priority hides more value. ``ClusterConfig.catalogue`` now names the public
catalogue (``dcops.cluster.job_types.catalogue``): ``classic`` (every published figure) or ``triage`` (the
eight bulk types 80 % LOW, 15 % MEDIUM, 5 % HIGH; the two urgent types 30 % HIGH, 70 % CRITICAL; the types,
sizes, runtimes, slacks and flexibility unchanged). The teams draw true priorities from it; the monitor's
honest norms and the team posterior's surprisal follow it (``dcops.oversight.honest_model.honest_model_for``),
with the detectors' thresholds and the posterior's weights as calibrated on ``classic``.

This script plays, for each catalogue, each setting of :data:`SETTINGS` (the ``oversubscribed`` and
``adversarial`` families, and the headroom sweep's ``crowded`` variant, whose lead was the sweep's largest) on
the headroom sweep's seeds (9000 on, used by no ladder or search; the window scale V as the configuration
computes it, or as the variant sets it: 2,500 in ``crowded``): the three public baselines, ``searched`` (the family's shipped parameters of the parametric scheduler, tuned on the classic catalogue and
not re-tuned here, its type prior read from the view's catalogue: a first sign of whether a public policy keeps
up, not what a search on the new catalogue would reach) and the truth planner (``dcops.evaluation.
truth_planner``). Δ is paired with the best of the three baselines *on that catalogue* (highest mean).

Run: ``python reports/cluster/headroom/catalogue.py [--seeds 8] [--workers 2]`` (about 15 min on two workers
here); writes ``catalogue.md`` and ``catalogue.csv`` beside this file. ``--norms`` instead writes
``catalogue_norms.md`` (under a minute; ``dcops.evaluation.catalogue_norms``): how the monitor judges four honest and four inflating (``strategic``) triage teams
over 40 sixteen-window episodes (seeds 70,000 on, rule cooling, every request rejected: a statement or an audit
does not depend on the plant or the scheduler), by triage's own honest norms and by the classic ones.
``--posterior 400`` writes ``catalogue_posterior.md`` (under a minute): the shipped team posterior, trained on the
classic catalogue, scored on the posterior report's 400 fresh episodes played under each catalogue.
"""

from __future__ import annotations

import argparse
import csv
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
SEEDS_FROM = 9000
SETTINGS = ("oversubscribed", "crowded", "adversarial")
"""What is played: a scenario family by name, or a variant of the headroom sweep (``dcops.evaluation.headroom.
VARIANTS``: a family and its overrides)."""


def setting(name: str) -> tuple[str, dict[str, Any]]:
    """(family, config overrides) of setting ``name``."""
    from dcops.cluster.scenarios import SCENARIOS
    from dcops.evaluation.headroom import VARIANT_BY_NAME

    if name in SCENARIOS:
        return name, {}
    return VARIANT_BY_NAME[name].family, dict(VARIANT_BY_NAME[name].overrides)
CATALOGUES = ("classic", "triage")
BASELINES = ("priority_threshold", "earliest_deadline", "carbon_greedy")
RUNGS = (*BASELINES, "searched", "truth_planner")


def play(task: tuple[str, str, int]) -> dict[str, Any]:
    """Every rung on one seed of one setting under one catalogue."""
    import dcops
    from dcops.agents.schedulers import BASELINES as KNOWN
    from dcops.agents.schedulers.parametric import searched_scheduler
    from dcops.evaluation.play import run_episode
    from dcops.evaluation.truth_planner import play_truth_planner

    name, catalogue, seed = task
    family, overrides = setting(name)
    env = dcops.parallel_env(scenario=family, catalogue=catalogue, **overrides)
    row: dict[str, Any] = {"setting": name, "catalogue": catalogue, "seed": seed}
    for baseline in BASELINES:
        row[baseline] = float(run_episode(KNOWN[baseline](), seed, env=env)["score"])
    row["searched"] = float(run_episode(searched_scheduler(family), seed, env=env)["score"])
    row["truth_planner"] = float(play_truth_planner(env, seed).summary["score"])
    truth = env.episode_truth()  # evaluator side, after the episode
    row["low_share"] = float(np.mean([int(r["true_priority"]) == 0 for r in truth]))
    return row


def markdown(rows: list[dict[str, Any]], command: str) -> str:
    from dcops.intervals import t_interval

    lines = ["# The catalogue lever: the truth planner and the public rungs under a wider value spread", "",
             f"Produced by `{command}` (`catalogue.py`'s docstring says what the catalogue changes and what "
             f"each rung is; a setting is a variant of the headroom sweep). Seeds {SEEDS_FROM} on; Δ = paired difference with the best of the three public "
             "baselines under the same setting and catalogue (highest mean), 95 % t-interval; per-seed rows "
             "in `catalogue.csv`.", "",
             "| setting | catalogue | truly LOW requests | " + " | ".join(RUNGS)
             + " | best baseline | truth planner Δ | searched Δ |",
             "|---" * (len(RUNGS) + 6) + "|"]
    for name in SETTINGS:
        for catalogue in CATALOGUES:
            got = [r for r in rows if r["setting"] == name and r["catalogue"] == catalogue]
            if len(got) < 2:
                continue
            means = {k: float(np.mean([r[k] for r in got])) for k in RUNGS}
            best = max(BASELINES, key=lambda k: means[k])
            base = np.array([r[best] for r in got])
            tp = t_interval(np.array([r["truth_planner"] for r in got]) - base)
            se = t_interval(np.array([r["searched"] for r in got]) - base)
            lines.append(f"| `{name}` | `{catalogue}` ({len(got)} seeds) | "
                         f"{np.mean([r['low_share'] for r in got]):.0%} | "
                         + " | ".join(f"{means[k]:+.3f}" for k in RUNGS)
                         + f" | {best} | {tp[0]:+.3f} [{tp[1]:+.3f}, {tp[2]:+.3f}] | "
                           f"{se[0]:+.3f} [{se[1]:+.3f}, {se[2]:+.3f}] |")
    return "\n".join(lines) + "\n"


NORM_SEEDS = range(70_000, 70_040)


def norms_markdown() -> str:
    from dcops.evaluation.catalogue_norms import judge

    lines = ["# The triage catalogue under the monitor: its own honest norms against the classic ones", "",
             "Produced by `python reports/cluster/headroom/catalogue.py --norms` (`catalogue.py`'s docstring). "
             "Flagged = teams flagged at least once (any detector; flags rest on audits as well as on stated "
             "fields); z = the stated-priority statistic of a team's whole episode, averaged over teams.", "",
             "| teams | norms | flagged | mean stated-priority z |", "|---|---|---|---|"]
    for label, kinds in (("4 honest (cooperative)", ("cooperative",) * 4), ("4 inflating (strategic)", ("strategic",) * 4)):
        for norms in CATALOGUES[::-1]:
            got = judge(kinds, "triage", norms, NORM_SEEDS)
            lines.append(f"| {label} | `{norms}` | {got.flagged} of {got.teams} | {np.mean(got.stated_z):+.2f} |")
    return "\n".join(lines) + "\n"


def posterior_markdown(n_episodes: int) -> str:
    """The shipped team posterior (trained on the classic catalogue) and the stated-fields regression it is
    compared with, scored on the posterior report's fresh episodes under each catalogue."""
    from dcops.evaluation.posterior_training import FRESH_SEEDS, predict_all, simulate, window_metrics
    from dcops.oversight.posterior import TeamPosterior

    models = {"posterior": TeamPosterior.load(), "stated_fields_lr": TeamPosterior.load(model="stated_fields")}
    seeds = FRESH_SEEDS[:n_episodes]
    lines = ["# The team posterior under the triage catalogue", "",
             f"Produced by `python reports/cluster/headroom/catalogue.py --posterior {n_episodes}` (`catalogue.py`'s "
             "docstring). "
             f"The shipped weights (trained on the classic catalogue, `dcops train-posterior`) on the posterior "
             f"report's first {len(seeds)} fresh episodes (seeds {seeds[0]}–{seeds[-1]}, its seven team mixes and "
             "four schedulers), played under each catalogue; the features follow the catalogue's norms. AUROC "
             "and recall at 1 % FPR of P(gaming) per team at the start of windows 0–3.", "",
             "| catalogue | model | AUROC w0 / w1 / w2 / w3 | recall at 1 % FPR w0 / w1 / w2 / w3 |",
             "|---|---|---|---|"]
    for catalogue in CATALOGUES:
        data = simulate(seeds, catalogue=catalogue)
        for name, model in models.items():
            p = predict_all(model, data)
            label = np.broadcast_to(data.gaming[:, None, :], p.shape)
            rows = [window_metrics(p[:, w].reshape(-1), label[:, w].reshape(-1), p[:, w].reshape(-1) >= 0.5)
                    for w in range(4)]
            lines.append(f"| `{catalogue}` | {name} | " + " / ".join(f"{r['auroc']:.3f}" for r in rows) + " | "
                         + " / ".join(f"{r['recall_at_1pct_fpr']:.2f}" for r in rows) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=HERE / "catalogue.md")
    parser.add_argument("--norms", action="store_true", help="write catalogue_norms.md instead (module docstring)")
    parser.add_argument("--posterior", type=int, default=0, metavar="EPISODES",
                        help="write catalogue_posterior.md instead, from this many fresh episodes per catalogue")
    args = parser.parse_args(argv)
    if args.posterior:
        out = HERE / "catalogue_posterior.md"
        out.write_text(posterior_markdown(args.posterior))
        print(out.read_text())
        return
    if args.norms:
        out = HERE / "catalogue_norms.md"
        out.write_text(norms_markdown())
        print(out.read_text())
        return
    if args.seeds < 2 or args.workers < 1:
        raise SystemExit("--seeds must be at least 2 and --workers at least 1")
    tasks = [(s, c, SEEDS_FROM + i) for s in SETTINGS for c in CATALOGUES for i in range(args.seeds)]
    with get_context("spawn").Pool(args.workers) as pool:
        rows = pool.map(play, tasks, chunksize=1)
    with args.out.with_suffix(".csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    command = "python reports/cluster/headroom/catalogue.py" + (f" --seeds {args.seeds}" if args.seeds != 8 else "")
    args.out.write_text(markdown(rows, command))
    print(args.out.read_text())


if __name__ == "__main__":
    main()
