"""SFT data for the LLM scheduler: a teacher's decisions as compact per-request prompts (``dcops llm-sft-data``).

``dcops llm-sft-data --teachers priority_threshold --seeds N --validation-seeds M --out DIR`` plays each seed of
the RL scheduler's fixed split (:func:`dcops.training.scheduler.teacher.split_seeds`: training seeds from 1000,
validation seeds from 2000, never the evaluation's 0–19) in its evaluation-matrix scenario
(:func:`~dcops.training.scheduler.teacher.scenario_of`, game version 1) with the teacher, and turns every
window's decisions into one example per pending request (:func:`dcops.agents.llm.compact.teacher_examples`):
the request's compact prompt, given the teacher's answers to the requests decided before it in the window, and
the teacher's answer word as the completion. The episode is stepped with the teacher's decisions through the
array action, exactly as ``dcops scheduler-teacher`` does (:func:`~dcops.training.scheduler.teacher.
record_episode`), so the two datasets are the same episodes.

**Teachers**: ``priority_threshold`` (the best public baseline) and ``truth_planner`` (privileged: it plans
from the episode's truth through the evaluator API; the student's prompts are built from the public view only).

**Output** (``DIR``): ``shards/<teacher>/<seed>.jsonl`` as each seed finishes (a rerun skips the seeds on
disk: resumable), then ``<teacher>_<split>.jsonl`` (one JSON object a line: ``seed``, ``window``, ``mix``,
``condition``, ``request_id``, ``prompt``, ``completion``) and ``manifest.json`` (seeds, counts per answer,
teachers' mean episode scores, package versions).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dcops.evaluation.report import versions
from dcops.training.scheduler.teacher import TEACHERS, _scenario_env, record_episode, scenario_of, split_seeds


def sft_episode(task: tuple[str, int, int, tuple[str, ...]]) -> dict[str, Any]:
    """One (teacher, seed, planner passes, planner starts): the episode's examples and score. Module-level, so
    worker processes can run it."""
    from dcops.agents.llm.compact import teacher_examples

    teacher, seed, passes, starts = task
    env = _scenario_env(seed)
    mix, condition = scenario_of(seed)
    started = time.perf_counter()
    if teacher == "truth_planner":
        from dcops.evaluation.truth_planner import PlanFollower, play_truth_planner

        # The value objective only, as the published SFT data were made (before the score objective).
        decide = PlanFollower(play_truth_planner(env, seed, passes=passes, starts=starts,
                                                 objectives=("value",)).starts).decide
    elif teacher == "priority_threshold":
        from dcops.agents.schedulers import PriorityThresholdScheduler

        decide = PriorityThresholdScheduler().decide
    else:
        raise ValueError(f"teacher: unknown {teacher!r}; known: {TEACHERS}")
    examples: list[dict[str, Any]] = []

    def recording(view: dict[str, Any]) -> Any:
        decisions = decide(view)
        listed = decisions.get("decisions", []) if isinstance(decisions, dict) else decisions
        for row in teacher_examples(view, listed):
            examples.append({"seed": seed, "window": view["window"], "mix": mix, "condition": condition, **row})
        return decisions

    record = record_episode(env, recording, seed)
    return {"examples": examples, "score": record["score"], "wall_s": time.perf_counter() - started}


def _shard_path(out: Path, teacher: str, seed: int) -> Path:
    return out / "shards" / teacher / f"{seed}.jsonl"


def _write_shard(path: Path, record: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    head = {"score": record["score"], "wall_s": record["wall_s"]}
    lines = [json.dumps(head)] + [json.dumps(e, ensure_ascii=False) for e in record["examples"]]
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(path)  # a crash never leaves a half-written shard that a rerun would trust


def _read_shard(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return json.loads(lines[0]), [json.loads(line) for line in lines[1:] if line]


def build_sft_dataset(out: str | Path, n_train: int, n_validation: int, teachers: Sequence[str] = ("priority_threshold",),
                      workers: int = 1, progress: bool = True, planner_passes: int = 2,
                      planner_starts: tuple[str, ...] = ("electrical",)) -> dict[str, Any]:
    """Play every missing (teacher, seed), merge each (teacher, split) and write the manifest (module docstring).
    Returns the manifest."""
    from dcops.evaluation.play import save_each

    out = Path(out)
    unknown = [t for t in teachers if t not in TEACHERS]
    if unknown:
        raise ValueError(f"teachers: unknown {unknown}; known: {TEACHERS}")
    splits = split_seeds(n_train, n_validation)
    tasks = [(t, s, planner_passes, tuple(planner_starts)) for t in teachers
             for s in sorted(splits["train"] + splits["validation"]) if not _shard_path(out, t, s).exists()]
    save_each(sft_episode, tasks, workers, lambda task, record: _write_shard(_shard_path(out, task[0], task[1]), record),
              progress, "teacher episodes")
    previous = json.loads((out / "manifest.json").read_text()) if (out / "manifest.json").exists() else {}
    manifest: dict[str, Any] = {
        "scenario_rule": "mix = MIXES[seed % 7], condition = CONDITIONS[(seed // 7) % 6] (dcops.evaluation.matrix)",
        "prompt": "dcops.agents.llm.compact (one prompt per pending request; completion ' ACCEPT'|' REJECT'|' DEFER')",
        "teachers": previous.get("teachers", {}),
        "versions": versions("scipy", "gymnasium"),
    }
    for teacher in teachers:
        entry: dict[str, Any] = {"seeds": {name: f"{seeds[0]}-{seeds[-1]}" if seeds else ""
                                           for name, seeds in splits.items()}}
        if teacher == "truth_planner":
            entry["planner"] = {"passes": planner_passes, "starts": list(planner_starts)}
        for split, seeds in splits.items():
            if not seeds:
                continue
            path = out / f"{teacher}_{split}.jsonl"
            scores, answers, n = [], Counter(), 0
            with path.open("w", encoding="utf-8") as handle:
                for seed in seeds:
                    head, examples = _read_shard(_shard_path(out, teacher, seed))
                    scores.append(head["score"])
                    for example in examples:
                        handle.write(json.dumps(example, ensure_ascii=False) + "\n")
                        answers[example["completion"].strip()] += 1
                        n += 1
            entry[split] = {"file": path.name, "seeds": len(seeds), "examples": n, "answers": dict(answers),
                            "mean_score": sum(scores) / len(scores)}
        manifest["teachers"][teacher] = entry
    out.mkdir(parents=True, exist_ok=True)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def load_examples(directory: str | Path, teacher: str, split: str) -> list[dict[str, Any]]:
    """The examples of one teacher's split, in file order."""
    path = Path(directory) / f"{teacher}_{split}.jsonl"
    if not path.exists():
        raise FileNotFoundError(f"data: no {path.name} in {directory} (run dcops llm-sft-data first)")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
