"""Baseline schedulers over the public view (stated-priority threshold, EDF, carbon-aware greedy, trivial ones), the
rolling planner (a public-information MILP re-planned every window, ``planner``) and the learned one (``ppo``,
over the public array observation)."""

from dcops.agents.schedulers.base import Capacity, GreedyScheduler
from dcops.agents.schedulers.carbon_greedy import CarbonAwareScheduler
from dcops.agents.schedulers.edf import EarliestDeadlineScheduler
from dcops.agents.schedulers.learned import LearnedScheduler
from dcops.agents.schedulers.oversight_aware import OversightAwareScheduler
from dcops.agents.schedulers.planner import RollingPlanner
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

LEARNED = {
    "ppo": LearnedScheduler,
}
"""Every learned scheduler by name: each class builds with its shipped weights, or with a weights file as its
first argument, or (``family=``) with the weights trained for a scenario family where they ship. Kept apart
from :data:`BASELINES` because these read the window's array observation (``reads_observation``;
``dcops.evaluation.play.scheduler_action``), not only the view, and so that the baselines' published tables
stay the baselines'."""

__all__ = [
    "BASELINES", "LEARNED", "AcceptAllScheduler", "Capacity", "CarbonAwareScheduler", "EarliestDeadlineScheduler",
    "GreedyScheduler", "LearnedScheduler", "OversightAwareScheduler", "PriorityThresholdScheduler", "RandomScheduler", "RejectAllScheduler",
    "RollingPlanner",
]
