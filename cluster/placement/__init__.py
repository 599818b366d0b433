"""GPU placement benchmark: place(job, gpu) or defer, one decision per tick, four canonical scenarios.

- :mod:`.scenarios` (data, catalogue, canonical scenarios), :mod:`.generator` (seeded new scenarios);
- :mod:`.sim` (the pure-Python simulator), :mod:`.actions`, :mod:`.observation`, :mod:`.dashboard`;
- :mod:`.policy` (the ``PlacementPolicy`` protocol and ``run_episode``), :mod:`.heuristics`,
  :mod:`.linear` (learned), :mod:`.optimum` (exact DP), :mod:`.policies` (all by name);
- :mod:`.env` (Gymnasium wrapper, registered as ``placement/<scenario>``), :mod:`.evaluate` (report),
  :mod:`.commands` (``dcops eval-placement``, ``dcops train-placement``).
"""

from __future__ import annotations

from dcops.cluster.placement.actions import Action, Defer, Place, action_from_dict, action_from_text
from dcops.cluster.placement.catalog import get_scenario
from dcops.cluster.placement.observation import PlacementObservation
from dcops.cluster.placement.policy import EpisodeResult, PlacementPolicy, run_episode
from dcops.cluster.placement.scenarios import CANONICAL, Scenario
from dcops.cluster.placement.sim import PlacementSim, RewardConfig, StepResult

__all__ = [
    "CANONICAL",
    "Action",
    "Defer",
    "EpisodeResult",
    "Place",
    "PlacementObservation",
    "PlacementPolicy",
    "PlacementSim",
    "RewardConfig",
    "Scenario",
    "StepResult",
    "action_from_dict",
    "action_from_text",
    "get_scenario",
    "run_episode",
]
