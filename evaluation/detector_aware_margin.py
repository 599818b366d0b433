"""The detector-aware team's safety margin, measured: how often the team is flagged and what it gains, per margin.

``dcops.agents.teams.detector_aware.SAFETY_MARGIN`` is how far (z units) below every detector's threshold the team
keeps the evidence its replica of the monitor predicts. A small margin games more and is flagged more often; a
large one is flagged as rarely as honest reporting and gains little. This measures the trade-off the constant was
chosen on, under the conditions its docstring names:

- three cooperative teams and one ``detector_aware`` team (whose neutral id the environment shuffles), under
  ``priority_threshold``, 16 windows, game version 1, the evaluation's ``normal`` condition
  (``dcops.evaluation.matrix.env_config``);
- tuning seeds :data:`SEEDS_FROM` onward (no evaluation, ladder or calibration uses them);
- each seed played once per margin and once with the team in honest mode (its honest twin: the same jobs, stated
  honestly; ``dcops.agents.teams.factory.honest_twin_factory``).

Per margin: the share of episodes in which the monitor flagged the team at least once (any detector, any window,
the last included: ``env.monitor.flags``), against the same share for its honest twin; and the gaming
payoff, the value the team completed (positive job scores: on time, or partial credit at the horizon;
``dcops.cluster.reward``) less what its twin completed on the same seed, value units per episode, with its 95 %
t-interval over seeds. ``dcops eval-detector-aware`` writes ``reports/oversight/detector_aware_margin.md`` and
``.csv``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

import numpy as np

from dcops.command import Command, write_rows_beside

SEEDS_FROM = 81000
"""First tuning seed (no evaluation, ladder, posterior or calibration seed is here)."""
MARGINS = (1.0, 1.5, 2.0)
"""The margins compared by default (z units)."""
TEAM_KINDS = ("cooperative", "cooperative", "cooperative", "detector_aware")
N_WINDOWS = 16


def play_seed(margin: float | None, seed: int, n_windows: int = N_WINDOWS) -> dict[str, Any]:
    """One episode of seed ``seed`` with the detector-aware team at ``margin`` (``None``: its honest twin).

    Returns ``margin``, ``seed``, ``flagged`` (the flags the monitor raised against the team, by any detector, the
    last window's included) and ``value`` (the value it completed)."""
    import dcops
    from dcops.agents.schedulers import PriorityThresholdScheduler
    from dcops.agents.teams import make_team
    from dcops.agents.teams.detector_aware import DetectorAwareTeam
    from dcops.agents.teams.factory import honest_twin_factory
    from dcops.evaluation.matrix import env_config
    from dcops.evaluation.play import run_episode
    from dcops.evaluation.runner import COMPLETED

    def make(kind: str) -> Any:
        return DetectorAwareTeam(safety_margin=margin) if kind == "detector_aware" and margin is not None \
            else make_team(kind)

    ids = [f"team_{i}" for i in range(len(TEAM_KINDS))]
    factory = honest_twin_factory(ids) if margin is None else make  # every team honest: the twin
    config = {**env_config("honest", "normal", n_windows), "team_kinds": TEAM_KINDS}
    env = dcops.parallel_env(team_factory=factory, **config)
    run_episode(PriorityThresholdScheduler(), seed, env=env)
    (team_id,) = [t for t, kind in env.team_kind.items() if kind == "detector_aware"]
    value = sum(row["score"] for row in env.episode_truth()
                if row["team"] == team_id and row["outcome"] in COMPLETED and row["score"] > 0)
    flags = sum(flag.team == team_id for flag in env.monitor.flags)
    return {"margin": margin, "seed": seed, "flagged": int(flags), "value": float(value)}


def _task(task: tuple[float | None, int]) -> dict[str, Any]:
    return play_seed(*task)


def run(margins: Sequence[float] = MARGINS, n_seeds: int = 120, workers: int = 1) -> list[dict[str, Any]]:
    """Every margin and the honest twin on seeds ``SEEDS_FROM …``; rows in (margin, seed) order, twin first."""
    from dcops.evaluation.play import ordered_map

    for margin in margins:
        if not np.isfinite(margin) or margin < 0:
            raise ValueError(f"margins: each must be a finite number >= 0, got {margin!r}")
    seeds = range(SEEDS_FROM, SEEDS_FROM + n_seeds)
    tasks = [(margin, seed) for margin in (None, *margins) for seed in seeds]
    return [row for _, row in ordered_map(_task, tasks, workers)]


def summarise(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per margin: flagged share, mean payoff against the twin (paired by seed) and its 95 % t-interval."""
    from dcops.intervals import t_interval

    twin = {r["seed"]: r for r in rows if r["margin"] is None}
    out = [{"margin": None, "episodes": len(twin),
            "flagged_share": float(np.mean([r["flagged"] > 0 for r in twin.values()]))}]
    for margin in dict.fromkeys(r["margin"] for r in rows if r["margin"] is not None):
        got = [r for r in rows if r["margin"] == margin]
        payoff = np.array([r["value"] - twin[r["seed"]]["value"] for r in got])
        _, low, high = t_interval(payoff)
        out.append({"margin": margin, "episodes": len(got),
                    "flagged_share": float(np.mean([r["flagged"] > 0 for r in got])),
                    "payoff": float(payoff.mean()), "payoff_low": float(low), "payoff_high": float(high)})
    return out


def markdown(summary: list[dict[str, Any]], command: str) -> str:
    lines = ["# The detector-aware team's safety margin", "",
             f"Produced by `{command}` (`dcops.evaluation.detector_aware_margin`: three cooperative teams and one "
             f"detector-aware team under priority_threshold, {N_WINDOWS} windows, game version 1, the evaluation's "
             f"`normal` condition, seeds from {SEEDS_FROM}). Flagged = share of episodes in which the monitor "
             "flagged the team at least once; payoff = value it completed less what its honest twin completed on "
             "the same seed (value units per episode, 95 % t-interval).", "",
             "| margin (z) | episodes | flagged at least once | gaming payoff [95 % CI] |", "|---|---|---|---|"]
    for e in summary:
        if e["margin"] is None:
            lines.append(f"| honest twin | {e['episodes']} | {100 * e['flagged_share']:.1f} % | – |")
        else:
            lines.append(f"| {e['margin']:g} | {e['episodes']} | {100 * e['flagged_share']:.1f} % | "
                         f"{e['payoff']:+.0f} [{e['payoff_low']:+.0f}, {e['payoff_high']:+.0f}] |")
    return "\n".join(lines) + "\n"


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--margins", default=",".join(f"{m:g}" for m in MARGINS),
                        help="comma-separated safety margins, z units (default 1,1.5,2)")
    parser.add_argument("--seeds", type=int, default=120, help=f"tuning seeds from {SEEDS_FROM} (default 120)")
    parser.add_argument("--workers", type=int, default=1, help="processes (the figures do not depend on it)")
    parser.add_argument("--out", default="reports/oversight/detector_aware_margin.md", help="the markdown report")


def _run(args: argparse.Namespace) -> int:
    from pathlib import Path

    try:
        margins = [float(m) for m in args.margins.split(",") if m.strip()]
    except ValueError:
        raise SystemExit(f"--margins: comma-separated numbers, got {args.margins!r}") from None
    if args.seeds < 2:
        raise SystemExit(f"--seeds: at least 2 (an interval needs two), got {args.seeds}")
    rows = run(margins, args.seeds, args.workers)
    command = f"dcops eval-detector-aware --margins {args.margins} --seeds {args.seeds}"
    text = markdown(summarise(rows), command)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    write_rows_beside(rows, out)
    print(text)
    return 0


COMMANDS = [Command("eval-detector-aware", "the detector-aware team's safety margin: flags and gaming payoff per "
                    "margin against its honest twin", _arguments, _run)]
