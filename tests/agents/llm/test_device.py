"""Where the local model runs: ``llm_device`` (argument, ``$DCOPS_LLM_DEVICE``, auto) and what the scheduler
reports."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from dcops.agents.llm.backends import OpenAIBackend  # noqa: E402
from dcops.agents.llm.model import DEVICE_VARIABLE, llm_device  # noqa: E402
from dcops.agents.llm.scheduler import LLMScheduler, make_llm_scheduler  # noqa: E402

GPU = torch.cuda.is_available()


def test_auto_is_the_gpu_when_there_is_one(monkeypatch):
    monkeypatch.delenv(DEVICE_VARIABLE, raising=False)
    expected = "cuda" if GPU else "cpu"
    assert llm_device() == expected
    assert llm_device("auto") == expected
    monkeypatch.setenv(DEVICE_VARIABLE, " AUTO ")
    assert llm_device() == expected


def test_the_argument_beats_the_variable(monkeypatch):
    monkeypatch.setenv(DEVICE_VARIABLE, "cuda:7")
    assert llm_device("cpu") == "cpu"


@pytest.mark.parametrize(("value", "message"), [("gpu0", "not a torch device"), ("meta", "only cpu and cuda")])
def test_a_bad_device_names_the_variable(monkeypatch, value, message):
    monkeypatch.setenv(DEVICE_VARIABLE, value)
    with pytest.raises(ValueError, match=f"{DEVICE_VARIABLE}: .*{message}"):
        llm_device()


@pytest.mark.skipif(GPU, reason="this machine has a GPU")
def test_asking_for_a_missing_gpu_is_an_error_not_a_silent_cpu_run():
    with pytest.raises(ValueError, match="device: 'cuda' asks for a GPU"):
        llm_device("cuda")


def test_the_scheduler_reports_its_models_device(tiny):
    model, tokenizer = tiny
    scheduler = make_llm_scheduler("constrained", model=model, tokenizer=tokenizer)
    assert scheduler.device == str(next(model.parameters()).device) == "cpu"
    remote = LLMScheduler(OpenAIBackend(base_url="http://127.0.0.1:9", model="served-model"))
    assert remote.device is None
