"""A parametric public-information scheduler: the policy class a search (``dcops search-scheduler``) tunes.

It reads only the public view, like every baseline, and scores each pending request by a log-linear model of
what an operator could know::

    s = a·log W(stated priority) + b·log W̄(job type) − c·min(flags_so_far, 5) − d·audited deadline gap
        + e·tight + f·windows waited − g·p·log 2 + k·log(stated kWh / 100) − l·(windows it occupies − 1)

with W = 1, 2, 4, 8 (``PRIORITY_WEIGHT``), W̄ the catalogue's expected weight of the job type (public norms of
the view's ``catalogue``, ``dcops.cluster.job_types.catalogue``), ``flags_so_far`` the oversight flags the request's team has drawn (all kinds),
the team's mean audited deadline gap (how much earlier than the truth its deadlines were, windows), ``tight`` 1
when the stated deadline leaves no room to wait a window, and p the team's ``gaming_posterior`` (the calibrated
P(gaming | public evidence) of the version 1 view, ``dcops.oversight.posterior``; 0 where the view has none):
``g = 1`` discounts a sure gamer's stated priority by one level, as ``oversight_aware`` does; k weighs the
value at stake (a rejection's cost grows with it) and l the windows a job holds its power (stated runtime).
**Posterior mix** m (``posterior_mix``, clipped to [0, 1]): W(stated priority) in the first term becomes
(1 − m·p)·W(stated) + m·p·W̄(job type), the expected weight if a gaming team's stated priority said nothing and
its job type's norm said all: an interaction of the posterior with the catalogue that the additive terms cannot
express (searched with ``--parameters bayes``; no shipped file moves it).
Requests are taken in decreasing ``s``; one with
``s ≥ threshold`` is DEFERRED to the cleanest window its stated deadline allows if it is stated flexible and
``carbon_shift · (carbon now / carbon then − 1) ≥ 1`` on the public forecast (``carbon_shift = 10``: 10 %
cleaner suffices, as ``carbon_greedy``), else ACCEPTED if it fits power (planning estimate with safety
``margin``, :class:`~dcops.agents.schedulers.base.Capacity`) and a zone now, else DEFERRED to the next window
if its stated deadline allows, else REJECTED. One with ``s < threshold`` is REJECTED. **Reserve** (trunk
reservation, as in admission control of circuit networks): a request with ``s < reserve_level`` is accepted only
if it leaves at least ``reserve`` of the job-power budget free, so long low-value work does not take the power
that later, more valuable requests need (it is deferred or rejected as one that does not fit).

Its defaults (``a = 1``, every other weight 0, ``threshold = log 2``, ``margin = 0.03``, no reserve) make it
``priority_threshold`` decision for decision (tested); the search starts there.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields
from functools import cache
from pathlib import Path
from typing import Any

from dcops.agents.schedulers.base import (
    PRIORITY_WEIGHT,
    Capacity,
    accept,
    can_wait,
    defer,
    reject,
    window_hours,
    windows_needed,
)
from dcops.cluster.job_types import catalogue
from dcops.cluster.observation import view_catalogue

SIZE_REFERENCE_KWH = 100.0
"""Stated energy (kW × h) at which the size term is 0."""


@cache
def type_weights(catalogue_name: str = "classic") -> dict[str, float]:
    """W̄ per job type: the expected priority weight of the type under the public catalogue ``catalogue_name``
    (the view's ``catalogue``; ``classic`` where a view has none)."""
    weights = tuple(PRIORITY_WEIGHT.values())  # LOW..CRITICAL, the order of ``priority_probs``
    return {job.name: float(sum(p * w for p, w in zip(job.priority_probs, weights, strict=True)))
            for job in catalogue(catalogue_name)}


@dataclass
class ParametricScheduler:
    """The scheduler of the module docstring; every field is a searchable parameter."""

    stated: float = 1.0
    type_prior: float = 0.0
    flag_discount: float = 0.0
    deadline_gap_discount: float = 0.0
    tight_bonus: float = 0.0
    wait_bonus: float = 0.0
    carbon_shift: float = 0.0
    posterior_discount: float = 0.0
    threshold: float = math.log(2.0)
    margin: float = 0.03
    size_bonus: float = 0.0
    length_penalty: float = 0.0
    reserve: float = 0.0
    reserve_level: float = 0.0
    posterior_mix: float = 0.0
    name: str = "parametric"

    PARAMETERS = ("stated", "type_prior", "flag_discount", "deadline_gap_discount", "tight_bonus", "wait_bonus",
                  "carbon_shift", "posterior_discount", "threshold", "margin", "size_bonus", "length_penalty",
                  "reserve", "reserve_level", "posterior_mix")
    """Every searchable parameter, in vector order. Parameter files written before the last five existed load
    with them at their defaults (no size or length term, no reserve, no posterior mix)."""
    PARAMETER_SETS = {"base": PARAMETERS[:10], "extended": PARAMETERS[:14],
                      "bayes": (*PARAMETERS[:10], "posterior_mix")}
    """What a search may move (``dcops search-scheduler --parameters``): ``base``, the ten of the shipped files;
    ``extended``, with the size and length terms and the reserve; or ``bayes``, the ten and the posterior mix;
    the others stay at their defaults."""

    @classmethod
    def from_vector(cls, vector: Any, name: str = "parametric") -> ParametricScheduler:
        """Build from a vector in the order of :attr:`PARAMETERS`."""
        values = [float(v) for v in vector]
        if len(values) != len(cls.PARAMETERS):
            raise ValueError(f"vector: expected {len(cls.PARAMETERS)} values ({', '.join(cls.PARAMETERS)}), "
                             f"got {len(values)}")
        return cls(**dict(zip(cls.PARAMETERS, values, strict=True)), name=name)

    def as_dict(self) -> dict[str, float]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name in self.PARAMETERS}

    def _carbon_gain(self, request: dict[str, Any], view: dict[str, Any], window_h: float) -> tuple[float, int | None]:
        """(carbon now / cleanest reachable − 1, that window) for a stated-flexible request; (0, None) else."""
        if not request["carbon_flexible"]:
            return 0.0, None
        forecast = view["carbon_forecast_g_per_kwh"]
        now = view["window"]
        latest = min(view["n_windows"] - 1, request["deadline_window"] - windows_needed(request, window_h) + 1)
        if latest <= now:
            return 0.0, None
        best = min(range(now + 1, latest + 1), key=lambda w: forecast[w])
        return max(0.0, forecast[now] / max(forecast[best], 1e-9) - 1.0), best

    def score(self, request: dict[str, Any], view: dict[str, Any], window_h: float) -> float:
        team = view["teams"].get(request["team"], {})
        flags = min(5.0, float(sum(team.get("flags_so_far", {}).values())))
        gap = max(0.0, float(team.get("audited_mean_deadline_gap", 0.0) or 0.0))
        tight = 0.0 if can_wait(request, view, window_h) else 1.0
        posterior = float(team.get("gaming_posterior", 0.0) or 0.0)
        norm = type_weights(view_catalogue(view)).get(request["job_type"], 2.0)
        mix = min(1.0, max(0.0, self.posterior_mix)) * posterior
        s = (self.stated * math.log((1.0 - mix) * PRIORITY_WEIGHT[request["priority"]] + mix * norm)
             + self.type_prior * math.log(norm)
             - self.flag_discount * flags - self.deadline_gap_discount * gap
             + self.tight_bonus * tight + self.wait_bonus * request["windows_waited"]
             - self.posterior_discount * posterior * math.log(2.0))
        if self.size_bonus:
            s += self.size_bonus * math.log(max(request["kw"] * request["duration_h"], 1e-3) / SIZE_REFERENCE_KWH)
        if self.length_penalty:
            s -= self.length_penalty * (windows_needed(request, window_h) - 1)
        return s

    def _reserved(self, request: dict[str, Any], s: float, capacity: Capacity) -> bool:
        """Whether the reserve keeps ``request`` (score ``s``) out of the power it would take."""
        return (self.reserve > 0.0 and s < self.reserve_level
                and capacity.power_kw - request["kw"] < self.reserve * capacity.job_budget_kw)

    def decide(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        capacity = Capacity(view, self.margin)
        window_h = window_hours(view)
        scored = sorted(((self.score(r, view, window_h), r["submitted_window"], r["request_id"], r)
                         for r in view["pending"]), key=lambda t: (-t[0], t[1], t[2]))
        decisions = []
        for s, _, rid, request in scored:
            if s < self.threshold - 1e-12:
                decisions.append(reject(rid))
                continue
            carbon, cleaner = self._carbon_gain(request, view, window_h)
            if cleaner is not None and self.carbon_shift * carbon >= 1.0:
                decisions.append(defer(rid, cleaner))
            elif not self._reserved(request, s, capacity) and capacity.admit(request):
                decisions.append(accept(rid))
            elif can_wait(request, view, window_h):
                decisions.append(defer(rid, view["window"] + 1))
            else:
                decisions.append(reject(rid))
        return decisions


def data_dir() -> Path:
    """Where the searched parameters ship (``dcops search-scheduler`` writes them)."""
    return Path(__file__).resolve().parent / "data"


def searched_path(family: str) -> Path:
    """The shipped file of the parameters ``dcops search-scheduler`` found for scenario ``family`` (it may be
    absent)."""
    return data_dir() / f"parametric_{family}.json"


def searched_scheduler(family: str) -> ParametricScheduler:
    """The parameters ``dcops search-scheduler`` found for scenario ``family`` (``FileNotFoundError`` if none
    ship)."""
    path = searched_path(family)
    if not path.exists():
        raise FileNotFoundError(f"no searched parameters for family {family!r} ({path}); run "
                                f"`dcops search-scheduler --family {family}`")
    parameters = json.loads(path.read_text())["parameters"]
    return ParametricScheduler(**parameters, name="searched")
