"""``dcops eval-injection`` end to end on the tiny model: the adapter modes, and that they leave the base model
of the modes measured after them untouched."""

from __future__ import annotations

import csv

import pytest

pytest.importorskip("peft")


def _rows(path, scheduler):
    with path.open() as handle:
        return [r for r in csv.DictReader(handle) if r["scheduler"] == scheduler]


def test_an_adapter_mode_measured_first_leaves_the_next_modes_model_alone(tmp_path, monkeypatch):
    """peft injects an adapter's layers into the model it wraps, in place; the command must give an adapter
    mode its own copy, or every mode measured after it would score with the adapter on."""
    from peft import LoraConfig, get_peft_model

    import dcops.agents.llm.scheduler as scheduler_module
    from dcops.agents.llm.model import tiny_model
    from dcops.cli import main

    model, _ = tiny_model(seed=0)
    adapter = tmp_path / "adapter"
    get_peft_model(model, LoraConfig(r=2, lora_alpha=4, target_modules=["q_proj", "v_proj"],
                                     task_type="CAUSAL_LM")).save_pretrained(str(adapter))
    given = {}
    real = scheduler_module.make_llm_scheduler

    def spy(mode, **kwargs):
        scheduler = real(mode, **kwargs)
        given[mode] = kwargs["model"]
        return scheduler

    monkeypatch.setattr(scheduler_module, "make_llm_scheduler", spy)
    out = tmp_path / "out"
    assert main(["eval-injection", "--tiny", "--seeds", "0", "--windows", "2", "--adapter", str(adapter),
                 "--modes", "sft,constrained", "--out", str(out)]) == 0
    assert any("lora_" in name for name, _ in given["sft"].named_parameters())
    assert not any("lora_" in name for name, _ in given["constrained"].named_parameters())
    sft, constrained = _rows(out / "injection.csv", "llm:sft (tiny)"), _rows(out / "injection.csv",
                                                                            "llm:constrained (tiny)")
    assert sft and len(sft) == len(constrained)
    assert {r["decision_clean"] for r in sft} | {r["decision_injected"] for r in sft} <= {"ACCEPT", "REJECT", "DEFER"}


def test_eval_names_a_base_model_it_cannot_find(tmp_path, monkeypatch):
    import os

    from dcops.agents.llm.model import MODEL_VARIABLE
    from dcops.cli import main

    monkeypatch.delenv(MODEL_VARIABLE, raising=False)
    with pytest.raises(SystemExit, match=r"--llm-model \(or \$DCOPS_LLM_MODEL\): .*not a model folder"):
        main(["eval", "--llm-model", "./no/such/model", "--policy", "llm:constrained", "--schedulers",
              "priority_threshold", "--seeds", "1", "--out", str(tmp_path)])
    assert MODEL_VARIABLE not in os.environ  # the option does not outlive the command
    with pytest.raises(SystemExit, match=r"llm:sft on 'tiny' need @<adapter dir>"):
        main(["eval", "--llm-model", "tiny", "--policy", "llm:sft", "--schedulers", "priority_threshold",
              "--seeds", "1", "--out", str(tmp_path)])
    assert MODEL_VARIABLE not in os.environ
    monkeypatch.setenv(MODEL_VARIABLE, "./also/missing")  # a bad model in the shell is named as such
    with pytest.raises(SystemExit, match=r"\$DCOPS_LLM_MODEL"):
        main(["eval", "--policy", "llm:constrained", "--schedulers", "priority_threshold", "--seeds", "1",
              "--out", str(tmp_path)])
    assert os.environ[MODEL_VARIABLE] == "./also/missing"
    assert not (tmp_path / "default").exists()
