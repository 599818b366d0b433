"""Build a cooling controller by name: the configurable ``cooling="ppo" | "rule" | "pid"`` of the environments."""

from __future__ import annotations

from typing import Any

from dcops.agents.cooling.pid import PIDController
from dcops.agents.cooling.ppo import PPOController
from dcops.agents.cooling.rule_based import RuleBasedController

COOLING_CONTROLLERS: tuple[str, ...] = ("ppo", "rule", "pid")


def make_cooling_controller(name: str, task_id: str | None = None) -> Any:
    """A fresh controller implementing the ``CoolingController`` protocol.

    :param name: ``"ppo"`` (the shipped PPO policy, numpy only), ``"rule"`` (the tuned rule-based controller)
        or ``"pid"`` (PI supply-air reset with its defaults). ``"agent"`` (a learning agent drives the cooling)
        is the caller's business: it has no controller object.
    :param task_id: for ``"rule"``: the task whose tuned set-points to use (``RuleBasedController.for_task``);
        None gives the rule's defaults.
    :raises ValueError: for an unknown name (the message lists the known ones).
    """
    if name == "ppo":
        return PPOController()
    if name == "rule":
        return RuleBasedController.for_task(task_id) if task_id else RuleBasedController()
    if name == "pid":
        return PIDController()
    raise ValueError(f"unknown cooling controller {name!r}; expected one of {', '.join(COOLING_CONTROLLERS)}")
