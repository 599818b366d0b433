"""Shared fixtures of the LLM scheduler tests: real public views of the environment, the tiny model."""

from __future__ import annotations

from typing import Any

import pytest


def env_views(seed: int, windows: int) -> list[dict[str, Any]]:
    """The scheduler's public views of the first ``windows`` windows of an episode played by a baseline."""
    import dcops
    from dcops.agents.schedulers import PriorityThresholdScheduler

    env = dcops.parallel_env()
    _, infos = env.reset(seed=seed)
    scheduler = PriorityThresholdScheduler()
    views = []
    for _ in range(windows):
        view = infos["scheduler"]["view"]
        views.append(view)
        _, _, _, _, infos = env.step({"scheduler": scheduler.decide(view)})
    return views


@pytest.fixture(scope="session")
def view() -> dict[str, Any]:
    """Window 2 of seed 0: pending requests, queued and running jobs, flags and audits all present."""
    return env_views(0, 3)[2]


@pytest.fixture(scope="session")
def tiny() -> tuple[Any, Any]:
    """The tiny random Gemma-family model and the real Gemma tokenizer (no download)."""
    from dcops.agents.llm.model import tiny_model

    return tiny_model(seed=0)
