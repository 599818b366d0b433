"""A real server killed with SIGKILL mid-episode loses no step whose reply a client saw; restarted on the same
database it marks the killed episode interrupted and goes on serving (and recording)."""

from __future__ import annotations

import signal

from dcops.client import DcopsClient
from dcops.server.store import EpisodeStore

TASK = "cooling/cascading_chiller_failure"


def test_sigkill_mid_episode_loses_no_acknowledged_step(tmp_path, server_starter):
    db = tmp_path / "episodes.db"
    server = server_starter(db, tmp_path / "first.log")
    try:
        client = DcopsClient(server.url)
        client.reset(task=TASK, seed=42, episode_id="before-the-crash")
        acknowledged = []
        for k in range(12):
            action = {"fan_speed": 0.5 + 0.02 * k, "supply_setpoint_c": 20, "chw_setpoint_c": 9, "economiser_on": False}
            acknowledged.append((action, client.step(action).reward))
    finally:
        server.stop(signal.SIGKILL)
    assert server.process.returncode == -signal.SIGKILL

    store = EpisodeStore(db)
    (episode,) = store.episodes()
    steps = store.steps(episode["uid"])
    assert episode["episode_id"] == "before-the-crash" and episode["status"] == "running"
    assert [s["t"] for s in steps] == list(range(13))
    assert [s["reward"] for s in steps[1:]] == [reward for _, reward in acknowledged]
    assert steps[12]["action"]["setpoints"][0] == acknowledged[-1][0]["fan_speed"]
    store.close()

    restarted = server_starter(db, tmp_path / "second.log")
    try:
        client = DcopsClient(restarted.url)
        client.reset(task=TASK, seed=43)
        client.step(client.suggest())
    finally:
        restarted.stop()
    store = EpisodeStore(db)
    first, second = store.episodes()
    assert first["status"] == "interrupted" and first["n_steps"] == 12
    assert second["n_steps"] == 1
