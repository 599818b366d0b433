"""Report of an SFT run from its files: the training curve (PNG) and a Markdown summary.

Reads ``log.csv``, ``config.json`` and (when the run finished) ``summary.json`` of a run folder
(:mod:`dcops.training.scheduler.sft`). The curve is the loss on the answer tokens and TRL's token accuracy per
step (each step is one batch of different examples, so a trailing mean over 10 steps is drawn too); the summary
says what was trained on what, how long it took, and how often the adapter's log-likelihood choice reproduces
the teacher's held-out answers (with the base model's, where the run measured it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dcops.training.scheduler.report import moving_average, read_step_log


def read_sft_log(run_dir: str | Path) -> list[dict[str, float]]:
    """The rows of ``log.csv`` as numbers (the last row wins where a resumed run logged a step twice)."""
    return read_step_log(Path(run_dir) / "log.csv",
                         f"no SFT log here (run `dcops train-scheduler-sft --out {run_dir}` first)")


def _kinds(task: str) -> tuple[str, ...]:
    return ("ACCEPT", "REJECT", "DEFER") if task == "scheduler" else ("place", "defer")


def _accuracy_rows(name: str, accuracy: dict[str, Any] | None, task: str) -> list[str]:
    if not accuracy:
        return []
    per = accuracy.get("per_answer", {})
    cells = " | ".join(f"{per[w]['accuracy']:.3f} ({per[w]['examples']})" if w in per else "–"
                       for w in _kinds(task))
    return [f"| {name} | {accuracy['accuracy']:.3f} | {accuracy['examples']} | {cells} |"]


def _answers_text(answers: dict[str, int]) -> str:
    """The answer counts, or for many distinct answers (placements) how many there are and the defer count."""
    if len(answers) <= 6:
        return json.dumps(answers)
    return f"{len(answers)} distinct actions, {answers.get('defer', 0)} of {sum(answers.values())} defer"


def write_sft_report(run_dir: str | Path, report_dir: str | Path, command: str = "") -> tuple[Path, Path]:
    """Write ``sft_curve.png`` and ``README.md`` into ``report_dir``; return their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    run, out = Path(run_dir), Path(report_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = read_sft_log(run)
    config = json.loads((run / "config.json").read_text())
    summary_path = run / "summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
    steps = [int(r["step"]) for r in rows]
    loss = [r["loss"] for r in rows]
    accuracy = [r["mean_token_accuracy"] for r in rows]

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    left.plot(steps, loss, color="0.7", lw=0.8, label="per step")
    left.plot(steps, moving_average(loss, 10), color="C0", lw=1.6, label="mean of 10")
    left.set_yscale("log")
    left.set_xlabel("optimiser step")
    left.set_ylabel("loss on the answer tokens (nats)")
    left.legend(frameon=False)
    right.plot(steps, accuracy, color="0.7", lw=0.8)
    right.plot(steps, moving_average(accuracy, 10), color="C1", lw=1.6)
    right.set_ylim(0, 1.02)
    right.set_xlabel("optimiser step")
    right.set_ylabel("token accuracy (answer + end token)")
    cfg = config["config"]
    task = cfg.get("task", "scheduler")
    fig.suptitle(f"SFT of the LLM {task} policy on {cfg['teacher']} ({cfg['model']}, LoRA r={cfg['lora_r']})")
    fig.tight_layout()
    png = out / "sft_curve.png"
    fig.savefig(png, dpi=110)
    plt.close(fig)

    tokens = config["prompt_tokens"]
    first, last = rows[: min(10, len(rows))], rows[-min(10, len(rows)):]
    lines = [
        "# SFT of the LLM scheduler" if task == "scheduler" else "# SFT of the LLM placement policy",
        "",
        f"Made by `{command}`." if command else f"Run folder `{run}`.",
        "",
        f"Teacher `{cfg['teacher']}`, data `{cfg['data']}` ({config['train_examples']} training examples, answers "
        f"{_answers_text(config['train_answers'])}; prompts {tokens['min']}–{tokens['max']} tokens, median "
        f"{tokens['median']}). Model `{cfg['model']}` ({config['model_source'].get('kind')}), LoRA r={cfg['lora_r']} "
        f"α={cfg['lora_alpha']} on {', '.join(cfg['lora_target_modules'])}; {cfg['max_steps']} steps of "
        f"{cfg['batch_size']} × {cfg['grad_accum']} examples ({config['examples_seen']} seen), learning rate "
        f"{cfg['learning_rate']:g} (cosine, {cfg['warmup_steps']} warm-up steps), seed {cfg['seed']}, "
        f"bf16 {config['bf16']}, {config['device']} with {config['torch_threads']} torch threads. "
        f"Versions: {json.dumps(config.get('versions', {}))}.",
        "",
        f"Steps logged: {len(rows)}; mean loss over the first {len(first)}: "
        f"{sum(r['loss'] for r in first) / len(first):.3g}, over the last {len(last)}: "
        f"{sum(r['loss'] for r in last) / len(last):.3g} nats."
        + (f" Training took {summary['train_wall_s'] / 60:.1f} min ({summary['train_wall_s'] / max(summary['steps_done'], 1):.1f} s a step)."
           if summary else " (The run has not finished: no summary.json yet.)"),
        "",
        "![SFT curve](sft_curve.png)",
        "",
    ]
    if summary.get("validation_accuracy"):
        lines += [
            ("**Held-out answers** (validation seeds from 2000, never trained on): how often the `sft` scheduler's "
             "own choice, the highest log-likelihood of the allowed answer words after the prompt, is the teacher's "
             "answer, given the teacher's earlier answers in the window (per teacher answer in brackets: examples)."
             if task == "scheduler" else
             "**Held-out ticks** (validation scenarios from seed 2,000,000, never trained on): how often the policy's "
             "own choice, the highest mean log-likelihood per token of the valid actions, is the optimum's action "
             "(by the optimum's kind of action; 'other place' in the confusion: a different placement)."),
            "",
            "| model | accuracy | examples | " + " | ".join(_kinds(task)) + " |",
            "|---|---|---|" + "---|" * len(_kinds(task)),
            *_accuracy_rows("base model (no adapter)", summary.get("base_validation_accuracy"), task),
            *_accuracy_rows(f"with the adapter (step {summary['steps_done']})", summary["validation_accuracy"],
                            task),
            "",
            "Confusion, teacher → adapter: " + ", ".join(f"{k}: {v}" for k, v in
                                                        summary["validation_accuracy"]["confusion"].items()) + ".",
            "",
        ]
    md = out / "README.md"
    md.write_text("\n".join(lines))
    return png, md
