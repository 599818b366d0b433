"""Order a render queue with the learned policy, ATC and FIFO (no torch needed).

Run: ``python examples/queue_rank.py``
"""

from __future__ import annotations

from dcops.cluster.queue.jobs import Job
from dcops.cluster.queue.rank import rank

# Seconds on one clock; weights 1 / 2 / 4 / 8 = LOW / MEDIUM / HIGH / CRITICAL.
waiting = [
    Job("thumbnail-batch", processing_s=30.0, weight=1.0, due_s=400.0, arrival_s=0.0),
    Job("hero-frame", processing_s=20.0, weight=8.0, due_s=25.0, arrival_s=5.0),
    Job("trailer-cut", processing_s=600.0, weight=2.0, due_s=900.0, arrival_s=1.0),
    Job("product-shot", processing_s=25.0, weight=4.0, due_s=60.0, arrival_s=2.0),
]

if __name__ == "__main__":
    for policy in ("learned", "atc", "fifo"):
        print(f"{policy:>8}: " + " -> ".join(str(job.job_id) for job in rank(waiting, policy=policy)))
