"""Compatibility with the ``openenv`` package (the ``server-test`` extra; not ``openenv-core``, they clash): its
generic client plays reset/step/state against our running server, and ``openenv validate --url`` passes."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("openenv", reason="install the server-test extra: pip install -e '.[server-test]'")


def test_the_openenv_generic_client_plays_reset_step_state(live_server):
    from openenv import GenericEnvClient

    with GenericEnvClient(base_url=live_server.url).sync() as env:
        result = env.reset(task="cooling/multi_zone_sensor_drift", seed=3)
        assert result.observation["kind"] == "cooling" and result.done is False
        action = {"fan_speed": 0.7, "supply_setpoint_c": 21.0, "chw_setpoint_c": 11.0, "economiser_on": True}
        result = env.step(action)
        assert isinstance(result.reward, float) and result.observation["step"] == 1
        state = env.state()
        assert state["step_count"] == 1 and state["task"] == "cooling/multi_zone_sensor_drift"
        placement = env.reset(task="placement/wait_for_capacity", seed=1)
        assert placement.observation["kind"] == "placement"
        assert env.step({"type": "defer", "rationale": "a cheaper GPU frees next tick"}).observation["tick"] == 1


def test_openenv_validate_url_passes(live_server):
    result = subprocess.run([sys.executable, "-m", "openenv.cli", "validate", "--url", live_server.url],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Verdict: PASS" in result.stdout


def test_the_package_manifest_and_its_runtime_plan_are_what_openenv_validate_reads(live_server):
    """``openenv validate .`` builds the Dockerfile (no Docker daemon here) and plays validation/runtime.json over
    the WebSocket: parse the manifest and the plan with openenv's own code and play the plan with its collector
    against the running server, as the validator does inside the container."""
    from pathlib import Path

    import yaml
    from openenv.validation.manifest import ExecutionDeclaration
    from openenv.validation.runtime.collector import collect_runtime_evidence
    from openenv.validation.runtime.contracts import load_runtime_plan

    import dcops

    root = Path(dcops.__file__).resolve().parent
    assert (root / "Dockerfile").is_file()
    manifest = yaml.safe_load((root / "openenv.yaml").read_text())
    execution = ExecutionDeclaration(**manifest["validation"]["execution"])
    plan = load_runtime_plan(root, execution)
    evidence = collect_runtime_evidence(live_server.url, plan, episode_timeout_s=120.0)
    assert evidence.failure_phase is None, evidence.failure_reason
    operations = [e.operation for e in evidence.exchanges]
    assert operations == ["reset", "state"] + ["step", "state"] * len(plan.actions)
    last_step = [e for e in evidence.exchanges if e.operation == "step"][-1]
    assert '"done":true' in last_step.response_json.replace(" ", "")
    static = subprocess.run([sys.executable, "-m", "openenv.cli", "validate", str(root), "--skip-build", "--level",
                             "static"], capture_output=True, text=True, timeout=300)
    assert "PASS  static.manifest" in static.stdout, static.stdout + static.stderr
