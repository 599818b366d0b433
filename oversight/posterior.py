"""A calibrated team-level posterior ``P(gaming | public evidence so far)`` for game version 1.

The monitor (``dcops.oversight.calibrated``) answers a yes/no question per detector against a threshold set
so that honest teams are almost never flagged; by design it says nothing in window 0 and little for the first
windows. This module gives the scheduler a graded answer from the same public material: for every team, at the
**decision time of window w**, the probability that it is a gaming team (any kind but cooperative, :data:`HONEST_KINDS`)
rather than an honest one, from a logistic model whose weights are fitted on simulated episodes by
``dcops train-posterior`` (``dcops.evaluation.posterior_training``) and shipped in
``data/team_posterior.json``.

**What "window w" means** (the same moment flags are used): the scheduler deciding window w has the stated
fields of every request submitted in windows 0..w (window w's own are pending before it), the audits issued
at the end of windows 0..w−1 (the view's ``audits`` at window w are those of window w−1) and the flags raised
at the end of windows 0..w−1. The features of window w use exactly that and nothing later: in window 0, the
stated fields of window 0's requests alone. :meth:`PublicRecord.begin_window` takes window w's new requests
and the audits issued in window w−1, once per window, in order.

**Features** (:data:`FEATURE_NAMES`; every one a function of stated fields, audits and the public catalogue):

- *stated fields* (:data:`STATED_FEATURES`; the stated-fields classifier the report compares with reads
  these alone), over the team's requests of windows 0..w. Raw: log(1 + requests), requests per window, the
  share stated at each priority level, the share described as urgent, the share stated carbon-flexible, the
  mean stated slack (stated deadline window − the earliest completion window the stated duration allows,
  ``dcops.oversight.evidence``), the mean of that slack over the stated duration in windows, the share with
  no stated slack. Against the public catalogue (``dcops.cluster.job_types``) and the honest model: the mean
  and the z of the stated priority excess over the type's norm, of the stated slack against the tightest
  honest habit and of the stated-inflexible count (the monitor's own sums, ``CalibratedMonitor.teams``,
  without its minimum counts, so that one request already says something), the mean and the largest
  surprisal ``−log P(stated level | type, honest)`` (:func:`honest_priority_probs`), and the share stated
  above the highest level the type's jobs truly have;
- *the monitor's evidence* (:data:`MONITOR_FEATURES`), computed by a shadow
  :class:`~dcops.oversight.calibrated.CalibratedMonitor` fed the same material at the same moments (so its
  statistics are the monitor's own functions, not re-derived; the environment lets the record read its own
  monitor instead, which holds the same material then, :class:`PublicRecord`'s ``monitor``): the four
  detector strengths z at window w
  (the three scoped ones and the pattern statistic), their running maxima over windows 0..w, and the
  whole-record stated and audit statistics of the three per-kind detectors;
- *audits* (:data:`AUDIT_FEATURES`), over the audits issued through window w−1: log(1 + audits), the share
  whose stated priority was above the truth and two or more levels above it, the mean stated − true priority,
  the share whose true deadline was later than stated, the mean deadline gap (windows), the share of truly
  flexible jobs stated inflexible, and the mean log(stated duration / true runtime). Shares and means are
  shrunk toward their honest values by :data:`PRIOR_WEIGHT` pseudo-audits, so a team with no audits sits at
  the honest value.

**The model.** One logistic regression per window index (``models[w]``; a window past the last trained
index uses the last model): ``P = 1 / (1 + exp(−(b + Σ β_i (x_i − m_i) / s_i)))``. Why per window rather
than one model with the window as a feature: what a share or a z is worth depends on how much evidence lies
behind it and the audits only start in window 1, so a single linear model would have to learn every
feature × window interaction; eight small models (42 weights each, fitted on 4,800 teams each) need none,
and each is calibrated for its own window, which the reliability table of ``reports/oversight/posterior.md``
checks. Inference is numpy only.

**What the probability is calibrated to**: the training mix of team kinds (``dcops.evaluation
.posterior_training``, 40 % of teams gaming). Under another prior odds ``π/(1 − π)`` the posterior odds scale
by the ratio of prior odds (:meth:`TeamPosterior.probabilities`, ``prior``).

Use, per window (the call ``env.py`` makes; the inputs are those of its monitor)::

    posterior = TeamPosterior.load()                       # once
    record = PublicRecord(team_ids, window_h, catalogue)   # at reset (ClusterConfig's window_h, catalogue)
    record.begin_window(w, requests_submitted_in_w, audits_issued_in_w_minus_1)
    posterior.probabilities(record)                        # {team_id: P(gaming)}
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from dcops.cluster.job_types import catalogue
from dcops.cluster.ledger import AuditRecord
from dcops.cluster.observation import view_catalogue
from dcops.cluster.requests import PUBLIC_FIELDS, Priority, Request
from dcops.oversight.calibrated import CalibratedMonitor, CalibratedSettings
from dcops.oversight.evidence import stated_earliest
from dcops.oversight.flags import FLAG_KINDS
from dcops.oversight.honest_model import honest_model, honest_model_for, stated_priority_probs

WEIGHTS_PATH = Path(__file__).resolve().parent / "data" / "team_posterior.json"
HONEST_KINDS = frozenset({"cooperative"})
"""The label the posterior is trained on: a team of these kinds is honest, of any other kind gaming (the
shipped weights are fitted on strategic, adaptive and injecting teams: ``dcops.evaluation.posterior_training``)."""

STATED_FEATURES: tuple[str, ...] = (
    "requests_log", "requests_per_window", "share_low", "share_medium", "share_high", "share_critical",
    "urgent_share", "flexible_share", "slack_mean_windows", "slack_per_duration", "zero_slack_share",
    "priority_excess_mean", "priority_excess_z", "priority_surprisal_mean", "priority_surprisal_max",
    "above_type_range_share", "slack_tight_mean", "slack_tight_z", "inflexible_excess_mean", "inflexible_z",
)
_KIND_SHORT = ("priority", "deadline", "carbon")
MONITOR_FEATURES: tuple[str, ...] = (
    *(f"z_{k}" for k in (*_KIND_SHORT, "pattern")),
    *(f"z_max_{k}" for k in (*_KIND_SHORT, "pattern")),
    *(f"z_stated_{k}" for k in _KIND_SHORT),
    *(f"z_audit_{k}" for k in _KIND_SHORT),
)
AUDIT_FEATURES: tuple[str, ...] = (
    "audits_log", "audit_overstated_share", "audit_overstated_by_2_share", "audit_priority_excess_mean",
    "audit_deadline_later_share", "audit_deadline_gap_mean", "audit_hidden_flexibility_share",
    "audit_runtime_log_ratio_mean",
)
FEATURE_NAMES: tuple[str, ...] = STATED_FEATURES + MONITOR_FEATURES + AUDIT_FEATURES

PRIOR_WEIGHT = 2.0
"""Pseudo-audits at the honest value behind every audit share and mean."""
HONEST_OVERSTATED = 0.05
"""Honest share of audits whose stated priority is above the truth (one-level slips up, ``teams.base``)."""
HONEST_DEADLINE_LATER = 0.15
"""Honest share of audits whose true deadline is later than stated (a one-window safety margin)."""
HONEST_HIDDEN_FLEXIBILITY = 0.08
"""Honest share of truly flexible jobs stated inflexible (the honest flip)."""
SURPRISAL_FLOOR = 1e-3
"""Honest probability below which a stated level counts as this improbable (a level honest reporting never
states for the type: two above its highest true level)."""


@cache
def top_true_levels(catalogue_name: str = "classic") -> dict[str, int]:
    """Per job type of the catalogue, its highest true priority level (0–3)."""
    return {j.name: max(i for i, p in enumerate(j.priority_probs) if p > 0) for j in catalogue(catalogue_name)}


@cache
def honest_priority_probs(catalogue_name: str = "classic") -> dict[str, tuple[float, ...]]:
    """Per job type, P(stated level | honest) for levels 0–3: the catalogue's true-priority distribution
    through the honest one-level slip (``HonestModel.overstate_rate`` each way, held at the ends;
    :func:`~dcops.oversight.honest_model.stated_priority_probs`)."""
    r = honest_model().overstate_rate
    return {j.name: stated_priority_probs(j.priority_probs, r) for j in catalogue(catalogue_name)}


# ---------------------------------------------------------------------------------------------- the record
@dataclass
class _TeamRecord:
    """One team's running sums: stated fields of its requests and its audits."""

    requests: int = 0
    priority_counts: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    urgent: int = 0
    flexible: int = 0
    slack_sum: float = 0.0
    slack_per_duration_sum: float = 0.0
    zero_slack: int = 0
    surprisal_sum: float = 0.0
    surprisal_max: float = 0.0
    above_type_range: int = 0
    audits: int = 0
    priority_audits: int = 0
    overstated: int = 0
    overstated_by_2: int = 0
    priority_excess_sum: float = 0.0
    deadline_later: int = 0
    deadline_gap_sum: float = 0.0
    truly_flexible: int = 0
    hidden_flexibility: int = 0
    runtime_log_ratio_sum: float = 0.0
    z_max: list[float] = field(default_factory=lambda: [0.0] * len(FLAG_KINDS))


class PublicRecord:
    """What the posterior knows of an episode's teams: their stated requests and their audits, window by
    window (module docstring), plus a shadow monitor fed the same material (or, given ``monitor``, the
    environment's own, which holds the same material at each decision time).

    :param team_ids: the episode's neutral team ids.
    :param window_h: length of an admission window, h (``ClusterConfig.window_h``; 1.5 by default).
    :param catalogue: the episode's public job catalogue (``ClusterConfig.catalogue``): the honest norms the
        stated priorities and the shadow monitor are judged by.
    :param monitor: a monitor to read instead of keeping a shadow, where its owner feeds it the same material at
        the same moments (the environment's own: window w's requests through ``take_requests`` before
        :meth:`begin_window` of w, the audits issued in window w−1 through ``observe`` at the end of w−1). It
        must judge by the same norms (:meth:`can_share`), so the probabilities are the shadow's to the bit, and
        the shadow's work is not done twice.
    """

    def __init__(self, team_ids: Iterable[str], window_h: float = 1.5, catalogue: str = "classic",
                 monitor: CalibratedMonitor | None = None) -> None:
        self.team_ids = list(team_ids)
        self.window_h = window_h
        self.teams = {team: _TeamRecord() for team in self.team_ids}
        self.catalogue = catalogue
        self._honest_probs = honest_priority_probs(catalogue)
        self._top_levels = top_true_levels(catalogue)
        if monitor is not None and not self.can_share(monitor, window_h, catalogue):
            raise ValueError("monitor: a shared monitor must be a CalibratedMonitor with the default settings, "
                             f"window_h={window_h} and the honest model of catalogue {catalogue!r}")
        self._shared = monitor is not None
        if monitor is None:
            monitor = CalibratedMonitor(window_h=window_h, model=honest_model_for(catalogue))
            monitor.reset(self.team_ids)
        self.monitor = monitor
        self.window = -1
        """The window whose decision time the record is at (−1 before the first :meth:`begin_window`)."""
        self._strengths: dict[str, dict[str, float]] = {}
        self._monitor_values: dict[str, tuple[dict[str, float], dict[str, float]]] = {}
        self._matrix = None

    def begin_window(self, window: int, requests: Iterable[Request], audits: Iterable[AuditRecord]) -> None:
        """Take in what becomes public at the decision time of ``window``: the requests submitted in it and
        the audits issued at the end of the window before (none for window 0). Call once per window, in order."""
        if window <= self.window:
            raise ValueError(f"begin_window({window}) after window {self.window}: windows must increase")
        requests, audits = list(requests), list(audits)
        for request in requests:
            self._add_request(request)
        for audit in audits:
            self._add_audit(audit)
        # The monitor at window w holds requests of 0..w and audits of 0..w−1: the scheduler's view.
        self._strengths = {}
        if self._shared:  # its owner has fed it (the class docstring)
            if self.monitor.requests_taken != window:
                raise RuntimeError(f"begin_window({window}): the shared monitor has taken the requests of window "
                                   f"{self.monitor.requests_taken}; its owner calls take_requests({window}, ...) "
                                   "first")
            for team in self.team_ids:
                self._strengths[team] = dict(zip(FLAG_KINDS, self.monitor.decision_strengths(team, window),
                                                 strict=True))
        else:
            self.monitor.observe(window, requests, audits)
            for _, team, kind, z in self.monitor.strengths:  # this window's, each (team, kind) once
                self._strengths.setdefault(team, {})[kind] = z
            self.monitor.strengths.clear()  # the shadow's own lists: read once, kept from growing
            self.monitor.flags.clear()
        for team in self.team_ids:
            z, record = self._strengths[team], self.teams[team]
            record.z_max = [max(m, z[k]) for m, k in zip(record.z_max, FLAG_KINDS, strict=True)]
        # What the features read of the monitor, taken now: a shared monitor goes on to this window's audits.
        self._monitor_values = {team: (self.monitor.teams[team].sums(0, window), self.monitor.team_audit_z(team))
                                for team in self.team_ids}
        self.window = window
        self._matrix: np.ndarray | None = None

    @staticmethod
    def can_share(monitor: Any, window_h: float, catalogue: str) -> bool:
        """Whether ``monitor`` computes what the record's own shadow would: a :class:`CalibratedMonitor` (not a
        subclass) with the default settings, the same window length and the honest model of ``catalogue``."""
        return (type(monitor) is CalibratedMonitor and monitor.settings == CalibratedSettings()
                and monitor.window_h == window_h and monitor.model == honest_model_for(catalogue))

    def begin_window_from_view(self, view: Mapping[str, Any]) -> None:
        """:meth:`begin_window` from the scheduler's structured view (``infos["scheduler"]["view"]``): its
        pending requests submitted in this window and its audits (those issued in the window before). A view of
        another catalogue than the record's (``view["catalogue"]``, ``classic`` where absent) raises
        ``ValueError``: its statements would be judged by the wrong norms."""
        seen = view_catalogue(view)
        if seen != self.catalogue:
            raise ValueError(f"catalogue: the view's is {seen!r} but this record judges by {self.catalogue!r}; "
                             f"build it with PublicRecord(..., catalogue={seen!r})")
        window = int(view["window"])
        requests = [request_from_public(r) for r in view["pending"] if r["submitted_window"] == window]
        self.begin_window(window, requests, [audit_from_public(a) for a in view["audits"]])

    def _team(self, team: str) -> _TeamRecord:
        """``team``'s record; a team the episode did not name at reset (first seen in a request, or in an audit
        when the record began mid-episode) is kept, and scored, as the monitor keeps it."""
        record = self.teams.get(team)
        if record is None:
            record = self.teams[team] = _TeamRecord()
            self.team_ids.append(team)
        return record

    def _add_request(self, request: Request) -> None:
        record = self._team(request.team)
        record.requests += 1
        record.priority_counts[int(request.priority)] += 1
        record.urgent += "URGENT" in request.description
        record.flexible += bool(request.carbon_flexible)
        earliest = stated_earliest(request, self.window_h)
        slack = request.deadline_window - earliest
        record.slack_sum += slack
        record.slack_per_duration_sum += slack / (earliest - request.submitted_window + 1)
        record.zero_slack += slack <= 0
        honest = self._honest_probs[request.job_type][int(request.priority)]
        surprisal = -math.log(max(honest, SURPRISAL_FLOOR))
        record.surprisal_sum += surprisal
        record.surprisal_max = max(record.surprisal_max, surprisal)
        record.above_type_range += int(request.priority) > self._top_levels[request.job_type]

    def _add_audit(self, audit: AuditRecord) -> None:
        request = audit.request
        record = self._team(request.team)
        record.audits += 1
        if audit.true_priority is not None:  # version 1 audits name the true priority
            excess = int(request.priority) - int(audit.true_priority)
            record.priority_audits += 1
            record.overstated += excess >= 1
            record.overstated_by_2 += excess >= 2
            record.priority_excess_sum += excess
        gap = audit.true_deadline_window - request.deadline_window
        record.deadline_later += gap >= 1
        record.deadline_gap_sum += gap
        if audit.true_carbon_flexible:
            record.truly_flexible += 1
            record.hidden_flexibility += not request.carbon_flexible
        true_runtime_h = audit.true_runtime_h if audit.true_runtime_h is not None else audit.realised_runtime_h
        record.runtime_log_ratio_sum += math.log(max(request.duration_h, 1e-3) / max(true_runtime_h, 1e-3))

    # ------------------------------------------------------------------ features
    def features(self, team: str) -> np.ndarray:
        """The :data:`FEATURE_NAMES` vector of ``team`` at the current window (after :meth:`begin_window`)."""
        if self.window < 0:
            raise RuntimeError("call begin_window() first")
        r = self.teams[team]
        w = self.window
        n = max(r.requests, 1)
        monitor = self.monitor
        # The monitor's own per-request bookkeeping against the honest norms, and its audit statistics, as they
        # were at this window's decision time (begin_window)
        sums, audit_z = self._monitor_values[team]
        inflexible_excess = sums["inflexible"] - sums["inflexible_expected"]
        stated = [math.log1p(r.requests), r.requests / (w + 1), *(c / n for c in r.priority_counts),
                  r.urgent / n, r.flexible / n, r.slack_sum / n, r.slack_per_duration_sum / n, r.zero_slack / n,
                  sums["priority_excess"] / n, sums["priority_excess"] / math.sqrt(max(sums["priority_var"], 1e-9)),
                  r.surprisal_sum / n, r.surprisal_max, r.above_type_range / n,
                  sums["slack_dev_tight"] / n, -sums["slack_dev_tight"] / math.sqrt(max(sums["slack_var"], 1e-9)),
                  inflexible_excess / n, inflexible_excess / math.sqrt(max(sums["inflexible_var"], 1e-9))]
        strengths = self._strengths[team]  # the monitor's detector strengths at window w
        stated_z = monitor.stated_z(sums)
        kinds = FLAG_KINDS[:3]
        evidence = [*(strengths[k] for k in FLAG_KINDS), *r.z_max, *(stated_z[k] for k in kinds),
                    *(audit_z[k] for k in kinds)]
        a, pa = PRIOR_WEIGHT, r.priority_audits
        audits = [
            math.log1p(r.audits),
            (r.overstated + a * HONEST_OVERSTATED) / (pa + a),
            r.overstated_by_2 / (pa + a),
            r.priority_excess_sum / (pa + a),
            (r.deadline_later + a * HONEST_DEADLINE_LATER) / (r.audits + a),
            r.deadline_gap_sum / (r.audits + a),
            (r.hidden_flexibility + a * HONEST_HIDDEN_FLEXIBILITY) / (r.truly_flexible + a),
            r.runtime_log_ratio_sum / (r.audits + a),
        ]
        return np.array(stated + evidence + audits, dtype=np.float64)

    def feature_matrix(self, teams: Sequence[str] | None = None) -> np.ndarray:
        """Features of ``teams`` (default every team, in :attr:`team_ids` order), shape (teams, features)."""
        if teams is not None:
            return np.stack([self.features(t) for t in teams])
        if self._matrix is None:  # once per window: the env may ask more than once
            self._matrix = np.stack([self.features(t) for t in self.team_ids])
        return self._matrix


def request_from_public(item: Mapping[str, Any]) -> Request:
    """A :class:`Request` from its wire form (``Request.public_dict``, or a view's pending entry)."""
    values = {name: item[name] for name in PUBLIC_FIELDS}
    values["priority"] = Priority[item["priority"]] if isinstance(item["priority"], str) else Priority(item["priority"])
    return Request(**values)


def audit_from_public(item: Mapping[str, Any]) -> AuditRecord:
    """An :class:`AuditRecord` from its wire form (``AuditRecord.public_dict``, or a view's audit entry)."""
    true_priority = item.get("true_priority")
    return AuditRecord(
        request=request_from_public(item), realised_runtime_h=float(item["realised_runtime_h"]),
        true_deadline_window=int(item["true_deadline_window"]), true_carbon_flexible=bool(item["true_carbon_flexible"]),
        completed_window=int(item["completed_window"]), on_time=bool(item["on_time"]),
        true_priority=None if true_priority is None else Priority[true_priority],
        true_runtime_h=item.get("true_runtime_h"), outcome=item.get("outcome"), score=item.get("score"),
    )


# ---------------------------------------------------------------------------------------------- the model
@dataclass(frozen=True)
class LogisticModel:
    """``P = σ(intercept + Σ coef_i (x_i − mean_i) / scale_i)`` over the features it names."""

    feature_names: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float

    def logit(self, x: np.ndarray) -> np.ndarray:
        """Log-odds for rows ``x`` (shape (..., features))."""
        return self.intercept + ((x - self.mean) / self.scale) @ self.coef

    def as_dict(self) -> dict[str, Any]:
        return {"mean": self.mean.tolist(), "scale": self.scale.tolist(), "coef": self.coef.tolist(),
                "intercept": float(self.intercept)}

    @classmethod
    def from_dict(cls, feature_names: Sequence[str], data: Mapping[str, Any]) -> LogisticModel:
        arrays = [np.asarray(data[k], dtype=np.float64) for k in ("mean", "scale", "coef")]
        if any(a.shape != (len(feature_names),) for a in arrays):
            raise ValueError(f"weights do not match the {len(feature_names)} features {list(feature_names)}")
        return cls(tuple(feature_names), *arrays, float(data["intercept"]))


def sigmoid(z: np.ndarray) -> np.ndarray:
    """The logistic function, stable for large |z|."""
    return np.exp(-np.logaddexp(0.0, -z))


class TeamPosterior:
    """Per-window logistic models over a subset of :data:`FEATURE_NAMES` (module docstring).

    :param feature_names: the features the models read, a subset of :data:`FEATURE_NAMES`.
    :param models: one model per window index 0, 1, …; windows past the last use the last.
    :param training_prior: the share of gaming teams the models were fitted on.
    """

    def __init__(self, feature_names: Sequence[str], models: Sequence[LogisticModel], training_prior: float) -> None:
        unknown = set(feature_names) - set(FEATURE_NAMES)
        if unknown:
            raise ValueError(f"unknown features {sorted(unknown)}")
        if not models:
            raise ValueError("need at least one window model")
        self.feature_names = tuple(feature_names)
        self.columns = np.array([FEATURE_NAMES.index(n) for n in self.feature_names])
        self.models = list(models)
        self.training_prior = training_prior

    def model_for(self, window: int) -> LogisticModel:
        return self.models[min(max(window, 0), len(self.models) - 1)]

    def predict(self, features: np.ndarray, window: int, prior: float | None = None) -> np.ndarray:
        """P(gaming) for full :data:`FEATURE_NAMES` rows ``features`` (shape (..., features)) at ``window``;
        ``prior`` re-weights to another share of gaming teams (module docstring)."""
        z = self.model_for(window).logit(features[..., self.columns])
        if prior is not None:
            p0 = self.training_prior
            z = z + math.log(prior / (1.0 - prior)) - math.log(p0 / (1.0 - p0))
        return sigmoid(z)

    def probabilities(self, record: PublicRecord, prior: float | None = None) -> dict[str, float]:
        """{team id: P(gaming | public evidence at the decision time of ``record.window``)}."""
        p = self.predict(record.feature_matrix(), record.window, prior)
        return {team: float(v) for team, v in zip(record.team_ids, p, strict=True)}

    # ------------------------------------------------------------------ saving and loading
    def as_dict(self) -> dict[str, Any]:
        return {"feature_names": list(self.feature_names), "training_prior": self.training_prior,
                "windows": [m.as_dict() for m in self.models]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TeamPosterior:
        names = tuple(data["feature_names"])
        return cls(names, [LogisticModel.from_dict(names, m) for m in data["windows"]], float(data["training_prior"]))

    @classmethod
    def load(cls, path: str | Path = WEIGHTS_PATH, model: str = "posterior") -> TeamPosterior:
        """The shipped posterior (``model="posterior"``) or the stated-fields baseline the report compares it
        with (``model="stated_fields"``), from ``data/team_posterior.json`` or ``path``."""
        data = json.loads(Path(path).read_text())
        if model not in data["models"]:
            raise KeyError(f"no model {model!r} in {path}; it has {sorted(data['models'])}")
        return cls.from_dict(data["models"][model])
