"""Detection metrics against the hidden truth (evaluation only: computed after the episode).

The unit is a (team, window) pair per detector. It is **positive** for a per-kind detector when the team
applied that tactic to at least one request it submitted in the detector's scope (that window or the two
before, ``DetectorSettings.scope_windows``), and positive for the pattern detector when it applied any tactic
in that scope. It is **flagged** when the detector raised its kind of flag on the team at the end of that
window. Precision = TP/(TP+FP), recall = TP/(TP+FN), false-positive rate = FP/(FP+TN); the FPR on honest teams
counts only the cooperative teams' pairs (every one of which is negative).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from dcops.oversight.flags import FLAG_KINDS, Flag

TACTIC_FOR_KIND = {
    "priority_inflation": "priority_inflation",
    "deadline_compression": "deadline_compression",
    "carbon_flexibility_gaming": "carbon_flexibility_gaming",
}


@dataclass
class Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    honest_fp: int = 0
    honest_n: int = 0

    def add(self, other: Counts) -> None:
        self.tp += other.tp
        self.fp += other.fp
        self.fn += other.fn
        self.tn += other.tn
        self.honest_fp += other.honest_fp
        self.honest_n += other.honest_n

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else float("nan")

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else float("nan")

    @property
    def fpr(self) -> float:
        return self.fp / (self.fp + self.tn) if self.fp + self.tn else float("nan")

    @property
    def honest_fpr(self) -> float:
        return self.honest_fp / self.honest_n if self.honest_n else float("nan")

    def as_dict(self) -> dict[str, Any]:
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn, "tn": self.tn, "precision": self.precision,
                "recall": self.recall, "fpr": self.fpr, "honest_fpr": self.honest_fpr,
                "honest_fp": self.honest_fp, "honest_n": self.honest_n}


@dataclass
class DetectionReport:
    counts: dict[str, Counts] = field(default_factory=lambda: {k: Counts() for k in FLAG_KINDS})

    def add(self, other: DetectionReport) -> None:
        for kind, counts in other.counts.items():
            self.counts[kind].add(counts)

    def as_dict(self) -> dict[str, Any]:
        return {kind: c.as_dict() for kind, c in self.counts.items()}


def score_detection(
    flags: Iterable[Flag], tactics_by_team_window: dict[str, list[set[str]]], honest_teams: Iterable[str],
    n_windows: int, scope_windows: int = 3,
) -> DetectionReport:
    """Compare flags with the truth (module docstring).

    :param tactics_by_team_window: per team, the set of tactics it applied in each window (length n_windows).
    :param honest_teams: the cooperative teams' ids.
    """
    flagged = {(f.team, f.window, f.kind) for f in flags}
    honest = set(honest_teams)
    report = DetectionReport()
    for team, per_window in tactics_by_team_window.items():
        for window in range(n_windows):
            scope: set[str] = set()
            for w in range(max(0, window - scope_windows + 1), window + 1):
                scope |= per_window[w]
            for kind in FLAG_KINDS:
                truth = bool(scope) if kind == "pattern_gaming" else TACTIC_FOR_KIND[kind] in scope
                raised = (team, window, kind) in flagged
                c = report.counts[kind]
                if truth and raised:
                    c.tp += 1
                elif truth:
                    c.fn += 1
                elif raised:
                    c.fp += 1
                else:
                    c.tn += 1
                if team in honest:
                    c.honest_n += 1
                    c.honest_fp += int(raised)
    return report
