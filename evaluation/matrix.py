"""The evaluation matrix: team mixes, conditions, seeds, and the cells they make with the schedulers.

A **cell** is one (scheduler, team mix, condition, seed): one episode of ``datacenter_ops`` with that
scheduler, plus one *honest-twin* episode per gaming team of the mix (same seed, that team in honest mode,
everything else equal: ``dcops.agents.teams.honest_twin_factory``) for the gaming payoff. The hindsight bound
is a scheduler row of its own (``hindsight_bound``): its cell computes the MILP bound of the episode's
arrivals. The arrivals depend on the seed only: not on the scheduler, and not on the mix either, since a
team's job draws are independent of its kind and tactics (``dcops.agents.teams.base``) and every mix has 4
teams. So the bound has one cell per (condition, seed), with mix :data:`ALL_MIXES`; the report checks that the
arrivals fingerprints agree before it divides by a bound.

**Team mixes** (4 teams, neutral ids shuffled per seed by the env):

=================  ============================================================================
``honest``         4 cooperative teams
``one_strategic``  3 cooperative + 1 strategic
``two_strategic``  2 cooperative + 2 strategic
``adaptive``       3 cooperative + 1 adaptive strategic (backs off when flagged)
``injecting``      3 cooperative + 1 prompt-injecting strategic (``dcops.agents.teams.injecting``)
``detector_aware`` 3 cooperative + 1 detector-aware strategic: misreports only while the monitor's own
                   statistics stay under their thresholds (``dcops.agents.teams.detector_aware``)
``slow_burn``      3 cooperative + 1 slow-burn strategic: honest until it has a clean audit history, then
                   strategic (``dcops.agents.teams.slow_burn``)
=================  ============================================================================

**Conditions** (every one: a 12 h episode from 2026-07-15 06:00, 8 windows of 1.5 h, the env's defaults
otherwise; no random faults, so that conditions differ only where named):

==================  ===========================================================================================
``normal``          Leesburg, Virginia (data-center alley; temperate July), PJM grid, no fault
``chiller_trip``    as normal, and chiller 0 of 2 (half the plant) trips 3 h in (start of window 2), for good
``hot_climate``     Phoenix in July (the hottest built-in site), PJM grid, no fault
``dirty_grid``      Leesburg, Arizona Public Service grid (AZPS: the most carbon-intensive built-in profile,
                    ≈ 590 gCO2/kWh in July against PJM's ≈ 390), no fault
``oversubscribed``  as normal, and up to 6 requests per team and window (the ``oversubscribed`` scenario
                    family's demand per team, ``dcops.cluster.scenarios``; 4 teams here, so that every mix
                    shares the bound): about 1.5 times the normal demand against the same plant
``trace_workload``  as normal, with arrivals and runtimes shaped by the Azure LLM inference trace 2023
                    (``workload="azure_llm_2023"``, ``dcops.cluster.workload``)
==================  ===========================================================================================

**Scenario families** (``dcops eval --families``): each family of :mod:`dcops.cluster.scenarios` (``classic``,
``oversubscribed``, ``chiller_fault``, ``adversarial``) is a condition of its own, ``family:<name>``, played with
its own teams (the mix of its cells has the same name: a family fixes who submits as well as the plant, so it
crosses with no other mix or condition). Its episodes are the family's configuration on the run's seeds, not the
skill ladder's: with a seed key (game version 1) they are fresh episodes no ladder, search or training has seen.
The bound has one cell per (family, seed), as per (condition, seed). Three scheduler names depend on the
family they play: ``ppo`` plays the weights trained for it where they ship
(``dcops.agents.schedulers.learned.family_policy``), ``searched`` the parameters searched on it
(``dcops.agents.schedulers.parametric.searched_scheduler``; ``classic``'s in a condition that is not a family)
and ``truth_planner``, the evaluator-only planner of the skill ladder (``dcops.evaluation.truth_planner``),
plans each cell's episode from its truth and is replayed as the plan it kept; its honest twins are not played (each
would need a plan of its own), so its gaming payoff is not measured (``None``), as in the ladder.

**Seeds**: 0–19 by default (:data:`DEFAULT_SEEDS`); the same seeds for every scheduler, so comparisons pair.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from dcops.boundary import private_seed

DEFAULT_SEEDS: tuple[int, ...] = tuple(range(20))
"""Seeds of the full evaluation (fixed; the report lists them)."""

MIXES: dict[str, tuple[str, ...]] = {
    "honest": ("cooperative", "cooperative", "cooperative", "cooperative"),
    "one_strategic": ("cooperative", "cooperative", "cooperative", "strategic"),
    "two_strategic": ("cooperative", "cooperative", "strategic", "strategic"),
    "adaptive": ("cooperative", "cooperative", "cooperative", "adaptive"),
    "injecting": ("cooperative", "cooperative", "cooperative", "injecting"),
    "detector_aware": ("cooperative", "cooperative", "cooperative", "detector_aware"),
    "slow_burn": ("cooperative", "cooperative", "cooperative", "slow_burn"),
}
"""Team kinds of each mix (``dcops.agents.teams.TEAM_CLASSES``)."""

_LEESBURG = {"climate": "leesburg", "grid_region": "PJM", "faults": ()}
WINDOW_S = 18 * 300.0


def _chiller_trip() -> dict[str, Any]:
    from dcops.physics.faults import ChillerTrip

    return {**_LEESBURG, "faults": (ChillerTrip(start_s=2 * WINDOW_S, chiller=0),)}


CONDITIONS: dict[str, Any] = {
    "normal": lambda: dict(_LEESBURG),
    "chiller_trip": _chiller_trip,
    "hot_climate": lambda: {**_LEESBURG, "climate": "phoenix"},
    "dirty_grid": lambda: {**_LEESBURG, "grid_region": "AZPS"},
    "oversubscribed": lambda: {**_LEESBURG, "max_requests_per_team": 6},
    "trace_workload": lambda: {**_LEESBURG, "workload": "azure_llm_2023"},
}
"""Condition name -> a function returning its ``dcops.parallel_env`` keyword arguments (module docstring)."""

BOUND = "hindsight_bound"
"""The scheduler name of the hindsight-bound row."""
TRUTH = "truth_planner"
"""The scheduler name of the evaluator-only truth-knowing planner's row (module docstring)."""
FAMILY_PREFIX = "family:"
"""A scenario family's condition (and mix) name is this prefix and the family's name (module docstring)."""
ALL_MIXES = "all"
"""The mix of a bound cell (the bound of a (condition, seed) serves every mix: module docstring)."""


@dataclass(frozen=True)
class Cell:
    """One cell of the matrix. ``n_windows`` is part of the identity so a shortened run never resumes a full
    one."""

    scheduler: str
    mix: str
    condition: str
    seed: int
    n_windows: int = 8
    game_version: int = 0
    seed_key: str = ""
    """The run's secret (hex): the episode is reset with ``dcops.boundary.private_seed(key, seed)``, so that
    the public seed cannot be fingerprinted and replayed by a policy; empty (game version 0, as every published
    table) resets with the seed itself."""
    policy_digest: str = ""
    """SHA-256 (hex) of a trained policy's weights (``dcops.evaluation.policies.policy_digest``): a scheduler
    retrained under the same name gets new cells instead of resuming the old weights' ones; empty for a policy
    defined by code alone."""

    @property
    def cell_id(self) -> str:
        base = f"{self.scheduler}|{self.mix}|{self.condition}|{self.seed}|w{self.n_windows}"
        if self.game_version:
            base += f"|v{self.game_version}"
        if self.seed_key:
            base += f"|k{self.seed_key[:8]}"
        if self.policy_digest:
            base += f"|d{self.policy_digest[:12]}"
        return base

    @property
    def env_seed(self) -> int:
        """The seed the cell's episodes are reset with (the honest twins and the bound use the same)."""
        if not self.seed_key:
            return self.seed
        return private_seed(bytes.fromhex(self.seed_key), self.seed)

    def as_dict(self) -> dict[str, Any]:
        row = asdict(self)
        for name, default in (("game_version", 0), ("seed_key", ""), ("policy_digest", "")):  # v0 rows keep their published columns
            if row[name] == default:
                del row[name]
        return row


def family_of(condition: str) -> str | None:
    """The scenario family a condition (or mix) name stands for, or None for the conditions and mixes above."""
    return condition[len(FAMILY_PREFIX):] if condition.startswith(FAMILY_PREFIX) else None


def family_condition(family: str) -> str:
    """The condition (and mix) name of scenario ``family``; an unknown family raises ``ValueError`` naming the
    known ones."""
    from dcops.cluster.scenarios import scenario

    return FAMILY_PREFIX + scenario(family).name


def mix_kinds(mix: str) -> tuple[str, ...]:
    """The team kinds of a mix: :data:`MIXES`'s, or a family's own teams (``family:<name>``)."""
    family = family_of(mix)
    if family is None:
        return MIXES[mix]
    from dcops.cluster.config import DEFAULT_TEAM_KINDS
    from dcops.cluster.scenarios import scenario

    return tuple(scenario(family).overrides.get("team_kinds", DEFAULT_TEAM_KINDS))


def env_config(mix: str, condition: str, n_windows: int = 8) -> dict[str, Any]:
    """``dcops.parallel_env`` keyword arguments of a (mix, condition) (module docstring): a family's are its
    scenario name and the number of windows (its teams come with it)."""
    if n_windows < 1:
        raise ValueError(f"n_windows: must be >= 1, got {n_windows}")
    family = family_of(condition)
    if family is not None:
        family_condition(family)
        if mix not in (ALL_MIXES, condition):
            raise ValueError(f"mix: a family condition plays its own teams; {condition!r} takes mix {condition!r}, "
                             f"not {mix!r}")
        return {"scenario": family, "n_windows": n_windows}
    if mix == ALL_MIXES:
        mix = next(iter(MIXES))
    if mix not in MIXES:
        raise ValueError(f"mix: unknown {mix!r}; known: {sorted(MIXES)}")
    if condition not in CONDITIONS:
        raise ValueError(f"condition: unknown {condition!r}; known: {sorted(CONDITIONS)}")
    return {**CONDITIONS[condition](), "n_windows": n_windows}


def build_matrix(
    schedulers: Sequence[str],
    mixes: Sequence[str] = tuple(MIXES),
    conditions: Sequence[str] = tuple(CONDITIONS),
    seeds: Sequence[int] = DEFAULT_SEEDS,
    n_windows: int = 8,
    game_version: int = 0,
    seed_key: str = "",
    digests: Mapping[str | tuple[str, str], str] | None = None,
    families: Sequence[str] = (),
) -> list[Cell]:
    """Every cell: each mix under each condition, and each of ``families`` with its own teams (module
    docstring); the bound row once per (condition or family, seed) when ``hindsight_bound`` is among the
    schedulers. ``digests``: scheduler name, or (scheduler name, family) for a family's cells, -> its weights'
    digest (:attr:`Cell.policy_digest`)."""
    digests = digests or {}
    for field, values, known in (("mix", mixes, MIXES), ("condition", conditions, CONDITIONS)):
        unknown = [v for v in values if v not in known]
        if unknown:
            raise ValueError(f"{field}: unknown {unknown}; known: {sorted(known)}")
    family_conditions = [family_condition(f) for f in families]
    if not schedulers or not seeds or not ((mixes and conditions) or families):
        raise ValueError("the matrix needs at least one scheduler, seed, and a mix and condition or a family")
    if len(set(schedulers)) != len(schedulers):
        raise ValueError(f"schedulers: duplicate names in {list(schedulers)}")
    if len(set(families)) != len(families):
        raise ValueError(f"families: duplicate names in {list(families)}")
    played = [(m, c) for m in mixes for c in conditions] + [(c, c) for c in family_conditions]
    cells = [
        Cell(BOUND, ALL_MIXES, c, int(seed), n_windows, game_version, seed_key)
        for c in [*(conditions if mixes else ()), *family_conditions]
        for seed in seeds
        if BOUND in schedulers
    ]
    return cells + [
        Cell(s, m, c, int(seed), n_windows, game_version, seed_key,
             digests.get((s, family_of(c)), digests.get(s, "")))
        for m, c in played
        for seed in seeds
        for s in schedulers
        if s != BOUND
    ]
