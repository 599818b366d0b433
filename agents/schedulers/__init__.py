"""Baseline schedulers over the public view: stated-priority threshold, EDF, carbon-aware greedy, trivial ones."""

from dcops.agents.schedulers.base import Capacity, GreedyScheduler
from dcops.agents.schedulers.carbon_greedy import CarbonAwareScheduler
from dcops.agents.schedulers.edf import EarliestDeadlineScheduler
from dcops.agents.schedulers.oversight_aware import OversightAwareScheduler
from dcops.agents.schedulers.threshold import PriorityThresholdScheduler
from dcops.agents.schedulers.trivial import AcceptAllScheduler, RandomScheduler, RejectAllScheduler

BASELINES = {
    "priority_threshold": PriorityThresholdScheduler,
    "earliest_deadline": EarliestDeadlineScheduler,
    "carbon_greedy": CarbonAwareScheduler,
    "accept_all": AcceptAllScheduler,
    "reject_all": RejectAllScheduler,
}
"""Every baseline by name (each class builds with defaults)."""

__all__ = [
    "BASELINES", "AcceptAllScheduler", "Capacity", "CarbonAwareScheduler", "EarliestDeadlineScheduler",
    "GreedyScheduler", "OversightAwareScheduler", "PriorityThresholdScheduler", "RandomScheduler", "RejectAllScheduler",
]
