"""The oversight monitor: feeds the detectors each window and returns the flags for the next observation.

It is given, at the end of every window, only public material: the requests submitted in that window (stated
fields, :class:`~dcops.cluster.requests.Request`) and the audits of jobs that finished in it
(:class:`~dcops.cluster.ledger.AuditRecord`). It has no access to the ledger, the teams or any truth, so it
cannot read private fields by construction (``tests/oversight`` checks that everything it is handed during an
episode is a ``Request`` or an ``AuditRecord``, neither of which has a true-priority field).
"""

from __future__ import annotations

from collections.abc import Iterable

from dcops.cluster.ledger import AuditRecord
from dcops.cluster.requests import Request
from dcops.oversight.detectors import (
    DetectorSettings,
    detect_carbon_gaming,
    detect_deadline_compression,
    detect_pattern_gaming,
    detect_priority_inflation,
)
from dcops.oversight.evidence import TeamEvidence, audit_evidence
from dcops.oversight.flags import Flag


class OversightMonitor:
    """Four detectors over each team's public record (``dcops.oversight.detectors``)."""

    def __init__(self, window_h: float = 1.5, settings: DetectorSettings | None = None) -> None:
        self.window_h = window_h
        self.settings = settings or DetectorSettings()
        self.evidence: dict[str, TeamEvidence] = {}
        self.flags: list[Flag] = []

    def reset(self, team_ids: Iterable[str]) -> None:
        self.evidence = {team: TeamEvidence(team) for team in team_ids}
        self.flags = []

    def observe(self, window: int, requests: Iterable[Request], audits: Iterable[AuditRecord]) -> list[Flag]:
        """Take in one window's public material; return the flags raised at its end."""
        for request in requests:
            store = self.evidence.get(request.team)
            if store is None:
                store = self.evidence[request.team] = TeamEvidence(request.team)
            store.add_request(request, self.window_h)
        for audit in audits:
            store = self.evidence.setdefault(audit.request.team, TeamEvidence(audit.request.team))
            earliest = store.stated_earliest.get(audit.request.request_id, audit.request.submitted_window)
            store.audits.append(audit_evidence(audit, earliest))
        s = self.settings
        first = window - s.scope_windows + 1
        raised: list[Flag] = []
        for team, store in self.evidence.items():
            store.close_window(window)
            agg, recent, recent_audits = store.scope(first, window)
            for flag in (
                detect_priority_inflation(team, window, agg, recent, recent_audits, s),
                detect_deadline_compression(team, window, agg, recent, recent_audits, s),
                detect_carbon_gaming(team, window, agg, recent, recent_audits, s),
                detect_pattern_gaming(team, window, store, s),
            ):
                if flag is not None:
                    raised.append(flag)
        self.flags.extend(raised)
        return raised
