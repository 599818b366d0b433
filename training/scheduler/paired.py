"""A GRPO run's completions against fixed decision rules on the same window states.

A step's environment reward mixes two things: how good the completions' decisions were, and how much the
step's window state pays whatever is decided (states differ from step to step; a window late in an episode,
when many jobs finish, pays more). Scoring fixed rules on the *same* states takes the state out: the step's
mean environment reward minus ``priority_threshold``'s reward on the states its completions saw moves only if
the decisions get better, so "did the scheduling improve?" needs far fewer steps to answer than the raw curve.

The rules are three baseline schedulers (``dcops.agents.schedulers``) and the empty answer
(:data:`ALL_DEFAULT`: every request gets the parser's documented default), scored by the run's own reward
(:meth:`dcops.training.scheduler.reward.SchedulerReward.env_reward`, same horizon). The report also counts the
groups whose completions all got the same environment reward: there the advantage comes from the format term
alone and the step taught nothing about scheduling.

Inputs are the run folder's ``completions.jsonl`` (one line per scored completion) and ``config.json`` (the
environment config, windows and baseline, from which the states are rebuilt exactly: the environment is
deterministic from its seed), so the comparison runs after training without the model.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REFERENCES = ("priority_threshold", "accept_all", "reject_all")
"""Baseline schedulers scored on every state the completions saw."""
ALL_DEFAULT = "all_default"
"""The empty answer: the parser applies its documented default to every pending request."""


@dataclass(frozen=True)
class PairedStep:
    """One GRPO step's completions next to the reference rules on the same states (rewards per window)."""

    step: int
    env_mean: float
    """Mean environment reward of the step's completions."""
    reference: dict[str, float]
    """Each rule's reward, averaged over the step's completions' states (so weighted like ``env_mean``)."""
    groups: int
    """(step, state) groups: ``prompts_per_step`` of them per step."""
    flat_groups: int
    """Groups whose completions all got the same environment reward (no scheduling signal)."""
    identical_groups: int
    """Groups whose completions are the same text: the sampled policy has collapsed onto one answer there (a
    subset of ``flat_groups``)."""

    def gap(self, name: str) -> float:
        """``env_mean`` minus rule ``name``'s reward on the same states."""
        return self.env_mean - self.reference[name]


def jsonl_rows(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSON-lines file, blank lines skipped; a bad line is an error naming file and line."""
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{n}: not JSON ({exc})") from None


def read_completions(run_dir: str | Path, per_step: int | None = None) -> dict[int, list[dict[str, Any]]]:
    """The scored completions of ``completions.jsonl`` by step. A resumed run scores a step again; with
    ``per_step`` (completions scored per step: ``num_generations`` × ``prompts_per_step``) only a step's last
    ``per_step`` lines count, its last scoring (as in ``log.jsonl``, the last row wins)."""
    path = Path(run_dir) / "completions.jsonl"
    by_step: dict[int, list[dict[str, Any]]] = {}
    for row in jsonl_rows(path):
        if row.get("step") is not None:
            by_step.setdefault(int(row["step"]), []).append(row)
    if per_step:
        by_step = {step: rows[-per_step:] for step, rows in by_step.items()}
    return by_step


def reference_rewards(config: Mapping[str, Any], state_keys: Iterable[str],
                      references: tuple[str, ...] = REFERENCES) -> dict[str, dict[str, float]]:
    """Each rule's environment reward on each state ``"seed:window"``, from a run's config (``config.json``'s
    ``config``: ``env_config``, ``windows``, ``baseline``, ``horizon``)."""
    from dcops.agents.schedulers import BASELINES
    from dcops.training.scheduler.reward import SchedulerReward
    from dcops.training.scheduler.states import build_window_states

    keys = sorted(set(state_keys))
    seeds = sorted({int(key.split(":")[0]) for key in keys})
    if not seeds:
        return {}
    baseline = str(config.get("baseline", "priority_threshold"))
    states = build_window_states(config.get("env_config") or {}, seeds, config.get("windows"), baseline)
    reward = SchedulerReward(states, horizon=int(config.get("horizon", 1)), baseline=baseline)
    out: dict[str, dict[str, float]] = {}
    for key in keys:
        view = states[key].view
        out[key] = {name: reward.env_reward(BASELINES[name]().decide(view), key) for name in references}
        out[key][ALL_DEFAULT] = reward.score("", key).env_reward
    return out


def paired_steps(run_dir: str | Path) -> list[PairedStep]:
    """Every logged step of the run paired with the rules (empty if the run has no ``completions.jsonl`` or no
    ``config.json`` to rebuild its states from)."""
    run_dir = Path(run_dir)
    if not ((run_dir / "completions.jsonl").exists() and (run_dir / "config.json").exists()):
        return []
    record = json.loads((run_dir / "config.json").read_text())
    config = record.get("config", {})
    per_step = int(config.get("num_generations", 0)) * int(config.get("prompts_per_step", 0))
    by_step = read_completions(run_dir, per_step or None)
    refs = reference_rewards(config, (r["state_key"] for rows in by_step.values() for r in rows))
    out = []
    for step, rows in sorted(by_step.items()):
        groups: dict[str, list[float]] = {}
        texts: dict[str, set[str]] = {}
        for row in rows:
            groups.setdefault(row["state_key"], []).append(float(row["env_reward"]))
            texts.setdefault(row["state_key"], set()).add(str(row.get("text", "")))
        names = list(refs[rows[0]["state_key"]])
        out.append(PairedStep(
            step=step,
            env_mean=sum(float(r["env_reward"]) for r in rows) / len(rows),
            reference={name: sum(refs[r["state_key"]][name] for r in rows) / len(rows) for name in names},
            groups=len(groups),
            flat_groups=sum(1 for values in groups.values() if max(values) - min(values) <= 1e-12),
            identical_groups=sum(1 for key in groups if len(texts[key]) == 1 and len(groups[key]) > 1),
        ))
    return out


def gap_key(name: str) -> str:
    """The per-step log key under which the report puts the gap to rule ``name``."""
    return f"env_minus_{name}"


def merge_into_log(rows: list[dict[str, Any]], paired: list[PairedStep]) -> list[dict[str, Any]]:
    """Copies of the log rows with each step's gaps (``env_minus_<rule>``) and flat-group share added."""
    by_step = {p.step: p for p in paired}
    merged = []
    for row in rows:
        p = by_step.get(int(row["step"]))
        extra: dict[str, float] = {}
        if p is not None:
            extra = {gap_key(name): p.gap(name) for name in p.reference}
            extra["flat_group_share"] = p.flat_groups / p.groups  # a logged step has at least one group
            extra["identical_group_share"] = p.identical_groups / p.groups
        merged.append({**row, **extra})
    return merged
