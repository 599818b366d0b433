"""The policy interface of the placement task and the episode runner every policy goes through.

A policy is anything with a ``name`` and ``act(observation) -> Place | Defer``: the heuristics, the linear
learned policy, the exact optimum, and (later) a language-model scheduler or a remote agent over HTTP all
plug in the same way. Policies receive only the :class:`PlacementObservation` (no future arrivals); a
policy that needs the whole scenario (the clairvoyant optimum) gets it from its factory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from dcops.cluster.placement.actions import Action
from dcops.cluster.placement.observation import ActionRecord, Metrics, PlacementObservation
from dcops.cluster.placement.scenarios import Scenario
from dcops.cluster.placement.sim import PlacementSim, RewardConfig


@runtime_checkable
class PlacementPolicy(Protocol):
    """Maps the observation before a tick to one action (with its rationale)."""

    name: str

    def act(self, observation: PlacementObservation) -> Action: ...


PolicyFactory = Callable[[Scenario], PlacementPolicy]
"""Builds a policy for one scenario (most ignore the argument; the optimum needs it)."""


@dataclass(frozen=True)
class EpisodeResult:
    """Outcome of one episode: final metrics and the full action history."""

    scenario: str
    policy: str
    metrics: Metrics
    history: tuple[ActionRecord, ...]

    @property
    def total_reward(self) -> float:
        return self.metrics.total_reward


def run_episode(scenario: Scenario, policy: PlacementPolicy, rewards: RewardConfig | None = None) -> EpisodeResult:
    """Run ``policy`` on ``scenario`` from reset to the end and return the result."""
    sim = PlacementSim(scenario, rewards)
    obs = sim.reset()
    while not sim.done:
        obs = sim.step(policy.act(obs)).observation
    return EpisodeResult(scenario.name, policy.name, obs.metrics, obs.history)
