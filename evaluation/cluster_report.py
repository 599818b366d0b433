"""Cluster-operations evaluation: the baseline table against the hindsight bound, and the detector table.

- ``dcops eval-cluster``: every baseline scheduler (``dcops.agents.schedulers``) on ``datacenter_ops_v1`` (the default) over
  20 fixed seeds (0–19), each episode's hindsight MILP bound (``dcops.cluster.hindsight``), and the oversight
  detectors' precision, recall and false-positive rate against the hidden truth, pooled over every run.
  Writes ``README.md``, ``baselines.csv``, ``episodes.csv`` and ``detection.csv`` under ``reports/cluster/``.

Heavy imports happen inside functions so ``dcops --help`` stays instant.
"""

from __future__ import annotations

import argparse
import csv
import math
from pathlib import Path
from typing import Any

from dcops.command import Command
from dcops.evaluation.play import arrivals_key, run_episode

__all__ = ["EVAL_SEEDS", "arrivals_key", "evaluate", "run_episode", "write_report"]

EVAL_SEEDS = tuple(range(20))
"""Seeds of every published cluster figure."""


def evaluate(seeds: tuple[int, ...] = EVAL_SEEDS, progress: Any = None, **config: Any) -> dict[str, Any]:
    """Run every baseline on every seed with its hindsight bound; pool the detection counts."""
    import dcops
    from dcops.agents.schedulers import BASELINES
    from dcops.oversight import DetectionReport
    from dcops.oversight.metrics import Counts

    env = dcops.parallel_env(**config)
    bounds: dict[str, Any] = {}
    episodes: list[dict[str, Any]] = []
    detection = DetectionReport()
    for name, cls in BASELINES.items():
        for seed in seeds:
            summary = run_episode(cls(), seed, env=env)
            key = summary["arrivals_key"]
            if key not in bounds:
                bounds[key] = env.hindsight_bound()
            bound = bounds[key]
            value = summary["throughput_value"]
            episodes.append({
                "scheduler": name, "seed": seed, "score": summary["score"], "throughput_value": value,
                "bound": bound.throughput_value, "bound_plan": bound.plan_value, "bound_status": bound.status,
                "fraction_of_bound": value / bound.throughput_value if bound.throughput_value > 0 else math.nan,
                "incident_windows": summary["incident_windows"],
                "carbon_saved_kg": summary["carbon_blind_kg"] - summary["carbon_actual_kg"],
                "bound_carbon_saved_kg": bound.carbon_saved_g / 1000.0,
                "on_time": summary["outcomes"].get("on_time", 0), "missed": summary["outcomes"].get("missed", 0),
                "rejected": summary["outcomes"].get("rejected", 0),
                "unfinished": summary["outcomes"].get("unfinished", 0),
                "invalid_entries": summary["invalid_entries"],
            })
            report = DetectionReport()
            for kind, values in summary["detection"].items():
                report.counts[kind] = Counts(**{k: values[k] for k in ("tp", "fp", "fn", "tn", "honest_fp", "honest_n")})
            detection.add(report)
            if progress is not None:
                progress(name, seed)
    return {"episodes": episodes, "detection": detection, "seeds": list(seeds), "n_bounds": len(bounds)}


def _mean_sd(values: list[float]) -> tuple[float, float]:
    values = [v for v in values if not math.isnan(v)]
    if not values:
        return math.nan, math.nan
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / max(1, len(values) - 1))
    return mean, sd


def baseline_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per scheduler: means over seeds (and the ratio of summed value to summed bound)."""
    rows = []
    by_name: dict[str, list[dict[str, Any]]] = {}
    for episode in result["episodes"]:
        by_name.setdefault(episode["scheduler"], []).append(episode)
    for name, eps in by_name.items():
        fraction, fraction_sd = _mean_sd([e["fraction_of_bound"] for e in eps])
        score, score_sd = _mean_sd([e["score"] for e in eps])
        rows.append({
            "scheduler": name,
            "episodes": len(eps),
            "fraction_of_bound": fraction,
            "fraction_sd": fraction_sd,
            "pooled_fraction": sum(e["throughput_value"] for e in eps) / sum(e["bound"] for e in eps),
            "score": score,
            "score_sd": score_sd,
            "throughput_value": _mean_sd([e["throughput_value"] for e in eps])[0],
            "incident_windows": _mean_sd([float(e["incident_windows"]) for e in eps])[0],
            "carbon_saved_kg": _mean_sd([e["carbon_saved_kg"] for e in eps])[0],
            "on_time": _mean_sd([float(e["on_time"]) for e in eps])[0],
            "missed": _mean_sd([float(e["missed"]) for e in eps])[0],
            "rejected": _mean_sd([float(e["rejected"]) for e in eps])[0],
        })
    rows.sort(key=lambda r: -r["fraction_of_bound"])
    return rows


def markdown(result: dict[str, Any]) -> str:
    rows = baseline_rows(result)
    episodes = result["episodes"]
    bound_mean = _mean_sd([e["bound"] for e in episodes])[0]
    gaps = [float(e["bound_status"].split()[1].rstrip("%")) for e in episodes if e["bound_status"].startswith("gap")]
    gap_text = (f"proven optimal or within {max(gaps):.2f} % (HiGHS dual bound reported)" if gaps
                else "proven optimal")
    seeds = result["seeds"]
    lines = [
        "# Cluster operations: baselines against the hindsight bound",
        "",
        f"`datacenter_ops_v1` with its defaults (8 windows × 18 steps of 5 min, 4 teams: 2 cooperative, 1 strategic, "
        f"1 adaptive; Phoenix in July, 900 kW cap, random faults), seeds {seeds[0]}–{seeds[-1]}, produced by "
        "`dcops eval-cluster`. Throughput value is Σ of the job scores of `dcops.cluster.reward` (true-priority-"
        "weighted kWh on time, minus misses and rejected high-value work); the bound is the hindsight MILP of "
        "`dcops.cluster.hindsight` on the same arrivals (full knowledge of truth and arrivals, job power within the "
        f"facility meter's electrical floor, which every incident-free schedule respects under any fault; mean {bound_mean:,.0f} value units; {gap_text}). Each scheduler is "
        "reported as its throughput value over the bound of the same episode.",
        "",
        "| scheduler | fraction of bound (mean ± sd) | pooled fraction | episode score (mean ± sd) | incident windows / episode | on time | missed | rejected | carbon saved vs blind (kg) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['scheduler']} | {r['fraction_of_bound']:.3f} ± {r['fraction_sd']:.3f} | {r['pooled_fraction']:.3f} | "
            f"{r['score']:+.3f} ± {r['score_sd']:.3f} | {r['incident_windows']:.2f} | {r['on_time']:.1f} | "
            f"{r['missed']:.1f} | {r['rejected']:.1f} | {r['carbon_saved_kg']:.1f} |")
    lines += [
        "",
        "Episode score = mean window reward, range [−1.10, 0.65]. A fraction above 1 is possible only by running "
        "more job power than the incident-free budget, which the incident column shows.",
        "",
        "# Oversight detectors against the hidden truth",
        "",
        f"Pooled over all {len(episodes)} runs above (per (team, window) pair; positive = the team applied that tactic "
        "in the detector's 3-window scope; pattern gaming: any tactic). Detectors (the calibrated monitor of "
        "`dcops.oversight.calibrated`) read only stated fields, team history and audits of resolved jobs; their "
        "calibration on fresh seeds is `reports/oversight/README.md`.",
        "",
        "| detector | precision | recall | FPR | FPR on honest teams | TP | FP | FN | TN |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for kind, c in result["detection"].counts.items():
        lines.append(f"| {kind} | {c.precision:.3f} | {c.recall:.3f} | {c.fpr:.3f} | {c.honest_fpr:.3f} | "
                     f"{c.tp} | {c.fp} | {c.fn} | {c.tn} |")
    lines += ["", USAGE]
    return "\n".join(lines) + "\n"


USAGE = """# Using the environment (PettingZoo)

```python
import dcops
from dcops.agents.schedulers import PriorityThresholdScheduler

env = dcops.parallel_env()          # datacenter_ops_v1: agent scheduler; team_0..team_3 scripted, PPO cooling
observations, infos = env.reset(seed=42)
scheduler = PriorityThresholdScheduler()
while env.agents:
    decisions = scheduler.decide(infos["scheduler"]["view"])   # or an array from env.action_space("scheduler")
    observations, rewards, terminations, truncations, infos = env.step({"scheduler": decisions})
print(infos["scheduler"]["episode"]["score"], env.hindsight_bound().throughput_value)
```

The full, runnable version is `examples/pettingzoo_quickstart.py`; the environment's manual is the docstring of
`dcops/env.py`; the reward's exact formulas are in `dcops/cluster/reward.py`."""


def write_report(result: dict[str, Any], out: str | Path) -> list[Path]:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    readme = out / "README.md"
    readme.write_text(markdown(result))
    paths.append(readme)
    for name, rows in (("baselines.csv", baseline_rows(result)), ("episodes.csv", result["episodes"]),
                       ("detection.csv", [{"detector": k, **c.as_dict()} for k, c in result["detection"].counts.items()])):
        path = out / name
        with path.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        paths.append(path)
    return paths


def _eval_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default="reports/cluster", help="output folder (markdown and CSV)")
    parser.add_argument("--seeds", type=int, default=None, help="number of seeds (0..N-1; default 20, which "
                        "publishes); with --ladder, each family's first N seeds (default all of them, 40, which "
                        "publishes); with --headroom, seeds from 9000 (default 20; 8 publishes)")
    parser.add_argument("--ladder", default=None, metavar="FAMILIES",
                        help="instead: the skill ladder (dcops.evaluation.ladder) on these scenario families, "
                             "comma-separated, or 'all'; --seeds then counts each family's own seeds")
    parser.add_argument("--ladder-out", default="reports/cluster/ladder", help="output folder of --ladder")
    parser.add_argument("--rungs", default=None,
                        help="with --ladder: replay only these rungs (comma-separated) and merge them into the "
                             "report on file in --ladder-out (its bounds must match)")
    parser.add_argument("--workers", type=int, default=1,
                        help="processes for --ladder and --headroom (the figures do not depend on it)")
    parser.add_argument("--headroom", default=None, metavar="VARIANTS",
                        help="instead: the headroom sweep (dcops.evaluation.headroom) on these variants, "
                             "comma-separated, or 'all'; --seeds counts seeds from 9000")
    parser.add_argument("--headroom-out", default="reports/cluster/headroom", help="output folder of --headroom")


def _ladder_run(args: argparse.Namespace) -> int:
    import json
    import re

    from tqdm import tqdm

    from dcops.cluster.scenarios import SCENARIOS, scenario
    from dcops.evaluation.ladder import markdown as ladder_markdown
    from dcops.evaluation.ladder import merge_rows, read_rows, run_ladder, summarise

    families = list(SCENARIOS) if args.ladder == "all" else [f.strip() for f in args.ladder.split(",") if f.strip()]
    for family in families:
        try:
            scenario(family)
        except ValueError as error:
            raise SystemExit(f"--ladder: {error}") from None
    if args.seeds is None:  # every family's seeds: what the published report plays
        args.seeds = max(len(SCENARIOS[f].seeds) for f in families)
    bar = tqdm(total=sum(min(args.seeds, len(SCENARIOS[f].seeds)) for f in families), desc="seeds", unit="seed")
    if args.workers < 1:
        raise SystemExit("--workers: must be >= 1")
    rungs = None if args.rungs is None else [r.strip() for r in args.rungs.split(",") if r.strip()]
    out = Path(args.ladder_out)
    if rungs is not None and not (out / "episodes.csv").exists():
        raise SystemExit(f"--rungs: no report on file to merge into ({out / 'episodes.csv'}); run without --rungs")
    try:
        rows = run_ladder(families, args.seeds, progress=lambda family, seed: bar.update(1), workers=args.workers,
                          rungs=rungs)
    except ValueError as error:
        raise SystemExit(f"--rungs: {error}") from None
    bar.close()
    command = f"dcops eval-cluster --ladder {args.ladder} --seeds {args.seeds}"
    produced_by = command
    if rungs is not None:
        try:
            rows = merge_rows(read_rows(out / "episodes.csv"), rows)
        except ValueError as error:
            raise SystemExit(f"--rungs: {error}") from None
        # The report is still the one the earlier full run produced, with these rungs merged in.
        found = re.search(r"Produced by `([^`]+)`", (out / "README.md").read_text()) if (out / "README.md").exists() else None
        produced_by = found.group(1) if found else command
    out.mkdir(parents=True, exist_ok=True)
    summary = summarise(rows)
    text = ladder_markdown(summary, produced_by)
    if rungs is not None:
        replayed = (out / "replayed.txt").read_text().splitlines() if (out / "replayed.txt").exists() else []
        # An earlier replay of the same command whose rungs this one replays again is superseded.
        replayed = [line for line in replayed if not (line.startswith(f"{command} --rungs ") and
                                                      set(line.rsplit(" ", 1)[1].split(",")) <= set(rungs))]
        replayed.append(f"{command} --rungs {','.join(rungs)}")
        (out / "replayed.txt").write_text("\n".join(dict.fromkeys(replayed)) + "\n")
    elif (out / "replayed.txt").exists():
        (out / "replayed.txt").unlink()  # a full run supersedes every replay
    if (out / "replayed.txt").exists():
        lines = (out / "replayed.txt").read_text().splitlines()
        text += "\nRungs replayed since, merged into the same seeds (the bounds on file matched): " + "; ".join(
            f"`{line}`" for line in lines) + ".\n"
    (out / "README.md").write_text(text)
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    fields = sorted({k for r in rows for k in r})
    with (out / "episodes.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    print(text)
    print(f"wrote {out}/README.md, summary.json, episodes.csv")
    return 0


def _headroom_run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from dcops.evaluation import headroom

    names = ([v.name for v in headroom.VARIANTS] if args.headroom == "all"
             else [n.strip() for n in args.headroom.split(",") if n.strip()])
    unknown = [n for n in names if n not in headroom.VARIANT_BY_NAME]
    if unknown or not names:
        raise SystemExit(f"--headroom: unknown {unknown}; known: {sorted(headroom.VARIANT_BY_NAME)} or 'all'")
    if args.workers < 1:
        raise SystemExit("--workers: must be >= 1")
    bar = tqdm(total=len(names) * args.seeds, desc="seeds", unit="seed")
    rows = headroom.run_sweep(names, args.seeds, workers=args.workers, progress=lambda name, seed: bar.update(1))
    bar.close()
    out = Path(args.headroom_out)
    out.mkdir(parents=True, exist_ok=True)
    command = f"dcops eval-cluster --headroom {args.headroom} --seeds {args.seeds}"
    text = headroom.markdown(headroom.summarise(rows), command)
    (out / "README.md").write_text(text)
    with (out / "episodes.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(text)
    print(f"wrote {out}/README.md, episodes.csv")
    return 0


def _eval_run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    if args.seeds is not None and args.seeds < 1:
        raise SystemExit("--seeds: must be >= 1")
    if args.ladder is not None:
        return _ladder_run(args)
    if args.seeds is None:
        args.seeds = len(EVAL_SEEDS)
    if args.headroom is not None:
        return _headroom_run(args)
    seeds = tuple(range(args.seeds))
    from dcops.agents.schedulers import BASELINES

    bar = tqdm(total=len(seeds) * len(BASELINES), desc="episodes", unit="ep")
    result = evaluate(seeds, progress=lambda name, seed: bar.update(1))
    bar.close()
    paths = write_report(result, args.out)
    print(markdown(result))
    print("wrote " + ", ".join(str(p) for p in paths))
    return 0


COMMANDS = [
    Command("eval-cluster", "Cluster baselines vs the hindsight MILP bound and detector precision/recall (20 seeds)",
            _eval_arguments, _eval_run),
]
