"""``rank(tasks)``: the order in which a policy would run a set of waiting jobs.

The cluster environment calls it to order admitted jobs that wait for a zone or a GPU. Ranking is greedy and
deterministic: the jobs are dispatched one after another on ``n_machines`` machines that are free at
``now_s`` (list scheduling), each pick made by the policy on the jobs still waiting at that moment; so a
dynamic rule such as ATC is re-evaluated as the clock advances, exactly as in the simulator. Ties go to the
earliest arrival, then to the input order.

Tasks may be :class:`dcops.cluster.queue.jobs.Job` objects, mappings or any objects with the fields
``processing_s`` (> 0), ``weight`` (> 0), ``due_s`` and optionally ``arrival_s`` (default 0), all in seconds
on one clock. They are returned unchanged, reordered.

The learned policy runs in numpy (:class:`dcops.cluster.queue.scoring_policy.ScoringPolicy`); importing this
module or ranking with it never imports torch.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, TypeVar

import numpy as np

from dcops.cluster.queue.heuristics import RULES, make_rule
from dcops.cluster.queue.jobs import Instance
from dcops.cluster.queue.scoring_policy import DEFAULT_WEIGHTS, ScoringPolicy
from dcops.cluster.queue.simulator import Policy, QueueState, simulate

T = TypeVar("T")
LEARNED_NAMES = ("learned", "ppo")


@lru_cache(maxsize=1)
def shipped_policy() -> ScoringPolicy:
    """The shipped learned policy (loaded once)."""
    return ScoringPolicy.load(DEFAULT_WEIGHTS)


@lru_cache(maxsize=1)
def shipped_atc_k() -> float:
    """ATC's k tuned on training seeds when the shipped policy was trained (read from its JSON)."""
    return float(json.loads(DEFAULT_WEIGHTS.with_suffix(".json").read_text())["atc_k"])


def resolve_policy(policy: str | Policy) -> Policy:
    """A policy object from a name: "learned" (or "ppo"), or a rule of :data:`dcops.cluster.queue.heuristics.RULES`.

    "atc" uses the tuned k of the shipped policy's training record.
    """
    if not isinstance(policy, str):
        return policy
    key = policy.lower()
    if key in LEARNED_NAMES:
        return shipped_policy()
    if key == "atc":
        return make_rule("atc", shipped_atc_k())
    if key in RULES:
        return make_rule(key)
    raise ValueError(f"unknown policy {policy!r}; use one of: {', '.join((*LEARNED_NAMES, *RULES))}")


def _field(task: Any, name: str, index: int, default: float | None = None) -> float:
    if isinstance(task, Mapping):
        value = task.get(name, default)
    else:
        value = getattr(task, name, default)
    if value is None:
        raise ValueError(f"task {index} has no {name!r} field")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"task {index}: {name!r} must be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise ValueError(f"task {index}: {name!r} must be finite, got {value!r}")
    return number


def rank(
    tasks: Sequence[T],
    policy: str | Policy = "learned",
    now_s: float | None = None,
    n_machines: int = 1,
) -> list[T]:
    """Return ``tasks`` in the order ``policy`` would run them (see the module docstring).

    :param tasks: waiting jobs (fields ``processing_s``, ``weight``, ``due_s``, optional ``arrival_s``).
    :param policy: "learned" (default), "atc", "wmdd", "covert", "wspt", "edd", "spt", "fifo", or a policy object.
    :param now_s: current time, seconds; default: the latest arrival (every job has arrived).
    :param n_machines: machines free at ``now_s``.
    :raises ValueError: for a malformed task (the message names the field), a job that has not arrived by
        ``now_s``, or an unknown policy.
    """
    if n_machines < 1:
        raise ValueError("n_machines must be >= 1")
    chosen = resolve_policy(policy)
    if len(tasks) == 0:
        return []
    processing, weight, due, arrival = _task_arrays(tasks)
    now = float(arrival.max()) if now_s is None else float(now_s)
    late = np.flatnonzero(arrival > now)
    if len(late):
        raise ValueError(f"task {late[0]}: 'arrival_s' {arrival[late[0]]} is after now_s {now}")
    order = np.lexsort((np.arange(len(tasks)), arrival))  # by arrival, then input order
    instance = Instance(
        arrival_s=arrival[order],
        processing_s=processing[order],
        weight=weight[order],
        due_s=due[order],
        n_machines=n_machines,
        name="rank",
    )
    schedule = simulate(instance, chosen, start_s=now)
    return [tasks[int(order[j])] for j in schedule.order]


def _task_arrays(tasks: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Validated (processing_s, weight, due_s, arrival_s) arrays; ``ValueError`` names a bad field."""
    processing = np.array([_field(t, "processing_s", i) for i, t in enumerate(tasks)])
    weight = np.array([_field(t, "weight", i) for i, t in enumerate(tasks)])
    due = np.array([_field(t, "due_s", i) for i, t in enumerate(tasks)])
    arrival = np.array([_field(t, "arrival_s", i, 0.0) for i, t in enumerate(tasks)])
    for name, values in (("processing_s", processing), ("weight", weight)):
        bad = np.flatnonzero(values <= 0)
        if len(bad):
            raise ValueError(f"task {bad[0]}: {name!r} must be > 0, got {values[bad[0]]!r}")
    return processing, weight, due, arrival


def dispatch_priority(tasks: Sequence[T], policy: str | Policy = "atc", now_s: float = 0.0) -> list[T]:
    """Return ``tasks`` by the policy's priority at one instant, highest first (ties: arrival, then input order).

    Where :func:`rank` sequences jobs on machines (the policy is re-evaluated at each dispatch), this scores
    every waiting job once, at ``now_s``, as a dispatcher does when several jobs may start at the same moment
    on parallel resources (the cluster environment's zones). Same task fields and validation as :func:`rank`;
    a job that has not arrived by ``now_s`` is rejected.
    """
    chosen = resolve_policy(policy)
    if len(tasks) == 0:
        return []
    processing, weight, due, arrival = _task_arrays(tasks)
    late = np.flatnonzero(arrival > now_s)
    if len(late):
        raise ValueError(f"task {late[0]}: 'arrival_s' {arrival[late[0]]} is after now_s {now_s}")
    order = priority_order(processing, weight, due, arrival, chosen, now_s)
    return [tasks[int(i)] for i in order]


def priority_order(
    processing_s: np.ndarray, weight: np.ndarray, due_s: np.ndarray, arrival_s: np.ndarray,
    policy: Policy, now_s: float,
) -> np.ndarray:
    """Indices of validated job arrays by the policy's priority at ``now_s`` (the core of
    :func:`dispatch_priority`, for callers that already hold arrays)."""
    state = QueueState(
        now_s=float(now_s), processing_s=processing_s, weight=weight, due_s=due_s, arrival_s=arrival_s,
        job_index=np.arange(len(processing_s)), busy_remaining_s=np.zeros(0),
    )
    scores = np.asarray(policy.scores(state), dtype=np.float64)
    return np.lexsort((np.arange(len(processing_s)), arrival_s, -scores))  # score desc, arrival, input order
