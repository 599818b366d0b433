"""Checks every test gets: a test leaves nothing of its own behind in the system temp directory."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

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
