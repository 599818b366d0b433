"""From cell rows to tables: means, the fraction of the hindsight bound, the gaming payoff, paired
comparisons.

**Fraction of the bound**: a scheduler cell's ``throughput_value`` over the bound of its (condition, seed),
used only when both episodes have the same arrivals fingerprint (otherwise NaN, and the report counts
mismatches).

**Paired comparisons**: for a scheduler S and the reference R, the differences ``d = metric(S) − metric(R)``
over cells with the same (mix, condition, seed), so each pair saw the same jobs, weather, carbon and faults.
The 95 % interval is a **paired bootstrap** percentile interval (``scipy.stats.bootstrap``, ``method="percentile"``):
resample the pairs with replacement 10,000 times (numpy generator seeded 0) and take the 2.5 and 97.5
percentiles of the mean difference. An interval that excludes 0 says the difference is not seed noise.

**Detection**: precision, recall and false-positive rate pooled over cells and the four detectors
(``dcops.oversight.metrics``: per (team, window) pair); on the honest mix precision and recall are undefined
(no positives), its false positives count in the FPR.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dcops.evaluation.matrix import BOUND

BOOTSTRAP_RESAMPLES = 10_000
CI_LEVEL = 0.95


@dataclass(frozen=True)
class Estimate:
    """A mean with its 95 % interval and the number of values behind it."""

    mean: float
    low: float
    high: float
    n: int

    def text(self, fmt: str = "+.3f") -> str:
        if self.n == 0 or math.isnan(self.mean):
            return "–"
        if self.n < 2 or math.isnan(self.low):
            return f"{self.mean:{fmt}}"
        return f"{self.mean:{fmt}} [{self.low:{fmt}}, {self.high:{fmt}}]"


def bootstrap_mean(values: Sequence[float], resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0) -> Estimate:
    """Mean and percentile-bootstrap 95 % interval (module docstring; ``scipy.stats.bootstrap``); NaNs are left
    out. No interval below 2 values; values without spread give the mean at both ends."""
    from scipy import stats

    data = np.asarray([v for v in values if not math.isnan(v)], dtype=np.float64)
    if data.size == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    if data.size == 1:
        return Estimate(float(data[0]), math.nan, math.nan, 1)
    result = stats.bootstrap((data,), np.mean, n_resamples=resamples, method="percentile",
                             confidence_level=CI_LEVEL, rng=np.random.default_rng(seed))
    interval = result.confidence_interval
    return Estimate(float(data.mean()), float(interval.low), float(interval.high), int(data.size))


def split(
    rows: Iterable[dict[str, Any]],
) -> tuple[list[dict[str, Any]], dict[tuple[str, int, int], dict[str, Any]]]:
    """Scheduler rows, and bound rows by (condition, seed, n_windows)."""
    runs, bounds = [], {}
    for row in rows:
        if row["scheduler"] == BOUND:
            bounds[(row["condition"], row["seed"], row["n_windows"])] = row
        else:
            runs.append(row)
    return runs, bounds


def with_bound(
    runs: list[dict[str, Any]],
    bounds: dict[tuple[str, int, int], dict[str, Any]],
) -> tuple[list[dict[str, Any]], int]:
    """Add ``fraction_of_bound`` to every scheduler row; return the rows and the count of fingerprint
    mismatches."""
    mismatches = 0
    out = []
    for row in runs:
        bound = bounds.get((row["condition"], row["seed"], row["n_windows"]))
        fraction = math.nan
        if bound is not None:
            if bound["arrivals_key"] != row["arrivals_key"]:
                mismatches += 1
            elif bound["bound_value"] > 0:
                fraction = row["throughput_value"] / bound["bound_value"]
        out.append({**row, "fraction_of_bound": fraction})
    return out, mismatches


def group(rows: Iterable[dict[str, Any]], *keys: str) -> dict[tuple[Any, ...], list[dict[str, Any]]]:
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[tuple(row[k] for k in keys)].append(row)
    return dict(groups)


def detection(rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Pooled precision, recall, FPR (module docstring)."""
    tp, fp, fn, tn = (sum(r[f"det_{k}"] for r in rows) for k in ("tp", "fp", "fn", "tn"))
    return {
        "precision": tp / (tp + fp) if tp + fp else math.nan,
        "recall": tp / (tp + fn) if tp + fn else math.nan,
        "fpr": fp / (fp + tn) if fp + tn else math.nan,
    }


def team_payoffs(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per gaming team per cell: its payoff, its value and its twin's, the share of its requests
    accepted and its twin's, its kind."""
    out = []
    for row in rows:
        for agent, team in row["teams"].items():
            if "gaming_payoff" in team:
                out.append(
                    {
                        "scheduler": row["scheduler"],
                        "mix": row["mix"],
                        "condition": row["condition"],
                        "seed": row["seed"],
                        "team": agent,
                        "kind": team["kind"],
                        "payoff": team["gaming_payoff"],
                        "twin_value": team["twin_value_completed"],
                        "value": team["value_completed"],
                        "accept_rate": team["accept_rate"],
                        "twin_accept_rate": team["twin_accept_rate"],
                    }
                )
    return out


def cross_mix(
    rows: Sequence[dict[str, Any]], scheduler: str, metric: str, mix: str, against: str
) -> Estimate:
    """Mean paired difference ``metric(mix) − metric(against)`` for one scheduler over common (condition,
    seed) cells, with its paired-bootstrap 95 % interval: e.g. the injecting mix against the one-strategic
    mix, whose gaming teams misreport identically and differ in their descriptions only
    (``dcops.agents.teams.injecting``)."""
    base = {
        (r["condition"], r["seed"], r["n_windows"]): r[metric]
        for r in rows
        if r["scheduler"] == scheduler and r["mix"] == against and r.get(metric) is not None
    }
    diffs = [
        r[metric] - base[key]
        for r in rows
        if r["scheduler"] == scheduler and r["mix"] == mix and r.get(metric) is not None
        for key in [(r["condition"], r["seed"], r["n_windows"])]
        if key in base
    ]
    return bootstrap_mean(diffs)


def paired(
    rows: Sequence[dict[str, Any]],
    scheduler: str,
    reference: str,
    metric: str = "score",
    where: Callable[[dict[str, Any]], bool] = lambda r: True,
) -> Estimate:
    """Mean paired difference ``metric(scheduler) − metric(reference)`` over common (mix, condition, seed)
    cells, with its paired-bootstrap 95 % interval (module docstring)."""
    ref = {
        (r["mix"], r["condition"], r["seed"], r["n_windows"]): r[metric]
        for r in rows
        if r["scheduler"] == reference and where(r)
    }
    diffs = [
        r[metric] - ref[key]
        for r in rows
        if r["scheduler"] == scheduler and where(r)
        for key in [(r["mix"], r["condition"], r["seed"], r["n_windows"])]
        if key in ref
    ]
    return bootstrap_mean(diffs)


SUMMARY_METRICS = (
    "score",
    "r_throughput",
    "r_thermal",
    "r_carbon",
    "p_invalid",
    "incident_windows",
    "violation_min_27c",
    "violation_min_32c",
    "carbon_actual_kg",
    "carbon_blind_kg",
    "carbon_saved_pct",
    "value_completed",
    "throughput_value",
    "strategic_share",
    "strategic_share_twin",
    "fair_share",
    "gaming_payoff",
    "invalid_rate",
    "fraction_of_bound",
    "gaming_accept_rate",
    "gaming_value_completed",
)


def summarise(rows: Sequence[dict[str, Any]], keys: Sequence[str]) -> list[dict[str, Any]]:
    """Means of :data:`SUMMARY_METRICS` (NaN left out) and pooled detection per group of ``keys``."""
    out = []
    for key, members in group(rows, *keys).items():
        record: dict[str, Any] = dict(zip(keys, key, strict=True))
        record["cells"] = len(members)
        for metric in SUMMARY_METRICS:
            values = [math.nan if m.get(metric) is None else float(m[metric]) for m in members]
            values = [v for v in values if not math.isnan(v)]
            record[metric] = float(np.mean(values)) if values else math.nan
        record.update(detection(members))
        out.append(record)
    return out
