"""Evaluation of every placement policy and the report of ``dcops eval-placement`` (markdown, CSV, PNG).

For each policy and scenario: total reward, jobs completed / missed, invalid actions, allocation (busy
GPU-ticks over available GPU-ticks), total cost (cost units) and the **normalised score**

    score = (R_policy − R_ref) / (R_opt − R_ref)

with ``R_opt`` the exact (clairvoyant) optimum and ``R_ref`` the do-nothing policy ``always_defer`` (every
job missed, idle penalties while they wait). Rewards are often negative, so a plain ratio ``R / R_opt``
would be meaningless; this one is 1 for the optimum, 0 for doing nothing, and negative for a policy worse
than doing nothing. It is undefined when ``R_opt == R_ref`` (nothing can be gained); such scenarios are
left out of the mean score and counted in the report. Over the generated scenarios every column is the mean
over scenarios, the score being the mean of per-scenario scores.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dcops.cluster.placement.generator import generate_scenario
from dcops.cluster.placement.policies import HEURISTIC_NAMES, REFERENCE_NAME, policy_factories
from dcops.cluster.placement.policy import EpisodeResult, PolicyFactory, run_episode
from dcops.cluster.placement.scenarios import CANONICAL, Scenario
from dcops.cluster.placement.sim import RewardConfig

GENERATED_LABEL = "generated_mean"


def normalised_score(reward: float, reference: float, optimum: float) -> float | None:
    """``(reward − reference) / (optimum − reference)``, or ``None`` when the optimum gains nothing."""
    gap = optimum - reference
    return None if gap <= 1e-9 else (reward - reference) / gap


@dataclass(frozen=True)
class Row:
    """One (scenario, policy) line of the report (means over scenarios for ``generated_mean``)."""

    scenario: str
    policy: str
    reward: float
    completed: float
    missed: float
    invalid: float
    allocation: float
    cost: float
    score: float | None


@dataclass
class PlacementReport:
    """All rows, the policy order, and the number of generated scenarios (and of undefined scores)."""

    rows: list[Row]
    policies: list[str]
    n_generated: int
    undefined_scores: int = 0
    scenario_names: list[str] = field(default_factory=list)

    def table(self, scenario: str) -> list[Row]:
        return [r for r in self.rows if r.scenario == scenario]

    def best(self, scenario: str, names: Sequence[str]) -> list[str]:
        """Names among ``names`` with the highest reward on ``scenario`` (several on a tie)."""
        rows = [r for r in self.table(scenario) if r.policy in names]
        top = max(r.reward for r in rows)
        return [r.policy for r in rows if abs(r.reward - top) < 1e-9]

    def markdown(self) -> str:
        """The report as markdown (what ``dcops eval-placement`` writes to ``README.md`` in ``--out``)."""
        c = RewardConfig()
        lines = [
            "# GPU placement benchmark",
            "",
            "Written by `dcops eval-placement`; every figure below comes from that command.",
            "",
            "One decision per tick: `place(job, gpu)` or `defer()`. Reward = Σ completed "
            f"({c.completion_reward:g} + {c.priority_bonus:g} × priority) − {c.miss_penalty:g} per missed deadline "
            f"− {c.invalid_penalty:g} per invalid action − {c.idle_penalty:g} per idle GPU-tick while a job that "
            "fits waits − GPU cost per busy tick.",
            "",
            "**Score** = (R − R_defer) / (R_opt − R_defer): 1 = the exact clairvoyant optimum (DP over the state "
            "space; it knows future arrivals, the policies do not), 0 = doing nothing (`always_defer`). "
            "Allocation = busy GPU-ticks / available GPU-ticks.",
            "",
        ]
        header = "| policy | reward | completed | missed | invalid | allocation | cost | score |"
        rule = "|---|---:|---:|---:|---:|---:|---:|---:|"
        for name in [*self.scenario_names, GENERATED_LABEL]:
            rows = self.table(name)
            if not rows:
                continue
            if name == GENERATED_LABEL:
                title = f"## Mean over {self.n_generated} generated scenarios (seeds 0..{self.n_generated - 1})"
                if self.undefined_scores:
                    title += f" ({self.undefined_scores} with undefined score left out of the score mean)"
            else:
                title = f"## `placement/{name}`"
            lines += [title, "", header, rule]
            for r in rows:
                lines.append(
                    f"| {r.policy} | {r.reward:.1f} | {r.completed:.2f} | {r.missed:.2f} | {r.invalid:.2f} "
                    f"| {100 * r.allocation:.0f}% | {r.cost:.1f} | {_fmt(r.score)} |"
                    if name == GENERATED_LABEL
                    else f"| {r.policy} | {r.reward:.1f} | {r.completed:.0f} | {r.missed:.0f} | {r.invalid:.0f} "
                    f"| {100 * r.allocation:.0f}% | {r.cost:.1f} | {_fmt(r.score)} |"
                )
            lines.append("")
        lines += ["## Findings", "", *self.findings(), ""]
        return "\n".join(lines)

    def findings(self) -> list[str]:
        """Plain statements computed from the rows (winners, dominance, the learned policy's rank)."""
        out = []
        heuristics = [p for p in HEURISTIC_NAMES if p in self.policies]
        winners = {}
        for name in self.scenario_names:
            if heuristics and self.table(name):
                winners[name] = self.best(name, heuristics)
                out.append(f"- `{name}`: best heuristic {' = '.join(winners[name])}.")
        unique = [w[0] for w in winners.values() if len(w) == 1]
        if winners and len(unique) == len(winners) and len(set(unique)) == len(unique):
            out.append("- Each canonical scenario is won by a different heuristic: no greedy rule dominates.")
        for name in [*self.scenario_names, GENERATED_LABEL]:
            rows = {r.policy: r for r in self.table(name)}
            if "optimum" in rows and any(r.reward > rows["optimum"].reward + 1e-9 for r in rows.values()):
                out.append(f"- WARNING: a policy beats the optimum on `{name}` (a bug).")
        gen = {r.policy: r for r in self.table(GENERATED_LABEL)}
        if "linear" in gen and heuristics and gen["linear"].score is not None:
            best_h = max(heuristics, key=lambda p: gen[p].score if gen[p].score is not None else float("-inf"))
            lin, hs = gen["linear"].score, gen[best_h].score
            verdict = "beats" if lin > hs + 1e-9 else ("ties" if abs(lin - hs) <= 1e-9 else "loses to")
            out.append(
                f"- Generated scenarios: the linear learned policy (mean score {lin:.3f}) {verdict} the best "
                f"heuristic, {best_h} ({hs:.3f})."
            )
            canon_wins = [n for n in self.scenario_names if "linear" in self.best(n, [*heuristics, "linear"])]
            out.append(
                f"- Canonical scenarios where the linear policy is at least as good as every heuristic: "
                f"{', '.join(canon_wins) if canon_wins else 'none'}."
            )
        return out

    def write_csv(self, path: Path) -> None:
        with path.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["scenario", "policy", "reward", "completed", "missed", "invalid", "allocation", "cost", "score"])
            for r in self.rows:
                writer.writerow(
                    [r.scenario, r.policy, f"{r.reward:.3f}", f"{r.completed:.3f}", f"{r.missed:.3f}", f"{r.invalid:.3f}",
                     f"{r.allocation:.4f}", f"{r.cost:.3f}", "" if r.score is None else f"{r.score:.4f}"]
                )


def _fmt(score: float | None) -> str:
    return "n/a" if score is None else f"{score:.3f}"


def _row(result: EpisodeResult, score: float | None) -> Row:
    m = result.metrics
    return Row(result.scenario, result.policy, m.total_reward, m.completed, m.missed, m.invalid, m.allocation, m.total_cost, score)


def evaluate_scenario(scenario: Scenario, factories: dict[str, PolicyFactory]) -> list[Row]:
    """One row per policy on ``scenario`` (the reference and the optimum are run even if not listed)."""
    results = {name: run_episode(scenario, factory(scenario)) for name, factory in factories.items()}
    all_factories = policy_factories()
    for needed in (REFERENCE_NAME, "optimum"):
        if needed not in results:
            results[needed] = run_episode(scenario, all_factories[needed](scenario))
    ref, opt = results[REFERENCE_NAME].total_reward, results["optimum"].total_reward
    return [_row(results[name], normalised_score(results[name].total_reward, ref, opt)) for name in factories]


def evaluate(
    n_generated: int = 100,
    factories: dict[str, PolicyFactory] | None = None,
    progress: Callable[[str], None] | None = None,
) -> PlacementReport:
    """Every policy on the canonical scenarios and on generated seeds ``0..n_generated-1`` (means)."""
    factories = factories or policy_factories()
    names = list(factories)
    rows: list[Row] = []
    for scenario in CANONICAL.values():
        rows += evaluate_scenario(scenario, factories)
    per_policy: dict[str, list[Row]] = {n: [] for n in names}
    seeds = range(n_generated)  # EVAL_SEEDS (0..99) for the default 100; training seeds start at 1 000 000
    for i, seed in enumerate(seeds):
        for row in evaluate_scenario(generate_scenario(seed), factories):
            per_policy[row.policy].append(row)
        if progress and (i + 1) % 25 == 0:
            progress(f"generated scenarios: {i + 1}/{len(seeds)}")
    undefined = 0
    if n_generated:
        undefined = sum(1 for r in per_policy[names[0]] if r.score is None)
        for name in names:
            rs = per_policy[name]
            scores = [r.score for r in rs if r.score is not None]
            rows.append(
                Row(
                    GENERATED_LABEL,
                    name,
                    _mean([r.reward for r in rs]),
                    _mean([r.completed for r in rs]),
                    _mean([r.missed for r in rs]),
                    _mean([r.invalid for r in rs]),
                    _mean([r.allocation for r in rs]),
                    _mean([r.cost for r in rs]),
                    _mean(scores) if scores else None,
                )
            )
    return PlacementReport(rows, names, n_generated, undefined, list(CANONICAL))


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def write_report(report: PlacementReport, out: Path | str, plot: bool = True) -> list[Path]:
    """Write ``README.md``, ``results.csv`` and (if ``plot``) ``scores.png`` into ``out``; return the paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    md, table = out / "README.md", out / "results.csv"
    md.write_text(report.markdown())
    report.write_csv(table)
    paths = [md, table]
    if plot:
        paths.append(_plot(report, out / "scores.png"))
    return paths


def _plot(report: PlacementReport, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = [*report.scenario_names, GENERATED_LABEL] if report.n_generated else list(report.scenario_names)
    policies = [p for p in report.policies if p != REFERENCE_NAME]
    width = 0.8 / len(policies)
    fig, ax = plt.subplots(figsize=(9, 3.6), dpi=90)
    for k, policy in enumerate(policies):
        values = []
        for g in groups:
            row = next((r for r in report.table(g) if r.policy == policy), None)
            values.append(row.score if row is not None and row.score is not None else 0.0)
        ax.bar([i + (k - (len(policies) - 1) / 2) * width for i in range(len(groups))], values, width, label=policy)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([g.replace("_", " ") for g in groups], fontsize=8)
    ax.set_ylabel("score (0 = do nothing, 1 = optimum)", fontsize=8)
    ax.set_ylim(min(0.0, ax.get_ylim()[0]), 1.05)
    ax.axhline(0, color="black", linewidth=0.6)
    ax.legend(fontsize=7, ncol=len(policies), loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
    fig.tight_layout()
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)
    return path
