"""Structured actions of the placement task: ``Place(job_id, gpu_id, rationale)`` or ``Defer(rationale)``.

The rationale is a short free-text string (at most :data:`MAX_RATIONALE_CHARS` characters are kept) that is
logged in the action history and shown on the dashboard; it is never scored.

:func:`action_from_dict` and :func:`action_from_text` turn the JSON or the text a remote agent or a
language model sends into an action; they raise :class:`ActionParseError` naming the bad field, so a caller
can turn it into an invalid action instead of losing the episode.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

MAX_RATIONALE_CHARS = 500


@dataclass(frozen=True)
class Place:
    """Start job ``job_id`` on GPU ``gpu_id`` this tick."""

    job_id: str
    gpu_id: str
    rationale: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"action": "place", "job_id": self.job_id, "gpu_id": self.gpu_id, "rationale": self.rationale}

    def __str__(self) -> str:
        return f"place({self.job_id}, {self.gpu_id})"


@dataclass(frozen=True)
class Defer:
    """Start nothing this tick."""

    rationale: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"action": "defer", "rationale": self.rationale}

    def __str__(self) -> str:
        return "defer()"


Action = Place | Defer


class ActionParseError(ValueError):
    """The submitted action cannot be read; the message names the field."""


def action_from_dict(data: dict[str, Any]) -> Action:
    """Read ``{"action": "place", "job_id": ..., "gpu_id": ..., "rationale": ...}`` or ``{"action": "defer"}``."""
    if not isinstance(data, dict):
        raise ActionParseError(f"action: expected a JSON object, got {type(data).__name__}")
    kind = data.get("action")
    rationale = data.get("rationale", "")
    if not isinstance(rationale, str):
        raise ActionParseError("rationale: must be a string")
    if kind == "defer":
        return Defer(rationale)
    if kind == "place":
        for key in ("job_id", "gpu_id"):
            if not isinstance(data.get(key), str) or not data[key]:
                raise ActionParseError(f"{key}: a non-empty string is required for a place action")
        return Place(data["job_id"], data["gpu_id"], rationale)
    raise ActionParseError(f"action: must be 'place' or 'defer', got {kind!r}")


_PLACE_RE = re.compile(r"^\s*place\(\s*([^,\s)]+)\s*,\s*([^,\s)]+)\s*\)\s*(?:[-:#]\s*(.*))?$", re.IGNORECASE | re.DOTALL)
_DEFER_RE = re.compile(r"^\s*defer\(\s*\)\s*(?:[-:#]\s*(.*))?$", re.IGNORECASE | re.DOTALL)


def action_from_text(text: str) -> Action:
    """Read ``"place(J1, l4-0) - rationale"`` or ``"defer() - rationale"`` (the dashboard's action syntax)."""
    match = _PLACE_RE.match(text)
    if match:
        return Place(match.group(1), match.group(2), (match.group(3) or "").strip())
    match = _DEFER_RE.match(text)
    if match:
        return Defer((match.group(1) or "").strip())
    raise ActionParseError(f"action: expected 'place(JOB, GPU)' or 'defer()', got {text[:80]!r}")
