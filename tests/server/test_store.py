"""The episode store: every served reset and step is recorded (config, seed, action, observation digest, reward,
info), statuses say how episodes ended, and ``dcops export`` writes the trajectories as JSONL."""

from __future__ import annotations

import json
import sqlite3

from dcops.boundary import private_seed
from dcops.cli import main as cli_main
from dcops.server.serialize import digest
from dcops.server.store import EpisodeStore

TASK = "cooling/single_zone_recovery"
ACTION = {"fan_speed": 0.8, "supply_setpoint_c": 19.0, "chw_setpoint_c": 9.0, "economiser_on": False}


def _play(client, n_steps: int, **reset) -> tuple[str, list[dict]]:
    reply = client.post("/reset", json={"task": TASK, **reset}).json()
    headers = {"X-Session-Id": reply["session_id"]}
    replies = [reply] + [client.post("/step", json={"action": ACTION}, headers=headers).json() for _ in range(n_steps)]
    return reply["metadata"]["episode_id"], replies


def test_every_step_is_recorded_with_its_action_digest_reward_and_info(client, db_path):
    episode_id, replies = _play(client, 4, seed=21, episode_id="mine-1")
    assert episode_id == "mine-1"
    store = EpisodeStore(db_path)
    (episode,) = store.episodes()
    assert (episode["episode_id"], episode["task"], episode["seed"], episode["n_steps"]) == ("mine-1", TASK, 21, 4)
    env_seed = private_seed(client.app.state.config.episode_secret, 21)
    assert episode["config"] == {"task": TASK, "options": {}, "seed": 21, "env_seed": env_seed}
    steps = store.steps(episode["uid"])
    assert [s["t"] for s in steps] == [0, 1, 2, 3, 4]
    assert [s["observation_digest"] for s in steps] == [digest(r["observation"]) for r in replies]
    assert [s["observation"] for s in steps] == [r["observation"] for r in replies]
    assert [s["reward"] for s in steps[1:]] == [r["reward"] for r in replies[1:]]
    assert all(s["action"]["setpoints"] == [0.8, 19.0, 9.0, 0.0] for s in steps[1:])
    assert steps[-1]["info"] == replies[-1]["metadata"]["info"]
    assert episode["total_reward"] == sum(r["reward"] for r in replies[1:])


def test_the_database_runs_in_wal_mode(client, db_path):
    _play(client, 1)
    assert sqlite3.connect(db_path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_statuses_say_how_each_episode_ended(client, db_path):
    reply = client.post("/reset", json={"task": TASK, "seed": 1, "n_steps": 2}).json()
    headers = {"X-Session-Id": reply["session_id"]}
    for _ in range(2):
        client.post("/step", json={"action": ACTION}, headers=headers)
    client.post("/reset", json={"seed": 2}, headers=headers)  # starts a second episode ...
    client.post("/reset", json={"seed": 3}, headers=headers)  # ... abandoned by this third one
    client.delete("/session", headers=headers)  # the third is abandoned on close
    statuses = [e["status"] for e in EpisodeStore(db_path).episodes()]
    assert statuses == ["done", "abandoned", "abandoned"]


def test_a_restarted_server_marks_what_was_running_as_interrupted(tmp_path):
    store = EpisodeStore(tmp_path / "e.db")
    store.start_episode("u1", "e1", "s1", "http", TASK, 1, {}, {"x": 1}, {})
    store.close()
    again = EpisodeStore(tmp_path / "e.db")
    assert again.episodes()[0]["status"] == "running"  # a reader changes nothing
    assert again.mark_interrupted() == 1
    assert again.episodes()[0]["status"] == "interrupted"


def test_dcops_export_writes_one_json_line_per_episode(client, db_path, tmp_path):
    _play(client, 3, seed=5)
    _play(client, 2, seed=6)
    out = tmp_path / "out" / "trajectories.jsonl"
    assert cli_main(["export", "--db", str(db_path), "--out", str(out)]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [len(t["steps"]) for t in lines] == [4, 3]
    assert [t["seed"] for t in lines] == [5, 6]
    assert lines[0]["steps"][1]["action"] == {"setpoints": [0.8, 19.0, 9.0, 0.0]}


def test_a_server_without_a_store_serves_all_the_same(client_factory):
    with client_factory(None) as c:
        reply = c.post("/reset", json={"task": TASK})
        assert reply.status_code == 200
        assert c.get("/metadata").json()["episode_store"] is False
