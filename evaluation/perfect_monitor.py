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

Two perfect monitors (:data:`MONITORS`):

``kind``    1 for a team whose kind games (``dcops.agents.teams.GAMING_KINDS``: strategic, adaptive, injecting,
            detector-aware and slow-burn), 0 for a cooperative team, from the first window. It knows the future
            too: a slow-burn team is 1 while it is still honest.
``record``  the share of the team's requests submitted so far that carry a misreporting tactic (the ledger keeps
            the tactics each submission applied), 0 before its first request: what a monitor that saw every
            submitted request's truth, and nothing later, would say of the team now.

**Told requests** (``told:<share>``, :class:`TruthHints`): the other channel, per request. The scheduler keeps the
real monitor, and a fixed share of the pending requests (chosen by a hash of the request id, so the same requests
whatever the scheduler does) reach it with their stated priority, deadline, flexibility and runtime replaced by
their truth, as the present-truth planner is told them (``dcops.evaluation.truth_planner.told_request``). It
measures how much of each request's truth a public view would have to reveal before a public policy class reached
a given lead: the game's premise is that none is revealed before the audit.

:func:`oracle_episode_score` is the search's evaluation function (``dcops search-scheduler --oracle``) with the
scheduler wrapped by :func:`with_oracle`.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Any

MONITORS = ("kind", "record")
"""The perfect monitors of the module docstring."""
TOLD = "told:"
"""Prefix of the told-requests oracle: ``told:<share>``, share in (0, 1]."""


def parse_oracle(oracle: str) -> tuple[str, float | None]:
    """``("kind" | "record", None)`` or ``("told", share)`` for an oracle's name; ``ValueError`` naming the field
    for anything else."""
    if oracle in MONITORS:
        return oracle, None
    if isinstance(oracle, str) and oracle.startswith(TOLD):
        try:
            share = float(oracle[len(TOLD):])
        except ValueError:
            share = math.nan
        if 0.0 < share <= 1.0:
            return "told", share
    raise ValueError(f"oracle: unknown {oracle!r}; known: kind, record, told:<share in (0, 1]>")


@dataclass
class PerfectMonitor:
    """``inner`` (any view-reading scheduler) playing with each team's ``gaming_posterior`` replaced by the truth
    of :attr:`oracle` (module docstring). ``env`` is the environment the episode plays on (evaluator-only)."""

    env: Any
    inner: Any
    oracle: str = "kind"
    name: str = ""

    def __post_init__(self) -> None:
        if self.oracle not in MONITORS:
            raise ValueError(f"oracle: unknown {self.oracle!r}; known: {list(MONITORS)}")
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


def told_coin(request_id: str) -> float:
    """A uniform number in [0, 1) fixed by the request id alone (BLAKE2b), so which requests are told never
    depends on the scheduler's play."""
    digest = hashlib.blake2b(request_id.encode(), digest_size=8, person=b"dcops-told").digest()
    return int.from_bytes(digest, "big") / 2.0**64


@dataclass
class TruthHints:
    """``inner`` (any view-reading scheduler) playing with the pending requests whose :func:`told_coin` is below
    ``share`` told their truth (module docstring); everything else in the view is as the episode gave it."""

    env: Any
    inner: Any
    share: float
    name: str = ""

    def __post_init__(self) -> None:
        if not 0.0 < self.share <= 1.0:
            raise ValueError(f"share: must be in (0, 1], got {self.share!r}")
        if not self.name:
            self.name = f"{getattr(self.inner, 'name', type(self.inner).__name__)}+told_{self.share:g}"

    def decide(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        from dcops.evaluation.truth_planner import told_request

        pending = [told_request(self.env, r) if told_coin(r["request_id"]) < self.share else r
                   for r in view["pending"]]
        return self.inner.decide({**view, "pending": pending})


def with_oracle(env: Any, inner: Any, oracle: str) -> Any:
    """``inner`` wrapped by the oracle named ``oracle`` (:func:`parse_oracle`)."""
    kind, share = parse_oracle(oracle)
    return TruthHints(env, inner, share) if kind == "told" else PerfectMonitor(env, inner, kind)


_ENVS: dict[str, Any] = {}


def oracle_episode_score(task: tuple[Any, ...]) -> float:
    """Mean episode score over ``seeds`` of ``family`` of the parametric scheduler with ``parameters`` under the
    oracle ``oracle`` (:func:`with_oracle`), or of ``priority_threshold`` for ``None``, played as it is (the
    reference every lead is measured against): ``task = (family, seeds, parameters, catalogue, oracle)``, the
    search's task with the oracle appended (``dcops.training.scheduler.search``)."""
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
                 else with_oracle(env, ParametricScheduler(**parameters), oracle))
    return float(np.mean([run_episode(scheduler, s, env=env)["score"] for s in seeds]))
