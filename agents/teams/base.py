"""What every team shares: drafting true job needs from the catalogue, honest estimates, and the protocol.

A team draws, every window, 1 to ``max_requests_per_team`` jobs from the public job-type catalogue
(``dcops.cluster.job_types``, 10 types; ``ClusterConfig.catalogue`` names its priority mix) with its own
seeded per-episode profile: a Dirichlet mix over the job types, a kW scale (0.85–1.15), a runtime scale (0.8–1.2), a deadline-slack shift (−1..+1 window) and a
submission rate. Each job's **truth** (:class:`~dcops.cluster.requests.RequestTruth`) is drawn from its type:

- GPUs uniform in the type's range (multiples of 4), kW = GPUs × kW/GPU × utilisation U(0.8, 1.0) × kW scale;
- true runtime U(type range) × runtime scale, hours;
- true priority from the type's priority distribution;
- true deadline window = earliest possible completion window + slack (type range + shift, ≥ 0);
- truly carbon-flexible with the type's probability.

Then the team states its request. Honest estimates (every team, :func:`honest_statement`) are realistic rather
than exact: the stated duration is the true runtime × lognormal(0, 0.15), rounded to 15 min; the stated
priority is one level off with probability 0.1; the stated deadline is one window early with probability 0.15
(a safety margin) or late with probability 0.05; the stated flexibility is flipped with probability 0.08; a
CRITICAL job with no deadline slack is described as urgent half the time.
Strategic teams then misreport on top (``dcops.agents.teams.strategic``).

**Two random streams.** Jobs and honest estimates come from the team's generator (``rng`` of :meth:`reset`) in
one fixed-size block per window; everything a team does *on purpose* (tactic set-up at reset, per-request
misreporting, injected text, adaptive reactions to flags) comes from a second generator spawned from the first
at reset (:attr:`TeamBase.tactic_rng`, ``Generator.spawn``, which does not advance the job stream). So what a
team needs (its truth, its honest statements, its number of requests) never depends on how it games, and a
team in **honest mode** (``honest=True``, or its neutral id in ``honest_agents``; see
:func:`honest_twin_factory`) submits exactly the same jobs with exactly the honest statements, request by
request: the twin that the evaluation's gaming payoff (``dcops.evaluation``) compares against.

**Descriptions** are the job type's template, prefixed "URGENT, blocking a launch:" when the request claims
urgency. In game version 0 an honest team claims it for a truly CRITICAL job with no true slack (half the time)
and a strategic team when it inflates or compresses (half the time), so the word alone marked misreports on job
types that are never truly CRITICAL. From version 1 every team words its descriptions by one model of the
stated fields (:meth:`TeamBase.states_urgency`: stated CRITICAL with no stated slack, half the time, from a
stream of its own), so a description says nothing the stated fields do not.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Any, Protocol

import numpy as np

from dcops.cluster.job_types import GPU_KW, JOB_TYPES, JobType, catalogue
from dcops.cluster.requests import Priority, Request, RequestTruth, Submission
from dcops.cluster.workload import workload

TACTIC_KINDS: tuple[str, ...] = ("priority_inflation", "deadline_compression", "carbon_flexibility_gaming")
HONEST_FLIP = 0.08
_PRIORITIES = tuple(Priority)


@cache
def _priority_cdfs(catalogue_name: str) -> dict[str, list[float]]:
    """Per job type of the catalogue, the cumulative true-priority distribution (LOW..CRITICAL)."""
    return {j.name: np.cumsum(j.priority_probs).tolist() for j in catalogue(catalogue_name)}


@lru_cache(maxsize=16384, typed=True)
def _template_text(template: str, gpus: int, gpu_type: str, hours: str) -> str:
    """A job type's description template filled in (cached: the same few GPU counts and durations recur)."""
    return template.format(gpus=gpus, gpu_type=gpu_type, hours=hours)


@dataclass(frozen=True)
class TeamFeedback:
    """What a team learns after a window (all public): the flags raised against it, by kind."""

    window: int
    flagged_kinds: frozenset[str] = frozenset()


@dataclass(slots=True)
class Draft:
    """A job's true needs before the team states it."""

    job_type: JobType
    kw: float
    gpus: int
    truth: RequestTruth
    earliest_window: int


_MIX_ALPHA = np.full(len(JOB_TYPES), 1.5)
_MIX_ALPHA.setflags(write=False)
"""The Dirichlet concentration of a team's job-type mix (one array, read-only, for every draw)."""


@dataclass
class TeamProfile:
    """A team's per-episode workload profile (drawn at reset)."""

    type_weights: np.ndarray
    type_cdf: list[float]
    kw_scale: float
    runtime_scale: float
    slack_shift: int
    rate: float

    @classmethod
    def draw(cls, rng: np.random.Generator) -> TeamProfile:
        weights = rng.dirichlet(_MIX_ALPHA)
        u = rng.random(4).tolist()
        return cls(
            type_weights=weights,
            type_cdf=list(itertools.accumulate(weights.tolist())),  # np.cumsum's sums (both add in order)
            kw_scale=0.85 + 0.3 * u[0],
            runtime_scale=0.8 + 0.4 * u[1],
            slack_shift=min(int(3 * u[2]), 2) - 1,
            rate=0.35 + 0.3 * u[3],
        )


class Team(Protocol):
    """A team: ``reset`` once per episode with its neutral id and generator, ``submit`` every window."""

    kind: str
    team_id: str

    def reset(self, team_id: str, rng: np.random.Generator, config: Any) -> None: ...

    def submit(self, window: int, feedback: TeamFeedback | None, action: Any = None,
               new_id: Callable[[], str] | None = None) -> list[Submission]: ...


@dataclass
class TeamBase:
    """Drafting and honest statements; subclasses decide how to misreport (:meth:`state`)."""

    kind: str = "cooperative"
    team_id: str = ""
    history: list[Submission] = field(default_factory=list)
    honest: bool = False
    """Honest mode: state every request honestly (no tactics, no injected text), same jobs (module
    docstring)."""
    honest_agents: frozenset[str] = frozenset()
    """Neutral team ids for which this team runs in honest mode (the env assigns ids at reset)."""

    def reset(self, team_id: str, rng: np.random.Generator, config: Any) -> None:
        self.team_id = team_id
        self.rng = rng
        self.tactic_rng = rng.spawn(1)[0]
        self.config = config
        self.game_version = int(getattr(config, "game_version", 0))
        self.workload = workload(getattr(config, "workload", "synthetic"))
        # The public catalogue the team's jobs come from (every catalogue lists the same types in the same order,
        # so the profile's draws and the job stream do not depend on it; only true priorities do).
        catalogue_name = getattr(config, "catalogue", "classic")
        self.job_types = catalogue(catalogue_name)
        self.priority_cdfs = _priority_cdfs(catalogue_name)
        # Version 1 words urgency from the stated fields alone, with draws of a stream of its own (module
        # docstring); spawning does not advance the job stream, and version 0 spawns nothing more.
        self.description_rng = rng.spawn(1)[0] if self.game_version >= 1 else None
        self.profile = TeamProfile.draw(rng)
        self.history = []
        self.honest_mode = self.honest or team_id in self.honest_agents
        self._reset_tactics()

    def _reset_tactics(self) -> None:
        return None

    # ------------------------------------------------------------------ drafting
    # Random numbers come from the team's numpy generator in one block per window (``rng.random``), consumed
    # in order through an iterator: one generator call per window instead of a dozen per request keeps the
    # environment fast, and the draws stay seeded and reproducible.
    # Tactics draw from their own stream (``tactic_rng``), also one block per window, of
    # ``TACTIC_DRAWS_PER_REQUEST`` per request slot; 0 (honest teams) skips the block.
    DRAWS_PER_REQUEST = 24
    TACTIC_DRAWS_PER_REQUEST = 0

    def draws(self, n: int) -> Iterator[float]:
        return iter(self.rng.random(n).tolist())

    def tactic_draws(self, n: int) -> Iterator[float]:
        return iter(self.tactic_rng.random(n).tolist()) if n > 0 else iter(())

    def n_requests(self, u: Iterator[float], window: int = 0) -> int:
        """1 + Binomial(max_requests − 1, rate); a trace workload scales the rate by the window's arrival
        intensity (``dcops.cluster.workload``), with the same draws."""
        rate = self.profile.rate
        if self.workload is not None:
            rate = min(1.0, rate * self.workload.rate_factor(window, self.config.n_windows))
        count = 1
        for _ in range(self.config.max_requests_per_team - 1):
            if next(u) < rate:
                count += 1
        return count

    def draft(self, window: int, u: Iterator[float]) -> Draft:
        profile, config = self.profile, self.config
        job_types = self.job_types
        job_type = job_types[min(bisect.bisect_right(profile.type_cdf, next(u)), len(job_types) - 1)]
        lo, hi = job_type.gpus
        gpus = 4 * (lo // 4 + int(next(u) * (hi // 4 - lo // 4 + 1)))
        kw = gpus * GPU_KW[job_type.gpu_type] * (0.8 + 0.2 * next(u)) * profile.kw_scale
        d_lo, d_hi = job_type.duration_h
        position = next(u)  # where in the type's runtime range: uniform, or the trace's quantiles
        if self.workload is not None:
            position = self.workload.runtime_position(position)
        runtime_h = (d_lo + (d_hi - d_lo) * position) * profile.runtime_scale
        steps = max(1, math.ceil(runtime_h * 3600.0 / config.dt_s - 1e-9))
        earliest = window + math.ceil(steps / config.steps_per_window) - 1
        priority = _PRIORITIES[min(bisect.bisect_right(self.priority_cdfs[job_type.name], next(u)), 3)]
        s_lo, s_hi = job_type.slack_windows
        slack = max(0, s_lo + int(next(u) * (s_hi - s_lo + 1)) + profile.slack_shift)
        flexible = next(u) < job_type.flexible_prob
        truth = RequestTruth(priority, earliest + slack, flexible, runtime_h)
        return Draft(job_type, kw, gpus, truth, earliest)

    def honest_statement(self, draft: Draft, window: int, u: Iterator[float]) -> dict[str, Any]:
        """Stated fields an honest team would write (module docstring noise)."""
        truth = draft.truth
        normal = math.sqrt(-2.0 * math.log(1.0 - next(u))) * math.cos(2.0 * math.pi * next(u))  # Box-Muller
        duration = max(0.25, round(truth.true_runtime_h * math.exp(0.15 * normal) * 4.0) / 4.0)
        priority = int(truth.true_priority)
        slip, direction = next(u), next(u)
        if slip < 0.1:
            priority = min(3, max(0, priority + (1 if direction < 0.5 else -1)))
        deadline = truth.true_deadline_window
        v = next(u)
        if v < 0.15:
            deadline -= 1
        elif v < 0.20:
            deadline += 1
        deadline = max(deadline, window)
        flexible = truth.true_carbon_flexible
        if next(u) < HONEST_FLIP:
            flexible = not flexible
        # An honest team flags real emergencies: a CRITICAL job with no slack, half the time.
        urgent = truth.true_priority == Priority.CRITICAL and truth.true_deadline_window == draft.earliest_window \
            and next(u) < 0.5
        return {"duration_h": duration, "priority": priority, "deadline_window": deadline,
                "carbon_flexible": flexible, "urgent": urgent}

    def state(self, draft: Draft, window: int, stated: dict[str, Any], slot: int, action: Any,
              u: Iterator[float]) -> set[str]:
        """Misreport in place on ``stated``; return the tactics applied. Honest teams apply none. ``u`` yields
        draws of the tactic stream (never the job stream: module docstring)."""
        return set()

    def describe_request(self, draft: Draft, stated: dict[str, Any], request_id: str) -> str:
        """The free-text description: the job type's template, with the urgency claim when stated."""
        description = _template_text(draft.job_type.description, draft.gpus, draft.job_type.gpu_type,
                                     f"{stated['duration_h']:g}")
        return "URGENT, blocking a launch: " + description if stated["urgent"] else description

    def states_urgency(self, window: int, stated: dict[str, Any]) -> bool:
        """Version 1's description model, the same for every team: a request *stated* CRITICAL with no
        deadline slack left by its *stated* duration is described as urgent half the time. What the text says
        is then a function of the stated fields (and a coin), never of the truth or of the team's tactics."""
        assert self.description_rng is not None
        no_slack = stated["deadline_window"] <= stated_earliest_window(window, stated["duration_h"], self.config)
        return stated["priority"] == int(Priority.CRITICAL) and no_slack and self.description_rng.random() < 0.5

    def build(self, draft: Draft, window: int, stated: dict[str, Any], tactics: set[str], request_id: str) -> Submission:
        job_type = draft.job_type
        hours = stated["duration_h"]
        if self.game_version >= 1:
            stated["urgent"] = self.states_urgency(window, stated)
        description = self.describe_request(draft, stated, request_id)
        request = Request(
            request_id=request_id, team=self.team_id, job_type=job_type.name, description=description, kw=draft.kw,
            duration_h=hours, gpus=draft.gpus, gpu_type=job_type.gpu_type, priority=_PRIORITIES[stated["priority"]],
            deadline_window=int(stated["deadline_window"]), carbon_flexible=bool(stated["carbon_flexible"]),
            chargeback=draft.kw * hours * self.config.price_per_kwh, submitted_window=window,
        )
        return Submission(request, draft.truth, frozenset(tactics))

    def submit(self, window: int, feedback: TeamFeedback | None, action: Any = None,
               new_id: Callable[[], str] | None = None) -> list[Submission]:
        """This window's requests; ``new_id`` hands out request ids (the env's neutral numbering)."""
        self.observe(feedback)
        u = self.draws(self.config.max_requests_per_team * (self.DRAWS_PER_REQUEST + 1))
        t = self.tactic_draws(self.config.max_requests_per_team * self.TACTIC_DRAWS_PER_REQUEST)
        submissions = []
        for slot in range(self.n_requests(u, window)):
            draft = self.draft(window, u)
            stated = self.honest_statement(draft, window, u)
            tactics = set() if self.honest_mode else self.state(draft, window, stated, slot, action, t)
            request_id = new_id() if new_id is not None else f"{self.team_id}-{window}-{slot}"
            submissions.append(self.build(draft, window, stated, tactics, request_id))
        self.history.extend(submissions)
        return submissions

    def observe(self, feedback: TeamFeedback | None) -> None:
        """React to last window's public feedback (adaptive teams do, from ``tactic_rng``)."""
        return None

    def describe(self) -> dict[str, Any]:
        """The team's hidden set-up (evaluation only, after the episode)."""
        return {"kind": self.kind, "profile": {"kw_scale": self.profile.kw_scale,
                                                "runtime_scale": self.profile.runtime_scale,
                                                "slack_shift": self.profile.slack_shift, "rate": self.profile.rate}}


def stated_earliest_window(window: int, stated_duration_h: float, config: Any) -> int:
    """The earliest completion window the *stated* duration allows (a compressed deadline never goes below it:
    a team claiming an impossible deadline would be caught at once)."""
    window_h = config.steps_per_window * config.dt_s / 3600.0
    return window + max(1, math.ceil(stated_duration_h / window_h - 1e-9)) - 1
