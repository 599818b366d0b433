"""``dcops llm-advantage-probe``: how much of the counterfactual advantage over the teacher can the public view
predict?

``dcops llm-counterfactual`` gives, for every request the teacher (``priority_threshold``) decided, the episode
score of each allowed answer with everything else left to the teacher: Q(a). Picking the best answer per request
in hindsight would gain ``max_a Q(a) − Q(teacher)`` (the **oracle** one-step gain); but that maximum uses what no
policy sees (true priorities, future arrivals). A policy trained on these data, an LLM under GRPO included, can
only reach what the *public* prompt predicts. This probe measures that part with the simplest learner that could
find it:

1. each compact prompt is read back into the public numbers it states (:func:`prompt_features`: the window,
   carbon now/next/lowest, the team's record and gaming risk, the job's type, size, runtime, stated priority,
   deadline, flexibility and wait, the power left and whether it fits or can wait; never the untrusted
   description, and never the team mix or scenario the data rows carry);
2. a small MLP (torch) regresses ``Q(a) − Q(teacher)`` for every allowed answer on the training split;
3. on the validation split (other seeds), the probe policy answers ``argmax_a`` of the prediction where the
   predicted gain over the teacher's answer exceeds a margin τ, and the teacher's answer otherwise; its
   **one-step gain** is the mean realised ``Q(chosen) − Q(teacher)`` over the validation requests.

A one-step gain near 0 with the oracle's far above says the advantage the GRPO stage chases lies in hidden truth,
not in the prompt: no policy over the same prompt, however trained, gets more than the probe's share by changing
one answer at a time. (The probe's best figure is chosen over epochs and margins on the validation split, so it
is an optimistic estimate of that share.)
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dcops.agents.llm.compact import ANSWER_WORDS as ANSWERS
from dcops.cluster.job_types import JOB_TYPE_NAMES
from dcops.cluster.requests import Priority

_PRIORITIES = tuple(p.name for p in Priority)
FEATURE_NAMES: tuple[str, ...] = (
    "window_fraction", "windows_left_fraction", "carbon_now", "carbon_next_ratio", "carbon_lowest_ratio",
    "team_requests", "team_audited", "team_flagged", "team_gaming_risk",
    *(f"type_{name}" for name in JOB_TYPE_NAMES),
    "gpus", "kw", "hours", "windows_needed", *(f"priority_{p}" for p in _PRIORITIES),
    "deadline_slack_fraction", "flexible", "waited", "power_left", "fits_now", "can_wait",
)
"""The public numbers :func:`prompt_features` reads, in order (scaled to about unit size)."""


def _line(lines: list[str], prefix: str) -> str:
    for line in lines:
        if line.startswith(prefix):
            return line
    raise ValueError(f"prompt: no line starting {prefix!r} (not a compact prompt of dcops.agents.llm.compact)")


def _number(pattern: str, text: str, what: str, default: float | None = None) -> float:
    match = re.search(pattern, text)
    if match is None:
        if default is None:
            raise ValueError(f"prompt: no {what} in {text!r}")
        return default
    return float(match.group(1))


_NUM = r"(-?\d+(?:\.\d+)?)"


def prompt_features(prompt: str) -> NDArray[np.float64]:
    """The public numbers a compact prompt states (:data:`FEATURE_NAMES`). Each is read from the line the prompt
    format gives it: the untrusted description is one JSON-quoted line of its own and is never read, so no text a
    team writes can move a feature."""
    lines = prompt.split("\n")
    head, team, job, facts = (_line(lines, p) for p in ("Window ", "Team ", "Request ", "Power left"))
    window = _number(r"^Window (\d+)", head, "window")
    n = _number(r"of windows 0-(\d+)", head, "window count") + 1
    now = _number(rf"now {_NUM}", head, "carbon now", 0.0)
    nxt = _number(rf"next {_NUM}", head, "next carbon", now)
    low = _number(rf"lowest later {_NUM}", head, "lowest carbon", now)
    job_type = job.split(": ", 1)[-1].split(",", 1)[0]
    if job_type not in JOB_TYPE_NAMES:
        raise ValueError(f"prompt: unknown job type {job_type!r}")
    priority = re.search(r"priority (\w+),", job)
    if priority is None or priority.group(1) not in _PRIORITIES:
        raise ValueError(f"prompt: no stated priority in {job!r}")
    deadline = _number(r"deadline window (\d+)", job, "deadline")
    features = [
        window / n, (n - window) / n, now / 500.0, nxt / max(now, 1.0), low / max(now, 1.0),
        _number(r": (\d+) requests", team, "team requests", 0.0) / 10.0,
        _number(r"(\d+) audited", team, "audits", 0.0) / 10.0,
        0.0 if "flags none" in team else 1.0,
        _number(rf"gaming risk {_NUM}", team.rstrip("."), "gaming risk", 0.0),
        *(1.0 if job_type == name else 0.0 for name in JOB_TYPE_NAMES),
        _number(r", (\d+) \w+ GPUs", job, "GPUs") / 64.0,
        _number(rf"GPUs, {_NUM} kW", job, "power") / 100.0,
        _number(rf"kW, {_NUM} h", job, "runtime") / 4.0,
        _number(r"\((\d+) windows\)", job, "windows") / 4.0,
        *(1.0 if priority.group(1) == p else 0.0 for p in _PRIORITIES),
        (deadline - window) / n,
        1.0 if "carbon-flexible yes" in job else 0.0,
        _number(r"waited (\d+) windows", job, "wait", 0.0) / 4.0,
        _number(rf"Power left for new jobs: {_NUM} kW", facts, "power left") / 500.0,
        1.0 if "Fits now: yes" in facts else 0.0,
        1.0 if "Can wait a window: yes" in facts else 0.0,
    ]
    return np.array(features, dtype=np.float64)


@dataclass
class ProbeData:
    """One split: features (n, d), advantages ``Q(a) − Q(teacher)`` (n, 3) in :data:`ANSWERS` order (0 where
    not allowed), the allowed mask (n, 3) and the teacher's answer index (n,)."""

    features: NDArray[np.float64]
    advantage: NDArray[np.float64]
    allowed: NDArray[np.bool_]
    teacher: NDArray[np.int64]

    @classmethod
    def from_rows(cls, rows: list[dict[str, Any]]) -> ProbeData:
        if not rows:
            raise ValueError("data: no rows")
        features, advantage, allowed, teacher = [], [], [], []
        for row in rows:
            base = row["q"][row["teacher"]]
            features.append(prompt_features(row["prompt"]))
            advantage.append([row["q"][a] - base if a in row["allowed"] else 0.0 for a in ANSWERS])
            allowed.append([a in row["allowed"] for a in ANSWERS])
            teacher.append(ANSWERS.index(row["teacher"]))
        return cls(np.array(features), np.array(advantage), np.array(allowed), np.array(teacher, dtype=np.int64))

    @classmethod
    def read(cls, path: Path) -> ProbeData:
        with open(path) as handle:
            return cls.from_rows([json.loads(line) for line in handle if line.strip()])

    def oracle_gain(self) -> float:
        """Mean ``max_a Q(a) − Q(teacher)`` over allowed answers: the hindsight one-step gain."""
        return float(np.where(self.allowed, self.advantage, -np.inf).max(axis=1).mean())


def one_step_gain(predicted: NDArray[np.float64], data: ProbeData, margin: float) -> tuple[float, float]:
    """(mean realised ``Q(chosen) − Q(teacher)``, share of requests where the answer changed) of the policy that
    takes the predicted-best allowed answer where its predicted gain over the teacher's exceeds ``margin``."""
    rows = np.arange(len(data.teacher))
    relative = predicted - predicted[rows, data.teacher][:, None]
    relative = np.where(data.allowed, relative, -np.inf)
    relative[rows, data.teacher] = 0.0
    best = relative.argmax(axis=1)
    choice = np.where(relative[rows, best] > margin, best, data.teacher)
    return float(data.advantage[rows, choice].mean()), float(np.mean(choice != data.teacher))


def run_probe(train: ProbeData, validation: ProbeData, epochs: int = 60, hidden: int = 64,
              margins: tuple[float, ...] = (0.0, 0.001, 0.003), evaluate_every: int = 10,
              seed: int = 0) -> dict[str, Any]:
    """Fit the MLP of the module docstring and score its policy on ``validation`` every ``evaluate_every``
    epochs at each margin. Deterministic for a seed (one torch thread)."""
    import torch

    if epochs < 1 or hidden < 1 or evaluate_every < 1:
        raise ValueError("epochs, hidden, evaluate_every: must be >= 1")
    torch.manual_seed(seed)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        mean, std = train.features.mean(axis=0), train.features.std(axis=0) + 1e-6
        scale = float(train.advantage[train.allowed].std()) or 1.0
        x = torch.tensor((train.features - mean) / std, dtype=torch.float32)
        y = torch.tensor(train.advantage / scale, dtype=torch.float32)
        mask = torch.tensor(train.allowed, dtype=torch.float32)
        x_valid = torch.tensor((validation.features - mean) / std, dtype=torch.float32)
        net = torch.nn.Sequential(torch.nn.Linear(x.shape[1], hidden), torch.nn.Tanh(),
                                  torch.nn.Linear(hidden, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, 3))
        optimiser = torch.optim.Adam(net.parameters(), lr=1e-3, weight_decay=1e-4)
        generator = torch.Generator().manual_seed(seed)
        history = []
        for epoch in range(1, epochs + 1):
            order = torch.randperm(len(x), generator=generator)
            for start in range(0, len(x), 512):
                batch = order[start:start + 512]
                loss = (((net(x[batch]) - y[batch]) ** 2) * mask[batch]).sum() / mask[batch].sum()
                optimiser.zero_grad()
                loss.backward()
                optimiser.step()
            if epoch % evaluate_every == 0 or epoch == epochs:
                with torch.no_grad():
                    fitted = net(x).numpy().astype(np.float64) * scale
                    predicted = net(x_valid).numpy().astype(np.float64) * scale
                row = {"epoch": epoch, "train_gain": one_step_gain(fitted, train, 0.0)[0]}
                for margin in margins:
                    gain, changed = one_step_gain(predicted, validation, margin)
                    row[f"gain@{margin:g}"], row[f"changed@{margin:g}"] = gain, changed
                history.append(row)
    finally:
        torch.set_num_threads(threads)
    oracle = validation.oracle_gain()
    best = max((row[f"gain@{m:g}"], row["epoch"], m) for row in history for m in margins)
    return {"n_train": len(train.teacher), "n_validation": len(validation.teacher), "features": list(FEATURE_NAMES),
            "epochs": epochs, "hidden": hidden, "margins": list(margins), "seed": seed,
            "oracle_gain": oracle, "best": {"gain": best[0], "epoch": best[1], "margin": best[2],
                                            "share_of_oracle": best[0] / oracle if oracle > 0 else float("nan")},
            "history": history}


def markdown(result: dict[str, Any], command: str) -> str:
    """The probe's report."""
    margins = result["margins"]
    lines = ["# How much of the counterfactual advantage can the public prompt predict?", "",
             f"Command: `{command}` (`dcops.training.scheduler.advantage_probe`). {result['n_train']:,} training and "
             f"{result['n_validation']:,} validation requests (other seeds); features: the public numbers of each "
             "compact prompt, never its untrusted description. One-step gain = mean realised Q(chosen) − "
             "Q(teacher) in episode score per request, answering the predicted-best answer where its predicted "
             "gain exceeds the margin.", "",
             f"**Oracle** (the best answer per request in hindsight): {result['oracle_gain']:+.5f}. **Probe, best over "
             f"epochs and margins** (chosen on validation: optimistic): {result['best']['gain']:+.5f} at epoch "
             f"{result['best']['epoch']}, margin {result['best']['margin']:g}, "
             f"{100 * result['best']['share_of_oracle']:.1f} % of the oracle.", "",
             "| epoch | train gain | " + " | ".join(f"validation gain (changed) @ {m:g}" for m in margins) + " |",
             "|---|---|" + "---|" * len(margins)]
    for row in result["history"]:
        cells = " | ".join(f"{row[f'gain@{m:g}']:+.5f} ({100 * row[f'changed@{m:g}']:.1f} %)" for m in margins)
        lines.append(f"| {row['epoch']} | {row['train_gain']:+.5f} | {cells} |")
    return "\n".join(lines) + "\n"
