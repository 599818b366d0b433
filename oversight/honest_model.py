"""The honest reporting model the version 1 monitor judges teams against, and its calibrated thresholds.

An honest team's statements are noisy and some of the noise is *systematic*: a team's deadline-slack habit
(``slack_shift``, −1, 0 or +1 window for the whole episode, ``dcops.agents.teams.base``) moves every one of its
stated slacks the same way. The version 0 monitor counted that shift as independent per-request noise, so its
evidence against an honest team with tight habits grew like √n with the episode (18 % of honest teams flagged at
8 windows, 40 % at 16). Here the habit is what it is, a team-level constant: the mean stated slack of each job
type is known *given* the habit, and the deadline detector tests a team against the tightest honest habit
(shift −1), the least favourable honest team, so a habit never builds evidence with the episode's length.

The figures come from the published team model, not from any episode's truth: ``dcops eval-oversight --norms``
simulates honest teams' statements (no scheduler, no physics: a statement does not depend on either) and writes
``data/honest_norms.json``; ``dcops eval-oversight --tune`` sets each detector's threshold on all-honest
tuning episodes and writes ``data/thresholds.json``. Both files are committed; the evaluation on fresh seeds
(``reports/oversight/README.md``) never touches the tuning seeds.

Per job type: stated priority level mean and variance; stated slack (stated deadline window − the earliest
completion window the stated duration allows) mean given the team's shift and its within-team variance; the
probability a request is stated inflexible. Pooled audit rates: an honest deadline one window early, a truly
flexible job stated inflexible, a stated priority one level above the truth.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

DATA = Path(__file__).resolve().parent / "data"
NORMS_PATH = DATA / "honest_norms.json"
THRESHOLDS_PATH = DATA / "thresholds.json"
SHIFTS = (-1, 0, 1)


@dataclass(frozen=True)
class TypeModel:
    """One job type under honest reporting. Slack figures in windows, priority in levels (0–3)."""

    priority_mean: float
    priority_var: float
    slack_mean: float
    """Marginal mean of the stated slack (over the team shift)."""
    slack_offsets: tuple[float, float, float]
    """Mean stated slack given shift −1, 0, +1, minus :attr:`slack_mean`."""
    slack_var: float
    """Variance of the stated slack within a team (given its shift)."""
    inflexible_prob: float


@dataclass(frozen=True)
class HonestModel:
    types: dict[str, TypeModel]
    shift_probs: tuple[float, float, float]
    early_rate: float
    """P(true deadline window − stated = 1) for an honest request."""
    flip_rate: float
    """P(stated inflexible | truly flexible)."""
    overstate_rate: float
    """P(stated priority = true + 1 | true below CRITICAL); 2+ levels never happens honestly."""
    samples: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "samples": self.samples, "shift_probs": list(self.shift_probs), "early_rate": self.early_rate,
            "flip_rate": self.flip_rate, "overstate_rate": self.overstate_rate,
            "types": {name: {"priority_mean": t.priority_mean, "priority_var": t.priority_var,
                             "slack_mean": t.slack_mean, "slack_offsets": list(t.slack_offsets),
                             "slack_var": t.slack_var, "inflexible_prob": t.inflexible_prob}
                      for name, t in self.types.items()},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HonestModel:
        types = {name: TypeModel(t["priority_mean"], t["priority_var"], t["slack_mean"],
                                 tuple(t["slack_offsets"]), t["slack_var"], t["inflexible_prob"])  # type: ignore[arg-type]
                 for name, t in data["types"].items()}
        return cls(types, tuple(data["shift_probs"]), data["early_rate"], data["flip_rate"],  # type: ignore[arg-type]
                   data["overstate_rate"], int(data["samples"]))


@dataclass(frozen=True)
class Thresholds:
    """Evidence (one-sided z units) at which each detector flags; ``tuning`` records how they were set."""

    priority_inflation: float
    deadline_compression: float
    carbon_flexibility_gaming: float
    pattern_gaming: float
    tuning: dict[str, Any]

    def of(self, kind: str) -> float:
        return float(getattr(self, kind))

    def as_dict(self) -> dict[str, Any]:
        return {"priority_inflation": self.priority_inflation, "deadline_compression": self.deadline_compression,
                "carbon_flexibility_gaming": self.carbon_flexibility_gaming, "pattern_gaming": self.pattern_gaming,
                "tuning": self.tuning}


@cache
def honest_model() -> HonestModel:
    return HonestModel.from_dict(json.loads(NORMS_PATH.read_text()))


def stated_priority_probs(priority_probs: tuple[float, ...], overstate_rate: float) -> tuple[float, ...]:
    """P(stated level | honest) for levels 0–3 of a job type whose true levels have ``priority_probs``: the
    honest one-level slip (``dcops.agents.teams.base``: up or down with ``overstate_rate`` each, held at the
    ends). The one formula for the posterior's surprisal and for a catalogue's honest norms."""
    r = overstate_rate
    slip = np.zeros((4, 4))
    for level in range(4):
        slip[level, level] = 1.0 - 2.0 * r
        slip[level, max(level - 1, 0)] += r
        slip[level, min(level + 1, 3)] += r
    return tuple((np.asarray(priority_probs, dtype=np.float64) @ slip).tolist())


def honest_model_for(catalogue_name: str) -> HonestModel:
    """The honest model under the public catalogue ``catalogue_name`` (``ClusterConfig.catalogue``).

    ``classic`` is :func:`honest_model`, fitted by simulation and shipped. Another catalogue changes only the
    job types' true-priority distributions (``dcops.cluster.job_types.catalogue``), so its model is the
    shipped one with each type's stated-priority mean and variance derived from the catalogue through the
    honest slip (:func:`stated_priority_probs`); every slack, flexibility and audit figure is the shipped
    one. A test checks that the derivation reproduces the fitted classic figures. Not cached (ten small
    products, once per monitor), so a rewritten norms file reaches it as it reaches :func:`honest_model`."""
    from dcops.cluster.job_types import catalogue

    fitted = honest_model()
    if catalogue_name == "classic":
        return fitted
    levels = np.arange(4, dtype=np.float64)
    types = {}
    for job_type in catalogue(catalogue_name):
        probs = np.asarray(stated_priority_probs(job_type.priority_probs, fitted.overstate_rate))
        mean = float(probs @ levels)
        types[job_type.name] = replace(fitted.types[job_type.name], priority_mean=mean,
                                       priority_var=float(probs @ (levels - mean) ** 2))
    return replace(fitted, types=types)


@cache
def thresholds() -> Thresholds:
    data = json.loads(THRESHOLDS_PATH.read_text())
    return Thresholds(data["priority_inflation"], data["deadline_compression"], data["carbon_flexibility_gaming"],
                      data["pattern_gaming"], data.get("tuning", {}))
