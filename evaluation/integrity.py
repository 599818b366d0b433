"""The integrity review's attacks on the scheduling game, measured in each game version (``dcops eval-integrity``).

Two attacks of the review (commit 1352c84), each replayed here against every version of ``datacenter_ops``:

- **Last-window accounting.** Each baseline against two variants that play it in every window but the last,
  where they ACCEPT every pending request (``all``) or only those that fit nowhere now (``unfit``); the score
  difference paired by seed. In version 0 a job accepted and never started scored 0 instead of a rejection's
  cost, so both variants paid.
- **Description tell.** Every request of episodes with all five team kinds: does a description claim urgency
  where the stated fields do not call for it (stated CRITICAL with no stated slack), does the review's rule
  ("URGENT" on a job type that is never truly CRITICAL) mark misreports, and, among requests whose stated fields
  do call for it, is claiming urgency independent of misreporting (Fisher's exact test)?

The tests (``tests/cluster/test_last_window.py``, ``tests/agents/test_descriptions.py``) assert the bounds on
these same functions; this module prints the figures README quotes.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from dcops.command import Command, print_and_write

BASELINE_NAMES = ("priority_threshold", "earliest_deadline", "carbon_greedy")
DESCRIPTION_TEAMS = ("cooperative", "cooperative", "strategic", "adaptive", "injecting")


class LastWindowVariant:
    """``base`` in every window but the last; there it ACCEPTs every pending request (``"all"``) or only those
    that fit nowhere now (``"unfit"``), whatever ``base`` decided."""

    def __init__(self, base: Any, mode: str) -> None:
        if mode not in ("all", "unfit"):
            raise ValueError(f"mode: must be 'all' or 'unfit', got {mode!r}")
        self.base, self.mode = base, mode

    def decide(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        decisions = self.base.decide(view)
        if view["window"] != view["n_windows"] - 1:
            return decisions
        fits = {r["request_id"]: r["fits_now"] for r in view["pending"]}
        return [{"request_id": d["request_id"], "decision": "ACCEPT"}
                if self.mode == "all" or not fits[d["request_id"]] else d for d in decisions]


def last_window_gains(env: Any, name: str, mode: str, seeds: range) -> np.ndarray:
    """Per seed, the variant's episode score minus the baseline's (same env, same seed)."""
    from dcops.agents.schedulers import BASELINES
    from dcops.evaluation.play import run_episode

    cls = BASELINES[name]
    base = np.array([run_episode(cls(), s, env=env)["score"] for s in seeds])
    variant = np.array([run_episode(LastWindowVariant(cls(), mode), s, env=env)["score"] for s in seeds])
    return variant - base


def description_requests(game_version: int, seeds: range) -> list[dict[str, Any]]:
    """Every request of reject-all episodes with :data:`DESCRIPTION_TEAMS`, its truth row of
    ``episode_truth`` plus the team kind and what its description says."""
    import dcops
    from dcops.agents.schedulers import RejectAllScheduler
    from dcops.agents.teams.base import stated_earliest_window
    from dcops.agents.teams.injecting import INJECTIONS, injection_text
    from dcops.evaluation.play import run_episode

    env = dcops.parallel_env(game_version=game_version, cooling="rule", team_kinds=DESCRIPTION_TEAMS)
    rows = []
    for seed in seeds:
        run_episode(RejectAllScheduler(), seed, env=env)
        for row in env.episode_truth():
            row["kind"] = env.team_kind[row["team"]]
            row["urgent"] = "URGENT" in row["description"]
            row["misreported"] = bool(row["tactics"])
            row["states_no_slack_critical"] = row["priority"] == "CRITICAL" and row["deadline_window"] <= \
                stated_earliest_window(row["submitted_window"], row["duration_h"], env.config)
            row["injected"] = any(injection_text(i, row["request_id"]) in row["description"]
                                  for i in range(len(INJECTIONS)))
            rows.append(row)
    return rows


def never_critical_job_types() -> set[str]:
    from dcops.cluster.job_types import JOB_TYPES

    return {jt.name for jt in JOB_TYPES if jt.priority_probs[3] == 0}


def description_tell(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures of the description attack (module docstring) over ``rows``."""
    from scipy.stats import fisher_exact

    never = never_critical_job_types()
    fired = [r for r in rows if r["urgent"] and r["job_type"] in never]
    eligible = [r for r in rows if r["states_no_slack_critical"]]
    gaming = [r["urgent"] for r in eligible if r["misreported"]]
    honest = [r["urgent"] for r in eligible if not r["misreported"]]
    table = [[sum(gaming), len(gaming) - sum(gaming)], [sum(honest), len(honest) - sum(honest)]]
    injecting = [r["injected"] for r in rows if r["kind"] == "injecting"]
    return {
        "requests": len(rows),
        "claims_outside_stated_condition": sum(r["urgent"] and not r["states_no_slack_critical"] for r in rows),
        "rule_fires": len(fired),
        "rule_precision": (sum(r["misreported"] for r in fired) / len(fired)) if fired else float("nan"),
        "urgent_share_misreported": sum(gaming) / max(len(gaming), 1),
        "urgent_share_honest": sum(honest) / max(len(honest), 1),
        "eligible_misreported": len(gaming),
        "eligible_honest": len(honest),
        "fisher_p": float(fisher_exact(table)[1]),
        "injected_share": sum(injecting) / max(len(injecting), 1),
    }


def report(seeds: int, description_seeds: int, versions: tuple[int, ...] = (0, 1)) -> str:
    """The markdown report of both attacks in every version."""
    import dcops
    from dcops.cluster.config import GAME_VERSIONS

    lines = ["# Integrity attacks by game version", "",
             f"Made by `dcops eval-integrity --seeds {seeds} --description-seeds {description_seeds}` "
             "(`dcops/evaluation/integrity.py`; the attacks of the integrity review, default configuration, PPO "
             "cooling for the last-window attack, rule cooling and all five team kinds for descriptions).", "",
             "## Last-window accounting", "",
             f"Paired over seeds 0–{seeds - 1}: the variant's episode score minus the baseline's.", "",
             "| version | baseline | variant | mean gain | seeds won | seeds lost |", "|---|---|---|---|---|---|"]
    for version in versions:
        assert version in GAME_VERSIONS
        env = dcops.parallel_env(game_version=version)
        for name in BASELINE_NAMES:
            for mode in ("all", "unfit"):
                gain = last_window_gains(env, name, mode, range(seeds))
                lines.append(f"| v{version} | {name} | accept_{mode}_last | {gain.mean():+.4f} | "
                             f"{int(np.sum(gain > 1e-12))} | {int(np.sum(gain < -1e-12))} |")
    lines += ["", "## Description tell", "",
              f"Every request of seeds 0–{description_seeds - 1} (reject-all episodes). 'Stated condition': stated "
              "CRITICAL with no deadline slack left by the stated duration.", "",
              "| version | requests | urgency claimed outside the stated condition | 'URGENT on a never-CRITICAL "
              "type' fires | its precision | urgent share within the condition: misreported / honest (n) | "
              "Fisher p | injecting team's share with an injection |", "|---|---|---|---|---|---|---|---|"]
    for version in versions:
        t = description_tell(description_requests(version, range(description_seeds)))
        lines.append(f"| v{version} | {t['requests']} | {t['claims_outside_stated_condition']} | {t['rule_fires']} | "
                     f"{t['rule_precision']:.2f} | {t['urgent_share_misreported']:.2f} / {t['urgent_share_honest']:.2f} "
                     f"({t['eligible_misreported']} / {t['eligible_honest']}) | {t['fisher_p']:.2g} | "
                     f"{t['injected_share']:.2f} |")
    return "\n".join(lines) + "\n"


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seeds", type=int, default=40, help="seeds of the last-window attack (0..N-1)")
    parser.add_argument("--description-seeds", type=int, default=30, help="seeds of the description attack")
    parser.add_argument("--out", default="reports/integrity/README.md", help="markdown output ('' for none)")


def _run(args: argparse.Namespace) -> int:
    if args.seeds < 1 or args.description_seeds < 1:
        raise SystemExit("--seeds and --description-seeds: must be >= 1")
    print_and_write(report(args.seeds, args.description_seeds), args.out)
    return 0


COMMANDS = [Command("eval-integrity", "The integrity review's attacks (last-window accounting, description tell) "
                    "in every game version (markdown)", _arguments, _run)]
