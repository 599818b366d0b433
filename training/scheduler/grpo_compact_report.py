"""Report of a ``dcops train-scheduler-grpo-compact`` run from its files: the curve (PNG) and a Markdown summary.

Reads ``log.csv``, ``config.json`` and (when the run finished) ``summary.json`` of a run folder
(:mod:`dcops.training.scheduler.grpo_compact`) and the data's ``manifest.json``
(:mod:`dcops.training.scheduler.counterfactual`). The curve shows, per step (each step a batch of different
prompts, so a trailing mean over 10 steps is drawn too), the cross-entropy to the KL-leashed target, the share of
the batch whose target prefers another answer than the teacher's, the policy's mean probability of the teacher's
answer and ``KL(π ‖ π_ref)``; the summary gives the held-out rows before and after training: how often the
scheduler's own choice is the best answer, and its mean one-step gain over the teacher's answer.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from dcops.training.scheduler.report import moving_average, read_step_log


def read_log(run_dir: str | Path) -> list[dict[str, float]]:
    """The rows of ``log.csv`` as numbers (the last row wins where a resumed run logged a step twice)."""
    path = Path(run_dir) / "log.csv"
    rows = read_step_log(path, f"no log here (run `dcops train-scheduler-grpo-compact --out {run_dir}` first)")
    if not rows:
        raise ValueError(f"{path}: no step logged yet")
    return rows


def _shown(path: str) -> str:
    """A path relative to the working folder where it lies under it (reports do not name one machine's folders)."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return path


def _validation_row(name: str, v: dict[str, Any] | None) -> list[str]:
    if not v:
        return []
    return [f"| {name} | {v['rows']} | {v['best_agreement']:.3f} | {v['teacher_agreement']:.3f} | "
            f"{v['mean_gain_over_teacher'] * 1000:+.3f} | {v['mean_regret'] * 1000:.3f} |"]


def write_grpo_compact_report(run_dir: str | Path, report_dir: str | Path, command: str = "",
                              evaluation: str = "") -> tuple[Path, Path]:
    """Write ``grpo_compact_curve.png`` and ``README.md`` into ``report_dir``; return their paths.
    ``evaluation``: Markdown appended as it is (the episode-level results, with their command)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    run, out = Path(run_dir), Path(report_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = read_log(run)
    config = json.loads((run / "config.json").read_text())
    summary_path = run / "summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
    cfg = config["config"]
    manifest_path = Path(cfg["data"]) / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    steps = [int(r["step"]) for r in rows]

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    series = (("loss", "cross-entropy to the target (nats)", "C0", True),
              ("teacher_probability", "π(teacher's answer), batch mean", "C1", False),
              ("kl", "KL(π ‖ π_ref), batch mean (nats)", "C2", False))
    for ax, (key, label, colour, log) in zip(axes, series, strict=True):
        values = [r[key] for r in rows]
        ax.plot(steps, values, color="0.7", lw=0.8, label="per step")
        ax.plot(steps, moving_average(values, 10), color=colour, lw=1.6, label="mean of 10")
        if log:
            ax.set_yscale("log")
        ax.set_xlabel("optimiser step")
        ax.set_ylabel(label)
    axes[0].legend(frameon=False)
    fig.suptitle(f"GRPO from the SFT adapter on counterfactual episode returns ({cfg['model']}, "
                 f"kl_beta {cfg['kl_beta']:g})")
    fig.tight_layout()
    png = out / "grpo_compact_curve.png"
    fig.savefig(png, dpi=110)
    plt.close(fig)

    train_split = manifest.get("splits", {}).get("train", {})
    seconds = [r["wall_s"] for r in rows]
    lines = [
        "# GRPO of the LLM scheduler from its SFT adapter (compact prompts, episode returns)",
        "",
        f"Made by `{command}`." if command else f"Run folder `{run}`.",
        "",
        (f"Data `{cfg['data']}`: {train_split.get('rows', '?')} training rows (seeds {train_split.get('seeds', '?')}), "
         f"each a request's compact prompt with the episode score of every allowed answer (one answer changed, "
         f"`priority_threshold` playing on; {train_split.get('rollouts', '?')} rollouts); "
         f"{train_split.get('rows_with_a_better_answer', '?')} rows have an answer better than the teacher's, by "
         f"{train_split.get('mean_gain_where_better', math.nan) * 1000:.2f} × 10⁻³ of score on average. "
         f"{config['train_rows_with_signal']} rows have answers differing by at least {cfg['min_spread']:g}."),
        "",
        (f"Start `{_shown(config['init_adapter'])}`, model `{cfg['model']}`; {cfg['max_steps']} steps of {cfg['batch_size']} "
         f"prompts, learning rate {cfg['learning_rate']:g} (AdamW, {cfg['warmup_steps']} warm-up steps), kl_beta "
         f"{cfg['kl_beta']:g}, advantage scale {config['advantage_scale']:.4g} (score units), seed {cfg['seed']}, "
         f"bf16 {config['bf16']}, {config['device']} with {config['torch_threads']} torch threads. Versions: "
         f"{json.dumps(config.get('versions', {}))}."),
        "",
        (f"Steps logged: {len(rows)}, {sum(seconds) / 60:.1f} min of steps ({sum(seconds) / len(seconds):.1f} s a "
         f"step); share of prompts whose target moves off the teacher's answer: "
         f"{sum(r['target_flips'] for r in rows) / len(rows):.3f}."
         + ("" if summary else " (The run has not finished: no summary.json yet.)")
         + (f" The run stopped at step {summary['steps_done']} of {cfg['max_steps']} on its wall-clock budget "
            f"(`--max-minutes {cfg['max_minutes']:g}`); that step's adapter is the result."
            if summary.get("stopped_by_clock") else "")),
        "",
        "![GRPO compact curve](grpo_compact_curve.png)",
        "",
    ]
    if summary.get("validation_after"):
        lines += [
            ("**Held-out rows** (validation seeds from 2000, never trained on): the scheduler's own choice "
             "(highest log-likelihood of the allowed answers) against each row's counterfactual returns. Gain and "
             "regret are one-step (the rest of the episode played by `priority_threshold`), in 10⁻³ of episode "
             "score."),
            "",
            "| adapter | rows | chose the best answer | chose the teacher's | mean gain over the teacher | "
            "mean regret |",
            "|---|---|---|---|---|---|",
            *_validation_row("start (SFT)", summary.get("validation_before")),
            *_validation_row("after GRPO", summary.get("validation_after")),
            "",
            (f"The teacher's own mean regret on these rows: "
             f"{summary['validation_after']['mean_regret_of_teacher'] * 1000:.3f} × 10⁻³."),
            "",
        ]
    if evaluation:
        lines += [evaluation.rstrip("\n"), ""]
    md = out / "README.md"
    md.write_text("\n".join(lines))
    return png, md
