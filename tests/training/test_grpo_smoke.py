"""GRPO smoke test: a few steps of TRL's GRPOTrainer with a LoRA adapter on the tiny random Gemma model.

The tiny model writes noise, so with the real parser every completion fails the format alike and a group's
rewards tie (zero advantage, zero gradient). The test therefore scores completions with a parser that maps the
text's checksum to ACCEPT-all / REJECT-all / DEFER-all: rewards then differ inside a group, as they do with a
model that answers, and the whole path (window states, prompts, generation, environment reward, loss, LoRA
update, logs, adapter saving) runs for real. About 20 s on 2 cores.
"""

from __future__ import annotations

import json
import math
import zlib
from pathlib import Path

import pytest

pytest.importorskip("trl")
pytest.importorskip("peft")

from dcops.agents.llm.parser import ParseResult  # noqa: E402
from dcops.training.scheduler.grpo import GRPOSchedulerConfig, train_grpo_scheduler  # noqa: E402
from dcops.training.scheduler.report import read_log, write_report  # noqa: E402


def checksum_parse(text: str, view: dict) -> ParseResult:
    """Same decision for every pending request, chosen by the completion's checksum (see module docstring)."""
    kind = ("ACCEPT", "REJECT", "DEFER")[zlib.crc32(text.encode()) % 3]
    decisions = []
    for r in view["pending"]:
        if kind == "DEFER" and view["window"] + 1 < view["n_windows"]:
            decisions.append({"request_id": r["request_id"], "decision": "DEFER",
                              "defer_to_window": view["window"] + 1})
        else:
            decisions.append({"request_id": r["request_id"], "decision": "ACCEPT" if kind == "ACCEPT" else "REJECT"})
    return ParseResult(decisions=decisions, problems=[], format_ok=kind != "DEFER", n_invalid=0)


def _adapter_tensors(folder: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(folder / "adapter_model.safetensors"))


def test_grpo_steps_on_the_tiny_model_update_the_adapter(tmp_path):
    import torch
    from peft import PeftModel

    from dcops.agents.llm.model import tiny_model

    model, tokenizer = tiny_model(seed=0)
    config = GRPOSchedulerConfig(
        model="tiny", out=str(tmp_path / "run"), seed=0, train_seeds=(1000, 1001), windows=(0, 1, 2),
        env_config={"max_requests_per_team": 1}, few_shot=False, max_steps=2, num_generations=4,
        max_completion_length=8, learning_rate=5e-3, beta=0.04, lora_r=4, lora_alpha=8, save_steps=1,
        save_total_limit=1, progress=False,
    )
    record = train_grpo_scheduler(config, model=model, tokenizer=tokenizer, parse=checksum_parse)

    assert record["steps_done"] == 2
    rows = read_log(config.out)
    assert [r["step"] for r in rows] == [1, 2]
    for row in rows:
        assert math.isfinite(row["loss"])
        assert math.isfinite(row["reward"]) and math.isfinite(row["kl"])
        assert 0.0 <= row["format_failure_rate"] <= 1.0
    assert any(row["reward_std"] > 0 for row in rows), "no group had reward spread: nothing to learn from"

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
