"""The queue-ordering benchmark: every policy on the same held-out streaming scenarios, plus OR-Library.

Streaming: each policy runs on the same test seeds (1,000,000 ..), so policies are compared *paired*, seed by
seed. Per policy: mean and 90th percentile of the per-scenario total weighted tardiness, gain against FIFO
(``1 - mean / mean_FIFO``) and gap to the best heuristic (``mean / mean_best - 1``). Because gains over FIFO
barely separate good policies, the ranking is by mean weighted tardiness and the report gives paired
differences with 95 % confidence intervals (Student t on the per-seed differences).

Static: the OR-Library wt40 and wt50 instances with their optimal values; per policy, the summed gap to the
optimum ``(sum H - sum OPT) / sum OPT`` and the number of instances solved to optimality.

Headroom: with a :class:`~dcops.cluster.queue.reference.ReferenceConfig`, both runs add the near-optimal
reference of :mod:`dcops.cluster.queue.reference` (row ``ILS reference``), searched from the heuristics'
orders (never the learned policy's, so the reference does not depend on what it is compared with). On the
streaming scenarios every policy gets its gap to the reference, ``mean / mean_reference - 1``; on
OR-Library the reference's own gap to the proven optima and its count of optimal instances are what
validate it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import stats

from dcops.cluster.queue.heuristics import make_rule
from dcops.cluster.queue.jobs import Instance, StreamConfig, streaming_instance
from dcops.cluster.queue.orlib import read_orlib, summed_gap
from dcops.cluster.queue.reference import REFERENCE_NAME, ReferenceConfig, reference_schedule
from dcops.cluster.queue.simulator import Policy, simulate
from dcops.cluster.queue.tuning import TuningResult, tune_parameter
from dcops.intervals import t_interval

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
    mean, low, high = t_interval(diff)
    if n > 1 and diff.std(ddof=1) > 0:
        p_value = float(stats.ttest_rel(a, b).pvalue)
    else:
        p_value = 1.0
    return PairedDifference(
        name_a,
        name_b,
        mean,
        low,
        high,
        mean / float(np.mean(b)),
        float(np.median(diff)),
        int(np.sum(diff < 0)),
        int(np.sum(diff > 0)),
        p_value,
    )


@dataclass(frozen=True)
class PolicySummary:
    """One row of the streaming summary (weight-seconds).

    :param gap_to_reference: ``mean / mean_reference - 1`` (NaN when the run had no reference).
    """

    rank: int
    policy: str
    mean: float
    p90: float
    gain_vs_fifo: float
    gap_to_best_heuristic: float
    gap_to_reference: float = float("nan")


@dataclass(frozen=True)
class ReferenceRun:
    """The near-optimal reference on every streaming scenario (same seed order as the policies' values).

    :param name: the row label, ``ILS reference``.
    :param values: total weighted tardiness per scenario, weight-seconds (the simulator's score of the list).
    :param start_values: per scenario, that of the heuristic the search started from (the best one there).
    :param start_policies: that heuristic's name, per scenario.
    :param kicks: kicks performed per scenario.
    :param config: the search budget.
    """

    name: str
    values: np.ndarray
    start_values: np.ndarray
    start_policies: list[str]
    kicks: np.ndarray
    config: ReferenceConfig

    @property
    def mean(self) -> float:
        """Mean total weighted tardiness over the scenarios."""
        return float(np.mean(self.values))


@dataclass(frozen=True)
class StreamingResult:
    """Per-scenario results on the test seeds and their summary.

    :param seeds: the scenario seeds.
    :param values: policy name -> per-seed total weighted tardiness (same seed order).
    :param summary: rows ranked by mean weighted tardiness.
    :param best_heuristic: the heuristic with the lowest mean.
    :param paired: paired differences (every policy against ATC, the learned policy against each heuristic,
        and, with a reference, the learned policy, ATC and the best heuristic against the reference).
    :param reference: the reference's results, None when the run had none.
    """

    seeds: list[int]
    values: dict[str, np.ndarray]
    summary: list[PolicySummary]
    best_heuristic: str
    paired: list[PairedDifference]
    reference: ReferenceRun | None = None


def build_heuristics(atc_k: float, covert_k: float) -> list[Policy]:
    """The benchmark's heuristics with their tuned look-ahead parameters."""
    rules = [make_rule(name) for name in ("fifo", "spt", "edd", "wspt", "wmdd")]
    return [*rules, make_rule("covert", covert_k), make_rule("atc", atc_k)]


def tune_heuristics(seeds: Sequence[int], config: StreamConfig | None = None) -> dict[str, TuningResult]:
    """Tune ATC's and COVERT's k on training ``seeds``."""
    return {rule: tune_parameter(rule, seeds, config) for rule in ("atc", "covert")}


def run_reference(
    instances: Sequence[Instance], starts: Sequence[Policy], config: ReferenceConfig, progress: bool = False
) -> ReferenceRun:
    """The reference on every instance, each searched from the best of the ``starts`` policies' orders."""
    iterator = instances
    if progress:
        from tqdm import tqdm

        iterator = tqdm(instances, desc="reference", unit="scenario")
    results = [reference_schedule(inst, starts, config) for inst in iterator]
    return ReferenceRun(
        REFERENCE_NAME,
        np.array([r.weighted_tardiness for r in results]),
        np.array([r.start_weighted_tardiness for r in results]),
        [r.start_policy for r in results],
        np.array([r.kicks for r in results]),
        config,
    )


def run_streaming(
    policies: Sequence[Policy],
    seeds: Sequence[int],
    config: StreamConfig | None = None,
    learned: str | None = None,
    progress: bool = False,
    reference: ReferenceConfig | None = None,
) -> StreamingResult:
    """Run every policy on the streaming scenarios of ``seeds`` and summarise.

    :param learned: name of the learned policy among ``policies`` (compared against every heuristic).
    :param reference: budget of the near-optimal reference, searched from the other policies' orders;
        None for no reference.
    """
    instances = [streaming_instance(s, config) for s in seeds]
    values: dict[str, np.ndarray] = {}
    iterator = policies
    if progress:
        from tqdm import tqdm

        iterator = tqdm(policies, desc="policies", unit="policy")
    for policy in iterator:
        values[policy.name] = np.array([simulate(inst, policy).weighted_tardiness for inst in instances])
    ref = None
    if reference is not None:
        starts = [p for p in policies if p.name != learned]
        ref = run_reference(instances, starts, reference, progress)
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
            means[name] / ref.mean - 1.0 if ref is not None else float("nan"),
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
    if ref is not None:
        against = [n for n in dict.fromkeys([learned, "ATC", best]) if n in values]
        paired += [paired_difference(n, values[n], ref.name, ref.values) for n in against]
    return StreamingResult(list(seeds), values, summary, best, paired, ref)


@dataclass(frozen=True)
class OrlibRow:
    """One policy on one OR-Library set."""

    policy: str
    n_jobs: int
    summed_gap: float
    n_optimal: int
    n_instances: int


def _orlib_row(name: str, n: int, values: np.ndarray, optimum: np.ndarray) -> OrlibRow:
    optimal = int(np.sum(np.isclose(values, optimum, rtol=0, atol=1e-6)))
    return OrlibRow(name, n, summed_gap(values, optimum), optimal, len(values))


def run_orlib(
    policies: Sequence[Policy],
    directory: Path | None = None,
    sizes: Sequence[int] = (40, 50),
    reference: ReferenceConfig | None = None,
    learned: str | None = None,
    progress: bool = False,
) -> list[OrlibRow]:
    """Summed gap to the optimum of every policy on the OR-Library sets ``sizes``.

    :param reference: budget of the reference (a last row per set, searched from the orders of the
        policies other than ``learned``); None for no reference.
    :param learned: name of the learned policy among ``policies``, never used as a starting order.
    """
    rows = []
    for n in sizes:
        data = read_orlib(n, directory)
        for policy in policies:
            values = np.array([simulate(inst, policy).weighted_tardiness for inst in data.instances])
            rows.append(_orlib_row(policy.name, n, values, data.optimum))
        if reference is not None:
            starts = [p for p in policies if p.name != learned]
            ref = run_reference(data.instances, starts, reference, progress)
            rows.append(_orlib_row(ref.name, n, ref.values, data.optimum))
    return rows
