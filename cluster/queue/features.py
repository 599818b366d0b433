"""Per-job features for the learned queue-ordering policy (shared by the environment, training and runtime).

The learned policy scores every waiting job with the same small network, so it works for any queue length
and does not care about the order of the slots. Features are dimensionless (times divided by the mean
processing time of the waiting jobs, ``p_bar``), so a policy trained on 25-second renders also reads the
OR-Library's integer instances. Signed quantities that span orders of magnitude go through
``slog(x) = sign(x) * log(1 + |x|)``. Every feature is clipped to [-10, 10].

Per job (row j), with t the decision time, ``slack_j = d_j - p_j - t`` (negative: late even if started now):

==  ==========================  ==========================================================================
 #  name                        meaning
==  ==========================  ==========================================================================
 0  log_p_rel                   log(p_j / p_bar)
 1  log2_weight_rel             log2(w_j) / 3 (1 / 2 / 4 / 8 -> 0 .. 1)
 2  slack_over_pbar             slog(slack_j / p_bar)
 3  slack_over_p                slog(slack_j / p_j)
 4  atc_rel                     ATC log-index minus the queue's best, at the tuned k (0 for ATC's choice)
 5  atc_rel_short               the same at k / 4 (more urgency-driven)
 6  atc_rel_long                the same at 4 k (closer to WSPT)
 7  wspt_rel                    log(w_j / p_j) minus the queue's best
 8  wmdd_rel                    WMDD log-index minus the queue's best
 9  work_ahead                  slog(work of the jobs WSPT would run before j / p_bar)
10  lateness_after_work_ahead   slog((t + work ahead + p_j - d_j) / p_bar): lateness if run in WSPT order
11  late_now                    1 if slack_j < 0
12  waited                      slog((t - r_j) / p_bar)
13  log_queue_length            log(number of waiting jobs), same for every row
14  late_share                  share of waiting jobs already late (slack < 0), same for every row
15  mean_slack                  mean of feature 2 over the queue, same for every row
16  busy_others                 slog(mean remaining time of the other machines / p_bar), same for every row
==  ==========================  ==========================================================================

Candidate slots: when more than ``max_slots`` jobs wait, only the ``max_slots`` best by the ATC index are
offered (in arrival order); the others are never chosen at that epoch.
"""

from __future__ import annotations

import numpy as np

from dcops.cluster.queue.simulator import QueueState

FEATURE_NAMES: tuple[str, ...] = (
    "log_p_rel",
    "log2_weight_rel",
    "slack_over_pbar",
    "slack_over_p",
    "atc_rel",
    "atc_rel_short",
    "atc_rel_long",
    "wspt_rel",
    "wmdd_rel",
    "work_ahead",
    "lateness_after_work_ahead",
    "late_now",
    "waited",
    "log_queue_length",
    "late_share",
    "mean_slack",
    "busy_others",
)
N_FEATURES = len(FEATURE_NAMES)
FEATURE_CLIP = 10.0


def slog(x: np.ndarray) -> np.ndarray:
    """Signed log: ``sign(x) * log(1 + |x|)``, compresses values spanning orders of magnitude."""
    return np.sign(x) * np.log1p(np.abs(x))


def _atc_log(log_wspt: np.ndarray, slack: np.ndarray, p_bar: float, k: float) -> np.ndarray:
    return log_wspt - np.maximum(slack, 0.0) / (k * p_bar)


def job_features(state: QueueState, atc_k: float) -> np.ndarray:
    """Feature matrix of shape ``(n_waiting, N_FEATURES)`` (see the module table), float32."""
    p, w, d, t = state.processing_s, state.weight, state.due_s, state.now_s
    n = len(p)
    p_bar = float(np.mean(p))
    slack = d - p - t
    log_wspt = np.log(w / p)
    atc = _atc_log(log_wspt, slack, p_bar, atc_k)
    atc_short = _atc_log(log_wspt, slack, p_bar, atc_k / 4)
    atc_long = _atc_log(log_wspt, slack, p_bar, atc_k * 4)
    wmdd = -np.log(np.maximum(p, d - t) / w)
    # Work ahead of j under WSPT: the processing time of every job with a strictly higher w/p.
    order = np.argsort(-log_wspt, kind="stable")
    cumulative = np.cumsum(p[order]) - p[order]
    work_ahead = np.empty(n)
    work_ahead[order] = cumulative
    late_now = (slack < 0).astype(np.float64)
    slack_pbar = slog(slack / p_bar)
    busy = float(np.mean(state.busy_remaining_s)) if len(state.busy_remaining_s) else 0.0
    features = np.empty((n, N_FEATURES))
    features[:, 0] = np.log(p / p_bar)
    features[:, 1] = np.log2(w) / 3.0
    features[:, 2] = slack_pbar
    features[:, 3] = slog(slack / p)
    features[:, 4] = atc - atc.max()
    features[:, 5] = atc_short - atc_short.max()
    features[:, 6] = atc_long - atc_long.max()
    features[:, 7] = log_wspt - log_wspt.max()
    features[:, 8] = wmdd - wmdd.max()
    features[:, 9] = slog(work_ahead / p_bar)
    features[:, 10] = slog((t + work_ahead + p - d) / p_bar)
    features[:, 11] = late_now
    features[:, 12] = slog((t - state.arrival_s) / p_bar)
    features[:, 13] = np.log(n)
    features[:, 14] = late_now.mean()
    features[:, 15] = slack_pbar.mean()
    features[:, 16] = slog(busy / p_bar)
    return np.clip(features, -FEATURE_CLIP, FEATURE_CLIP).astype(np.float32)


def candidate_positions(state: QueueState, atc_k: float, max_slots: int) -> np.ndarray:
    """Positions (into the waiting list, ascending) of the jobs offered to the learned policy.

    All jobs when at most ``max_slots`` wait; otherwise the ``max_slots`` with the highest ATC index.
    """
    n = state.n_waiting
    if n <= max_slots:
        return np.arange(n)
    p = state.processing_s
    atc = _atc_log(np.log(state.weight / p), state.due_s - p - state.now_s, float(np.mean(p)), atc_k)
    best = np.argsort(-atc, kind="stable")[:max_slots]
    return np.sort(best)
