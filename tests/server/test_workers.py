"""Sessions in worker processes (``workers`` > 0) behave exactly as in the server process: same episodes, same
errors, the same store, eviction and retries; a dead worker costs its sessions, not the server."""

from __future__ import annotations

import os
import signal
import time

import pytest

from dcops.server.store import EpisodeStore

COOLING = "cooling/multi_zone_sensor_drift"
CLUSTER = "cluster/operations"
ACTION = {"fan_speed": 0.6, "supply_setpoint_c": 20.0, "chw_setpoint_c": 11.0, "economiser_on": False}


def _play(server, task: str, seed: int, steps: int) -> list[tuple]:
    reset = server.post("/reset", json={"task": task, "seed": seed})
    assert reset.status_code == 200, reset.text
    sid = reset.json()["session_id"]
    trace = [(None, reset.json()["observation"])]
    for _ in range(steps):
        action = server.get("/suggest", headers={"X-Session-Id": sid}).json()["action"]
        reply = server.post("/step", json={"action": action}, headers={"X-Session-Id": sid})
        assert reply.status_code == 200, reply.text
        trace.append((reply.json()["reward"], reply.json()["observation"]))
    return trace


def test_worker_processes_serve_the_same_episodes_as_the_server_process(tmp_path, client_factory):
    traces = {}
    for workers in (0, 2):
        with client_factory(tmp_path / f"w{workers}.db", workers=workers) as server:
            traces[workers] = [_play(server, task, seed, 3) for task, seed in ((COOLING, 4), (CLUSTER, 9))]
    assert traces[0] == traces[2]
    store = EpisodeStore(tmp_path / "w2.db")
    assert sorted(e["n_steps"] for e in store.episodes()) == [3, 3]  # both workers wrote to the one store
    store.close()


def test_errors_eviction_and_retries_cross_the_process_boundary(client_factory):
    with client_factory(None, workers=2, max_sessions=2) as server:
        first = server.post("/reset", json={"task": COOLING, "seed": 1}).json()["session_id"]
        bad = server.post("/step", json={"action": {**ACTION, "fan_speed": [1, 2]}}, headers={"X-Session-Id": first})
        assert bad.status_code == 422 and bad.json()["field"] == "action.fan_speed"
        ok = server.post("/step", json={"action": ACTION, "expected_step": 0}, headers={"X-Session-Id": first})
        again = server.post("/step", json={"action": ACTION, "expected_step": 0}, headers={"X-Session-Id": first})
        assert again.json()["metadata"]["replayed"] is True and again.json()["reward"] == ok.json()["reward"]
        stale = server.post("/step", json={"action": ACTION, "expected_step": 7}, headers={"X-Session-Id": first})
        assert stale.status_code == 409 and stale.json()["code"] == "STALE_STEP"

        assert server.post("/reset", json={"task": COOLING}).status_code == 200
        assert server.post("/reset", json={"task": COOLING}).status_code == 200  # full: `first` is evicted
        gone = server.get("/state", headers={"X-Session-Id": first})
        assert gone.status_code == 404 and gone.json()["code"] == "SESSION_EVICTED"
        failed = server.post("/reset", json={"task": "cooling/nope"})
        assert failed.status_code == 422
        summary = server.get("/sessions").json()  # a reset refused before it needed a slot evicts no one
        assert summary["open"] == 2 and summary["totals"]["evicted"] == 1


def test_a_dead_worker_costs_its_sessions_not_the_server(client_factory):
    with client_factory(None, workers=2) as server:
        sids = [server.post("/reset", json={"task": COOLING, "seed": s}).json()["session_id"] for s in range(2)]
        sessions = server.app.state.sessions
        victim = sessions._sessions[sids[0]].worker
        survivor = sessions._sessions[sids[1]].worker
        assert victim is not survivor  # the least loaded worker takes each new session
        os.kill(victim.process.pid, signal.SIGKILL)
        victim.process.join(10)
        dead = server.post("/step", json={"action": ACTION}, headers={"X-Session-Id": sids[0]})
        assert dead.status_code == 503 and dead.json()["code"] == "WORKER_GONE"
        gone = server.post("/step", json={"action": ACTION}, headers={"X-Session-Id": sids[0]})
        assert gone.status_code == 404  # the session died with its worker: its slot is free, clients recover
        assert server.post("/step", json={"action": ACTION}, headers={"X-Session-Id": sids[1]}).status_code == 200
        pool = server.app.state.pool
        fresh = server.post("/reset", json={"task": COOLING, "seed": 0}).json()["session_id"]
        replacement = sessions._sessions[fresh].worker
        # The dead worker was replaced before the new session was placed: the pool is back to two live processes,
        # and the new session went to the fresh (empty) one, which serves the same episode the dead one did.
        assert replacement is not victim and replacement is not survivor and replacement.process.is_alive()
        assert victim not in pool.workers and len(pool.workers) == 2
        assert server.post("/step", json={"action": ACTION}, headers={"X-Session-Id": fresh}).status_code == 200
        health = server.get("/health").json()
        assert health["status"] == "healthy"
        assert health["workers"] == {"configured": 2, "alive": 2, "replaced": 1}


def test_health_replaces_a_worker_that_died_with_no_session_on_it(client_factory):
    with client_factory(None, workers=2) as server:
        pool = server.app.state.pool
        victim = pool.workers[0]
        os.kill(victim.process.pid, signal.SIGKILL)
        victim.process.join(10)
        deadline = time.monotonic() + 10
        while victim.alive and time.monotonic() < deadline:  # the reader thread sees the pipe close
            time.sleep(0.01)
        assert server.get("/health").json()["workers"] == {"configured": 2, "alive": 2, "replaced": 1}
        assert pool.workers[0] is not victim and pool.workers[0].process.is_alive()


@pytest.mark.parametrize("workers", [-1])
def test_a_negative_worker_count_is_refused(workers):
    from dcops.server.workers import WorkerPool

    with pytest.raises(ValueError, match="workers"):
        WorkerPool(workers, None, "NORMAL", True, COOLING, b"k")


def test_websocket_frames_from_a_worker_are_the_frames_of_the_server_process(client_factory):
    frames = {}
    for workers in (0, 1):
        with client_factory(None, workers=workers) as server, server.websocket_connect("/ws") as ws:
            ws.send_json({"type": "reset", "data": {"task": COOLING, "seed": 8}})
            got = [ws.receive_json()]
            ws.send_json({"type": "step", "data": ACTION})
            got.append(ws.receive_json())
            ws.send_json({"type": "state"})
            got.append(ws.receive_json())
            random_ids = {"session_id", "episode_id"}  # drawn per session and episode
            frames[workers] = [(f["type"], {k: v for k, v in f["data"].items() if k not in random_ids})
                               for f in got]
            for _, data in frames[workers]:
                for key in random_ids:
                    data.get("metadata", {}).pop(key, None)
    assert [kind for kind, _ in frames[1]] == ["observation", "observation", "state"]
    assert frames[0] == frames[1]


def test_ray_actors_serve_the_same_episodes_and_a_killed_actor_costs_only_its_sessions(tmp_path, client_factory,
                                                                                     ray_tmpdir):
    """The multi-machine deployment: the workers are Ray actors (here on a private local Ray instance; on a
    cluster, ``--ray-address auto`` spreads them over its machines); the server routes by session as before."""
    ray = pytest.importorskip("ray")
    assert not ray.is_initialized()
    with client_factory(None, workers=0) as server:
        expected = _play(server, COOLING, 4, 3)
    with client_factory(tmp_path / "ray.db", workers=2, ray_address="local") as server:
        assert ray.is_initialized()
        assert _play(server, COOLING, 4, 3) == expected
        sids = [server.post("/reset", json={"task": COOLING, "seed": s}).json()["session_id"] for s in range(2)]
        sessions = server.app.state.sessions
        victim, survivor = (sessions._sessions[sid].worker for sid in sids)
        assert victim is not survivor
        ray.kill(victim.actor)
        dead = server.post("/step", json={"action": ACTION}, headers={"X-Session-Id": sids[0]})
        assert dead.status_code == 503 and dead.json()["code"] == "WORKER_GONE"
        assert server.post("/step", json={"action": ACTION}, headers={"X-Session-Id": sids[1]}).status_code == 200
    assert not ray.is_initialized()  # the server shut down the Ray instance it started
    store = EpisodeStore(tmp_path / "ray.db")
    assert len(store.episodes()) == 3  # the actors wrote to the one store (one machine here)
    store.close()


def test_ray_workers_need_a_worker_count():
    from dcops.server.app import create_app
    from dcops.server.config import ServerConfig

    with pytest.raises(ValueError, match="workers"):
        create_app(ServerConfig(db_path=None, ray_address="local", workers=0))
    ServerConfig(db_path=None, ray_address="auto", workers=0)  # the command line may still set --workers
