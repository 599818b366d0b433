"""A failed generation is an error, never model output: the scheduler counts it apart from the model's invalid
answers, and ``dcops eval`` fails the cell instead of publishing a crash as the model's invalid rate."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from dcops.agents.llm.scheduler import LLMScheduler
from dcops.evaluation import runner
from dcops.evaluation.matrix import Cell


@dataclass
class BrokenBackend:
    """Fails every call the way the real backends do: the exception recorded, an empty answer returned."""

    errors: list[str] = field(default_factory=list)
    calls: int = 0

    def answer(self, prompt: str, view: dict) -> str:
        self.calls += 1
        self.errors.append("RuntimeError: CUDA out of memory")
        return ""


@dataclass
class SilentBackend:
    """A model that answers nothing useful (no error): an invalid answer, not a failure."""

    errors: list[str] = field(default_factory=list)

    def answer(self, prompt: str, view: dict) -> str:
        return "I am not sure."


def test_a_failed_call_is_counted_as_a_generation_error_not_as_the_models_answer(view):
    assert view["pending"]
    broken = LLMScheduler(backend=BrokenBackend())
    decisions = broken.decide(view)
    assert len(decisions) == len(view["pending"])  # every request still gets the documented default
    assert broken.generation_errors == ["RuntimeError: CUDA out of memory"]
    silent = LLMScheduler(backend=SilentBackend())
    silent.decide(view)
    assert silent.generation_errors == [] and silent.n_defaulted == len(view["pending"])


def test_dcops_eval_fails_a_cell_whose_model_calls_failed(monkeypatch):
    monkeypatch.setitem(runner._LLM_POLICIES, "llm:constrained", LLMScheduler(backend=BrokenBackend()))
    cell = Cell("llm:constrained", "injecting", "normal", seed=0, n_windows=2)
    with pytest.raises(runner.GenerationFailed, match="not stored"):
        runner.play(cell)
