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
            detector-aware and slow-burn), 0 for any other (cooperative; a learner team too, which may misreport:
            the families have none), from the first window. It knows the future
            too: a slow-burn team is 1 while it is still honest.
``record``  the share of the team's requests submitted in earlier windows that carry a misreporting tactic (the
            ledger keeps the tactics each submission applied), 0 before its first such request: what a monitor
            that saw the truth of every request of the windows before, and nothing of this window's requests or
            later, would say of the team now (this window's own requests would be per-request truth).

**Told requests** (``told:<share>``, :class:`TruthHints`): the other channel, per request. The scheduler keeps the
real monitor, and a share of the pending requests (each chosen by a hash of its own public fields, so a request is
told or not whatever the scheduler does, and which requests are told differs from episode to episode) reach it
with their stated priority, deadline, flexibility and runtime replaced by their truth, as the present-truth planner
is told them (``dcops.evaluation.truth_planner.told_request``). A view that revealed a request's truth would say
so, so a told request is shown as coming from a clean copy of its team (``<team>/told``: the team's statistics
with no posterior, no flags and no audited deadline gap), and a scheduler's discounts for suspected teams leave it
alone. It measures how much of each request's truth a public view would have to reveal before a public policy
class reached a given lead: the game's premise is that none is revealed before the audit.

:func:`with_oracle` is what the search (``dcops search-scheduler --oracle``) wraps each candidate in.
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

    def posteriors(self, window: int) -> dict[str, float]:
        """Each team's posterior under the oracle at the start of window ``window``, from the episode's truth."""
        from dcops.agents.teams import GAMING_KINDS

        kinds = self.env.team_kind
        if self.oracle == "kind":
            return {team: float(kind in GAMING_KINDS) for team, kind in kinds.items()}
        submitted = dict.fromkeys(kinds, 0)
        misreported = dict.fromkeys(kinds, 0)
        for job in self.env.episode.ledger.jobs.values():
            if job.request.submitted_window >= window:  # this window's requests: per-request truth, not the team's
                continue
            team = job.request.team
            submitted[team] += 1
            misreported[team] += bool(job.tactics)
        return {team: misreported[team] / submitted[team] if submitted[team] else 0.0 for team in kinds}

    def decide(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        posteriors = self.posteriors(view["window"])
        teams = {team: {**stats, "gaming_posterior": posteriors.get(team, 0.0)}
                 for team, stats in view["teams"].items()}
        return self.inner.decide({**view, "teams": teams})


def told_coin(request: dict[str, Any]) -> float:
    """A uniform number in [0, 1) fixed by the request's own public fields (id, team, job type, power, submission
    window; BLAKE2b): whether a request is told never depends on the scheduler's play, and request ``r0007`` of
    one episode is not told just because ``r0007`` of another was."""
    key = "|".join((request["request_id"], request["team"], request["job_type"], repr(float(request["kw"])),
                    str(request["submitted_window"])))
    digest = hashlib.blake2b(key.encode(), digest_size=8, person=b"dcops-told").digest()
    return (int.from_bytes(digest, "big") >> 11) / 2.0**53


def clean_team(stats: dict[str, Any]) -> dict[str, Any]:
    """A team's view statistics without the evidence of misreporting (posterior, flags, audited deadline gap):
    the team a told request is shown as coming from."""
    out = {**stats, "gaming_posterior": 0.0, "audited_mean_deadline_gap": None}
    for key in ("flags_last_window", "flags_so_far"):
        if key in out:
            out[key] = dict.fromkeys(out[key], 0)
    return out


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

        teams = dict(view["teams"])
        pending = []
        for request in view["pending"]:
            if told_coin(request) < self.share:
                clean = f"{request['team']}/told"
                teams.setdefault(clean, clean_team(view["teams"][request["team"]]))
                request = {**told_request(self.env, request), "team": clean}
            pending.append(request)
        return self.inner.decide({**view, "pending": pending, "teams": teams})


def with_oracle(env: Any, inner: Any, oracle: str) -> Any:
    """``inner`` wrapped by the oracle named ``oracle`` (:func:`parse_oracle`)."""
    kind, share = parse_oracle(oracle)
    return TruthHints(env, inner, share) if kind == "told" else PerfectMonitor(env, inner, kind)
