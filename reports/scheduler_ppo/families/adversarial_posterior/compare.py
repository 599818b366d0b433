"""Does the team posterior help the RL scheduler learn? The ``adversarial`` family's RL run with the posterior
column (``dcops train-scheduler-ppo --team-posterior``) against the shipped run without it, at equal PPO steps,
on the same 84 validation seeds, with the same recipe, teacher episodes and seed. Writes ``README.md`` beside
this file from the two learning curves (this folder's ``learning_curve.csv``, ``../adversarial/``'s) and the two
recipes (``recipe.json`` here, the shipped ``ppo_scheduler_adversarial.json``).

The posterior run (its outputs under ``runs/`` are not committed; its curve, recipe and teacher manifest are
copied here)::

    dcops scheduler-teacher --family adversarial --teachers searched --seeds 1000 --validation-seeds 84 \\
        --team-posterior --workers 2 --out runs/teacher_adv_post                               # 30 s
    dcops train-scheduler-ppo --family adversarial --teacher searched --team-posterior \\
        --data runs/teacher_adv_post --out runs/ppo_adv_post --timesteps 100000                # 18 min
    dcops train-scheduler-ppo ... --timesteps 200000 --resume                                  # 15 min more

They ran at commit 2b0f4cc with ``--out`` under ``/work/runs/s19/`` (the recipe's ``teacher_data``); the resumed
segment's recipe says ``+dirty``: the working tree then held docstring edits to ``agents/schedulers/learned.py``
and this script, committed after.

Run from the repository root: ``python reports/scheduler_ppo/families/adversarial_posterior/compare.py``."""

from __future__ import annotations

import csv
import json
from importlib import resources
from pathlib import Path

HERE = Path(__file__).parent
STEPS = (0, 10_000, 20_000, 50_000, 100_000, 150_000, 200_000)


def curve(path: Path) -> dict[int, dict[str, float]]:
    with path.open() as f:
        return {int(row["timesteps"]): {k: float(v) for k, v in row.items()} for row in csv.DictReader(f)}


def main() -> None:
    with_posterior = curve(HERE / "learning_curve.csv")
    without = curve(HERE.parent / "adversarial" / "learning_curve.csv")
    recipe = json.loads((HERE / "recipe.json").read_text())
    shipped = json.loads((resources.files("dcops.agents.schedulers") / "data/ppo_scheduler_adversarial.json")
                         .read_text())
    differ = sorted(k for k, v in recipe["config"].items()
                    if k not in ("timesteps", "team_posterior") and shipped["config"].get(k) != v)
    if differ:
        raise SystemExit(f"the two runs' recipes differ in {differ}: not an ablation of the posterior alone")

    def cell(row: dict[str, float] | None) -> str:
        if row is None:
            return "–"
        text = f"{row['diff_vs_reference']:+.4f} [{row['diff_low']:+.4f}, {row['diff_high']:+.4f}]"
        return text.replace("-", "−")  # the README's minus sign

    lines = [
        "# The RL scheduler with and without the team posterior (`adversarial`)",
        "",
        "Written by `python reports/scheduler_ppo/families/adversarial_posterior/compare.py` (its docstring has the "
        "run's commands). Both runs: the shipped recipe (`agents/schedulers/data/ppo_scheduler_adversarial.json`: "
        "searched teacher, 1000 training seeds, seed 0, 8 environments of 256 steps, learning rate 1e-4), the "
        "same teacher episodes, validated on the same 84 seeds (4700–4783) against priority_threshold "
        f"({recipe['reference_validation_score']:+.4f} there). The only difference: the posterior run's "
        "observation carries each team's `gaming_posterior` as a 16th team feature "
        "(`dcops.parallel_env(team_posterior=True)`), in the slot rows and the global context.",
        "",
        "| | without the posterior (shipped run) | with the posterior |",
        "|---|---|---|",
        f"| cloning: validation decisions right | {shipped['bc_accuracy']['validation']['decision_accuracy']:.3f} | "
        f"{recipe['bc_accuracy']['validation']['decision_accuracy']:.3f} |",
        f"| cloning: validation windows entirely right | {shipped['bc_accuracy']['validation']['window_accuracy']:.3f} | "
        f"{recipe['bc_accuracy']['validation']['window_accuracy']:.3f} |",
        f"| cloning: window NLL on the training split | {shipped['bc_fit']['window_nll']:.3f} | "
        f"{recipe['bc_fit']['window_nll']:.3f} |",
    ]
    for step in STEPS:
        label = "cloned (PPO step 0)" if step == 0 else f"PPO step {step // 1000}k"
        lines.append(f"| {label}: validation score − priority_threshold [95 % CI] | {cell(without.get(step))} | "
                     f"{cell(with_posterior.get(step))} |")
    done = max(with_posterior)
    lines += [
        "",
        f"The posterior run stopped at {done:,} steps (the shipped run went on to 800k and kept its 700k "
        "checkpoint). Each cell is one run's paired t-interval over the 84 seeds against priority_threshold. "
        "Each column is one run of one training seed, and how far reruns of the recipe with other seeds differ "
        "was not measured, so a small gap between the columns is evidence of nothing either way.",
    ]
    (HERE / "README.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
