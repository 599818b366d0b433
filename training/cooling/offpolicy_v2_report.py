"""The SAC / TQC / PPO comparison report on plant v2 (``dcops report-cooling-offpolicy``; issue #24).

It reads only the learning curves and JSON records the training commands write (``dcops train-cooling-v2`` and
``dcops train-cooling-offpolicy``), copied into a data folder that is committed with the report
(``reports/cooling/v2_offpolicy/``: ``learning_curve_<algorithm>_v2.csv`` and ``<algorithm>_cooling_v2.json``), so
the report is rebuilt from the repository alone; every figure in it is one of those rows or a division of two.

For each off-policy algorithm against PPO, on the one validation measure both were selected by
(:func:`~dcops.training.cooling.ppo_v2.summarise`, :func:`~dcops.training.cooling.ppo_v2.selection_key_v2`):

- the start (both start at the rule; PPO's start is its mean at the rule with its near-zero random weights, so its
  figures may differ slightly from the off-policy start, which is the rule exactly);
- at equal environment steps: PPO's checkpoint nearest the off-policy run's last one;
- at equal wall time: PPO's checkpoint nearest the off-policy run's wall time, and PPO's kept checkpoint up to then
  (what a PPO run with that budget would have kept);
- the kept checkpoints, and PPO's last checkpoint.
"""

from __future__ import annotations

import csv
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

from dcops.agents.cooling.ppo_v2 import ACTION_NAMES_V2, PPOControllerV2, physical_action, rule_action
from dcops.training.cooling.offpolicy_v2 import (
    ALGORITHMS,
    curve_name,
    offpolicy_controller,
    record_name,
    residual_env,
)
from dcops.training.cooling.ppo_v2 import selection_key_v2, validation_episodes
from dcops.training.cooling.train_env_v2 import RewardWeightsV2, TrainingScenariosV2

PPO_CURVE, PPO_RECORD = "learning_curve_v2.csv", "ppo_cooling_v2.json"
"""The names ``dcops train-cooling-v2`` gives its curve and record (copied under the off-policy runs' pattern:
``learning_curve_ppo_v2.csv``, ``ppo_cooling_v2.json``)."""


@dataclass(frozen=True)
class Run:
    """One training run: its learning curve (rows of ``timesteps, wall_s`` and the validation figures) and record."""

    algorithm: str
    curve: list[dict[str, float]]
    record: dict[str, Any]

    @classmethod
    def read(cls, data: str | Path, algorithm: str) -> Run:
        data = Path(data)
        with (data / curve_name(algorithm)).open() as handle:
            curve = [{k: float(v) for k, v in row.items()} for row in csv.DictReader(handle)]
        return cls(algorithm, curve, json.loads((data / record_name(algorithm)).read_text()))

    def nearest(self, column: str, value: float) -> dict[str, float]:
        """The checkpoint whose ``column`` is nearest ``value`` (the earlier one on a tie)."""
        return min(self.curve, key=lambda row: (abs(row[column] - value), row["timesteps"]))

    def kept(self, max_wall_s: float = float("inf")) -> dict[str, float]:
        """The checkpoint the selection keeps among those validated by ``max_wall_s`` (the earliest of equals, as the
        training's strict ``<`` does)."""
        candidates = [row for row in self.curve if row["wall_s"] <= max_wall_s] or self.curve[:1]
        return min(candidates, key=lambda row: (selection_key_v2(row), row["timesteps"]))

    @property
    def steps_per_s(self) -> float:
        return float(self.record["timesteps_trained"]) / float(self.record["wall_time_s"])


def copy_run(folder: str | Path, algorithm: str, data: str | Path) -> None:
    """Copy a run's curve and record from its output ``folder`` into ``data`` under the report's names."""
    folder, data = Path(folder), Path(data)
    data.mkdir(parents=True, exist_ok=True)
    curve, record = (PPO_CURVE, PPO_RECORD) if algorithm == "ppo" else (curve_name(algorithm), record_name(algorithm))
    shutil.copyfile(folder / curve, data / curve_name(algorithm))
    shutil.copyfile(folder / record, data / record_name(algorithm))


ACTIONS_FILE = "kept_actions.csv"
"""Mean set-points of each run's kept checkpoint over the validation episodes (:func:`write_kept_actions`)."""


class _Recording:
    """A v2 controller that also keeps every action it plays (its ``last_action`` after each ``act``)."""

    def __init__(self, controller: Any) -> None:
        self.controller, self.name, self.actions = controller, controller.name, []

    def reset(self, context: Any) -> None:
        self.controller.reset(context)

    def act(self, telemetry: Any) -> Any:
        setpoints = self.controller.act(telemetry)
        self.actions.append(np.asarray(self.controller.last_action, dtype=np.float64))
        return setpoints


def kept_controller(folder: str | Path, algorithm: str) -> Any:
    """The kept checkpoint of a run folder as a v2 controller: PPO's numpy export, or SB3's SAC / TQC zip with its
    ``VecNormalize`` statistics (unpickled: only load folders you made)."""
    folder = Path(folder)
    if algorithm == "ppo":  # unshielded, as its checkpoints were scored and the off-policy runs are played
        controller = PPOControllerV2.from_file(folder / "ppo_cooling_v2.npz")
        controller.shield_inlet_c = float("inf")
        return controller
    venv = VecNormalize.load(str(folder / f"{algorithm}_cooling_v2_vecnormalize.pkl"),
                             DummyVecEnv([lambda: residual_env(TrainingScenariosV2(), RewardWeightsV2())]))
    venv.training = False
    model = ALGORITHMS[algorithm].load(folder / f"{algorithm}_cooling_v2.zip", device="cpu")
    return offpolicy_controller(model, venv.normalize_obs, name=algorithm)


def mean_setpoints(controller: Any) -> dict[str, float]:
    """The mean physical action ``controller`` plays over the validation episodes (each step weighs the same)."""
    recording = _Recording(controller)
    validation_episodes(recording)
    return physical_action(np.mean(recording.actions, axis=0)) if recording.actions else {}


def write_kept_actions(folders: dict[str, str | Path], data: str | Path) -> None:
    """Mean set-points of the rule action (the start) and of each run's kept checkpoint, to ``data/kept_actions.csv``."""
    rows = [{"run": "rule action (the start)", **physical_action(rule_action())}]
    rows += [{"run": f"{algorithm.upper()} kept", **mean_setpoints(kept_controller(folder, algorithm))}
             for algorithm, folder in folders.items()]
    with (Path(data) / ACTIONS_FILE).open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["run", *ACTION_NAMES_V2])
        writer.writeheader()
        writer.writerows(rows)


def _actions_table(data: Path) -> list[str]:
    if not (data / ACTIONS_FILE).is_file():
        return []
    with (data / ACTIONS_FILE).open() as handle:
        rows = list(csv.DictReader(handle))
    lines = ["", "## What the kept checkpoints do", "",
             f"Mean set-points over the validation episodes (`{ACTIONS_FILE}`, written by the same command when it is "
             "given the run folders: it loads each kept checkpoint and replays the validation):", "",
             "| run | " + " | ".join(ACTION_NAMES_V2) + " |", "|---|" + "---:|" * len(ACTION_NAMES_V2)]
    lines += [f"| {row['run']} | " + " | ".join(f"{float(row[n]):.2f}" for n in ACTION_NAMES_V2) + " |" for row in rows]
    return lines


def _row(label: str, run: Run, point: dict[str, float]) -> str:
    return (f"| {run.algorithm.upper()} | {label} | {point['timesteps']:,.0f} | {point['wall_s'] / 60:.1f} | "
            f"{point['score']:.4f} | {point['objective_ratio']:.4f} | {point['zone_time_above_27_pct']:.2f} | "
            f"{point['worst_minutes_above_32']:.0f} |")


def _span(rows: list[dict[str, float]], column: str, digits: int) -> str:
    if not rows:
        return "none"
    low, high = min(r[column] for r in rows), max(r[column] for r in rows)
    return f"{low:.{digits}f}–{high:.{digits}f}"


def _verdict(ppo: Run, others: list[Run]) -> list[str]:
    """Which run's kept checkpoint ranks first within the shortest run's wall time, and the measured reasons."""
    budget = min(run.curve[-1]["wall_s"] for run in others) if others else ppo.curve[-1]["wall_s"]
    kept = {run.algorithm: run.kept() for run in others} | {"ppo": ppo.kept(max(budget, ppo.curve[1]["wall_s"]
                                                                             if len(ppo.curve) > 1 else 0.0))}
    winner = min(kept, key=lambda a: selection_key_v2(kept[a]))
    start = others[0].curve[0] if others else ppo.curve[0]
    lines = ["## Verdict", "",
             f"**{winner.upper()}** is kept: within {budget / 60:.0f} minutes its kept checkpoint ranks first by the "
             "selection key (" + "; ".join(f"{a.upper()} score {v['score']:.4f}, objective ratio "
                                            f"{v['objective_ratio']:.4f}" for a, v in kept.items()) + ")."]
    for run in others:
        trained = run.curve[1:]
        below = sum(r["score"] < start["score"] for r in trained)
        c = run.record["config"]
        ppo_first = ppo.curve[1]["timesteps"] if len(ppo.curve) > 1 else 0.0
        steps = run.record["timesteps_trained"]
        lines.append(
            f"- {run.algorithm.upper()}: {below} of its {len(trained)} later checkpoints score below its start, the "
            f"rule action ({start['score']:.4f}); their objective ratio is {_span(trained, 'objective_ratio', 2)} of "
            f"the yardstick against the start's {start['objective_ratio']:.2f} and PPO's checkpoints' "
            f"{_span(ppo.curve[1:], 'objective_ratio', 2)} (mean set-points in the last table). It stepped "
            f"{run.steps_per_s:,.0f} environment steps/s to PPO's {ppo.steps_per_s:,.0f} ({c['gradient_steps']} "
            f"gradient step(s) of its critics per {c['train_freq'] * c['n_envs']} environment step(s)), so its "
            f"{run.record['wall_time_s'] / 60:.0f} minutes are {steps:,} steps, "
            f"{'fewer than' if steps < ppo_first else 'against'} the {ppo_first:,.0f} of PPO's first checkpoint.")
    return lines


def _better(a: dict[str, float], b: dict[str, float]) -> bool:
    return selection_key_v2(a) < selection_key_v2(b)


def comparison_markdown(ppo: Run, others: list[Run], data: str) -> str:
    """The report (module doc)."""
    header = ("| run | point | env steps | wall (min) | score ↑ | objective ratio ↓ | zone-time > 27 °C (%) | "
              "worst zone minutes > 32 °C |\n|---|---|---:|---:|---:|---:|---:|---:|")
    lines = [
        "# Plant v2 cooling: SAC and TQC against PPO (issue #24)",
        "",
        f"Made by `dcops report-cooling-offpolicy` from the curves and records in `{data}/` (copied there from the "
        "runs' output folders by the same command with `--ppo/--sac/--tqc DIR`). The runs:",
        "",
        f"- PPO: `{ppo.record['command']}` (the plant v2 recipe, `dcops.training.cooling.ppo_v2`; "
        f"{ppo.record['timesteps_trained']:,} steps in {ppo.record['wall_time_s'] / 60:.1f} min).",
    ]
    for run in others:
        c = run.record["config"]
        lines.append(
            f"- {run.algorithm.upper()}: `{run.record['command']}` (`dcops.training.cooling.offpolicy_v2`: a residual on "
            f"the rule, {c['n_envs']} environment, batch {c['batch_size']}, buffer {c['buffer_size']:,}, lr "
            f"{c['learning_rate']:g}, γ {c['gamma']}, {c['learning_starts']:,} warm-up steps, actor "
            f"{'×'.join(map(str, c['actor_hidden']))} and critics {'×'.join(map(str, c['critic_hidden']))} tanh, "
            f"entropy coefficient {c['ent_coef']} towards {c['target_entropy']:g}; "
            f"{run.record['timesteps_trained']:,} steps in {run.record['wall_time_s'] / 60:.1f} min, "
            f"{'stopped by the time budget' if run.record['stopped_by_time_budget'] else 'all steps done'}).")
    lines += [
        "",
        "All on the same 2-core machine, one process each, single-threaded torch, shared with other jobs (wall times "
        "are comparable only roughly; the off-policy records keep the load average at their end). Validation: the v2 evaluation family "
        "(seed 2000) and every v1 task (seeds 2000, 2001), each checkpoint's deterministic policy; **score** is the "
        "tasks' own mean score, the objective ratio is energy, cost or carbon over the yardstick; the kept checkpoint "
        "is the best score among those with no minute above 32 °C (`selection_key_v2`). Wall time includes the "
        "validations.",
        "",
        *_verdict(ppo, others),
        "",
        "## Speed",
        "",
        "| run | env steps | wall (min) | env steps/s | validations | load average (1, 5, 15 min) at the end |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for run in [ppo, *others]:
        load = run.record.get("load_average_1_5_15_min")
        lines.append(f"| {run.algorithm.upper()} | {run.record['timesteps_trained']:,} | "
                     f"{run.record['wall_time_s'] / 60:.1f} | {run.steps_per_s:,.0f} | {len(run.curve)} | "
                     f"{', '.join(f'{x:.1f}' for x in load) if load else 'not recorded'} |")
    for run in others:
        last = run.curve[-1]
        at_steps, at_wall = ppo.nearest("timesteps", last["timesteps"]), ppo.nearest("wall_s", last["wall_s"])
        kept, ppo_kept_wall = run.kept(), ppo.kept(last["wall_s"])
        ppo_trained = [r for r in ppo.curve[1:] if r["wall_s"] <= last["wall_s"]] or ppo.curve[1:2]
        lines += [
            "",
            f"## {run.algorithm.upper()} against PPO",
            "",
            header,
            _row("start (the rule)", run, run.curve[0]),
            _row("start (the rule)", ppo, ppo.curve[0]),
            _row("last checkpoint", run, last),
            _row(f"equal steps (nearest {last['timesteps']:,.0f})", ppo, at_steps),
            _row("first trained checkpoint", ppo, ppo.curve[1] if len(ppo.curve) > 1 else ppo.curve[0]),
            _row(f"equal wall time (nearest {last['wall_s'] / 60:.1f} min)", ppo, at_wall),
            _row("kept (whole run)", run, kept),
            _row(f"kept within {last['wall_s'] / 60:.1f} min", ppo, ppo_kept_wall),
            _row("kept (whole run)", ppo, ppo.kept()),
            _row("last checkpoint", ppo, ppo.curve[-1]),
            "",
            f"- Kept within the same wall time: {run.algorithm.upper()} score {kept['score']:.4f} (objective ratio "
            f"{kept['objective_ratio']:.4f}) vs PPO {ppo_kept_wall['score']:.4f} "
            f"({ppo_kept_wall['objective_ratio']:.4f}): "
            f"**{run.algorithm.upper() if _better(kept, ppo_kept_wall) else 'PPO'}** ranks first by the selection key.",
            f"- Trained checkpoints (the start left out): {run.algorithm.upper()} scores "
            f"{_span(run.curve[1:], 'score', 4)}, objective ratios {_span(run.curve[1:], 'objective_ratio', 3)}; "
            f"PPO's within the same wall time {_span(ppo_trained, 'score', 4)} and "
            f"{_span(ppo_trained, 'objective_ratio', 3)}.",
            f"- Speed: PPO steps {ppo.steps_per_s / run.steps_per_s:.0f}× as many environment steps per second.",
        ]
    return "\n".join(lines + _actions_table(Path(data))) + "\n"
