"""The skill ladder of the cluster game: every rung on the same seeds of each scenario family.

``dcops eval-cluster --ladder FAMILIES`` plays, on each family of :mod:`dcops.cluster.scenarios` and its own
seeds, the rungs from the floor up:

=========================  =====================================================================================
``random``                 ACCEPT, REJECT or DEFER at random (``RandomScheduler``)
``reject_all``             nothing runs
``accept_all``             everything is admitted
``priority_threshold``     the public-information baselines of ``dcops.agents.schedulers``
``earliest_deadline``
``carbon_greedy``
``oversight_aware``        ``priority_threshold`` discounting stated priority and deadline by the team posterior
``searched``               the parametric public-information scheduler as ``dcops search-scheduler`` tuned it on
                           the family's search seeds (``agents/schedulers/data``; the rung is left out where none ship)
``ppo``                    the RL scheduler (``dcops.agents.schedulers.learned``): the weights trained on the family
                           where they ship (``ppo_scheduler_<family>.npz``), else the matrix-trained weights, on the
                           families whose scheduler observation the network reads (the number of teams and zones it
                           was trained with: ``SlotPolicy.fits``); left out of the others
``rolling_planner``        re-plans the rest of the episode every window on the stated fields, for the score
                           (``dcops.agents.schedulers.planner``): does planning on public information pay?
``present_truth_planner``  the same planner told the truth of the requests already submitted, never of later
                           arrivals (evaluator-only, ``truth_planner.PresentTruthPlanner``)
``truth_planner``          knows every request's truth and every arrival (evaluator-only, ``truth_planner``)
``hindsight_bound``        the hindsight MILP bound's throughput value (no score: it is a bound on value)
=========================  =====================================================================================

Per rung: episode score (mean ± sd), its paired difference with the best public baseline (the one of
:data:`PUBLIC_BASELINES` with the best mean score on the family; 95 % t-interval over seeds), throughput value
as a fraction of the bound, incident windows per episode, and the **gaming payoff**: per gaming team, value
completed when misreporting minus value completed by its honest twin (the same seed with that team honest,
``dcops.agents.teams.honest_twin_factory``), summed over the family's gaming teams, also as a percentage of what
those twins delivered. The truth planner's payoff is not measured (it would need a plan per twin). A ``ppo`` row
also records the weights it was played by (``weights``: the package-data file and the first 12 hex digits of
its SHA-256, :func:`dcops.agents.schedulers.learned.family_weights`), printed under the family's table.

``--rungs NAMES`` replays only those rungs (``truth_planner`` included if named; a rung that cannot play a
family, :func:`family_rungs`, is left out there) and :func:`merge_rows` puts
them into the report already written, replacing the same rungs' rows; the bound of every replayed seed must
equal the one on file (the same game), or the merge is refused.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dcops.intervals import t_interval

PUBLIC_BASELINES: tuple[str, ...] = ("priority_threshold", "earliest_deadline", "carbon_greedy")
"""The public-information baselines; the best of them on a family is the reference of the paired differences."""
RUNGS: tuple[str, ...] = ("random", "reject_all", "accept_all", *PUBLIC_BASELINES, "oversight_aware", "searched",
                          "ppo", "rolling_planner")
"""The rungs that play through the public view or observation (each with its gaming payoff)."""
SEARCHED = "searched"
LEARNED_RUNG = "ppo"
PRESENT_TRUTH = "present_truth_planner"
"""The evaluator-only rung told the submitted requests' truth; it plays like the public rungs (gaming payoff
included), with the environment in hand."""
PLAYED: tuple[str, ...] = (*RUNGS, PRESENT_TRUTH)
"""Every rung :func:`play_seed` plays one scheduler episode for (the truth planner and the bound apart)."""
TRUTH = "truth_planner"
BOUND = "hindsight_bound"


def _scheduler(name: str, family: str, env: Any) -> Any:
    """Rung ``name``'s scheduler for an episode of ``family`` on ``env`` (which only the evaluator-only rung
    reads)."""
    from dcops.agents.schedulers import BASELINES, LEARNED, OversightAwareScheduler, RandomScheduler
    from dcops.agents.schedulers.parametric import searched_scheduler
    from dcops.agents.schedulers.planner import RollingPlanner
    from dcops.evaluation.truth_planner import PresentTruthPlanner

    if name == PRESENT_TRUTH:
        return PresentTruthPlanner(env)
    if name == "rolling_planner":
        return RollingPlanner()
    if name == LEARNED_RUNG:
        return LEARNED[name](family=family)
    if name == "random":
        return RandomScheduler()
    if name == "oversight_aware":
        return OversightAwareScheduler()
    if name == SEARCHED:
        return searched_scheduler(family)
    return BASELINES[name]()


def family_rungs(family: str, env: Any = None) -> tuple[str, ...]:
    """The rungs of :data:`PLAYED` that can play ``family``: ``searched`` only where its parameters ship, ``ppo``
    only where its network reads the family's observation (``env``: a family env already built, else one is)."""
    from dcops.agents.schedulers.learned import family_policy
    from dcops.agents.schedulers.parametric import searched_path

    has_search = searched_path(family).exists()
    env = env if env is not None else family_env(family)
    # The ladder's envs build the view, from which a network trained with the team posterior takes it.
    learned_fits = family_policy(family).fits(env.observation_space("scheduler"), posterior_from_view=True)
    return tuple(r for r in PLAYED if (r != SEARCHED or has_search) and (r != LEARNED_RUNG or learned_fits))


def family_env(family: str, honest_agents: frozenset[str] = frozenset(), **overrides: Any) -> Any:
    """``dcops.parallel_env`` of ``family`` with ``honest_agents`` in honest mode."""
    import dcops
    from dcops.agents.teams import honest_twin_factory

    factory = honest_twin_factory(honest_agents) if honest_agents else None
    return dcops.parallel_env(scenario=family, team_factory=factory, **overrides)


def completed_value_by_team(env: Any) -> dict[str, float]:
    """Per team: true value of the work completed (Σ of its positive on-time and unfinished job scores)."""
    value = dict.fromkeys(env.teams, 0.0)
    for row in env.episode_truth():
        if row["outcome"] in ("on_time", "unfinished") and row["score"] > 0:
            value[row["team"]] += row["score"]
    return value


def _row(summary: dict[str, Any], bound: float) -> dict[str, Any]:
    return {"score": summary["score"], "throughput_value": summary["throughput_value"],
            "fraction_of_bound": summary["throughput_value"] / bound if bound > 0 else math.nan,
            "incident_windows": int(summary["incident_windows"])}


def play_seed(family: str, seed: int, rungs: Sequence[str] | None = None, truth: bool = True,
              **overrides: Any) -> list[dict[str, Any]]:
    """Every rung on one seed of ``family`` (or those of ``rungs`` that can play it, :func:`family_rungs`): one row
    per rung, with the bound as a row of its own."""
    from dcops.agents.teams import GAMING_KINDS
    from dcops.evaluation.play import run_episode
    from dcops.evaluation.truth_planner import play_truth_planner

    env = family_env(family, **overrides)
    run_episode(_scheduler("reject_all", family, env), seed, env=env)
    bound = env.hindsight_bound()
    gaming = [agent for agent, team in env.teams.items() if team.kind in GAMING_KINDS]
    twins = {agent: family_env(family, frozenset({agent}), **overrides) for agent in gaming}
    rows = [{"family": family, "seed": seed, "rung": BOUND, "score": math.nan,
             "throughput_value": bound.throughput_value, "fraction_of_bound": 1.0, "incident_windows": 0,
             "bound_status": bound.status}]
    playable = family_rungs(family, env)
    for name in playable if rungs is None else [r for r in rungs if r in playable]:
        summary = run_episode(_scheduler(name, family, env), seed, env=env)
        value = completed_value_by_team(env)
        payoff, twin_value = 0.0, 0.0
        for agent, twin_env in twins.items():
            twin = run_episode(_scheduler(name, family, twin_env), seed, env=twin_env)
            if twin["arrivals_key"] != summary["arrivals_key"]:
                raise RuntimeError(f"{family} seed {seed}: the honest twin of {agent} drew different jobs")
            honest = completed_value_by_team(twin_env)[agent]
            payoff += value[agent] - honest
            twin_value += honest
        row = {"family": family, "seed": seed, "rung": name, **_row(summary, bound.throughput_value),
               "gaming_payoff": payoff, "twin_value": twin_value}
        if name == LEARNED_RUNG:
            from dcops.agents.schedulers.learned import family_weights

            file, digest = family_weights(family)
            row["weights"] = f"{file} sha256:{digest[:12]}"
        rows.append(row)
    if truth:
        result = play_truth_planner(env, seed)
        rows.append({"family": family, "seed": seed, "rung": TRUTH,
                     **_row(result.summary, bound.throughput_value), "truth_start": result.start,
                     "truth_objective": result.objective})
    return rows


def _play_task(task: tuple[str, int, dict[str, Any]]) -> list[dict[str, Any]]:
    family, seed, overrides = task
    return play_seed(family, seed, **overrides)


def run_ladder(families: Sequence[str], seeds_per_family: int | None = None,
               progress: Callable[[str, int], None] | None = None, workers: int = 1,
               rungs: Sequence[str] | None = None, **overrides: Any) -> list[dict[str, Any]]:
    """Every rung (or only ``rungs``, ``truth_planner`` among them if named) on the first ``seeds_per_family``
    seeds of each family (all of them when ``None``), over ``workers`` processes; the rows come in
    (family, seed) order whatever the workers."""
    from dcops.cluster.scenarios import scenario
    from dcops.evaluation.play import ordered_map

    if rungs is not None:
        unknown = [r for r in rungs if r not in (*PLAYED, TRUTH)]
        if unknown:
            raise ValueError(f"rungs: unknown {unknown}; known: {[*PLAYED, TRUTH]}")
        for family in families:
            if TRUTH not in rungs and not set(rungs) & set(family_rungs(family)):
                raise ValueError(f"rungs: none of {list(rungs)} can play family {family!r} "
                                 f"(it plays {list(family_rungs(family))})")
        overrides = {**overrides, "rungs": tuple(r for r in rungs if r != TRUTH), "truth": TRUTH in rungs}
    tasks = []
    for family in families:
        seeds = scenario(family).seeds
        tasks += [(family, seed, overrides) for seed in (seeds[:seeds_per_family] if seeds_per_family else seeds)]
    rows: list[dict[str, Any]] = []
    for (family, seed, _), got in ordered_map(_play_task, tasks, workers):
        rows += got
        if progress is not None:
            progress(family, seed)
    return rows


_INT_FIELDS = ("seed", "incident_windows")
_TEXT_FIELDS = ("family", "rung", "bound_status", "truth_start", "truth_objective", "weights")


def read_rows(path: Any) -> list[dict[str, Any]]:
    """The rows of an ``episodes.csv`` the ladder wrote, typed as :func:`play_seed` returns them (empty cells
    dropped)."""
    import csv

    rows = []
    with open(path, newline="") as handle:
        for raw in csv.DictReader(handle):
            row: dict[str, Any] = {}
            for key, value in raw.items():
                if value == "":
                    continue
                row[key] = value if key in _TEXT_FIELDS else int(value) if key in _INT_FIELDS else float(value)
            rows.append(row)
    return rows


def merge_rows(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``old`` with the (family, seed, rung) rows of ``new`` in place of its own, in (family, seed) order.
    Raises ``ValueError`` when a replayed seed's bound differs from the one on file (another game), a
    replayed seed is not on file, or a replayed family's seeds are not all of its seeds on file (a replay of
    fewer seeds would leave the others' rows of an older run)."""
    bound = {(r["family"], r["seed"]): r["throughput_value"] for r in old if r["rung"] == BOUND}
    for r in new:
        if r["rung"] != BOUND:
            continue
        key = (r["family"], r["seed"])
        if key not in bound:
            raise ValueError(f"merge: {key[0]} seed {key[1]} is not in the report on file")
        if not math.isclose(r["throughput_value"], bound[key], rel_tol=1e-9, abs_tol=1e-6):
            raise ValueError(f"merge: the bound of {key[0]} seed {key[1]} changed ({bound[key]:.6g} on file, "
                             f"{r['throughput_value']:.6g} now): replay every rung instead")
    for family in dict.fromkeys(r["family"] for r in new):
        on_file = sorted(seed for (f, seed) in bound if f == family)
        replayed = sorted(r["seed"] for r in new if r["rung"] == BOUND and r["family"] == family)
        if replayed != on_file:
            raise ValueError(f"merge: the report has {len(on_file)} seeds of {family}, the replay plays "
                             f"{len(replayed)}: replay with --seeds {len(on_file)}")
    replaced = {(r["family"], r["seed"], r["rung"]) for r in new if r["rung"] != BOUND}
    kept = [r for r in old if (r["family"], r["seed"], r["rung"]) not in replaced]
    added = [r for r in new if r["rung"] != BOUND]
    order = {family: i for i, family in enumerate(dict.fromkeys(r["family"] for r in old))}
    ladder_order = {name: i for i, name in enumerate((BOUND, *PLAYED, TRUTH))}
    return sorted(kept + added, key=lambda r: (order[r["family"]], r["seed"], ladder_order.get(r["rung"], 99)))


def paired_interval(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    """Mean of ``a - b`` and its 95 % t-interval (:func:`dcops.intervals.t_interval`: NaN ends for one seed)."""
    return t_interval(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64))


def summarise(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Per family, one summary row per rung (module docstring), in ladder order."""
    out: dict[str, list[dict[str, Any]]] = {}
    for family in dict.fromkeys(r["family"] for r in rows):
        fam = [r for r in rows if r["family"] == family]
        by_rung: dict[str, dict[int, dict[str, Any]]] = {}
        for r in fam:
            by_rung.setdefault(r["rung"], {})[r["seed"]] = r
        seeds = sorted(by_rung[BOUND])
        score = {name: np.array([by_rung[name][s]["score"] for s in seeds]) for name in by_rung if name != BOUND}
        best = max((n for n in PUBLIC_BASELINES if n in score), key=lambda n: score[n].mean())
        summary = []
        for name in (*PLAYED, TRUTH, BOUND):
            if name not in by_rung:
                continue
            got = [by_rung[name][s] for s in seeds]
            entry: dict[str, Any] = {
                "family": family, "rung": name, "seeds": len(seeds), "best_baseline": best,
                "throughput_value": float(np.mean([g["throughput_value"] for g in got])),
                "fraction_of_bound": float(np.mean([g["fraction_of_bound"] for g in got])),
                "incident_windows": float(np.mean([g["incident_windows"] for g in got])),
            }
            if name in score:
                entry["score"] = float(score[name].mean())
                entry["score_sd"] = float(score[name].std(ddof=1)) if len(seeds) > 1 else 0.0
                entry["vs_best"], entry["vs_best_low"], entry["vs_best_high"] = paired_interval(score[name], score[best])
            weights = sorted({g["weights"] for g in got if "weights" in g})
            if weights:
                unrecorded = sum("weights" not in g for g in got)
                missing = f" (unrecorded on {unrecorded} of {len(got)} seeds)" if unrecorded else ""
                entry["weights"] = ", ".join(weights) + missing
            if "gaming_payoff" in got[0]:
                payoff = sum(g["gaming_payoff"] for g in got)
                twin = sum(g["twin_value"] for g in got)
                entry["gaming_payoff"] = payoff / len(seeds)
                entry["gaming_payoff_pct"] = 100.0 * payoff / twin if twin > 0 else math.nan
            summary.append(entry)
        out[family] = summary
    return out


def _fmt(value: Any, spec: str) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, spec)


def markdown(summary: dict[str, list[dict[str, Any]]], command: str) -> str:
    from dcops.cluster.scenarios import scenario

    lines = ["# The skill ladder, per scenario family", "",
             f"Produced by `{command}` (`dcops.evaluation.ladder`). Families and their seeds: "
             "`dcops.cluster.scenarios`. Δ = paired difference of episode score with the family's best public "
             "baseline (95 % t-interval over seeds); fraction = throughput value over the hindsight bound of the "
             "same seed; payoff = value the gaming teams completed by misreporting, over their honest twins "
             "(value units per episode, and as % of what the twins delivered).", ""]
    for family, entries in summary.items():
        fam = scenario(family)
        lines += [f"## `{family}`: {fam.summary}", "",
                  f"{entries[0]['seeds']} seeds from {fam.seeds[0]}; best public baseline: "
                  f"`{entries[0]['best_baseline']}`.", "",
                  "| rung | score (mean ± sd) | Δ vs best baseline [95 % CI] | fraction of bound | "
                  "incident windows / episode | gaming payoff (value, % of honest) |",
                  "|---|---|---|---|---|---|"]
        for e in entries:
            score = f"{e['score']:+.3f} ± {e['score_sd']:.3f}" if "score" in e else "–"
            delta = (f"{e['vs_best']:+.3f} [{e['vs_best_low']:+.3f}, {e['vs_best_high']:+.3f}]"
                     if "vs_best" in e else "–")
            payoff = (f"{e['gaming_payoff']:+.0f} ({_fmt(e['gaming_payoff_pct'], '+.1f')} %)"
                      if "gaming_payoff" in e else "–")
            lines.append(f"| {e['rung']} | {score} | {delta} | {_fmt(e['fraction_of_bound'], '.3f')} | "
                         f"{e['incident_windows']:.2f} | {payoff} |")
        lines.append("")
        lines += [f"`{e['rung']}` played the weights `{e['weights']}` (package data of "
                  "`dcops.agents.schedulers`).\n" for e in entries if "weights" in e]
    return "\n".join(lines)
