"""Cooling controllers: they read plant telemetry and write set-points (``dcops.physics.interface``).

Everything here is numpy only (the PPO policy runs as an exported numpy forward pass): importing this package
never imports torch.
"""

from dcops.agents.cooling.base import ControllerContext, CoolingController
from dcops.agents.cooling.factory import COOLING_CONTROLLERS, make_cooling_controller
from dcops.agents.cooling.pid import PIDController
from dcops.agents.cooling.ppo import PPOController
from dcops.agents.cooling.ppo_v2 import PPOControllerV2
from dcops.agents.cooling.rule_based import RuleBasedController

__all__ = [
    "COOLING_CONTROLLERS",
    "ControllerContext",
    "CoolingController",
    "PIDController",
    "PPOController",
    "PPOControllerV2",
    "RuleBasedController",
    "make_cooling_controller",
]
