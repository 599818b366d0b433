"""Cooling controllers: they read plant telemetry and write set-points (``dcops.physics.interface``)."""

from dcops.agents.cooling.base import ControllerContext, CoolingController
from dcops.agents.cooling.pid import PIDController
from dcops.agents.cooling.rule_based import RuleBasedController

__all__ = ["ControllerContext", "CoolingController", "PIDController", "RuleBasedController"]
