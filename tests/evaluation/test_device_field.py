"""``dcops eval`` records the device of a scheduler's local model per cell, and the report counts them."""

from __future__ import annotations

import json
import textwrap

from dcops.cli import main

POLICY = textwrap.dedent(
    """
    from dcops.agents.schedulers import PriorityThresholdScheduler


    class OnDevice(PriorityThresholdScheduler):
        device = "cuda:3"  # what an LLM scheduler on a GPU reports


    def make():
        return OnDevice()
    """
)


def test_cells_record_the_model_device_and_the_report_counts_it(tmp_path, monkeypatch):
    (tmp_path / "device_policy_mod.py").write_text(POLICY)
    monkeypatch.syspath_prepend(str(tmp_path))
    argv = ["eval", "--schedulers", "reject_all", "--policy", "device_policy_mod:make", "--mixes", "injecting",
            "--conditions", "normal", "--seeds", "1", "--n-windows", "2", "--out", str(tmp_path), "--name", "dev",
            "--serial", "--no-progress", "--reference", "reject_all"]
    assert main(argv) == 0
    rows = {r["scheduler"]: r for r in map(json.loads, (tmp_path / "dev" / "cells.jsonl").read_text().splitlines())}
    assert rows["device_policy_mod:make"]["llm_device"] == "cuda:3"
    assert "llm_device" not in rows["reject_all"]
    readme = (tmp_path / "dev" / "README.md").read_text()
    assert "by the model's device: cuda:3 (1)." in readme
