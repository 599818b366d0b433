"""GRPO smoke test: a few steps of TRL's GRPOTrainer with a LoRA adapter on the tiny Gemma model, scored by the real
parser and the real environment reward.

The tiny random model writes noise, which the parser rejects alike for every completion: a group's rewards would
tie (zero advantage, zero gradient). Here it decodes under the answer grammar of ``conftest.answering_tiny_model``
(its own logits pick ACCEPT, REJECT, DEFER or an invalid word per pending request), so the completions are real
answers that differ, the real parser and the environment's window reward score them, and the test checks that a
group's rewards differ and the gradient is not zero. The whole path (window states, prompts, generation,
environment reward, loss, LoRA update, logs, adapter saving) runs for real.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

import pytest

pytest.importorskip("trl")
pytest.importorskip("peft")

from dcops.training.scheduler.grpo import GRPOSchedulerConfig, train_grpo_scheduler  # noqa: E402
from dcops.training.scheduler.report import read_log, write_report  # noqa: E402


def _adapter_tensors(folder: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(folder / "adapter_model.safetensors"))


def test_grpo_steps_on_the_tiny_model_update_the_adapter(tmp_path, answering_tiny):
    import torch
    from peft import PeftModel

    from dcops.agents.llm.model import tiny_model

    model, tokenizer = answering_tiny(seed=0)
    config = GRPOSchedulerConfig(
        model="tiny", out=str(tmp_path / "run"), seed=0, train_seeds=(1000, 1001), windows=(0, 1, 2),
        env_config={"max_requests_per_team": 1}, few_shot=False, max_steps=2, num_generations=4,
        max_completion_length=96, temperature=1.0, learning_rate=5e-3, beta=0.04, lora_r=4, lora_alpha=8,
        save_steps=1, save_total_limit=1, progress=False,
    )
    record = train_grpo_scheduler(config, model=model, tokenizer=tokenizer)

    assert record["steps_done"] == 2
    assert record["model_source"]["name"] == "tiny" and record["model_source"]["kind"] == "given"
    rows = read_log(config.out)
    assert [r["step"] for r in rows] == [1, 2]
    for row in rows:
        assert math.isfinite(row["loss"])
        assert math.isfinite(row["reward"]) and math.isfinite(row["kl"])
        assert 0.0 <= row["format_failure_rate"] <= 1.0
        assert row["grad_norm"] > 0, f"step {row['step']}: zero gradient"
    # The real parser read the answers: some parsed, some carried the invalid word.
    scored = [json.loads(line) for line in (Path(config.out) / "completions.jsonl").read_text().splitlines()]
    assert len(scored) == 2 * 4
    assert any(s["format_ok"] for s in scored) and any(s["n_invalid"] > 0 for s in scored)
    groups = defaultdict(list)
    for s in scored:
        groups[s["step"], s["state_key"]].append(s["reward"])
    assert all(len(g) == 4 for g in groups.values())
    assert any(len(set(g)) > 1 for g in groups.values()), f"every group's rewards tie: {dict(groups)}"

    # peft initialises LoRA B to zero, so any non-zero B means optimiser steps changed the adapter.
    adapter = Path(config.out) / "adapter"
    tensors = _adapter_tensors(adapter)
    b = {k: v for k, v in tensors.items() if "lora_B" in k}
    assert b, f"no LoRA B weights in {sorted(tensors)[:4]}"
    assert any(v.abs().max().item() > 0 for v in b.values())
    assert json.loads((adapter / "adapter_config.json").read_text())["r"] == 4
    assert (adapter / "STEP").read_text().strip() == "2"
    assert (Path(config.out) / "log.csv").read_text().count("\n") == 3  # header + 2 steps

    # The saved adapter loads on a fresh base model and changes its output.
    base, _ = tiny_model(seed=0)
    ids = tokenizer("Answer:\n", return_tensors="pt")["input_ids"]
    with torch.no_grad():
        before = base(ids).logits
        after = PeftModel.from_pretrained(base, str(adapter))(ids).logits
    assert not torch.allclose(before, after)

    png, md = write_report(config.out, tmp_path / "report")
    assert png.stat().st_size > 10_000
    assert "| reward (env + format) |" in md.read_text()


def test_a_model_folder_is_loaded_by_its_path_and_recorded(tmp_path):
    """``--model PATH``: the run loads the folder (offline) and ``config.json`` and ``summary.json`` say what it
    trained; one step of a tiny configuration."""
    from dcops.agents.llm.model import tiny_model

    folder = tmp_path / "my_model"
    model, tokenizer = tiny_model(seed=1)
    model.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    config = GRPOSchedulerConfig(
        model=str(folder), out=str(tmp_path / "run"), seed=0, train_seeds=(1000,), windows=(2,),
        env_config={"max_requests_per_team": 1}, few_shot=False, max_steps=1, num_generations=2,
        max_completion_length=4, beta=0.0, lora_r=2, lora_alpha=4, save_total_limit=1, progress=False,
    )
    record = train_grpo_scheduler(config)
    expected = {"name": str(folder), "kind": "path", "location": str(folder.resolve()), "revision": None}
    assert record["model_source"] == expected
    for name in ("config.json", "summary.json"):
        assert json.loads((Path(config.out) / name).read_text())["model_source"] == expected
    png, md = write_report(config.out, tmp_path / "report")
    assert f"- model: `{folder}` (path, {folder.resolve()})" in md.read_text()
