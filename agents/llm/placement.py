"""The LLM scheduler on the GPU placement benchmark (``dcops.cluster.placement``), constrained mode.

:class:`LLMPlacementPolicy` follows the benchmark's policy interface (``name``, ``act(observation)``). Each
tick it shows the model the benchmark's own dashboard (GPUs, queue, last decision, the action hint) after a
short statement of the task, and scores every action that is valid now (``defer`` and each feasible placement
from ``observation.feasible``) by the model's log-likelihood of the action's text after ``Action:``, and takes
the best: like the cluster scheduler's constrained mode, its action is valid by construction. Actions have
different token lengths, so the score is the *mean* log-probability per token (a sum would favour the short
``defer``). The prompt is short and changes every tick, so nothing is cached across ticks.

**Modes** (:func:`make_llm_placement_policy`): ``constrained`` (the base model, as above) and ``sft`` (the same
choice with the LoRA adapter ``dcops train-scheduler-sft --task placement`` trains on the optimum's decisions,
:mod:`dcops.training.placement.llm_sft`; default the shipped :data:`SHIPPED_PLACEMENT_ADAPTER`). The ``sft``
policy gives its actions no rationale text, as its training data shows none: the dashboard's last-action line
then reads the same in training and in play (the optimum's own rationale quotes its clairvoyant reward-to-go,
which the data must not show).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dcops.agents.llm.backends import PrefixCache, continuation_logprobs

SHIPPED_PLACEMENT_ADAPTER = Path(__file__).resolve().parent / "adapters" / "placement_sft_gemma"
"""The ``sft`` placement mode's LoRA adapter for Gemma 3 270M (its run: ``reports/llm/placement_sft/``)."""
PLACEMENT_MODES = ("constrained", "sft")

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
    rationale: bool = True
    """Explain each action (its mean log-likelihood); ``sft`` gives none (module docstring)."""
    last_scores: dict[str, float] = field(default_factory=dict)
    _prefix: PrefixCache | None = field(default=None, repr=False)

    def act(self, observation: Any) -> Any:
        from dcops.cluster.placement.actions import Defer, Place

        choices = action_texts(observation)
        if len(choices) == 1:
            return Defer(rationale="no feasible placement" if self.rationale else "")
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
        rationale = (f"highest mean log-likelihood among {len(choices)} valid actions ({means[best]:.2f})"
                     if self.rationale else "")
        if target is None:
            return Defer(rationale=rationale)
        return Place(job_id=target[0], gpu_id=target[1], rationale=rationale)




def make_llm_placement_policy(mode: str, adapter: str | None = None, model: Any = None,
                              tokenizer: Any = None) -> LLMPlacementPolicy:
    """The placement policy of ``mode`` (module docstring); ``model``/``tokenizer`` default to the offline Gemma.
    ``sft`` takes ``adapter`` (default :data:`SHIPPED_PLACEMENT_ADAPTER`, for Gemma only)."""
    if mode not in PLACEMENT_MODES:
        raise ValueError(f"mode: one of {PLACEMENT_MODES}, got {mode!r}")
    if mode == "constrained" and adapter:
        raise ValueError("adapter= is only for mode 'sft'")
    if mode == "sft" and not adapter:
        if model is not None:
            raise ValueError("mode 'sft' with your own model= needs adapter= (the shipped adapter is for Gemma)")
        adapter = str(SHIPPED_PLACEMENT_ADAPTER)
    if model is None or tokenizer is None:
        from dcops.agents.llm.model import load_gemma

        model, tokenizer = load_gemma()
    if mode == "constrained":
        return LLMPlacementPolicy(model, tokenizer)
    from dcops.agents.llm.backends import with_adapter

    return LLMPlacementPolicy(with_adapter(model, str(adapter)), tokenizer, name="llm_sft", rationale=False)


def llm_placement_factories(modes: list[str], adapter: str | None = None, model: Any = None,
                            tokenizer: Any = None) -> dict[str, Any]:
    """``{policy name: factory(scenario) -> policy}`` for ``dcops eval-placement --llm``: one model load for all
    modes (the offline Gemma unless ``model``/``tokenizer`` are given; ``sft`` then defaults to the shipped
    adapter); an adapter mode wraps its own copy, since peft injects the adapter into the model it is given."""
    import copy

    if model is None or tokenizer is None:
        from dcops.agents.llm.model import load_gemma

        model, tokenizer = load_gemma()
        adapter = adapter or str(SHIPPED_PLACEMENT_ADAPTER)
    factories: dict[str, Any] = {}
    for mode in modes:
        if mode == "sft":
            policy = make_llm_placement_policy("sft", adapter=adapter, model=copy.deepcopy(model), tokenizer=tokenizer)
        else:
            policy = make_llm_placement_policy(mode, model=model, tokenizer=tokenizer)
        factories[policy.name] = lambda scenario, policy=policy: policy
    return factories
