"""Admitted jobs waiting for a zone are dispatched in the order of the configured queue policy (stated fields)."""

from __future__ import annotations

import pytest

import dcops
from dcops.cluster.config import ClusterConfig
from dcops.cluster.queue.rank import dispatch_priority
from dcops.cluster.reward import PRIORITY_WEIGHT


def _queued_episode(policy: str):
    env = dcops.parallel_env(queue_policy=policy, faults=())
    env.reset(seed=4)
    episode = env.episode
    pending = list(episode.ledger.pending(0))
    assert len(pending) >= 4
    for request_id in pending:
        episode.ledger.jobs[request_id].accepted_window = 0
    episode.ledger.queue = list(pending)
    return episode, pending


@pytest.mark.parametrize("policy", ["edd", "wspt", "atc"])
def test_queue_is_ordered_by_the_policy_on_stated_fields(policy):
    episode, pending = _queued_episode(policy)
    episode._order_queue(0)
    window_s = episode.config.steps_per_window * episode.dt_s
    jobs = [episode.ledger.jobs[i].request for i in pending]
    expected = dispatch_priority(
        [{"id": r.request_id, "processing_s": r.duration_h * 3600.0, "weight": PRIORITY_WEIGHT[r.priority],
          "due_s": (r.deadline_window + 1) * window_s, "arrival_s": 0.0} for r in jobs],
        policy, now_s=0.0,
    )
    assert episode.ledger.queue == [t["id"] for t in expected]
    if policy == "edd":
        deadlines = [episode.ledger.jobs[i].request.deadline_window for i in episode.ledger.queue]
        assert deadlines == sorted(deadlines)


def test_fifo_keeps_admission_order():
    episode, pending = _queued_episode("fifo")
    episode._order_queue(0)
    assert episode.ledger.queue == pending


def test_unknown_queue_policy_is_rejected_by_field():
    with pytest.raises(ValueError, match="queue_policy"):
        ClusterConfig(queue_policy="random-ish")
