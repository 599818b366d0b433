"""SFT data for the LLM placement policy: the clairvoyant optimum's decisions (``dcops llm-placement-sft-data``).

Each generated scenario of the split (training seeds ``TRAIN_SEED_START + i``, validation seeds
:data:`VALIDATION_SEED_START` ``+ i``; the evaluation's 0–99 never) is played by the exact optimum
(:class:`dcops.cluster.placement.optimum.OptimalPolicy`, which knows future arrivals). Every tick with more than
one valid action becomes one example: the placement prompt the LLM policy reads
(:func:`dcops.agents.llm.placement.placement_prompt`), the optimum's action as the completion, in the policy's
action text (``" defer\\n"`` or ``" place J on G\\n"``), and every valid action's text (``choices``). The
optimum plays with its rationale removed, so the dashboard's last-action line never quotes its clairvoyant
reward-to-go; the ``sft`` policy writes no rationale either, so training and play read the same prompt.

Output (``--out``): ``optimum_train.jsonl``, ``optimum_validation.jsonl`` (one JSON object a line: ``seed``,
``tick``, ``prompt``, ``completion``, ``choices``) and ``manifest.json``. The files are what
``dcops train-scheduler-sft --task placement --teacher optimum`` reads.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

VALIDATION_SEED_START = 2_000_000
"""Validation scenarios use seeds from here: disjoint from training (from 1 000 000) and evaluation (0–99)."""
MAX_SPLIT_SEEDS = 1_000_000


class _Recorder:
    """The optimum with its rationale removed, recording each tick's prompt, choices and action."""

    name = "optimum"

    def __init__(self, inner: Any, seed: int, rows: list[dict[str, Any]]) -> None:
        self.inner, self.seed, self.rows = inner, seed, rows

    def act(self, observation: Any) -> Any:
        from dcops.agents.llm.placement import action_texts, placement_prompt

        action = dataclasses.replace(self.inner.act(observation), rationale="")
        choices = action_texts(observation)
        if len(choices) > 1:
            target = (action.job_id, action.gpu_id) if hasattr(action, "job_id") else None
            texts = [text for text, t in choices if t == target]
            if len(texts) != 1:
                raise ValueError(f"seed {self.seed}: the optimum's action {action} is not one of the valid actions")
            self.rows.append({"seed": self.seed, "tick": observation.tick, "prompt": placement_prompt(observation),
                              "completion": texts[0], "choices": [text for text, _ in choices]})
        return action


def scenario_examples(seed: int) -> list[dict[str, Any]]:
    """The examples of one generated scenario (module docstring)."""
    from dcops.cluster.placement.evaluate import run_episode
    from dcops.cluster.placement.generator import generate_scenario
    from dcops.cluster.placement.optimum import OptimalPolicy

    scenario = generate_scenario(seed)
    rows: list[dict[str, Any]] = []
    run_episode(scenario, _Recorder(OptimalPolicy(scenario), seed, rows))
    return rows


def split_seeds(n_train: int, n_validation: int) -> dict[str, list[int]]:
    from dcops.cluster.placement.generator import TRAIN_SEED_START

    for name, n in (("n_train", n_train), ("n_validation", n_validation)):
        if not 0 <= n <= MAX_SPLIT_SEEDS:
            raise ValueError(f"{name}: between 0 and {MAX_SPLIT_SEEDS} scenarios, got {n}")
    return {"train": [TRAIN_SEED_START + i for i in range(n_train)],
            "validation": [VALIDATION_SEED_START + i for i in range(n_validation)]}


def build_placement_sft_dataset(out: str | Path, n_train: int, n_validation: int) -> dict[str, Any]:
    """Write both splits and the manifest (module docstring); return the manifest."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, Any] = {"teacher": "optimum (exact DP, clairvoyant)", "splits": {}}
    for split, seeds in split_seeds(n_train, n_validation).items():
        rows = [row for seed in seeds for row in scenario_examples(seed)]
        with (out / f"optimum_{split}.jsonl").open("w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row) + "\n")
        manifest["splits"][split] = {
            "seeds": f"{seeds[0]}-{seeds[-1]}" if seeds else "", "scenarios": len(seeds), "examples": len(rows),
            "defer_share": sum(r["completion"] == " defer\n" for r in rows) / max(len(rows), 1),
            "mean_choices": sum(len(r["choices"]) for r in rows) / max(len(rows), 1),
        }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest
