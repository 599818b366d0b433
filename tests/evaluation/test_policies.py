"""User policies: ``module:callable`` and an HTTP endpoint (a local FastAPI app on 127.0.0.1), and name
checks."""

from __future__ import annotations

import textwrap
import threading
import time

import pytest

from dcops.evaluation.matrix import Cell
from dcops.evaluation.policies import HttpPolicy, make_policy, validate_scheduler
from dcops.evaluation.runner import run_cell

POLICY_MODULE = """
from dcops.agents.schedulers import PriorityThresholdScheduler

class Rejecter:
    def decide(self, view):
        return [{"request_id": r["request_id"], "decision": "REJECT"} for r in view["pending"]]

def make_rejecter():
    return Rejecter()

class SelfDefaulting:
    # like the LLM scheduler given an unusable answer: it sends each request the documented default and
    # counts it in n_defaulted
    n_defaulted = 0

    def decide(self, view):
        out = []
        for r in view["pending"]:
            last = view["window"] + 1 >= view["n_windows"]
            out.append({"request_id": r["request_id"], "decision": "REJECT"} if last else
                       {"request_id": r["request_id"], "decision": "DEFER", "defer_to_window": view["window"] + 1})
        self.n_defaulted += len(out)
        return out

def make_self_defaulting():
    return SelfDefaulting()

def make_threshold():
    return PriorityThresholdScheduler()

def not_a_policy():
    return 42
"""


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    (tmp_path / "my_eval_policies.py").write_text(textwrap.dedent(POLICY_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    return "my_eval_policies"


def test_module_callable_policy_plays_a_cell_like_the_builtin_it_wraps(user_module):
    wrapped = run_cell(Cell(f"{user_module}:make_threshold", "one_strategic", "normal", 0, n_windows=3))
    builtin = run_cell(Cell("priority_threshold", "one_strategic", "normal", 0, n_windows=3))
    skip = {"cell_id", "scheduler", "wall_s"}
    assert {k: v for k, v in wrapped.items() if k not in skip} == {
        k: v for k, v in builtin.items() if k not in skip
    }
    rejecting = run_cell(Cell(f"{user_module}:make_rejecter", "honest", "normal", 0, n_windows=2))
    assert rejecting["value_completed"] == 0.0 and rejecting["invalid_rate"] == 0.0


def test_requests_a_policy_reports_as_defaulted_count_as_invalid(user_module):
    row = run_cell(Cell(f"{user_module}:make_self_defaulting", "honest", "normal", 0, n_windows=2))
    assert row["pending_decisions"] > 0 and row["policy_defaulted"] == row["pending_decisions"]
    assert row["invalid_entries"] == 0 and row["invalid_rate"] == 1.0  # valid for the env, invalid as answers


def test_bad_policy_names_fail_with_the_name(user_module):
    with pytest.raises(ValueError, match="no decide"):
        make_policy(f"{user_module}:not_a_policy")
    with pytest.raises(ValueError, match="has no"):
        make_policy(f"{user_module}:missing")
    with pytest.raises(ValueError, match="cannot import"):
        make_policy("no_such_module_xyz:f")
    with pytest.raises(ValueError, match="LLM mode"):
        validate_scheduler("llm:telepathy")
    with pytest.raises(ValueError, match="adapter"):
        validate_scheduler("llm:constrained@runs/adapter")
    assert validate_scheduler("llm:grpo") == "llm:grpo"  # the shipped adapter
    assert validate_scheduler("llm:grpo@runs/adapter") == "llm:grpo@runs/adapter"
    assert validate_scheduler("llm:fewshot") == "llm:fewshot"
    with pytest.raises(ValueError, match="not a baseline"):
        validate_scheduler("nonsense")


@pytest.fixture
def endpoint(unused_port):
    """A FastAPI policy on 127.0.0.1: accepts requests of stated priority HIGH or CRITICAL, rejects the rest;
    it also records the views it got."""
    import uvicorn
    from fastapi import FastAPI

    app = FastAPI()
    seen: list[dict] = []

    @app.post("/decide")
    def decide(view: dict) -> dict:
        seen.append(view)
        return {
            "decisions": [
                {
                    "request_id": r["request_id"],
                    "decision": "ACCEPT" if r["priority"] in ("HIGH", "CRITICAL") else "REJECT",
                }
                for r in view["pending"]
            ]
        }

    @app.post("/garbage")
    def garbage() -> dict:
        return {"nope": 1}

    port = unused_port
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}", seen
    server.should_exit = True
    thread.join(timeout=10)


def test_http_policy_plays_a_cell(endpoint):
    url, seen = endpoint
    row = run_cell(Cell(f"{url}/decide", "one_strategic", "normal", 1, n_windows=3))
    assert len(seen) == 3 * 2  # 3 windows, the episode and the strategic team's honest twin
    assert row["pending_decisions"] == sum(len(v["pending"]) for v in seen[:3])
    assert row["invalid_rate"] == 0.0 and -1.10 <= row["score"] <= 0.65
    assert seen[0]["window"] == 0 and "pending" in seen[0]
    with pytest.raises(ValueError, match="decisions"):
        HttpPolicy(f"{url}/garbage").decide({"pending": []})


def test_a_retrained_scheduler_gets_new_cells_and_code_defined_ones_keep_theirs(tmp_path, monkeypatch):
    """Cells of a trained scheduler are keyed by its weights: the same name with other weights is another cell,
    the same weights the same cell; baselines keep the published id format."""
    import hashlib
    import shutil

    import numpy as np

    from dcops.agents.schedulers.learned import WEIGHTS_NPZ
    from dcops.evaluation.matrix import build_matrix
    from dcops.evaluation.policies import policy_digest

    shipped = __import__("dcops").agents.schedulers.__path__[0] + "/" + WEIGHTS_NPZ
    assert policy_digest("ppo") == hashlib.sha256(
        b"ppo_scheduler.npz\0" + open(shipped, "rb").read() + b"\0").hexdigest()
    weights = tmp_path / "w.npz"
    shutil.copy(shipped, weights)
    same = policy_digest(f"ppo@{weights}")
    with np.load(weights) as data:
        arrays = {k: data[k] for k in data.files}
    arrays["b3"] = arrays["b3"] + 1e-6  # a retrained head
    np.savez(weights, **arrays)
    changed = policy_digest(f"ppo@{weights}")
    assert same != changed and len(changed) == 64
    assert policy_digest("priority_threshold") == "" and policy_digest("oversight_aware") == ""

    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_model.safetensors").write_bytes(b"weights")
    first = policy_digest(f"llm:grpo@{adapter}")
    (adapter / "adapter_model.safetensors").write_bytes(b"weights, retrained")
    assert policy_digest(f"llm:grpo@{adapter}") != first
    monkeypatch.setenv("DCOPS_LLM_ADAPTER", str(adapter))
    assert policy_digest("llm:grpo") == policy_digest(f"llm:grpo@{adapter}")
    with pytest.raises(ValueError, match="no such"):
        policy_digest(f"ppo@{tmp_path / 'missing.npz'}")

    names = ["priority_threshold", f"ppo@{weights}"]
    old, new = (build_matrix(names, ["honest"], ["normal"], [3], digests={names[1]: d}) for d in (same, changed))
    assert old[0].cell_id == new[0].cell_id == "priority_threshold|honest|normal|3|w8"
    assert old[1].cell_id != new[1].cell_id and old[1].cell_id.endswith(f"|d{same[:12]}")
    assert "policy_digest" not in old[0].as_dict() and old[1].as_dict()["policy_digest"] == same
