"""Report of a GRPO run from its logs: the training curve (PNG) and a short Markdown summary.

Reads ``log.jsonl`` and ``config.json`` of a run folder (:mod:`dcops.training.scheduler.grpo`). The headline
figure is the change of the mean reward between the first and the last ``n`` steps (default 10) with a 95 %
Welch confidence interval; each step's reward is the mean over its G completions, and steps draw different
window states, so the interval covers state-to-state spread as well as sampling noise. Where the run logged its
completions, the report also pairs them with fixed rules on the same states (:mod:`dcops.training.scheduler.paired`),
which takes the state-to-state spread out of the environment reward.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dcops.training.scheduler.paired import (
    ALL_DEFAULT,
    REFERENCES,
    PairedStep,
    gap_key,
    jsonl_rows,
    merge_into_log,
    paired_steps,
)


def read_log(run_dir: str | Path) -> list[dict[str, Any]]:
    """The per-step rows of ``log.jsonl`` (the last row wins if a resumed run logged a step twice)."""
    path = Path(run_dir) / "log.jsonl"
    if not path.exists():
        raise FileNotFoundError(f"{path}: no GRPO log here (run `dcops train-scheduler --out {run_dir}` first)")
    by_step = {int(row["step"]): row for row in jsonl_rows(path)}
    return [by_step[s] for s in sorted(by_step)]


def read_step_log(path: Path, missing: str) -> list[dict[str, float]]:
    """The rows of a per-step ``log.csv`` as numbers, one per step in order (the last row wins where a resumed run
    logged a step twice); ``missing``: the error message's hint when the file is not there."""
    import csv

    if not path.exists():
        raise FileNotFoundError(f"{path}: {missing}")
    by_step: dict[int, dict[str, float]] = {}
    with path.open(newline="") as handle:
        for row in csv.DictReader(handle):
            values = {k: float(v) if v not in ("", None) else math.nan for k, v in row.items()}
            by_step[int(values["step"])] = values
    return [by_step[s] for s in sorted(by_step)]


def series(rows: list[dict[str, Any]], key: str) -> list[float]:
    """One logged quantity per step (NaN where a step did not log it)."""
    out = []
    for row in rows:
        value = row.get(key)
        out.append(float(value) if isinstance(value, (int, float)) else math.nan)
    return out


def moving_average(values: list[float], window: int) -> list[float]:
    """Trailing mean over up to ``window`` steps, ignoring NaN."""
    if window < 1:
        raise ValueError(f"window: must be >= 1, got {window}")
    out = []
    for i in range(len(values)):
        chunk = [v for v in values[max(0, i - window + 1): i + 1] if not math.isnan(v)]
        out.append(sum(chunk) / len(chunk) if chunk else math.nan)
    return out


@dataclass(frozen=True)
class Change:
    """Mean of the first and last ``n`` steps and the difference's 95 % Welch interval."""

    n: int
    first_mean: float
    last_mean: float
    diff: float
    ci_low: float
    ci_high: float

    @property
    def significant(self) -> bool:
        return self.ci_low > 0 or self.ci_high < 0


def first_last_change(values: list[float], n: int = 10) -> Change:
    """Compare the first and last ``n`` finite values (needs at least 2 each, and ``2n`` values in all)."""
    from scipy import stats

    finite = [v for v in values if not math.isnan(v)]
    if len(finite) < 4:
        raise ValueError(f"need at least 4 logged steps to compare, got {len(finite)}")
    n = min(n, len(finite) // 2)
    a, b = finite[:n], finite[-n:]
    ma, mb = sum(a) / n, sum(b) / n
    if max(a) == min(a) and max(b) == min(b):  # no spread: the interval is the difference itself
        return Change(n, ma, mb, mb - ma, mb - ma, mb - ma)
    ci = stats.ttest_ind(b, a, equal_var=False).confidence_interval(0.95)
    return Change(n, ma, mb, mb - ma, float(ci.low), float(ci.high))


def plot_curve(rows: list[dict[str, Any]], path: str | Path, window: int = 10, title: str = "") -> Path:
    """Reward (total and environment part), format-failure rate and KL per step, each with a moving average."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [r["step"] for r in rows]
    fig, axes = plt.subplots(3, 1, figsize=(8, 8), sharex=True, height_ratios=[3, 2, 1.4])
    panels = [
        (axes[0], [("reward", "reward (env + format)", "tab:blue"), ("env_reward", "env window reward", "tab:green"),
                   (gap_key("priority_threshold"), "env reward − priority_threshold, same state", "tab:orange")],
         "reward per step"),
        (axes[1], [("format_failure_rate", "format-failure rate", "tab:red")], "share of completions"),
        (axes[2], [("kl", "KL to reference", "tab:purple")], "KL"),
    ]
    for ax, keys, ylabel in panels:
        for key, label, color in keys:
            values = series(rows, key)
            if all(math.isnan(v) for v in values):
                continue
            ax.plot(steps, values, ".", color=color, alpha=0.35, markersize=4)
            ax.plot(steps, moving_average(values, window), "-", color=color, label=f"{label} ({window}-step mean)")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        ax.legend(loc="best", fontsize=8)
    axes[1].set_ylim(-0.05, 1.05)
    axes[-1].set_xlabel("GRPO step")
    if title:
        axes[0].set_title(title, fontsize=10)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def mean_interval(values: list[float]) -> tuple[float, float, float]:
    """Mean of the finite values and its 95 % t interval (:func:`dcops.intervals.t_interval`: NaN where there
    are fewer than 2)."""
    from dcops.intervals import t_interval

    return t_interval([v for v in values if not math.isnan(v)])


def paired_section(rows: list[dict[str, Any]], paired: list[PairedStep], n: int) -> list[str]:
    """Markdown lines: the completions against fixed rules on the same states (empty without ``paired``)."""
    if not paired:
        return []
    names = [*REFERENCES, ALL_DEFAULT]
    lines = [
        "Paired with fixed rules on the same window states (the run's `completions.jsonl`, states rebuilt from "
        "`config.json`; `dcops.training.scheduler.paired`). A gap removes how much the step's state pays whatever is "
        f"decided, so it moves only if the decisions do; `{ALL_DEFAULT}` is the empty answer (every request gets "
        "the parser's default):", "",
        "| quantity | first | last | last − first [95 % CI] | moved? |", "|---|---|---|---|---|",
        _change_row("env reward − priority_threshold", series(rows, gap_key("priority_threshold")), n),
        _change_row(f"env reward − {ALL_DEFAULT}", series(rows, gap_key(ALL_DEFAULT)), n),
        _change_row("share of groups without env-reward spread", series(rows, "flat_group_share"), n),
        _change_row("share of groups of identical completions", series(rows, "identical_group_share"), n),
        "", f"Over all {len(paired)} steps (mean per step, 95 % t interval):", "",
        "| completions' env reward minus | mean gap [95 % CI] | steps where the completions did better |",
        "|---|---|---|",
    ]
    for name in names:
        gaps = [p.gap(name) for p in paired]
        mean, low, high = mean_interval(gaps)
        better = sum(1 for g in gaps if g > 1e-12)
        lines.append(f"| {name} | {_fmt(mean)} [{_fmt(low)}, {_fmt(high)}] | {better} of {len(gaps)} |")
    flat, groups = sum(p.flat_groups for p in paired), sum(p.groups for p in paired)
    identical = sum(p.identical_groups for p in paired)
    lines += ["", f"Groups whose completions all got the same environment reward (the advantage then comes from "
                  f"the format term alone): **{flat} of {groups}**; in {identical} of them the completions are the "
                  "same text (the sampled policy collapsed onto one answer).", ""]
    return lines


def _fmt(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:+.3f}"


def _change_row(name: str, values: list[float], n: int) -> str:
    try:
        c = first_last_change(values, n)
    except ValueError:
        return f"| {name} | n/a | n/a | n/a | n/a |"
    verdict = "yes" if c.significant else "no"
    return (f"| {name} | {_fmt(c.first_mean)} | {_fmt(c.last_mean)} | {_fmt(c.diff)} "
            f"[{_fmt(c.ci_low)}, {_fmt(c.ci_high)}] | {verdict} |")


def _model_line(source: dict | None) -> list[str]:
    """The report's line on the model the run trained (``config.json``'s ``model_source``; older runs lack it)."""
    if not source:
        return []
    where = f", {source['location']}" if source.get("location") else ""
    revision = f", revision {source['revision']}" if source.get("revision") else ""
    return [f"- model: `{source.get('name')}` ({source.get('kind')}{where}{revision})"]


def write_markdown(run_dir: str | Path, md_path: str | Path, png_path: str | Path, n: int = 10,
                   command: str = "", paired: list[PairedStep] | None = None) -> Path:
    """The run's Markdown summary: command, config, steps, wall time, first-n vs last-n figures, the paired
    comparison with fixed rules (when ``paired`` is given), the curve."""
    run_dir = Path(run_dir)
    rows = merge_into_log(read_log(run_dir), paired or [])
    config_path = run_dir / "config.json"
    record = json.loads(config_path.read_text()) if config_path.exists() else {}
    cfg = record.get("config", {})
    step_s = [r["step_s"] for r in rows if isinstance(r.get("step_s"), (int, float))]
    wall = sum(step_s) if step_s else math.nan  # not the last wall_s: a resumed run restarts that clock
    keys = ["model", "seed", "max_steps", "num_generations", "prompts_per_step", "max_completion_length",
            "temperature", "learning_rate", "beta", "lora_r", "lora_alpha", "lora_target_modules", "horizon",
            "format_bonus", "invalid_penalty", "max_invalid", "baseline", "few_shot", "stop_strings"]
    seeds = cfg.get("train_seeds") or []
    lines = [
        "# GRPO training of the LLM scheduler", "",
        f"Run folder `{run_dir}`; figures below come from its `log.jsonl` "
        f"(`dcops train-scheduler --plot-only {run_dir}`).", "",
    ]
    if command:
        lines += ["Training command:", "", "```bash", command, "```", ""]
    lines += [
        f"- steps done: **{len(rows)}** of {cfg.get('max_steps', '?')}; training time {wall / 60:.1f} min "
        f"(median {sorted(step_s)[len(step_s) // 2] if step_s else math.nan:.1f} s a step) on "
        f"{record.get('device', '?')} ({record.get('torch_threads', '?')} torch threads)",
        f"- window states: {record.get('states', '?')} from training seeds "
        f"{(str(min(seeds)) + '–' + str(max(seeds))) if seeds else '?'} "
        f"({record.get('states_skipped_empty', '?')} empty windows skipped); prompt "
        f"{record.get('prompt_tokens_mean', math.nan):.0f} tokens on average (max {record.get('prompt_tokens_max', '?')})",
        *_model_line(record.get("model_source")),
        "- config: " + ", ".join(f"{k}={cfg[k]}" for k in keys if k in cfg), "",
        f"First {n} vs last {n} steps (mean per step; 95 % Welch interval of the difference):", "",
        "| quantity | first | last | last − first [95 % CI] | moved? |", "|---|---|---|---|---|",
        _change_row("reward (env + format)", series(rows, "reward"), n),
        _change_row("env window reward", series(rows, "env_reward"), n),
        _change_row("format term", series(rows, "format_term"), n),
        _change_row("format-failure rate", series(rows, "format_failure_rate"), n),
        _change_row("invalid entries / completion", series(rows, "invalid_per_completion"), n),
        _change_row("KL to reference", series(rows, "kl"), n),
        _change_row("token entropy of the completions (nats)", series(rows, "entropy"), n),
        "", *paired_section(rows, paired or [], n),
        f"![GRPO curve]({Path(png_path).name})", "",
    ]
    md_path = Path(md_path)
    md_path.parent.mkdir(parents=True, exist_ok=True)
    md_path.write_text("\n".join(lines))
    return md_path


def write_report(run_dir: str | Path, report_dir: str | Path, n: int = 10, window: int = 10,
                 command: str = "", stem: str = "grpo") -> tuple[Path, Path]:
    """Write ``{stem}_curve.png`` and ``{stem}_training.md`` under ``report_dir`` from the run's logs."""
    report_dir = Path(report_dir)
    paired = paired_steps(run_dir)
    rows = merge_into_log(read_log(run_dir), paired)
    png = plot_curve(rows, report_dir / f"{stem}_curve.png", window=window,
                     title=f"GRPO on the LLM scheduler ({Path(run_dir).name}, {len(rows)} steps)")
    md = write_markdown(run_dir, report_dir / f"{stem}_training.md", png, n=n, command=command, paired=paired)
    return png, md
