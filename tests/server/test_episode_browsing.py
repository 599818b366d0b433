"""Stored episodes for the operator: listed, filtered, paged and read back step by step with the operator's
token only, never with a session id or a private seed in them; pruned by age and size, running ones kept."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from dcops.server.store import EpisodeStore

TASK = "cooling/single_zone_recovery"
ACTION = {"fan_speed": 0.6, "supply_setpoint_c": 20.0, "chw_setpoint_c": 10.0, "economiser_on": False}
TOKEN = {"X-Operator-Token": "let-me-in"}


def _episode(server, seed: int, steps: int, n_steps: int = 3) -> str:
    reply = server.post("/reset", json={"task": TASK, "seed": seed, "options": {"n_steps": n_steps}})
    sid = reply.json()["session_id"]
    for _ in range(steps):
        assert server.post("/step", json={"action": ACTION}, headers={"X-Session-Id": sid}).status_code == 200
    return sid


def test_browsing_needs_the_operator_token_and_is_off_without_one(db_path, client_factory):
    with client_factory(db_path) as server:
        _episode(server, 1, 1)
        off = server.get("/episodes", headers=TOKEN)
        assert off.status_code == 403 and off.json()["code"] == "BROWSING_OFF"
    with client_factory(db_path, operator_token="let-me-in") as server:
        assert server.get("/episodes").status_code == 403
        wrong = server.get("/episodes", headers={"X-Operator-Token": "let-me-inn"})
        assert wrong.status_code == 403 and wrong.json()["field"] == "X-Operator-Token"
        assert server.get("/episodes", headers=TOKEN).status_code == 200


def test_episodes_are_listed_filtered_paged_and_replayed_without_credentials(db_path, client_factory):
    with client_factory(db_path, operator_token="let-me-in") as server:
        start = time.time()
        sids = [_episode(server, seed, steps) for seed, steps in ((1, 3), (2, 1), (3, 2))]
        listed = server.get("/episodes", headers=TOKEN).json()
        assert [e["seed"] for e in listed["episodes"]] == [1, 2, 3] and listed["next_offset"] is None
        assert [e["status"] for e in listed["episodes"]] == ["done", "running", "running"]
        text = json.dumps(listed)
        assert not any(sid in text for sid in sids) and "env_seed" not in text and "session_id" not in text

        newest = server.get("/episodes", params={"order": "desc", "limit": 2}, headers=TOKEN).json()
        assert [e["seed"] for e in newest["episodes"]] == [3, 2] and newest["next_offset"] == 2
        done = server.get("/episodes", params={"status": "done"}, headers=TOKEN).json()["episodes"]
        assert [e["seed"] for e in done] == [1]
        page = server.get("/episodes", params={"limit": 2}, headers=TOKEN).json()
        assert [e["seed"] for e in page["episodes"]] == [1, 2] and page["next_offset"] == 2
        rest = server.get("/episodes", params={"limit": 2, "offset": 2}, headers=TOKEN).json()
        assert [e["seed"] for e in rest["episodes"]] == [3] and rest["next_offset"] is None
        later = server.get("/episodes", params={"since": time.time() + 60}, headers=TOKEN).json()
        assert later["episodes"] == []
        assert len(server.get("/episodes", params={"since": start - 1}, headers=TOKEN).json()["episodes"]) == 3

        uid = listed["episodes"][0]["uid"]
        first = server.get(f"/episodes/{uid}", params={"limit": 2}, headers=TOKEN).json()
        assert [s["t"] for s in first["steps"]] == [0, 1] and first["next_offset"] == 2
        second = server.get(f"/episodes/{uid}", params={"offset": 2, "limit": 2}, headers=TOKEN).json()
        assert [s["t"] for s in second["steps"]] == [2, 3] and second["next_offset"] is None
        assert second["steps"][-1]["done"] is True and second["steps"][0]["action"] is not None
        assert server.get("/episodes/nope", headers=TOKEN).json()["code"] == "EPISODE_NOT_FOUND"


def test_prune_deletes_old_ended_episodes_and_keeps_running_ones(db_path, client_factory):
    with client_factory(db_path) as server:
        for seed in range(3):
            _episode(server, seed, 3)  # done
        _episode(server, 9, 1)  # abandoned when the server stops
    store = EpisodeStore(db_path)
    try:
        store.start_episode("live", "live", "s", "http", TASK, 5, {"task": TASK}, {"x": 1}, {})  # still running
        assert sorted(e["status"] for e in store.episodes()) == ["abandoned", "done", "done", "done", "running"]
        assert store.prune(keep_days=1.0)["deleted_episodes"] == 0  # nothing is a day old yet
        result = store.prune(keep_days=1.0, now=time.time() + 2 * 86400.0)
        assert result["deleted_episodes"] == 4 and [e["uid"] for e in store.episodes()] == ["live"]
        assert store.steps("live") and result["bytes_after"] <= result["bytes_before"]
    finally:
        store.close()


def test_prune_by_size_deletes_the_oldest_first(db_path, client_factory):
    with client_factory(db_path) as server:
        for seed in range(4):
            _episode(server, seed, 3)
    store = EpisodeStore(db_path)
    try:
        one = sum(len(json.dumps(s["observation"])) for s in store.steps(store.episodes()[0]["uid"]))
        result = store.prune(max_bytes=int(2.5 * one))
        assert result["deleted_episodes"] >= 2
        assert [e["seed"] for e in store.episodes()] == list(range(4))[result["deleted_episodes"]:]
    finally:
        store.close()


def test_the_prune_command_names_what_is_missing(tmp_path):
    out = subprocess.run([sys.executable, "-m", "dcops.cli", "store", "prune", "--db", str(tmp_path / "x.db")],
                         capture_output=True, text=True)
    assert out.returncode != 0 and "--keep-days" in out.stderr
