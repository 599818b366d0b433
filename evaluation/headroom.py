"""Where the scheduling game's headroom goes: the truth planner against ``priority_threshold`` under each lever.

The depth condition of the skill ladder asks the truth-knowing planner to beat the best public baseline by
0.10 of episode score. This module measures, for a fixed grid of scenario variants (:data:`VARIANTS`, one per
lever the scenario offers: contention, the power cap, saturation of the throughput term, strategic crowding,
chiller faults), how far the planner gets and *why*, from the reward's own terms (``dcops.cluster.reward``):

* ``Δ score``: truth planner − ``priority_threshold``, paired over seeds (95 % t-interval);
* ``Δ net / V``: the planner's extra net throughput value (Σ gains − Σ losses) per window, over the window
  scale V (``ClusterConfig.throughput_scale``). With the throughput term linear in value
  (``G + L ≤ V`` in every window) the score difference from throughput would be ``0.50 · Δ net / V``: this
  is the **unsaturated ceiling** of what knowing the truth is worth through the throughput term;
* ``saturated``: the share of the planner's windows with ``G + L > V``, where its term is
  ``(G − L)/(G + L)`` and extra value is paid less than linearly;
* ``loss share``: the planner's ``L / (G + L)``: losses it cannot avoid (rejections of MEDIUM and above cost
  ``ρ·v`` whoever decides) that fill the denominator without separating the schedulers;
* ``Δ score by term``: the same difference split by the reward's terms, ``0.50·Δ throughput``, ``0.35·Δ thermal``
  and ``0.15·Δ carbon`` (episode means of the window terms; they add up to Δ score, less the invalid-decision
  penalty, which both keep at 0);
* incident windows of both (each costs 0.35/n_windows of score).

Seeds are :data:`SEEDS_FROM` onward, used by no family's ladder or search. ``dcops eval-cluster --headroom``
writes ``reports/cluster/headroom/``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

SEEDS_FROM = 9000
"""First seed of the sweep (no family's evaluation or search seeds are here)."""


@dataclass(frozen=True)
class Variant:
    """One point of the sweep: a family and the scenario overrides that move one lever."""

    name: str
    lever: str
    family: str
    overrides: dict[str, Any] = field(default_factory=dict)


_STRATEGIC_5 = ("cooperative", "strategic", "strategic", "strategic", "strategic", "strategic")

VARIANTS: tuple[Variant, ...] = (
    Variant("classic", "none (ClusterConfig's defaults)", "classic"),
    Variant("oversubscribed", "contention: 2.5× the classic demand", "oversubscribed"),
    Variant("oversubscribed_cap800", "contention and a 800 kW cap (900 kW)", "oversubscribed",
            {"power_cap_kw": 800.0}),
    Variant("oversubscribed_v2x", "saturation: window scale V doubled (3,317)", "oversubscribed",
            {"value_scale": 3317.0}),
    Variant("crowded", "strategic crowding: 5 of 6 teams strategic, V = 2,500", "oversubscribed",
            {"team_kinds": _STRATEGIC_5, "value_scale": 2500.0}),
    Variant("adversarial_6", "every strategic kind, 6 requests per team", "adversarial",
            {"max_requests_per_team": 6}),
    Variant("oversubscribed_chiller", "contention and a chiller trip in every episode", "oversubscribed",
            {"chiller_trip_probability": 1.0}),
    Variant("oversubscribed_carbon_swing", "contention and a carbon swing: San Jose in April (CISO's hourly means "
            "over the episode's 06:00–18:00: 127–238 g/kWh, 1.9×; AZPS in July: 529–661, 1.25×; "
            "physics/data/carbon_intensity_hourly_by_month.csv)", "oversubscribed",
            {"climate": "san_jose", "start": datetime(2026, 4, 15, 6, 0)}),
)
"""The grid (module docstring); every variant changes the scenario, never the reward's weights or formulas."""

VARIANT_BY_NAME = {v.name: v for v in VARIANTS}


def _window_sums(summary: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    windows = summary["windows"]
    return (np.array([w["value_gained"] for w in windows], dtype=np.float64),
            np.array([w["value_lost"] for w in windows], dtype=np.float64))


def _term_mean(summary: dict[str, Any], term: str) -> float:
    return float(np.mean([w[term] for w in summary["windows"]]))


def episode_row(variant: str, seed: int, threshold: dict[str, Any], planner: dict[str, Any],
                scale: float) -> dict[str, Any]:
    """The decomposition of one seed (module docstring) from the two episode summaries and the scale V."""
    from dcops.cluster.reward import W_CARBON, W_THERMAL, W_THROUGHPUT

    g_pt, l_pt = _window_sums(threshold)
    g_tp, l_tp = _window_sums(planner)
    n = len(g_tp)
    by_term = {f"delta_{term}_term": weight * (_term_mean(planner, term) - _term_mean(threshold, term))
               for term, weight in (("throughput", W_THROUGHPUT), ("thermal", W_THERMAL), ("carbon", W_CARBON))}
    return {**by_term,
        "variant": variant, "seed": seed,
        "score_threshold": float(threshold["score"]), "score_planner": float(planner["score"]),
        "delta_score": float(planner["score"] - threshold["score"]),
        "delta_net_over_v": float(((g_tp - l_tp).sum() - (g_pt - l_pt).sum()) / n / scale),
        "saturated_share": float(np.mean(g_tp + l_tp > scale)),
        "loss_share": float(l_tp.sum() / max(g_tp.sum() + l_tp.sum(), 1e-12)),
        "incidents_threshold": int(threshold["incident_windows"]),
        "incidents_planner": int(planner["incident_windows"]),
    }


def play_variant_seed(variant: Variant, seed: int) -> dict[str, Any]:
    """``priority_threshold`` and the truth planner on one seed of ``variant``."""
    import dcops
    from dcops.agents.schedulers import PriorityThresholdScheduler
    from dcops.evaluation.play import run_episode
    from dcops.evaluation.truth_planner import play_truth_planner

    env = dcops.parallel_env(scenario=variant.family, **variant.overrides)
    threshold = run_episode(PriorityThresholdScheduler(), seed, env=env)
    planner = play_truth_planner(env, seed).summary
    return episode_row(variant.name, seed, threshold, planner, env.episode.config.throughput_scale)


def _task(task: tuple[str, int]) -> dict[str, Any]:
    name, seed = task
    return play_variant_seed(VARIANT_BY_NAME[name], seed)


def run_sweep(variants: Sequence[str], n_seeds: int, workers: int = 1,
              progress: Callable[[str, int], None] | None = None) -> list[dict[str, Any]]:
    """Every variant on seeds ``SEEDS_FROM … + n_seeds − 1``; rows in (variant, seed) order."""
    for name in variants:
        if name not in VARIANT_BY_NAME:
            raise ValueError(f"variants: unknown {name!r}; known: {sorted(VARIANT_BY_NAME)}")
    from dcops.evaluation.play import ordered_map

    tasks = [(name, SEEDS_FROM + i) for name in variants for i in range(n_seeds)]
    rows = []
    for task, row in ordered_map(_task, tasks, workers):
        rows.append(row)
        if progress is not None:
            progress(*task)
    return rows


def summarise(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per variant: the means of every column, the paired 95 % interval of Δ score, and the unsaturated
    ceiling ``0.5 · Δ net / V``."""
    from dcops.evaluation.ladder import paired_interval

    out = []
    for name in dict.fromkeys(r["variant"] for r in rows):
        got = [r for r in rows if r["variant"] == name]
        planner = np.array([r["score_planner"] for r in got])
        threshold = np.array([r["score_threshold"] for r in got])
        delta, low, high = paired_interval(planner, threshold)
        entry = {"variant": name, "seeds": len(got), "delta_score": delta, "delta_low": low, "delta_high": high}
        for key in ("score_threshold", "score_planner", "delta_net_over_v", "saturated_share", "loss_share",
                    "incidents_threshold", "incidents_planner", "delta_throughput_term", "delta_thermal_term",
                    "delta_carbon_term"):
            entry[key] = float(np.mean([r[key] for r in got]))
        entry["unsaturated_ceiling"] = 0.5 * entry["delta_net_over_v"]
        out.append(entry)
    return out


def markdown(summary: list[dict[str, Any]], command: str) -> str:
    lines = ["# Where the headroom goes: the truth planner against priority_threshold, lever by lever", "",
             f"Produced by `{command}` (`dcops.evaluation.headroom`; seeds from {SEEDS_FROM}, used by no ladder "
             "or search). Δ score = truth planner − priority_threshold, paired (95 % t-interval). Δ net / V = "
             "the planner's extra net throughput value per window over the window scale V; its half is the "
             "score difference the throughput term would pay if it never saturated (the unsaturated ceiling). "
             "Saturated = share of the planner's windows with G + L > V. Loss share = the planner's L/(G + L), "
             "mostly rejections of MEDIUM-and-above work that no schedule can avoid. By term = Δ score split "
             "into 0.50·Δ throughput / 0.35·Δ thermal / 0.15·Δ carbon (episode means of the window terms).", "",
             "| variant | lever | PT score | planner score | Δ score [95 % CI] | by term: throughput / thermal / "
             "carbon | Δ net / V | unsaturated ceiling | saturated | loss share | incident windows PT / planner |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for e in summary:
        lever = VARIANT_BY_NAME[e["variant"]].lever if e["variant"] in VARIANT_BY_NAME else "–"
        lines.append(
            f"| `{e['variant']}` | {lever} | {e['score_threshold']:+.3f} | {e['score_planner']:+.3f} | "
            f"{e['delta_score']:+.3f} [{e['delta_low']:+.3f}, {e['delta_high']:+.3f}] | "
            f"{e['delta_throughput_term']:+.3f} / {e['delta_thermal_term']:+.3f} / {e['delta_carbon_term']:+.3f} | "
            f"{e['delta_net_over_v']:+.3f} | {e['unsaturated_ceiling']:+.3f} | {e['saturated_share']:.2f} | "
            f"{e['loss_share']:.2f} | {e['incidents_threshold']:.2f} / {e['incidents_planner']:.2f} |")
    best = max(summary, key=lambda e: e["delta_score"]) if summary else None
    if best is not None:
        lines += ["", f"Largest Δ score: `{best['variant']}`, {best['delta_score']:+.3f} "
                  f"(target of the depth condition: +0.10)."]
    return "\n".join(lines) + "\n"
