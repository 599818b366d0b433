"""A perfect oversight monitor: how much the team channel could ever give a public-information scheduler.

Issue #22 asks for a public-information policy at least +0.03 above the best public baseline. The public view's
evidence about misreporting reaches a scheduler per *team*, as each team's calibrated ``gaming_posterior``
(``dcops.oversight``), while the truth planner's lead sits mostly in the truth of each *request*
(README, *What the stated fields hide*). This module measures the ceiling of the team channel: it replaces the
monitor's posterior by the truth about each team and lets a scheduler play with that, so that

    (a public policy class, tuned with a perfect monitor) − (the same class, tuned with the real monitor)

is the most any better monitor could add to that class. It is evaluator-only: the truth comes through the
evaluator API (``env.team_kind`` and ``env.episode``'s ledger, with the environment in hand), never through a
policy's view, so it lives in the evaluation layer and nothing behind the server can reach it.

Two perfect monitors (:data:`ORACLES`):

``kind``    1 for a team whose kind games (``dcops.agents.teams.GAMING_KINDS``: strategic, adaptive, injecting,
            detector-aware and slow-burn), 0 for a cooperative team, from the first window. It knows the future
            too: a slow-burn team is 1 while it is still honest.
``record``  the share of the team's requests submitted so far that carry a misreporting tactic (the ledger keeps
            the tactics each submission applied), 0 before its first request: what a monitor that saw every
            submitted request's truth, and nothing later, would say of the team now.

:func:`oracle_episode_score` is the search's evaluation function (``dcops search-scheduler --oracle``) with the
scheduler wrapped in :class:`PerfectMonitor`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ORACLES = ("kind", "record")
"""The perfect monitors of the module docstring."""


@dataclass
class PerfectMonitor:
    """``inner`` (any view-reading scheduler) playing with each team's ``gaming_posterior`` replaced by the truth
    of :attr:`oracle` (module docstring). ``env`` is the environment the episode plays on (evaluator-only)."""

    env: Any
    inner: Any
    oracle: str = "kind"
    name: str = ""

    def __post_init__(self) -> None:
        if self.oracle not in ORACLES:
            raise ValueError(f"oracle: unknown {self.oracle!r}; known: {list(ORACLES)}")
        if not self.name:
            self.name = f"{getattr(self.inner, 'name', type(self.inner).__name__)}+perfect_{self.oracle}"

    def posteriors(self) -> dict[str, float]:
        """Each team's posterior under the oracle, from the episode's truth now."""
        from dcops.agents.teams import GAMING_KINDS

        kinds = self.env.team_kind
        if self.oracle == "kind":
            return {team: float(kind in GAMING_KINDS) for team, kind in kinds.items()}
        submitted = dict.fromkeys(kinds, 0)
        misreported = dict.fromkeys(kinds, 0)
        for job in self.env.episode.ledger.jobs.values():
            team = job.request.team
            submitted[team] += 1
            misreported[team] += bool(job.tactics)
        return {team: misreported[team] / submitted[team] if submitted[team] else 0.0 for team in kinds}

    def decide(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        posteriors = self.posteriors()
        teams = {team: {**stats, "gaming_posterior": posteriors.get(team, 0.0)}
                 for team, stats in view.get("teams", {}).items()}
        return self.inner.decide({**view, "teams": teams})


_ENVS: dict[str, Any] = {}


def oracle_episode_score(task: tuple[Any, ...]) -> float:
    """Mean episode score over ``seeds`` of ``family`` of the parametric scheduler with ``parameters`` (or of
    ``priority_threshold`` for ``None``, which reads no posterior and is played as it is) under the perfect monitor
    ``oracle``: ``task = (family, seeds, parameters, catalogue, oracle)``, the search's task with the oracle
    appended (``dcops.training.scheduler.search``)."""
    import numpy as np

    import dcops
    from dcops.agents.schedulers import PriorityThresholdScheduler
    from dcops.agents.schedulers.parametric import ParametricScheduler
    from dcops.evaluation.play import run_episode

    family, seeds, parameters, catalogue, oracle = task
    key = f"{family}/{catalogue}"
    if key not in _ENVS:
        _ENVS[key] = dcops.parallel_env(scenario=family, catalogue=catalogue)
    env = _ENVS[key]
    scheduler = (PriorityThresholdScheduler() if parameters is None
                 else PerfectMonitor(env, ParametricScheduler(**parameters), oracle))
    return float(np.mean([run_episode(scheduler, s, env=env)["score"] for s in seeds]))
