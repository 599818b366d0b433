"""``examples/trl_rollout_func.py``: TRL's ``rollout_func`` playing served episodes, one window per turn.

The example runs as a user would run it (its ``main``), against a real server process, for a GRPO step of
the tiny model (decoding under the answer grammar of ``conftest.answering_tiny_model``, so its answers parse
sometimes and differ): every rollout plays every window of its episode, the window rewards are the server's
(they add up to the server's own running total), and the environment's tokens are masked out of the loss.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

pytest.importorskip("trl")
pytest.importorskip("peft")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "trl_rollout_func.py"


def _example():
    spec = importlib.util.spec_from_file_location("trl_rollout_func_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_rollout_func_example_trains_on_multi_turn_served_episodes(tmp_path, dcops_server, answering_tiny):
    example = _example()
    model, tokenizer = answering_tiny(seed=0)
    out = tmp_path / "run"
    summary = example.main(["--url", dcops_server, "--out", str(out), "--steps", "1", "--seeds", "21", "22",
                            "--n-windows", "2", "--max-turn-tokens", "96"], model=model, tokenizer=tokenizer)

    assert summary["steps"] == 1 and summary["model_source"]["kind"] == "given"
    rollouts = [json.loads(line) for line in (out / "rollouts.jsonl").read_text().splitlines()]
    assert len(rollouts) == 4
    for r in rollouts:
        assert len(r["window_rewards"]) == 2, "an episode was not played to its end, one window per turn"
        assert r["server_total"] == pytest.approx(sum(r["window_rewards"]), abs=1e-9)
        assert r["reward"] == pytest.approx(sum(r["window_rewards"]) + sum(r["format_terms"]))
    assert len({r["episode_id"] for r in rollouts}) == 4
    by_seed = {}
    for r in rollouts:
        by_seed.setdefault(r["seed"], set()).add(round(r["reward"], 9))
    assert any(len(v) > 1 for v in by_seed.values()), "every rollout of an episode got the same reward"
    for row in summary["logs"]:
        assert math.isfinite(row["loss"])
        assert row["rewards/episode_reward/mean"] == pytest.approx(row["reward"])
    assert any(row["grad_norm"] > 0 for row in summary["logs"])


def test_environment_tokens_are_masked_and_logprobs_align(dcops_server, answering_tiny):
    """One call of the rollout function, as GRPOTrainer makes it, checked against TRL's contract."""
    from types import SimpleNamespace

    from accelerate import Accelerator

    example = _example()
    model, tokenizer = answering_tiny(seed=0)
    tokenizer.padding_side = "left"
    trainer = SimpleNamespace(processing_class=tokenizer, model_wrapped=model, accelerator=Accelerator(cpu=True),
                              temperature=1.0, top_p=1.0)
    rollout = example.make_rollout_func(dcops_server, {"n_windows": 2, "max_requests_per_team": 1}, 96)
    prompts = [example.SEED_LINE.format(seed=5)] * 2
    out = rollout(prompts, trainer)
    assert {"prompt_ids", "completion_ids", "logprobs", "env_mask"} <= set(out)
    assert all(len(v) == 2 for v in out.values())
    for ids, logps, mask in zip(out["completion_ids"], out["logprobs"], out["env_mask"], strict=True):
        assert len(ids) == len(logps) == len(mask)
        assert 0 < sum(mask) < len(mask)  # two model turns with the environment's window between them
        assert all(lp <= 0.0 for lp in logps) and all(lp == 0.0 for lp, m in zip(logps, mask, strict=True) if not m)
        inserted = tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if not m])
        assert "Window reward" in inserted and "## Window 1 (windows 0-1" in inserted
    assert out["prompt_ids"][0] == out["prompt_ids"][1]  # the same public seed: the same first window
    assert out["model_turns"] == [2, 2]
