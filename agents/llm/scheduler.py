"""The LLM scheduler: prompt → backend → strict parser → one validated decision per pending request.

:class:`LLMScheduler` has the baseline schedulers' interface (``decide(view) -> list[dict]``, see
``dcops.agents.schedulers``). Every answer goes through :func:`dcops.agents.llm.parser.parse_decisions`, even
the constrained backend's (valid by construction, and checked anyway), so what reaches the environment is always
exactly one valid decision per pending request; unusable answers get the documented default and are counted.

:func:`make_llm_scheduler` builds the six modes:

- ``"fewshot"``: free greedy generation by a local transformers model (default: the offline Gemma 3 270M base
  model) from the few-shot prompt, parsed strictly;
- ``"constrained"``: log-likelihood scoring of ACCEPT / REJECT / DEFER(next window) per request by a local
  model (:class:`dcops.agents.llm.backends.LoglikBackend`): valid by construction;
- ``"grpo"``: ``"fewshot"`` with a LoRA adapter directory (made with peft by ``dcops train-scheduler``)
  applied to the model: ``adapter=``, else ``$DCOPS_LLM_ADAPTER``, else the shipped adapter
  :data:`SHIPPED_ADAPTER` (see its ``STEP`` file for how many optimiser steps it has had);
- ``"sft"``: the compact per-request prompts of :mod:`dcops.agents.llm.compact`, decided one by one by
  log-likelihood of the one-word answers (:class:`dcops.agents.llm.backends.CompactLoglikBackend`; valid by
  construction), with the LoRA adapter of ``dcops train-scheduler-sft`` applied: ``adapter=``, else
  ``$DCOPS_LLM_SFT_ADAPTER``, else the shipped :data:`SHIPPED_SFT_ADAPTER`;
- ``"sft_grpo"``: ``"sft"``'s compact prompts and log-likelihood choice with the adapter of ``dcops
  train-scheduler-grpo-compact`` (GRPO from the SFT adapter, rewarded by episode returns): ``adapter=``, else
  ``$DCOPS_LLM_SFT_GRPO_ADAPTER``, else the shipped :data:`SHIPPED_SFT_GRPO_ADAPTER`;
- ``"openai"``: an OpenAI-compatible HTTP server (``base_url=``, ``model=``; vLLM, llama.cpp server, hosted
  APIs), with JSON-schema constrained output where the server supports it.

Pass ``model=`` and ``tokenizer=`` to the local modes to use another model (the tests pass the tiny one).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dcops.agents.llm.backends import Backend
from dcops.agents.llm.parser import ParseResult, parse_decisions
from dcops.agents.llm.prompt import build_prompt

MODES = ("fewshot", "constrained", "grpo", "sft", "sft_grpo", "openai")

SHIPPED_ADAPTER = Path(__file__).resolve().parent / "adapters" / "grpo_gemma"
"""The LoRA adapter for the Gemma 3 270M model shipped with the package (``dcops train-scheduler`` output; its
provenance is ``reports/llm/grpo_training.md``)."""
SHIPPED_SFT_ADAPTER = Path(__file__).resolve().parent / "adapters" / "sft_gemma"
"""The ``sft`` mode's LoRA adapter for Gemma 3 270M (``dcops train-scheduler-sft`` output; its recipe and curve
are in ``reports/llm/sft/``)."""
SHIPPED_SFT_GRPO_ADAPTER = Path(__file__).resolve().parent / "adapters" / "sft_grpo_gemma"
"""The ``sft_grpo`` mode's LoRA adapter for Gemma 3 270M (``dcops train-scheduler-grpo-compact`` output, started
from :data:`SHIPPED_SFT_ADAPTER`; its recipe and curve are in ``reports/llm/grpo_compact/``)."""
ADAPTER_VARIABLES = {"grpo": "DCOPS_LLM_ADAPTER", "sft": "DCOPS_LLM_SFT_ADAPTER",
                     "sft_grpo": "DCOPS_LLM_SFT_GRPO_ADAPTER"}
SHIPPED_ADAPTERS = {"grpo": SHIPPED_ADAPTER, "sft": SHIPPED_SFT_ADAPTER, "sft_grpo": SHIPPED_SFT_GRPO_ADAPTER}
COMPACT_MODES = ("sft", "sft_grpo")
"""The modes that decide from compact per-request prompts by log-likelihood (:mod:`dcops.agents.llm.compact`)."""


@dataclass
class LLMScheduler:
    """A scheduler that asks a language model (through ``backend``) for each window's decisions."""

    backend: Backend
    few_shot: bool = True
    mask: bool = True
    """Mask decision words and request ids inside descriptions (``dcops.agents.llm.prompt``)."""
    compact: bool = False
    """The backend builds its own compact prompts from the view (``sft``): no window prompt is built."""
    name: str = "llm"
    n_calls: int = 0
    """Model calls made (windows with at least one pending request)."""
    n_invalid_outputs: int = 0
    """Answers that were not fully valid (``format_ok`` false): at least one request got the default."""
    n_problems: int = 0
    """Problems over all answers (each bad entry or request once)."""
    n_requests: int = 0
    """Pending requests decided over all calls."""
    n_defaulted: int = 0
    """Pending requests whose answer entry was unusable, so they got the documented default (the invalid-action
    count ``dcops eval`` reads; the environment itself never sees an invalid entry from this scheduler)."""
    seconds: list[float] = field(default_factory=list)
    """Wall-clock seconds of each call (prompt building, model, parsing)."""
    last: ParseResult | None = None
    """The last answer's parse result."""
    last_text: str = ""
    """The last answer's raw text."""
    generation_errors: list[str] = field(default_factory=list)
    """Calls whose generation failed (the backend's error, not an answer of the model): its requests got the
    default, and ``dcops eval`` fails the cell rather than publish a crash as the model's invalid rate."""

    def decide(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        """One validated decision per pending request of ``view`` (the structured public view)."""
        if not view["pending"]:
            return []
        start = time.perf_counter()
        prompt = "" if self.compact else build_prompt(view, few_shot=self.few_shot, mask=self.mask)
        errors = getattr(self.backend, "errors", None)
        before = len(errors) if errors is not None else 0
        text = self.backend.answer(prompt, view)
        if errors is not None and len(errors) > before:
            self.generation_errors.extend(errors[before:])
        result = parse_decisions(text, view)
        self.seconds.append(time.perf_counter() - start)
        self.n_calls += 1
        self.n_requests += len(view["pending"])
        self.n_invalid_outputs += not result.format_ok
        self.n_problems += result.n_invalid
        self.n_defaulted += len(result.defaulted)
        self.last, self.last_text = result, text
        return result.decisions

    @property
    def device(self) -> str | None:
        """The torch device of a local backend's model (``"cpu"``, ``"cuda:0"`` …); None for an HTTP backend."""
        model = getattr(self.backend, "model", None)
        parameters = getattr(model, "parameters", None)
        if parameters is None:
            return None
        first = next(iter(parameters()), None)
        return None if first is None else str(first.device)

    def stats(self) -> dict[str, Any]:
        """Counters for reports: calls, invalid outputs and problems (and their rates), seconds per window."""
        calls = max(self.n_calls, 1)
        return {
            "calls": self.n_calls, "invalid_outputs": self.n_invalid_outputs,
            "invalid_output_rate": self.n_invalid_outputs / calls, "problems": self.n_problems,
            "problem_rate_per_request": self.n_problems / max(self.n_requests, 1),
            "defaulted": self.n_defaulted, "defaulted_rate": self.n_defaulted / max(self.n_requests, 1),
            "seconds_per_window": sum(self.seconds) / calls if self.seconds else 0.0,
        }


def _local_model(kwargs: dict[str, Any]) -> tuple[Any, Any]:
    """``model=`` and ``tokenizer=`` if given, else the model ``$DCOPS_LLM_MODEL`` names (default the offline
    Gemma; :func:`dcops.agents.llm.model.load_model`)."""
    model, tokenizer = kwargs.pop("model", None), kwargs.pop("tokenizer", None)
    if model is None or tokenizer is None:
        from dcops.agents.llm.model import default_model_name, load_gemma, load_model

        name = default_model_name()
        model, tokenizer = load_gemma() if name == "gemma" else load_model(name)[:2]
    return model, tokenizer


def make_llm_scheduler(mode: str, **kwargs: Any) -> LLMScheduler:
    """Build the LLM scheduler for ``mode`` (module docstring). Keyword arguments:

    - every mode: ``few_shot`` (default True), ``mask`` (mask decision words and ids in descriptions, default
      True);
    - local modes: ``model``, ``tokenizer`` (default: the model ``$DCOPS_LLM_MODEL`` names, else the offline
      Gemma);
      ``fewshot``/``grpo``: ``tokens_per_request`` (generation budget); ``grpo``: ``adapter`` (default
      ``$DCOPS_LLM_ADAPTER``, else :data:`SHIPPED_ADAPTER`, which is for the Gemma model only); ``sft``:
      ``adapter`` (default ``$DCOPS_LLM_SFT_ADAPTER``, else :data:`SHIPPED_SFT_ADAPTER`, Gemma only);
      ``sft_grpo``: ``adapter`` (default ``$DCOPS_LLM_SFT_GRPO_ADAPTER``, else :data:`SHIPPED_SFT_GRPO_ADAPTER`);
      ``constrained``: ``chunk`` (sequences per scoring batch);
    - ``openai``: ``base_url`` and ``model`` (required), ``api_key``, ``json_schema``, ``temperature``,
      ``timeout_s``.
    """
    from dcops.agents.llm import backends

    few_shot = bool(kwargs.pop("few_shot", True))
    mask = bool(kwargs.pop("mask", True))
    if mode == "openai":
        for key in ("base_url", "model"):
            if not kwargs.get(key):
                raise ValueError(f"mode 'openai' needs {key}=")
        return LLMScheduler(backends.OpenAIBackend(**kwargs), few_shot=few_shot, mask=mask, name="llm_openai")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    adapter = kwargs.pop("adapter", None)
    if mode in SHIPPED_ADAPTERS and not adapter:
        adapter = os.environ.get(ADAPTER_VARIABLES[mode])
    if mode in SHIPPED_ADAPTERS and not adapter:
        from dcops.agents.llm.model import MODEL_VARIABLE, default_model_name

        if kwargs.get("model") is not None or default_model_name() != "gemma":
            own = "model=" if kwargs.get("model") is not None else f"${MODEL_VARIABLE}={default_model_name()!r}"
            raise ValueError(f"mode {mode!r} with your own {own} needs adapter= (the shipped adapter is for the "
                             "Gemma 3 270M model)")
        adapter = str(SHIPPED_ADAPTERS[mode])
        if not (SHIPPED_ADAPTERS[mode] / "adapter_config.json").exists():
            raise FileNotFoundError(f"mode {mode!r}: no adapter ships at {adapter}; pass adapter= (or "
                                    f"${ADAPTER_VARIABLES[mode]}), or install one with the mode's training command")
    if mode not in SHIPPED_ADAPTERS and adapter:
        raise ValueError(f"adapter= is only for modes {', '.join(map(repr, SHIPPED_ADAPTERS))}, not {mode!r}")
    model, tokenizer = _local_model(kwargs)
    if mode in COMPACT_MODES:
        if kwargs:
            raise ValueError(f"mode {mode!r} takes no {', '.join(sorted(kwargs))}=")
        return LLMScheduler(backends.CompactLoglikBackend(backends.with_adapter(model, adapter), tokenizer),
                            few_shot=few_shot, mask=True, compact=True, name=f"llm_{mode}")
    if mode == "constrained":
        return LLMScheduler(backends.LoglikBackend(model, tokenizer, **kwargs), few_shot=few_shot, mask=mask,
                            name="llm_constrained")
    if mode == "grpo":
        model = backends.with_adapter(model, adapter)
    return LLMScheduler(backends.TransformersBackend(model, tokenizer, **kwargs), few_shot=few_shot, mask=mask,
                        name=f"llm_{mode}")
