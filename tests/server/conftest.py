"""Fixtures of the server tests: an in-process app (FastAPI TestClient); real server processes on loopback are
the root conftest's (``server_starter``, ``live_server``).

Every server here writes its episode store under pytest's temporary directory, never in the user's data dir.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from dcops.server.app import create_app
from dcops.server.config import ServerConfig


def make_client(db_path: Path | None, secret: bytes, **overrides) -> TestClient:
    """A TestClient over a fresh app (use it as a context manager so that the lifespan runs), with the tests'
    operator secret unless ``episode_secret`` is given: a test's episodes must not change from run to run."""
    overrides.setdefault("episode_secret", secret)
    return TestClient(create_app(ServerConfig(db_path=db_path, **overrides)))


@pytest.fixture
def client_factory(operator_secret: bytes):
    """``client_factory(db_path, **config overrides)`` → a TestClient over a fresh app."""
    return functools.partial(make_client, secret=operator_secret)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "episodes.db"


@pytest.fixture
def client(db_path: Path, operator_secret: bytes) -> Iterator[TestClient]:
    with make_client(db_path, operator_secret) as test_client:
        yield test_client


