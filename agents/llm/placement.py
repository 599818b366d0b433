"""The LLM scheduler on the GPU placement benchmark (``dcops.cluster.placement``), constrained mode.

:class:`LLMPlacementPolicy` follows the benchmark's policy interface (``name``, ``act(observation)``). Each
tick it shows the model the benchmark's own dashboard (GPUs, queue, last decision, the action hint) after a
short statement of the task, and scores every action that is valid now (``defer`` and each feasible placement
from ``observation.feasible``) by the model's log-likelihood of the action's text after ``Action:``, and takes
the best: like the cluster scheduler's constrained mode, its action is valid by construction. Actions have
different token lengths, so the score is the *mean* log-probability per token (a sum would favour the short
``defer``). The prompt is short and changes every tick, so nothing is cached across ticks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dcops.agents.llm.backends import PrefixCache, continuation_logprobs

PLACEMENT_RULES = (
    "You place GPU jobs, one action per tick: place a pending job on a free GPU with enough VRAM, or defer. "
    "Completing jobs by their deadline earns reward (more for high priority); missed deadlines, idle GPUs and "
    "GPU cost are penalised. Faster GPUs finish sooner but cost more."
)


def placement_prompt(observation: Any) -> str:
    """Rules, the dashboard of ``observation``, then ``Action:`` (the model's answer follows)."""
    return f"{PLACEMENT_RULES}\n\n{observation.dashboard.text()}\nAction:"


def action_texts(observation: Any) -> list[tuple[str, tuple[str, str] | None]]:
    """Every action valid now as (text after ``Action:``, (job id, GPU id) or None for defer)."""
    choices: list[tuple[str, tuple[str, str] | None]] = [(" defer\n", None)]
    for p in observation.feasible:
        choices.append((f" place {p.job_id} on {p.gpu_id}\n", (p.job_id, p.gpu_id)))
    return choices


@dataclass
class LLMPlacementPolicy:
    """Constrained-mode placement by a local causal LM (module docstring)."""

    model: Any
    tokenizer: Any
    name: str = "llm_constrained"
    chunk: int = 16
    last_scores: dict[str, float] = field(default_factory=dict)
    _prefix: PrefixCache | None = field(default=None, repr=False)

    def act(self, observation: Any) -> Any:
        from dcops.cluster.placement.actions import Defer, Place

        choices = action_texts(observation)
        if len(choices) == 1:
            return Defer(rationale="no feasible placement")
        if self._prefix is None:
            self._prefix = PrefixCache(self.model, self.tokenizer)
        rows = []
        for text, _ in choices:
            ids = list(self.tokenizer(text, add_special_tokens=False)["input_ids"])
            rows.append((ids, 0))
        sums = continuation_logprobs(self._prefix, placement_prompt(observation), rows, self.chunk)
        means = [value / max(len(ids), 1) for value, (ids, _) in zip(sums, rows, strict=True)]
        self.last_scores = {text.strip(): m for (text, _), m in zip(choices, means, strict=True)}
        best = max(range(len(choices)), key=means.__getitem__)
        target = choices[best][1]
        rationale = f"highest mean log-likelihood among {len(choices)} valid actions ({means[best]:.2f})"
        if target is None:
            return Defer(rationale=rationale)
        return Place(job_id=target[0], gpu_id=target[1], rationale=rationale)


