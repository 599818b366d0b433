"""Fixtures of the server tests: an in-process app (FastAPI TestClient) and real uvicorn processes on loopback.

Every server here writes its episode store under pytest's temporary directory, never in the user's data dir.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from dcops.boundary import private_seed, secret_from_text
from dcops.server.app import create_app
from dcops.server.config import ServerConfig

LIVE_SERVER_SECRET = "the tests' operator secret"
"""``DCOPS_EPISODE_SECRET`` of every real server process here, so that a test can replay a served episode as
its operator would (:meth:`LiveServer.env_seed`)."""


def make_client(db_path: Path | None, **overrides) -> TestClient:
    """A TestClient over a fresh app (use it as a context manager so that the lifespan runs), with the tests'
    operator secret unless ``episode_secret`` is given: a test's episodes must not change from run to run."""
    overrides.setdefault("episode_secret", secret_from_text(LIVE_SERVER_SECRET))
    return TestClient(create_app(ServerConfig(db_path=db_path, **overrides)))


@pytest.fixture
def client_factory():
    """``client_factory(db_path, **config overrides)`` → a TestClient over a fresh app."""
    return make_client


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "episodes.db"


@pytest.fixture
def client(db_path: Path) -> Iterator[TestClient]:
    with make_client(db_path) as test_client:
        yield test_client


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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
