"""Oversight flags: what a detector says about a team, with public evidence only.

A :class:`Flag` names the team (its neutral id), the kind of gaming suspected, the window it was raised at the
end of, a severity (``low``, ``medium``, ``high``), a confidence in [0, 1] and a sentence of evidence built
only from public facts (stated fields, the team's history, audits of finished jobs) plus the ids of the
requests it rests on. It reaches the scheduler (and the teams) in the next window's observation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

FLAG_KINDS: tuple[str, ...] = (
    "priority_inflation", "deadline_compression", "carbon_flexibility_gaming", "pattern_gaming",
)
SEVERITIES: tuple[str, ...] = ("low", "medium", "high")


@dataclass(frozen=True, slots=True)
class Flag:
    team: str
    kind: str
    window: int
    severity: str
    confidence: float
    evidence: str
    request_ids: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "team": self.team,
            "kind": self.kind,
            "window": self.window,
            "severity": self.severity,
            "confidence": self.confidence,
            "evidence": self.evidence,
            "request_ids": list(self.request_ids),
        }
