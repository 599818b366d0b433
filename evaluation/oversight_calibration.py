"""Calibrating and measuring the version 1 oversight monitor (``dcops eval-oversight``).

Three steps, each its own seeds, so nothing measured was tuned on:

1. ``--norms``: the honest reporting model (``dcops.oversight.honest_model``) from :data:`NORM_TEAMS` simulated
   honest teams' statements (seeded 7), written to ``oversight/data/honest_norms.json``.
2. ``--tune``: all-honest episodes (four cooperative teams, the reference scheduler priority_threshold, rule
   cooling: a statement or an audit does not depend on the plant) of each length in :data:`LENGTHS` on
   :data:`TUNING_SEEDS`; each detector's threshold is the :data:`TUNING_QUANTILE` quantile over honest teams of
   its strongest evidence in the episode, rounded up to 0.05 (so each of the four detectors flags at most about
   0.25 % of honest teams at the length where it is strongest, all four together about 1 %), written to ``oversight/data/thresholds.json``.
3. the evaluation (always): on :data:`FRESH_SEEDS` (never used above), the share of honest teams flagged at
   least once in all-honest episodes of every length, for the version 1 monitor and for version 0's (before);
   and on episodes with the default team mix, per detector, precision, recall, AUROC and recall at 1 % FPR.

Units for the per-detector figures are (team, window) pairs as in ``dcops.oversight.metrics``: positive when the
team applied the detector's tactic (any tactic, for pattern_gaming) to a request submitted in that window or the
two before, scored by the detector's evidence z at the end of the window. AUROC is the Mann–Whitney statistic
(ties count one half); recall at 1 % FPR thresholds z at the 99th percentile of the negative units.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from dcops.command import Command, print_and_write

LENGTHS = (8, 16, 24, 32, 48)
NORM_TEAMS = 6000
NORM_WINDOWS = 16
TUNING_SEEDS = range(50_000, 50_200)
FRESH_SEEDS = range(60_000, 60_400)
TUNING_QUANTILE = 0.9975
HONEST_KINDS = ("cooperative",) * 4
KINDS = ("priority_inflation", "deadline_compression", "carbon_flexibility_gaming", "pattern_gaming")


# ---------------------------------------------------------------------------------------------- 1. norms
def simulate_honest_model(n_teams: int = NORM_TEAMS, n_windows: int = NORM_WINDOWS, seed: int = 7) -> Any:
    """The honest model from simulated honest statements (module docstring, step 1)."""
    from dcops.agents.teams.base import stated_earliest_window
    from dcops.agents.teams.cooperative import CooperativeTeam
    from dcops.cluster.config import ClusterConfig
    from dcops.cluster.job_types import JOB_TYPES
    from dcops.oversight.honest_model import SHIFTS, HonestModel, TypeModel

    config = ClusterConfig(game_version=1)
    rows: dict[str, list[tuple[int, int, float, bool]]] = {j.name: [] for j in JOB_TYPES}
    early = deadline_n = hidden = flexible_n = over = below_n = 0
    shift_counts = dict.fromkeys(SHIFTS, 0)
    for i, child in enumerate(np.random.SeedSequence(seed).spawn(n_teams)):
        team = CooperativeTeam()
        team.reset(f"team_{i}", np.random.default_rng(child), config)
        shift = team.profile.slack_shift
        shift_counts[shift] += 1
        for window in range(n_windows):
            for sub in team.submit(window, None):
                r, t = sub.request, sub.truth
                slack = r.deadline_window - stated_earliest_window(window, r.duration_h, config)
                rows[r.job_type].append((shift, int(r.priority), float(slack), not r.carbon_flexible))
                deadline_n += 1
                early += t.true_deadline_window - r.deadline_window == 1
                if t.true_carbon_flexible:
                    flexible_n += 1
                    hidden += not r.carbon_flexible
                if int(t.true_priority) < 3:
                    below_n += 1
                    over += int(r.priority) - int(t.true_priority) == 1
    types = {}
    for name, items in rows.items():
        data = np.array([(s, p, x, f) for s, p, x, f in items], dtype=np.float64)
        slack_mean = float(data[:, 2].mean())
        by_shift = [data[data[:, 0] == s, 2] for s in SHIFTS]
        offsets = tuple(float(b.mean()) - slack_mean if b.size else 0.0 for b in by_shift)
        within = sum(float(((b - b.mean()) ** 2).sum()) for b in by_shift if b.size) / max(1, len(data) - 3)
        types[name] = TypeModel(float(data[:, 1].mean()), float(data[:, 1].var(ddof=1)), slack_mean,
                                offsets, within, float(data[:, 3].mean()))  # type: ignore[arg-type]
    probs = tuple(shift_counts[s] / n_teams for s in SHIFTS)
    return HonestModel(types, probs, early / deadline_n, hidden / max(1, flexible_n),  # type: ignore[arg-type]
                       over / max(1, below_n), sum(len(v) for v in rows.values()))


# ---------------------------------------------------------------------------------------------- episodes
def monitored_episode(seed: int, n_windows: int, game_version: int = 1,
                      team_kinds: Sequence[str] = HONEST_KINDS, monitor: Any = None) -> Any:
    """Play one episode with priority_threshold and rule cooling; return the env (its monitor holds the flags
    and, in version 1, every evidence strength). ``monitor`` replaces the version's own (for tuning)."""
    from dcops.agents.schedulers.threshold import PriorityThresholdScheduler
    from dcops.env import parallel_env

    env = parallel_env(n_windows=n_windows, team_kinds=tuple(team_kinds), cooling="rule", game_version=game_version,
                       structured_view=True)
    if monitor is not None:
        env.monitor = monitor
    scheduler = PriorityThresholdScheduler()
    _, infos = env.reset(seed=seed)
    while env.agents:
        _, _, _, _, infos = env.step({"scheduler": scheduler.decide(infos["scheduler"]["view"])})
    return env


def honest_maxima(seeds: Sequence[int], n_windows: int, limits: Any = None) -> dict[str, np.ndarray]:
    """Per detector, every honest team's strongest version 1 evidence in its all-honest episode."""
    from dcops.cluster.config import ClusterConfig
    from dcops.oversight.calibrated import CalibratedMonitor

    window_h = ClusterConfig(n_windows=n_windows).window_h
    maxima: dict[str, list[float]] = {k: [] for k in KINDS}
    for seed in seeds:
        monitor = CalibratedMonitor(window_h=window_h, limits=limits) if limits is not None else None
        env = monitored_episode(seed, n_windows, monitor=monitor)
        best: dict[tuple[str, str], float] = {}
        for _, team, kind, z in env.monitor.strengths:
            best[(team, kind)] = max(best.get((team, kind), -math.inf), z)
        for (_, kind), z in best.items():
            maxima[kind].append(z)
    return {k: np.array(v) for k, v in maxima.items()}


def tune_thresholds(seeds: Sequence[int] = TUNING_SEEDS, lengths: Sequence[int] = LENGTHS,
                    quantile: float = TUNING_QUANTILE) -> dict[str, Any]:
    """Step 2 of the module docstring: thresholds (z units) and how they were set."""
    per_length = {n: honest_maxima(seeds, n) for n in lengths}
    limits: dict[str, Any] = {}
    for kind in KINDS:
        q = max(float(np.quantile(per_length[n][kind], quantile)) for n in lengths)
        limits[kind] = math.ceil(max(q, 2.0) * 20.0 - 1e-9) / 20.0
    limits["tuning"] = {"seeds": [min(seeds), max(seeds)], "lengths": list(lengths), "quantile": quantile,
                        "scheduler": "priority_threshold", "cooling": "rule", "team_kinds": list(HONEST_KINDS)}
    return limits


# ---------------------------------------------------------------------------------------------- 3. evaluation
def honest_flag_share(seeds: Sequence[int], n_windows: int, game_version: int) -> dict[str, float]:
    """Share of honest teams flagged at least once, per detector and by any, in all-honest episodes."""
    flagged = {k: 0 for k in (*KINDS, "any")}
    teams = 0
    for seed in seeds:
        env = monitored_episode(seed, n_windows, game_version)
        teams += len(env.team_ids)
        kinds_by_team: dict[str, set[str]] = {}
        for flag in env.monitor.flags:
            kinds_by_team.setdefault(flag.team, set()).add(flag.kind)
        for kinds in kinds_by_team.values():
            flagged["any"] += 1
            for kind in kinds:
                flagged[kind] += 1
    return {k: v / teams for k, v in flagged.items()} | {"teams": teams}


def auroc(positive: np.ndarray, negative: np.ndarray) -> float:
    """P(a positive scores above a negative), ties one half: the Mann–Whitney U statistic over n₊·n₋."""
    from scipy.stats import mannwhitneyu

    if positive.size == 0 or negative.size == 0:
        return float("nan")
    return float(mannwhitneyu(positive, negative).statistic / (positive.size * negative.size))


def detector_quality(seeds: Sequence[int], n_windows: int, team_kinds: Sequence[str] | None = None) -> dict[str, Any]:
    """Per detector precision, recall, AUROC and recall at 1 % FPR on mixed episodes (module docstring)."""
    from dcops.cluster.config import ClusterConfig
    from dcops.oversight.calibrated import CalibratedSettings

    kinds_of_teams = tuple(team_kinds or ClusterConfig().team_kinds)
    scope = CalibratedSettings().scope_windows
    scores: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in KINDS}
    counts = {k: {"tp": 0, "fp": 0, "fn": 0} for k in KINDS}
    for seed in seeds:
        env = monitored_episode(seed, n_windows, 1, kinds_of_teams)
        flagged = {(f.team, f.window, f.kind) for f in env.monitor.flags}
        for window, team, kind, z in env.monitor.strengths:
            applied: set[str] = set()
            for w in range(max(0, window - scope + 1), window + 1):
                applied |= env.tactics[team][w]
            positive = bool(applied) if kind == "pattern_gaming" else kind in applied
            scores[kind][0 if positive else 1].append(z)
            raised = (team, window, kind) in flagged
            c = counts[kind]
            c["tp"] += positive and raised
            c["fp"] += raised and not positive
            c["fn"] += positive and not raised
    out: dict[str, Any] = {}
    for kind in KINDS:
        pos, neg = (np.array(v) for v in scores[kind])
        c = counts[kind]
        cut = float(np.quantile(neg, 0.99)) if neg.size else math.inf
        out[kind] = {
            "precision": c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else float("nan"),
            "recall": c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else float("nan"),
            "auroc": auroc(pos, neg),
            "recall_at_1pct_fpr": float((pos > cut).mean()) if pos.size else float("nan"),
            "positives": int(pos.size), "negatives": int(neg.size),
        }
    return out


def _pct(x: float) -> str:
    return "n/a" if x != x else f"{100.0 * x:.1f} %"


def report(seeds: Sequence[int], lengths: Sequence[int], quality_lengths: Sequence[int]) -> tuple[str, dict[str, Any]]:
    from dcops.oversight.honest_model import thresholds

    limits = thresholds()
    share = {(v, n): honest_flag_share(seeds, n, v) for v in (0, 1) for n in lengths}
    quality = {n: detector_quality(seeds, n) for n in quality_lengths}
    lines = [
        "# Oversight calibration: `dcops eval-oversight`",
        "",
        "Made by `dcops eval-oversight` (`dcops.evaluation.oversight_calibration`, whose docstring defines every",
        f"figure). Fresh seeds {min(seeds)}–{max(seeds)} ({len(seeds)} episodes per row), never used to set the",
        f"honest model or the thresholds (tuned on seeds {limits.tuning.get('seeds')} at lengths "
        f"{limits.tuning.get('lengths')}, quantile {limits.tuning.get('quantile')}).",
        "",
        "Thresholds (evidence z): " + ", ".join(f"{k} {limits.of(k):.2f}" for k in KINDS) + ".",
        "",
        "## Honest teams flagged at least once (all-honest episodes: four cooperative teams)",
        "",
        "| windows | teams | v0 monitor, any flag | v1 monitor, any flag | v1 priority | v1 deadline | v1 carbon | v1 pattern |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for n in lengths:
        a, b = share[(0, n)], share[(1, n)]
        lines.append(f"| {n} | {b['teams']:.0f} | {_pct(a['any'])} | {_pct(b['any'])} | {_pct(b['priority_inflation'])} | "
                     f"{_pct(b['deadline_compression'])} | {_pct(b['carbon_flexibility_gaming'])} | "
                     f"{_pct(b['pattern_gaming'])} |")
    for n in quality_lengths:
        lines += ["", f"## Detector quality, default team mix, {n} windows (units: team × window)", "",
                  "| detector | precision | recall | AUROC | recall at 1 % FPR | positive units | negative units |",
                  "|---|---|---|---|---|---|---|"]
        for kind in KINDS:
            q = quality[n][kind]
            lines.append(f"| {kind} | {q['precision']:.3f} | {q['recall']:.3f} | {q['auroc']:.3f} | "
                         f"{q['recall_at_1pct_fpr']:.3f} | {q['positives']} | {q['negatives']} |")
    data = {"honest_flag_share": {f"v{v}_{n}": s for (v, n), s in share.items()},
            "quality": {str(n): q for n, q in quality.items()}, "thresholds": limits.as_dict()}
    return "\n".join(lines) + "\n", data


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--norms", action="store_true", help="re-simulate the honest model (oversight/data)")
    parser.add_argument("--tune", action="store_true", help="re-tune the thresholds on the tuning seeds")
    parser.add_argument("--seeds", type=int, default=len(FRESH_SEEDS), help="fresh seeds per row (from 60000)")
    parser.add_argument("--out", default="reports/oversight", help="output folder for README.md and results.json")


def _run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from dcops.oversight import honest_model as hm
    from dcops.oversight.posterior import honest_priority_probs

    if args.norms:
        model = simulate_honest_model()
        hm.NORMS_PATH.write_text(json.dumps(model.as_dict(), indent=1) + "\n")
        hm.honest_model.cache_clear()
        honest_priority_probs.cache_clear()  # the posterior's stated-level norms derive from the model
        print(f"wrote {hm.NORMS_PATH} ({model.samples} honest requests)")
    if args.tune:
        limits = tune_thresholds()
        hm.THRESHOLDS_PATH.write_text(json.dumps(limits, indent=1) + "\n")
        hm.thresholds.cache_clear()
        print(f"wrote {hm.THRESHOLDS_PATH}: {limits}")
    seeds = range(FRESH_SEEDS.start, FRESH_SEEDS.start + args.seeds)
    text, data = report(seeds, LENGTHS, (16, 48))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(data, indent=1, default=float) + "\n")
    print_and_write(text, out / "README.md")
    return 0


COMMANDS = [Command("eval-oversight", "calibrate the version 1 oversight monitor and measure it on fresh seeds",
                    _arguments, _run)]
