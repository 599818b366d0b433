"""Scenario families of the cluster game: named configurations, each with its own seeds and its own ladder.

A family is a set of :class:`~dcops.cluster.config.ClusterConfig` overrides that changes the *scenario* (who
submits, how much, how tight the plant is, what fails), never the reward's weights or formulas. Build one with
``dcops.parallel_env(scenario="oversubscribed")``; explicit keyword arguments override the family's values
(``dcops.parallel_env(scenario="chiller_fault", climate="leesburg")``).

==================  ==========================================================================================
``classic``         ``ClusterConfig``'s defaults: 4 teams (2 cooperative, 1 strategic, 1 adaptive), up to 4
                    requests per team and window, Phoenix in July, 900 kW cap, random faults (chiller trip
                    0.4, fan failure 0.15, sensor drift 0.2). Every figure published before the families
                    existed is of this family.
``oversubscribed``  6 teams (3 cooperative, 2 strategic, 1 adaptive), up to 6 requests each per window:
                    about 2.5 times the classic demand against the same plant, so most requests must be
                    turned away and choosing which is the game.
``chiller_fault``   the classic teams, and a chiller trip in every episode (random start and chiller, as the
                    random faults draw it): half the cooling plant is lost for 0.5–2 h, so the power the plant
                    can carry shrinks while work is running.
``adversarial``     7 teams: 2 cooperative and one of every strategic kind (``strategic``, ``adaptive``,
                    ``injecting``, ``detector_aware`` that stays under the monitor's thresholds, and
                    ``slow_burn`` that is honest until it has an audit history): most of the stated priority
                    the scheduler sees is someone's strategy.
==================  ==========================================================================================

Each family's evaluation seeds (:attr:`Scenario.seeds`, 40: the issue's depth conditions are paired over 40
seeds; the first 20 were the ladder's until 2026-12-06) are its own, so a figure of one family never shares an
episode with another's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Scenario:
    """A named family: its config overrides and its evaluation seeds."""

    name: str
    summary: str
    overrides: dict[str, Any] = field(default_factory=dict)
    seeds: tuple[int, ...] = ()


SCENARIOS: dict[str, Scenario] = {
    "classic": Scenario("classic", "ClusterConfig's defaults (every earlier figure)", {}, tuple(range(40))),
    "oversubscribed": Scenario(
        "oversubscribed", "6 teams, up to 6 requests each per window, against the classic plant",
        {"team_kinds": ("cooperative", "cooperative", "cooperative", "strategic", "strategic", "adaptive"),
         "max_requests_per_team": 6},
        tuple(range(2000, 2040))),
    "chiller_fault": Scenario(
        "chiller_fault", "the classic teams, and a chiller trip in every episode",
        {"chiller_trip_probability": 1.0}, tuple(range(3000, 3040))),
    "adversarial": Scenario(
        "adversarial", "2 cooperative teams and one of every strategic kind",
        {"team_kinds": ("cooperative", "cooperative", "strategic", "adaptive", "injecting", "detector_aware",
                        "slow_burn")},
        tuple(range(4000, 4040))),
}
"""Every family by name (module docstring)."""

DEFAULT_SCENARIO = "classic"
"""The family ``dcops.parallel_env()`` builds when none is named."""


def scenario(name: str) -> Scenario:
    """The family called ``name``; an unknown name raises ``ValueError`` listing the known ones."""
    try:
        return SCENARIOS[name]
    except (KeyError, TypeError):
        raise ValueError(f"scenario: unknown {name!r}; known: {sorted(SCENARIOS)}") from None


def scenario_kwargs(name: str, **overrides: Any) -> dict[str, Any]:
    """``ClusterConfig`` keyword arguments of family ``name``, with ``overrides`` on top."""
    return {**scenario(name).overrides, **overrides, "scenario": name}
