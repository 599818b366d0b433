"""Stopping ``dcops eval`` with SIGTERM stops its worker processes too (no orphans left computing cells)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead but not yet reaped: it computes nothing
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "State:\tZ" in status.read_text())


def test_sigterm_stops_the_workers(tmp_path):
    pid_file = tmp_path / "worker.pid"
    (tmp_path / "stuck_policy.py").write_text(textwrap.dedent(f"""
        import os, time

        class Stuck:
            def decide(self, view):
                with open({str(pid_file)!r}, "w") as f:
                    f.write(str(os.getpid()))
                time.sleep(600)
                return []

        def make():
            return Stuck()
    """))
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    command = [sys.executable, "-m", "dcops.cli", "eval", "--schedulers", "stuck_policy:make", "--mixes", "honest",
               "--conditions", "normal", "--seeds", "1", "--n-windows", "2", "--workers", "1", "--no-progress",
               "--out", str(tmp_path / "out"), "--name", "stuck"]
    parent = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not pid_file.exists() or not pid_file.read_text():
            assert parent.poll() is None, parent.stderr.read()
            assert time.monotonic() < deadline, "the worker never started the cell"
            time.sleep(0.2)
        worker = int(pid_file.read_text())
        assert worker != parent.pid and _alive(worker)
        parent.send_signal(signal.SIGTERM)
        assert parent.wait(timeout=60) != 0
        deadline = time.monotonic() + 30
        while _alive(worker) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(worker), "the worker outlived dcops eval"
    finally:
        if parent.poll() is None:
            parent.kill()
        if pid_file.exists() and pid_file.read_text() and _alive(int(pid_file.read_text())):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
