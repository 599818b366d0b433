"""Checks every test gets (a test leaves nothing of its own behind in the system temp directory), and real dcops
server processes on loopback for the tests that need one running (``server_starter``, ``live_server``): every
such server writes its episode store under pytest's temporary directory, never in the user's data dir."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from dcops.boundary import private_seed, secret_from_text

# Folders that libraries make in the temp directory when they are not given one of the test's own:
# stable-baselines3's default logger (``SB3-<date>``, made on the first ``learn`` of a model with no logger) and
# a local Ray's session folders (``ray/session_<date>``, unless ``RAY_TMPDIR`` points elsewhere).
_LEFTOVER_PATTERNS = ("SB3-*", "ray/session_2*")


def _leftovers() -> set[str]:
    temp = Path(tempfile.gettempdir())
    return {path.name for pattern in _LEFTOVER_PATTERNS for path in temp.glob(pattern)}


@pytest.fixture(autouse=True)
def _nothing_left_in_the_temp_directory() -> Iterator[None]:
    before = _leftovers()
    yield
    new = sorted(_leftovers() - before)
    assert not new, (f"the test left {new} in {tempfile.gettempdir()}: give SB3 a logger of the test's own "
                     "folder (dcops.training.sb3_logging.sb3_logger), start Ray with the ray_tmpdir fixture")


@pytest.fixture
def ray_tmpdir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A temp folder of the test's own for a local Ray (``RAY_TMPDIR``), removed with everything Ray wrote there
    once Ray is shut down. Short on purpose: Ray's socket paths live under it and must stay under 108 bytes."""
    folder = Path(tempfile.mkdtemp(prefix="dcops-ray-"))
    monkeypatch.setenv("RAY_TMPDIR", str(folder))
    try:
        yield folder
    finally:
        import ray

        ray.shutdown()
        shutil.rmtree(folder, ignore_errors=True)


LIVE_SERVER_SECRET = "the tests' operator secret"
"""``DCOPS_EPISODE_SECRET`` of every real server process here, so that a test can replay a served episode as
its operator would (:meth:`LiveServer.env_seed`)."""


@pytest.fixture
def operator_secret() -> bytes:
    """The operator secret of every server the tests start, in process or as a process (:data:`LIVE_SERVER_SECRET`)."""
    return secret_from_text(LIVE_SERVER_SECRET)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def unused_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (:func:`free_port`), for a test's own server."""
    return free_port()


@dataclass
class LiveServer:
    """A ``python -m dcops.server.app`` process listening on 127.0.0.1."""

    process: subprocess.Popen
    port: int
    db_path: Path
    log_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def env_seed(self, seed: int) -> int:
        """The seed the server reset its environment with for the public ``seed`` (``dcops.boundary``)."""
        return private_seed(secret_from_text(LIVE_SERVER_SECRET), seed)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=20)


def start_server(db_path: Path, log_path: Path, port: int | None = None, env: dict[str, str] | None = None,
                 ready_timeout_s: float = 60.0) -> LiveServer:
    """Start a real server process and wait until ``/health`` answers (bounded; raises with its log if not)."""
    port = port or free_port()
    environment = {**os.environ, "DCOPS_DB": str(db_path), "DCOPS_EPISODE_SECRET": LIVE_SERVER_SECRET, **(env or {})}
    log = log_path.open("ab")
    process = subprocess.Popen(
        [sys.executable, "-m", "dcops.server.app", "--host", "127.0.0.1", "--port", str(port),
         "--db", str(db_path), "--log-level", "warning"],
        stdout=log, stderr=subprocess.STDOUT, env=environment,
    )
    server = LiveServer(process, port, db_path, log_path)
    deadline = time.monotonic() + ready_timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}:\n{server.log()}")
        try:
            with urllib.request.urlopen(server.url + "/health", timeout=2) as response:
                if json.loads(response.read())["status"] == "healthy":
                    return server
        except OSError:
            time.sleep(0.2)
    server.stop(signal.SIGKILL)
    raise RuntimeError(f"server did not become healthy in {ready_timeout_s} s:\n{server.log()}")


@pytest.fixture
def server_starter():
    """``server_starter(db_path, log_path, ...)`` → a started :class:`LiveServer` (the test stops it)."""
    return start_server


@pytest.fixture(scope="session")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One real server for the tests that only need a running one (isolation, schemathesis, browser, openenv)."""
    folder = tmp_path_factory.mktemp("live_server")
    server = start_server(folder / "episodes.db", folder / "server.log")
    try:
        yield server
    finally:
        server.stop()


class _RuleActionSupervisor:
    """The plant v2 PPO supervisor driven by the constant rule action: what PPO starts from, and what the
    off-policy residual ``a = 0`` must be."""

    name = "supervised rule"

    def reset(self, context) -> None:
        from dcops.agents.cooling.ppo_v2 import SupervisorV2

        self.supervisor = SupervisorV2()
        self.supervisor.reset(context)

    def act(self, observation):
        from dcops.agents.cooling.ppo_v2 import rule_action

        return self.supervisor.setpoints(rule_action(), observation)


@pytest.fixture
def supervised_rule():
    """``supervised_rule()`` → a v2 controller: the supervisor at the rule action (``_RuleActionSupervisor``)."""
    return _RuleActionSupervisor
