"""The queue-ordering benchmark: every policy on the same held-out streaming scenarios, plus OR-Library.

Streaming: each policy runs on the same test seeds (1,000,000 ..), so policies are compared *paired*, seed by
seed. Per policy: mean and 90th percentile of the per-scenario total weighted tardiness, gain against FIFO
(``1 - mean / mean_FIFO``) and gap to the best heuristic (``mean / mean_best - 1``). Because gains over FIFO
barely separate good policies, the ranking is by mean weighted tardiness and the report gives paired
differences with 95 % confidence intervals (Student t on the per-seed differences).

Static: the OR-Library wt40 and wt50 instances with their optimal values; per policy, the summed gap to the
optimum ``(sum H - sum OPT) / sum OPT`` and the number of instances solved to optimality.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import stats

from dcops.cluster.queue.heuristics import make_rule
from dcops.cluster.queue.jobs import StreamConfig, streaming_instance
from dcops.cluster.queue.orlib import read_orlib, summed_gap
from dcops.cluster.queue.simulator import Policy, simulate
from dcops.cluster.queue.tuning import TuningResult, tune_parameter

HEURISTIC_NAMES: tuple[str, ...] = ("FIFO", "SPT", "EDD", "WSPT", "WMDD", "COVERT", "ATC")


@dataclass(frozen=True)
class PairedDifference:
    """Paired difference ``a - b`` of per-scenario weighted tardiness (negative: ``a`` is better).

    :param a: policy name.
    :param b: reference policy name.
    :param mean: mean difference, weight-seconds.
    :param ci_low: lower end of the 95 % confidence interval of the mean difference.
    :param ci_high: upper end.
    :param relative: mean difference as a share of ``b``'s mean weighted tardiness.
    :param median: median per-scenario difference (heavy tails: the mean and the typical scenario can disagree).
    :param wins: scenarios where ``a`` is strictly better.
    :param losses: scenarios where ``a`` is strictly worse.
    :param p_value: two-sided paired t-test p-value.
    """

    a: str
    b: str
    mean: float
    ci_low: float
    ci_high: float
    relative: float
    median: float
    wins: int
    losses: int
    p_value: float


def paired_difference(name_a: str, a: np.ndarray, name_b: str, b: np.ndarray) -> PairedDifference:
    """Paired comparison of two policies on the same scenarios (t-based 95 % CI of the mean difference)."""
    diff = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    n = len(diff)
    mean = float(diff.mean())
    if n > 1 and diff.std(ddof=1) > 0:
        half = float(stats.t.ppf(0.975, n - 1) * diff.std(ddof=1) / np.sqrt(n))
        p_value = float(stats.ttest_rel(a, b).pvalue)
    else:
        half, p_value = 0.0, 1.0
    return PairedDifference(
        name_a,
        name_b,
        mean,
        mean - half,
        mean + half,
        mean / float(np.mean(b)),
        float(np.median(diff)),
        int(np.sum(diff < 0)),
        int(np.sum(diff > 0)),
        p_value,
    )


@dataclass(frozen=True)
class PolicySummary:
    """One row of the streaming summary (weight-seconds)."""

    rank: int
    policy: str
    mean: float
    p90: float
    gain_vs_fifo: float
    gap_to_best_heuristic: float


@dataclass(frozen=True)
class StreamingResult:
    """Per-scenario results on the test seeds and their summary.

    :param seeds: the scenario seeds.
    :param values: policy name -> per-seed total weighted tardiness (same seed order).
    :param summary: rows ranked by mean weighted tardiness.
    :param best_heuristic: the heuristic with the lowest mean.
    :param paired: paired differences (every policy against ATC, the learned policy against each heuristic).
    """

    seeds: list[int]
    values: dict[str, np.ndarray]
    summary: list[PolicySummary]
    best_heuristic: str
    paired: list[PairedDifference]


def build_heuristics(atc_k: float, covert_k: float) -> list[Policy]:
    """The benchmark's heuristics with their tuned look-ahead parameters."""
    rules = [make_rule(name) for name in ("fifo", "spt", "edd", "wspt", "wmdd")]
    return [*rules, make_rule("covert", covert_k), make_rule("atc", atc_k)]


def tune_heuristics(seeds: Sequence[int], config: StreamConfig | None = None) -> dict[str, TuningResult]:
    """Tune ATC's and COVERT's k on training ``seeds``."""
    return {rule: tune_parameter(rule, seeds, config) for rule in ("atc", "covert")}


def run_streaming(
    policies: Sequence[Policy],
    seeds: Sequence[int],
    config: StreamConfig | None = None,
    learned: str | None = None,
    progress: bool = False,
) -> StreamingResult:
    """Run every policy on the streaming scenarios of ``seeds`` and summarise.

    :param learned: name of the learned policy among ``policies`` (compared against every heuristic).
    """
    instances = [streaming_instance(s, config) for s in seeds]
    values: dict[str, np.ndarray] = {}
    iterator = policies
    if progress:
        from tqdm import tqdm

        iterator = tqdm(policies, desc="policies", unit="policy")
    for policy in iterator:
        values[policy.name] = np.array([simulate(inst, policy).weighted_tardiness for inst in instances])
    means = {name: float(v.mean()) for name, v in values.items()}
    heuristic_names = [name for name in values if name != learned]
    best = min(heuristic_names, key=means.__getitem__)
    fifo_mean = means.get("FIFO", float("nan"))
    ranked = sorted(values, key=means.__getitem__)
    summary = [
        PolicySummary(
            i + 1,
            name,
            means[name],
            float(np.percentile(values[name], 90)),
            1.0 - means[name] / fifo_mean,
            means[name] / means[best] - 1.0,
        )
        for i, name in enumerate(ranked)
    ]
    paired = []
    if "ATC" in values:
        paired += [paired_difference(n, values[n], "ATC", values["ATC"]) for n in ranked if n != "ATC"]
    if learned is not None:
        paired += [
            paired_difference(learned, values[learned], n, values[n]) for n in heuristic_names if n != "ATC"
        ]
    return StreamingResult(list(seeds), values, summary, best, paired)


@dataclass(frozen=True)
class OrlibRow:
    """One policy on one OR-Library set."""

    policy: str
    n_jobs: int
    summed_gap: float
    n_optimal: int
    n_instances: int


def run_orlib(
    policies: Sequence[Policy], directory: Path | None = None, sizes: Sequence[int] = (40, 50)
) -> list[OrlibRow]:
    """Summed gap to the optimum of every policy on the OR-Library sets ``sizes``."""
    rows = []
    for n in sizes:
        data = read_orlib(n, directory)
        for policy in policies:
            values = np.array([simulate(inst, policy).weighted_tardiness for inst in data.instances])
            optimal = int(np.sum(np.isclose(values, data.optimum, rtol=0, atol=1e-6)))
            rows.append(OrlibRow(policy.name, n, summed_gap(values, data.optimum), optimal, len(values)))
    return rows
