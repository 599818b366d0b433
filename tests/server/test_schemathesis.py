"""No input produces a 500: schemathesis fuzzes every operation of ``/openapi.json`` on a real server (bounded:
a fixed seed and a few dozen cases per operation), once without a session and once inside a live episode so
that ``/step``, ``/state`` and ``/suggest`` get past the session check."""

from __future__ import annotations

import subprocess
import sys

import pytest

from dcops.client import DcopsClient

pytest.importorskip("schemathesis", reason="install the server-test extra: pip install -e '.[server-test]'")

CHECKS = ",".join([
    "not_a_server_error", "status_code_conformance", "content_type_conformance", "response_schema_conformance",
    "response_headers_conformance",
])


def _schemathesis(url: str, folder, *extra: str) -> subprocess.CompletedProcess:
    """Run the schemathesis CLI in ``folder`` (it writes its own files there, not in the repository)."""
    command = [
        sys.executable, "-m", "schemathesis.cli", "run", f"{url}/openapi.json", "--checks", CHECKS,
        "--max-examples", "25", "--seed", "4", "--generation-database", "none", "--workers", "1",
        "--phases", "examples,coverage,fuzzing", "--request-timeout", "30", "--no-color", *extra,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=folder)


def test_no_generated_request_gets_a_server_error(live_server, tmp_path):
    result = _schemathesis(live_server.url, tmp_path)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:] + live_server.log()[-3000:]


@pytest.mark.parametrize("task", ["cluster/operations", "cooling/multi_zone_sensor_drift", "placement/deadline_crunch",
                                  "queue/weighted_tardiness"])
def test_no_generated_request_inside_a_live_episode_gets_a_server_error(live_server, task, tmp_path):
    client = DcopsClient(live_server.url)
    client.reset(task=task, seed=0)
    result = _schemathesis(live_server.url, tmp_path, "--header", f"X-Session-Id: {client.session_id}",
                           "--include-path-regex", "^/(step|state|suggest)$")
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:] + live_server.log()[-3000:]
    assert client.state().step_count > 0  # generated actions reached the environment, not only the validators
