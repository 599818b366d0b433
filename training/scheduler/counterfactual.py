"""Counterfactual returns of every answer: the reward the GRPO stage learns from (``dcops llm-counterfactual``).

For each seed of the RL scheduler's fixed training split (:func:`dcops.training.scheduler.teacher.split_seeds`,
in its evaluation-matrix scenario, game version 1) the episode is played by ``priority_threshold`` (the best
public baseline, which the shipped SFT adapter reproduces). At each window the environment is copied right
before the scheduler's step (``copy.deepcopy``: it is deterministic from its seed, and its scenario's team
factories are closures, which pickle cannot carry), and for each pending request, in the compact prompt's
:func:`~dcops.agents.llm.compact.decision_order`, and each allowed answer other than the teacher's, the snapshot is
restored, the window is stepped with the teacher's decisions except that one answer, and the episode is played to
its end by the teacher::

    Q(request, answer) = the episode's score (``infos["scheduler"]["episode"]["score"]``) after that change
    Q(request, teacher's answer) = the factual episode's score

So ``Q(r, a) − Q(r, teacher)`` is the episode-level return credited to that one decision: exactly the change in
the evaluation's own score, over every window it touches (an ACCEPT of a long job is paid when its lifecycle
resolves, windows later; a DEFER is paid or charged in the window it comes back). It is a one-step policy
improvement target over the teacher (the answer ``argmax_a Q`` is what a policy that deviates once, then
behaves like the teacher, would choose). The environment's truth enters only through the score, as in any RL
reward; the prompts are the public compact prompts (:func:`~dcops.agents.llm.compact.teacher_examples`), the
same the SFT data holds, built after the teacher's answers to the requests before it in the window.

**Output** (``DIR``): ``shards/<seed>.jsonl`` as each seed finishes (resumable), then ``train.jsonl`` (one JSON
object a line: ``seed``, ``window``, ``mix``, ``condition``, ``request_id``, ``prompt``, ``teacher``, the
teacher's answer, ``allowed``, ``q``: ``{word: score}``) and ``manifest.json`` (seeds, how many requests have an
answer strictly better than the teacher's and by how much, package versions).
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from dcops.evaluation.report import versions
from dcops.training.scheduler.teacher import _scenario_env, decisions_to_codes, scenario_of, split_seeds

Decide = Callable[[dict[str, Any]], Any]

GAIN_EPSILON = 1e-6
"""Score differences below this are counted as ties (the score is a mean of floats over windows)."""


def _listed(decisions: Any) -> list[dict[str, Any]]:
    return list(decisions.get("decisions", [])) if isinstance(decisions, dict) else list(decisions)


def _step(env: Any, view: dict[str, Any], decisions: list[dict[str, Any]]) -> dict[str, Any]:
    cfg = env.config
    codes, _ = decisions_to_codes(decisions, view, cfg.max_slots, cfg.max_defer)
    _, _, _, _, infos = env.step({"scheduler": codes})
    return infos


def _finish(env: Any, infos: dict[str, Any], decide: Decide) -> float:
    """Play ``env`` to its end with ``decide`` from ``infos`` (the last step's); the episode's score."""
    while env.agents:
        view = infos["scheduler"]["view"]
        infos = _step(env, view, _listed(decide(view)))
    return float(infos["scheduler"]["episode"]["score"])


def counterfactual_episode(seed: int) -> dict[str, Any]:
    """One training seed's rows (module docstring) and its factual score. Module-level, so worker processes can
    run it."""
    from dcops.agents.llm.compact import teacher_examples, to_decision
    from dcops.agents.schedulers import PriorityThresholdScheduler

    env = _scenario_env(seed)
    mix, condition = scenario_of(seed)
    decide = PriorityThresholdScheduler().decide
    started = time.perf_counter()
    _, infos = env.reset(seed=seed)
    rows: list[dict[str, Any]] = []
    rollouts = 0
    while env.agents:
        view = infos["scheduler"]["view"]
        decisions = _listed(decide(view))
        snapshot = copy.deepcopy(env)
        by_id = {d["request_id"]: d for d in decisions}
        for example in teacher_examples(view, decisions):
            rid, taught = example["request_id"], example["completion"].strip()
            q: dict[str, float | None] = {taught: None}
            for word in example["allowed"]:
                if word == taught:
                    continue
                changed = [d for r, d in by_id.items() if r != rid] + [to_decision(rid, word, view)]
                branch = copy.deepcopy(snapshot)
                q[word] = _finish(branch, _step(branch, view, changed), decide)
                rollouts += 1
            rows.append({"seed": seed, "window": view["window"], "mix": mix, "condition": condition,
                         "request_id": rid, "prompt": example["prompt"], "teacher": taught,
                         "allowed": example["allowed"], "q": q})
        infos = _step(env, view, decisions)
    score = float(infos["scheduler"]["episode"]["score"])
    for row in rows:
        row["q"][row["teacher"]] = score
    return {"rows": rows, "score": score, "rollouts": rollouts, "wall_s": time.perf_counter() - started}


def _shard_path(out: Path, seed: int) -> Path:
    return out / "shards" / f"{seed}.jsonl"


def _write_shard(path: Path, record: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    head = {"score": record["score"], "rollouts": record["rollouts"], "wall_s": record["wall_s"]}
    text = "\n".join(json.dumps(row, ensure_ascii=False) for row in [head, *record["rows"]]) + "\n"
    partial = path.with_suffix(".partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)  # a shard on disk is always whole: a killed run leaves none half-written


def gain_of(row: dict[str, Any]) -> float:
    """How much the best answer's return exceeds the teacher's (score units, >= 0)."""
    q = row["q"]
    return max(q.values()) - q[row["teacher"]]


def build_counterfactual_dataset(out: str | Path, n_train: int, n_validation: int, workers: int = 1,
                                 progress: bool = True) -> dict[str, Any]:
    """Play every missing seed of the split, merge each split into ``<split>.jsonl`` and write the manifest
    (module docstring). Returns the manifest."""
    from dcops.evaluation.play import save_each

    out = Path(out)
    splits = split_seeds(n_train, n_validation)
    tasks = [s for s in sorted(splits["train"] + splits["validation"]) if not _shard_path(out, s).exists()]
    save_each(counterfactual_episode, tasks, workers,
              lambda seed, record: _write_shard(_shard_path(out, seed), record), progress, "counterfactual episodes")
    manifest: dict[str, Any] = {
        "teacher": "priority_threshold",
        "scenario_rule": "mix = MIXES[seed % 7], condition = CONDITIONS[(seed // 7) % 6] (dcops.evaluation.matrix)",
        "q": "episode score after changing one answer, the teacher playing every other decision",
        "splits": {},
        "versions": versions("scipy", "gymnasium"),
    }
    for split, seeds in splits.items():
        if not seeds:
            continue
        path = out / f"{split}.jsonl"
        scores, gains, rollouts, wall = [], [], 0, 0.0
        with path.open("w", encoding="utf-8") as handle:
            for seed in seeds:
                lines = _shard_path(out, seed).read_text(encoding="utf-8").splitlines()
                head = json.loads(lines[0])
                scores.append(head["score"])
                rollouts += head["rollouts"]
                wall += head["wall_s"]
                for line in lines[1:]:
                    if line:
                        handle.write(line + "\n")
                        gains.append(gain_of(json.loads(line)))
        g = np.asarray(gains)
        manifest["splits"][split] = {
            "file": path.name, "seeds": f"{seeds[0]}-{seeds[-1]}", "rows": len(gains),
            "teacher_mean_score": float(np.mean(scores)), "rollouts": rollouts, "wall_s": round(wall, 1),
            "rows_with_a_better_answer": int((g > GAIN_EPSILON).sum()),
            "mean_gain_where_better": float(g[g > GAIN_EPSILON].mean()) if (g > GAIN_EPSILON).any() else 0.0,
        }
    out.mkdir(parents=True, exist_ok=True)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def load_rows(directory: str | Path, split: str) -> list[dict[str, Any]]:
    """The rows of one split (``train`` or ``validation``)."""
    path = Path(directory) / f"{split}.jsonl"
    if not path.exists():
        raise FileNotFoundError(f"{path}: no {split} split; run `dcops llm-counterfactual --out {directory}` first")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
