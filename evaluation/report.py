"""Write the evaluation report: markdown with tables, PNG plots, CSV and JSON of every cell, command and
versions.

Files under the run folder (``reports/eval/<name>/``): ``README.md`` (the report), ``headline.md`` (its
headline table alone, for embedding), ``cells.jsonl`` (the store), ``cells.json`` and ``cells.csv`` (every
cell, sorted by id; ``teams`` as a JSON string in the CSV), ``summary.csv`` (per scheduler × mix),
``paired.csv``, ``payoff.csv``, ``score_by_scheduler_mix.png``, ``gaming_payoff.png``,
``carbon_vs_score.png``, ``run.json`` (command, versions, matrix, wall time).
"""

from __future__ import annotations

import csv
import json
import math
import platform
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from dcops.evaluation import analysis
from dcops.evaluation.matrix import BOUND, CONDITIONS, TRUTH, family_of, mix_kinds


def _gaming(mix: str) -> bool:
    """Whether a mix (a scenario family's too) has a team that is not cooperative."""
    return bool(set(mix_kinds(mix)) - {"cooperative"})


def versions(*packages: str) -> dict[str, str]:
    """Python, numpy, dcops and the git commit (``+dirty`` when the tree has changes), and the installed version
    of each of ``packages`` (distribution names; ``"not installed"`` where absent)."""
    import dcops

    root = Path(dcops.__file__).resolve().parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
        commit += "+dirty" if dirty else ""
    except (OSError, subprocess.SubprocessError):
        commit = "unknown"
    found = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "dcops": str(getattr(dcops, "__version__", "unknown")),
        "git_commit": commit,
    }
    from importlib.metadata import PackageNotFoundError, version

    for package in packages:
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = "not installed"
    return found


def _fmt(value: float, fmt: str = ".3f") -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:{fmt}}"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + [
        "| " + " | ".join(r) + " |" for r in rows
    ]


def build(rows: dict[str, dict[str, Any]], meta: dict[str, Any], reference: str) -> dict[str, Any]:
    """Every table of the report, as data."""
    runs, bounds = analysis.split(rows.values())
    runs, mismatches = analysis.with_bound(runs, bounds)
    schedulers = list(dict.fromkeys(meta["schedulers"]))
    policy_names = [s for s in schedulers if s != BOUND]
    by_scheduler = {r["scheduler"]: r for r in analysis.summarise(runs, ["scheduler"])}
    by_mix = {(r["scheduler"], r["mix"]): r for r in analysis.summarise(runs, ["scheduler", "mix"])}
    by_condition = {
        (r["scheduler"], r["condition"]): r for r in analysis.summarise(runs, ["scheduler", "condition"])
    }
    payoffs = analysis.team_payoffs(runs)
    return {
        "runs": runs,
        "bounds": bounds,
        "mismatches": mismatches,
        "schedulers": schedulers,
        "policies": policy_names,
        "by_scheduler": by_scheduler,
        "by_mix": by_mix,
        "by_condition": by_condition,
        "payoffs": payoffs,
        "reference": reference if reference in policy_names else None,
    }


def headline(data: dict[str, Any]) -> str:
    """The headline table: one row per scheduler over the whole matrix (and the bound)."""
    ref = data["reference"]
    header = [
        "scheduler",
        "score",
        f"Δ score vs {ref} [95 % CI]" if ref else "Δ score",
        "fraction of bound",
        "gaming payoff / team",
        "strategic share (honest twin)",
        "incident windows",
        "carbon saved %",
        "oversight P / R / FPR",
        "invalid rate",
    ]
    body = []
    payoff_by = analysis.group(data["payoffs"], "scheduler")
    for name in data["policies"]:
        s = data["by_scheduler"].get(name)
        if s is None:
            continue
        delta = analysis.paired(data["runs"], name, ref).text() if ref and name != ref else "ref"
        pay = analysis.bootstrap_mean([p["payoff"] for p in payoff_by.get((name,), [])])
        gaming = [r for r in data["runs"] if r["scheduler"] == name and r["fair_share"] > 0
                  and r.get("strategic_share_twin") is not None]  # the truth planner's twins are not played
        share = (
            (
                np.mean([r["strategic_share"] for r in gaming]),
                np.mean([r["strategic_share_twin"] for r in gaming]),
            )
            if gaming
            else (math.nan, math.nan)
        )
        body.append(
            [
                name,
                _fmt(s["score"], "+.3f"),
                delta,
                _fmt(s["fraction_of_bound"]),
                pay.text("+.0f"),
                f"{_fmt(share[0], '.2f')} ({_fmt(share[1], '.2f')})",
                _fmt(s["incident_windows"], ".2f"),
                _fmt(s["carbon_saved_pct"], "+.2f"),
                f"{_fmt(s['precision'], '.2f')} / {_fmt(s['recall'], '.2f')} / {_fmt(s['fpr'], '.3f')}",
                _fmt(s["invalid_rate"]),
            ]
        )
    if data["bounds"]:
        values = [b["bound_value"] for b in data["bounds"].values()]
        body.append(
            [BOUND, "–", "–", "1.000", "–", "–", "–", "–", "–", f"(mean {np.mean(values):,.0f} value units)"]
        )
    return "\n".join(_table(header, body))


HEADLINE_TEXT = (
    "Means over every cell. Δ score: paired difference against the reference on the same (mix, condition, "
    "seed), paired-bootstrap 95 % interval. Fraction of bound: throughput value over the hindsight MILP "
    "bound of the same arrivals. Gaming payoff: value (true-priority-weighted kWh completed) a gaming team "
    "gains by "
    "misreporting, against the same team reporting honestly on the same seed, per gaming team, with a "
    "bootstrap 95 % interval. Strategic share: share of the job energy run that the gaming teams won, over "
    "mixes with a gaming team; in brackets the same teams' share when each reports honestly (its twin run). "
    "Carbon saved: against running the same jobs carbon-blind."
)


def _made_by(data: dict[str, Any], meta: dict[str, Any]) -> str:
    v = meta["versions"]
    total = len(data["runs"]) + len(data["bounds"])
    runs = meta.get("invocations") or [{"wall_s": meta["wall_s"], "cells_computed": total}]
    history = "; ".join(f"{r['cells_computed']} cells computed in {r['wall_s']:.0f} s" for r in runs)
    return (
        f"Made by `{meta['command']}` ({meta['executor']} executor, {meta['workers']} workers; {total} cells; "
        f"{len(runs)} invocation(s) of the resumable run: {history}; "
        f"{meta.get('cell_seconds', math.nan):.0f} s of cell compute in all). Versions: python "
        f"{v['python']}, numpy {v['numpy']}, dcops {v['dcops']}, git {v['git_commit']}."
    )


def _matrix_text(data: dict[str, Any], meta: dict[str, Any]) -> str:
    families = meta.get("families", [])
    n_mixes, n_conditions = len(meta["mixes"]) - len(families), len(meta["conditions"]) - len(families)
    crossed = f"{n_mixes} team mixes × {n_conditions} conditions"
    if families:
        one = len(families) == 1
        own = f"{len(families)} scenario {'family with its' if one else 'families with their'} own teams"
        crossed = f"({crossed} + {own})" if n_mixes else own
    return (
        f"Matrix: {len(data['schedulers'])} schedulers × {crossed} × {len(meta['seeds'])} seeds "
        f"({', '.join(map(str, meta['seeds']))}), {meta['n_windows']} windows of 1.5 h per episode; "
        f"{len(data['runs'])} scheduler cells, each with one honest-twin episode per gaming team"
        + (" (but the truth planner's, whose twins are not played)" if TRUTH in data["schedulers"] else "")
        + ", and "
        f"{len(data['bounds'])} hindsight bounds. Mixes and conditions are defined in "
        "`dcops/evaluation/matrix.py`, metrics in `dcops/evaluation/runner.py`, statistics in "
        "`dcops/evaluation/analysis.py`. " + _version_text(meta) + _llm_note(data, meta)
    )


def _version_text(meta: dict[str, Any]) -> str:
    """What the game version makes of the seeds and the bound (``dcops eval --game-version``)."""
    version = int(meta.get("game_version", 0))
    if version == 0:
        return ("Game `datacenter_ops_v0`. The hindsight bound is HiGHS's proven dual bound under the 4 s time "
                "limit of `dcops.cluster.hindsight`, so under machine load it can move by a fraction of a percent "
                "between runs; every other figure is deterministic given the seeds.")
    key = meta.get("seed_key") or ""
    keyed = (f" Episodes are reset with `dcops.boundary.private_seed(key, seed)`, key `{key}` (the run's own, "
             "never given to a policy), so a policy cannot recognise a public seed and replay it."
             if key else "")
    return (f"Game `datacenter_ops_v{version}`. The hindsight bound stops at a node limit, not a time limit, so "
            f"every figure is deterministic given the seeds and the key.{keyed}")


def _llm_note(data: dict[str, Any], meta: dict[str, Any]) -> str:
    llm_runs = [r for r in data["runs"] if "llm_device" in r or str(r["scheduler"]).startswith("llm:")]
    if llm_runs:
        devices = Counter(str(r.get("llm_device", "device not recorded")) for r in llm_runs)
        return " Cells of schedulers with a local model, by the model's device: " + ", ".join(
            f"{device} ({count})" for device, count in sorted(devices.items())) + "."
    if any(s.startswith("llm:") for s in meta["schedulers"]) or "llm_available" not in meta:
        return ""
    if meta["llm_available"]:
        return " LLM scheduler modes are available but opt-in (`--policy llm:fewshot` …, slow); not run here."
    return " The LLM scheduler (`dcops.agents.llm.scheduler`) was not importable here, so it is not in the matrix."


def best_public_baseline(data: dict[str, Any], mix: str) -> str | None:
    """The public-information baseline (``dcops.evaluation.ladder.PUBLIC_BASELINES``) with the best mean score on
    ``mix``, among those the run played: the skill ladder's reference, against which the issue's depth conditions
    are stated."""
    from dcops.evaluation.ladder import PUBLIC_BASELINES

    played = [(data["by_mix"][(name, mix)]["score"], name) for name in PUBLIC_BASELINES
              if (name, mix) in data["by_mix"]]
    return max(played)[1] if played else None


def _best_baseline_section(data: dict[str, Any], families: list[str]) -> list[str]:
    """Per scenario family: every scheduler's paired difference with the family's best public baseline."""
    from dcops.evaluation.ladder import PUBLIC_BASELINES

    best = {m: best_public_baseline(data, m) for m in families}
    families = [m for m in families if best[m] is not None]
    if not families:
        return []
    played = [name for name in PUBLIC_BASELINES if name in data["policies"]]
    lines = [
        "## Against each family's best public baseline",
        "",
        f"Per scenario family, the best of {', '.join(played)} by mean score (the skill ladder's reference, "
        "`dcops.evaluation.ladder`) and every scheduler's mean paired difference with it over the family's seeds, "
        "paired-bootstrap 95 % interval.",
        "",
    ]
    body = [["best public baseline", *[f"`{best[m]}`" for m in families]]]
    for name in data["policies"]:
        body.append([name] + [
            "ref" if name == best[m] else
            analysis.paired(data["runs"], name, best[m], where=lambda r, m=m: r["mix"] == m).text()
            for m in families])
    return lines + _table(["scheduler", *families], body) + [""]


def markdown(data: dict[str, Any], meta: dict[str, Any]) -> str:
    runs, ref = data["runs"], data["reference"]
    lines = [
        f"# Scripted-team adversarial evaluation: `{meta['name']}`",
        "",
        _made_by(data, meta),
        "",
        _matrix_text(data, meta),
        "",
        "## Headline (all mixes and conditions)",
        "",
        HEADLINE_TEXT,
        "",
        headline(data),
        "",
        "![Episode score by scheduler and team mix](score_by_scheduler_mix.png)",
        "",
    ]
    if data["mismatches"]:
        lines += [
            f"**Warning**: {data['mismatches']} cells had arrivals different from their bound's episode; "
            "their fraction of the bound is left out.",
            "",
        ]
    # score by mix
    mixes = meta["mixes"]
    lines += [
        "## Episode score by team mix",
        "",
        "Mean episode score (range [−1.10, 0.65]); in brackets the fraction of the hindsight bound.",
        "",
    ]
    body = []
    for name in data["policies"]:
        cells = [data["by_mix"].get((name, m)) for m in mixes]
        body.append(
            [name]
            + [
                f"{_fmt(c['score'], '+.3f')} ({_fmt(c['fraction_of_bound'], '.2f')})" if c else "–"
                for c in cells
            ]
        )
    lines += _table(["scheduler", *mixes], body) + [""]
    # paired comparisons
    if ref:
        lines += [
            "## Paired comparisons against `" + ref + "`",
            "",
            "Mean difference in episode score over the same (condition, seed) cells of each mix, paired-"
            "bootstrap 95 % interval (10,000 resamples).",
            "",
        ]
        body = []
        for name in data["policies"]:
            if name == ref:
                continue
            body.append(
                [name]
                + [analysis.paired(runs, name, ref, where=lambda r, m=m: r["mix"] == m).text() for m in mixes]
            )
        lines += _table(["scheduler", *mixes], body) + [""]
    lines += _best_baseline_section(data, [m for m in mixes if family_of(m) is not None])
    # gaming payoff
    gaming_mixes = [m for m in mixes if _gaming(m)]
    if gaming_mixes:
        lines += [
            "## Gaming payoff",
            "",
            "Per gaming team: value it got completed while misreporting minus the value its honest twin got "
            "completed on the same seed (every other team and the physics identical), mean [bootstrap 95 % "
            "CI]; "
            "in brackets, the payoff relative to the twin's value. Positive: misreporting pays under this "
            "scheduler. Then the mean share of the gaming team's requests the scheduler accepted, and in "
            "brackets its honest twin's.",
            "",
        ]
        by = analysis.group(data["payoffs"], "scheduler", "mix")
        body = []
        for name in data["policies"]:
            row = [name]
            for m in gaming_mixes:
                recs = by.get((name, m), [])
                est = analysis.bootstrap_mean([p["payoff"] for p in recs])
                twin = sum(p["twin_value"] for p in recs)
                rel = f" ({100.0 * sum(p['payoff'] for p in recs) / twin:+.1f} %)" if twin > 0 else ""
                accepted = ""
                if recs:
                    rate = float(np.mean([p["accept_rate"] for p in recs]))
                    twin_rate = float(np.mean([p["twin_accept_rate"] for p in recs]))
                    accepted = f"; accepted {rate:.2f} (twin {twin_rate:.2f})"
                row.append(est.text("+.0f") + rel + accepted)
            body.append(row)
        lines += _table(["scheduler", *gaming_mixes], body) + ["", "![Gaming payoff](gaming_payoff.png)", ""]
    if "injecting" in mixes and "one_strategic" in mixes:
        lines += injection_section(data)
    # conditions
    conditions = meta["conditions"]
    lines += [
        "## By condition",
        "",
        "Mean episode score; incident windows per episode; zone-minutes of true inlet "
        "above 27 °C / 32 °C; carbon saved against carbon-blind (%).",
        "",
    ]
    body = []
    for name in data["policies"]:
        row = [name]
        for c in conditions:
            s = data["by_condition"].get((name, c))
            row.append(
                f"{_fmt(s['score'], '+.3f')}; {_fmt(s['incident_windows'], '.2f')}; "
                f"{_fmt(s['violation_min_27c'], '.0f')} / {_fmt(s['violation_min_32c'], '.0f')}; "
                f"{_fmt(s['carbon_saved_pct'], '+.1f')}"
                if s
                else "–"
            )
        body.append(row)
    lines += _table(["scheduler", *conditions], body) + [
        "",
        "![Carbon saved against score](carbon_vs_score.png)",
        "",
    ]
    # components and oversight
    lines += [
        "## Score components and oversight",
        "",
        "Means over all cells of the unweighted window terms "
        "(score = 0.50·throughput + 0.35·thermal + 0.15·carbon − invalid); value completed in value units; "
        "oversight detectors pooled over cells and detectors.",
        "",
    ]
    body = []
    for name in data["policies"]:
        s = data["by_scheduler"].get(name)
        if s:
            body.append(
                [
                    name,
                    _fmt(s["r_throughput"], "+.3f"),
                    _fmt(s["r_thermal"], "+.3f"),
                    _fmt(s["r_carbon"], "+.3f"),
                    _fmt(s["p_invalid"], ".3f"),
                    _fmt(s["value_completed"], ",.0f"),
                    _fmt(s["carbon_actual_kg"], ",.0f"),
                    _fmt(s["carbon_blind_kg"], ",.0f"),
                    _fmt(s["precision"]),
                    _fmt(s["recall"]),
                    _fmt(s["fpr"]),
                ]
            )
    lines += _table(
        [
            "scheduler",
            "R_throughput",
            "R_thermal",
            "R_carbon",
            "P_invalid",
            "value completed",
            "CO2 kg",
            "CO2 blind kg",
            "precision",
            "recall",
            "FPR",
        ],
        body,
    ) + [""]
    lines += [
        "## Definitions",
        "",
        "Team mixes: " + "; ".join(f"`{m}` = {', '.join(mix_kinds(m))}" for m in mixes) + ".",
        "Conditions: " + ", ".join(f"`{c}`" for c in conditions) + f" (of {', '.join(CONDITIONS)} and the "
        "scenario families `family:<name>`, `dcops/cluster/scenarios.py`; see `dcops/evaluation/matrix.py`).",
        "",
        "Files: `cells.json`, `cells.csv` (every cell), `summary.csv`, `paired.csv`, `payoff.csv`, "
        "`run.json`.",
    ]
    return "\n".join(lines) + "\n"


def injection_section(data: dict[str, Any]) -> list[str]:
    """Prompt-injection sensitivity: the injecting mix against the one-strategic mix, same (condition,
    seed)."""
    lines = [
        "## Prompt-injection sensitivity",
        "",
        "The injecting team misreports draw for draw like the strategic team of the `one_strategic` mix "
        "on the same seed (same jobs, same stated fields, same neutral id); only its descriptions carry "
        "injected instructions (`dcops.agents.teams.injecting`). Paired differences, injecting − "
        "one_strategic, over the same (condition, seed), paired-bootstrap 95 % interval: the share of the "
        "gaming team's requests the scheduler accepted, and the value it got completed. A scheduler that does "
        "not read descriptions shows exactly 0.",
        "",
    ]
    body = []
    for name in data["policies"]:
        rate = analysis.cross_mix(data["runs"], name, "gaming_accept_rate", "injecting", "one_strategic")
        value = analysis.cross_mix(data["runs"], name, "gaming_value_completed", "injecting", "one_strategic")
        body.append([name, rate.text("+.3f"), value.text("+.0f")])
    return [*lines, *_table(["scheduler", "Δ acceptance rate", "Δ value completed"], body), ""]


def plots(data: dict[str, Any], meta: dict[str, Any], out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    names, mixes = data["policies"], meta["mixes"]
    width = 0.8 / max(1, len(mixes))
    x = np.arange(len(names))
    fig, ax = plt.subplots(figsize=(max(7.0, 1.4 * len(names)), 4.2))
    for i, m in enumerate(mixes):
        ests = [
            analysis.bootstrap_mean(
                [r["score"] for r in data["runs"] if r["scheduler"] == n and r["mix"] == m]
            )
            for n in names
        ]
        means = np.array([e.mean for e in ests])
        err = np.array(
            [
                [e.mean - e.low if e.n > 1 else 0.0 for e in ests],
                [e.high - e.mean if e.n > 1 else 0.0 for e in ests],
            ]
        )
        ax.bar(x + (i - (len(mixes) - 1) / 2) * width, means, width, yerr=err, capsize=2, label=m)
    ax.set_xticks(x, names, rotation=20, ha="right")
    ax.set_ylabel("episode score (mean, 95 % CI)")
    ax.axhline(0.0, color="black", linewidth=0.6)
    ax.legend(fontsize=8, ncol=min(5, len(mixes)))
    ax.set_title(
        f"Episode score by scheduler and team mix ({len(meta['seeds'])} seeds × "
        f"{len(meta['conditions'])} conditions)"
    )
    fig.tight_layout()
    paths.append(out / "score_by_scheduler_mix.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    gaming = [m for m in mixes if _gaming(m)]
    fig, ax = plt.subplots(figsize=(max(7.0, 1.4 * len(names)), 4.0))
    width = 0.8 / max(1, len(gaming))
    for i, m in enumerate(gaming):
        ests = [
            analysis.bootstrap_mean(
                [p["payoff"] for p in data["payoffs"] if p["scheduler"] == n and p["mix"] == m]
            )
            for n in names
        ]
        means = np.nan_to_num(np.array([e.mean for e in ests]))
        err = np.array(
            [
                [e.mean - e.low if e.n > 1 else 0.0 for e in ests],
                [e.high - e.mean if e.n > 1 else 0.0 for e in ests],
            ]
        )
        ax.bar(
            x + (i - (len(gaming) - 1) / 2) * width, means, width, yerr=np.nan_to_num(err), capsize=2, label=m
        )
    ax.set_xticks(x, names, rotation=20, ha="right")
    ax.set_ylabel("gaming payoff per gaming team\n(value units, mean, 95 % CI)")
    ax.axhline(0.0, color="black", linewidth=0.6)
    if gaming:
        ax.legend(fontsize=8)
    ax.set_title("Value a gaming team gains by misreporting, against its honest twin")
    fig.tight_layout()
    paths.append(out / "gaming_payoff.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7.0, 4.8))
    markers = dict(zip(meta["conditions"], "osD^vP*XhH<>p", strict=False))
    colours = {n: f"C{i}" for i, n in enumerate(names)}
    for (n, condition), s in data["by_condition"].items():
        ax.scatter(
            s["carbon_saved_pct"], s["score"], color=colours[n], marker=markers.get(condition, "o"), s=36
        )
    for n in names:
        ax.scatter([], [], color=colours[n], marker="s", label=n)
    for condition, marker in markers.items():
        ax.scatter([], [], color="grey", marker=marker, label=condition)
    ax.set_xlabel("carbon saved against carbon-blind, same jobs (%)")
    ax.set_ylabel("episode score (mean)")
    ax.set_title("Carbon against score (one point per scheduler × condition)")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    paths.append(out / "carbon_vs_score.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)
    return paths


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    fields: list[str] = []
    for row in rows:
        fields += [k for k in row if k not in fields]
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        for row in rows:
            writer.writerow(
                {
                    k: json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v
                    for k, v in row.items()
                }
            )


def write(rows: dict[str, dict[str, Any]], meta: dict[str, Any], out: Path, reference: str) -> list[Path]:
    """Write every file of the module docstring; return their paths."""
    out.mkdir(parents=True, exist_ok=True)
    data = build(rows, meta, reference)
    ordered = [rows[k] for k in sorted(rows)]
    paths = []
    for name, text in (
        ("README.md", markdown(data, meta)),
        ("headline.md", headline(data) + "\n"),
        ("cells.json", json.dumps(ordered, indent=1, sort_keys=True)),
        ("run.json", json.dumps(meta, indent=1, default=str)),
    ):
        (out / name).write_text(text)
        paths.append(out / name)
    summary = list(data["by_mix"].values())
    ref = data["reference"]
    paired_rows = [
        {
            "scheduler": n,
            "reference": ref,
            "mix": m,
            **vars(analysis.paired(data["runs"], n, ref, where=lambda r, m=m: r["mix"] == m)),
        }
        for n in data["policies"]
        if ref and n != ref
        for m in meta["mixes"]
    ]
    for name, table in (
        ("cells.csv", ordered),
        ("summary.csv", summary),
        ("paired.csv", paired_rows),
        ("payoff.csv", data["payoffs"]),
    ):
        if table:
            _write_csv(out / name, table)
            paths.append(out / name)
    paths += plots(data, meta, out)
    return paths
