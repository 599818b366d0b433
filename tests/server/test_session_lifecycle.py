"""Sessions under real use: a loop of resets never locks anyone out, finished sessions go first, evicted and
restarted sessions cost a client one warning, and a retried step is not applied twice."""

from __future__ import annotations

import signal

import pytest

from dcops.client import DcopsClient, SessionLostWarning

TASK = "cooling/single_zone_recovery"
ACTION = {"fan_speed": 0.6, "supply_setpoint_c": 20.0, "chw_setpoint_c": 10.0, "economiser_on": False}


def _reset(client, n_steps: int = 12, sid: str | None = None):
    headers = {"X-Session-Id": sid} if sid else {}
    reply = client.post("/reset", json={"task": TASK, "seed": 3, "options": {"n_steps": n_steps}}, headers=headers)
    assert reply.status_code == 200, reply.text
    return reply.json()["session_id"]


def _step(client, sid: str, expected_step: int | None = None, fan: float = 0.6):
    body = {"action": {**ACTION, "fan_speed": fan}}
    if expected_step is not None:
        body["expected_step"] = expected_step
    return client.post("/step", json=body, headers={"X-Session-Id": sid})


def test_a_thousand_resets_without_closing_never_get_503(client_factory):
    with client_factory(None, max_sessions=8) as server:
        codes = [server.post("/reset", json={"task": TASK, "options": {"n_steps": 4}}).status_code
                 for _ in range(1000)]
        assert codes == [200] * 1000
        summary = server.get("/sessions").json()
        assert summary["open"] == summary["capacity"] == 8
        assert summary["totals"]["created"] == 1000 and summary["totals"]["evicted"] == 992
        assert summary["totals"]["refused"] == 0
        assert server.get("/health").json()["status"] == "healthy"  # full, but a new session still gets a slot


def test_finished_sessions_are_evicted_before_running_ones_and_their_owner_is_told(client_factory):
    with client_factory(None, max_sessions=2) as server:
        running = _reset(server)
        finished = _reset(server, n_steps=1)
        assert _step(server, finished).json()["done"] is True
        assert _step(server, running).status_code == 200  # the running one is now the most recently used too
        summary = server.get("/sessions").json()
        assert (summary["running"], summary["finished"], summary["evictable"]) == (1, 1, 2)

        newcomer = _reset(server)  # full: the finished session goes, although it was not the least recent
        gone = _step(server, finished)
        assert gone.status_code == 404 and gone.json()["code"] == "SESSION_EVICTED"
        assert _step(server, running).status_code == 200

        _reset(server)  # full again, nothing finished: the least recently used running session goes
        assert _step(server, newcomer).json()["code"] == "SESSION_EVICTED"
        assert _step(server, running).status_code == 200
        assert server.get("/sessions").json()["totals"]["evicted"] == 2


def test_a_null_reset_body_plays_the_default_task(client_factory):
    with client_factory(None) as server:
        reply = server.post("/reset", content=b"null", headers={"Content-Type": "application/json"})
        assert reply.status_code == 200 and reply.json()["metadata"]["task"] == "cluster/operations"


def test_a_finished_session_is_reused_by_its_client(client_factory):
    with client_factory(None, max_sessions=1) as server:
        sid = _reset(server, n_steps=1)
        assert _step(server, sid).json()["done"] is True
        assert _reset(server, sid=sid) == sid
        assert _step(server, sid).status_code == 200
        assert server.get("/sessions").json()["totals"]["created"] == 1


def test_a_retried_step_gets_the_same_reply_and_a_stale_one_is_refused(client_factory):
    with client_factory(None) as server:
        sid = _reset(server)
        first = _step(server, sid, expected_step=0)
        assert first.status_code == 200 and first.json()["metadata"]["step"] == 1
        again = _step(server, sid, expected_step=0)  # the reply was lost: the client sends the same step again
        assert again.status_code == 200 and again.json()["metadata"]["replayed"] is True
        assert again.json()["reward"] == first.json()["reward"]
        assert again.json()["observation"] == first.json()["observation"]
        assert server.get("/state", headers={"X-Session-Id": sid}).json()["step_count"] == 1

        other = _step(server, sid, expected_step=0, fan=0.9)  # a different action at a stale step: refused
        assert other.status_code == 409 and other.json()["code"] == "STALE_STEP"
        assert other.json()["field"] == "expected_step"
        ahead = _step(server, sid, expected_step=5)
        assert ahead.status_code == 409 and ahead.json()["code"] == "STALE_STEP"
        assert _step(server, sid, expected_step=1).json()["metadata"]["step"] == 2
        assert _step(server, sid).json()["metadata"]["step"] == 3  # without the guard: plain steps


def test_a_websocket_step_may_carry_expected_step(client_factory):
    with client_factory(None) as server, server.websocket_connect("/ws") as ws:
        ws.send_json({"type": "reset", "data": {"task": TASK, "seed": 1, "options": {"n_steps": 4}}})
        assert ws.receive_json()["type"] == "observation"
        ws.send_json({"type": "step", "data": {"action": ACTION, "expected_step": 0}})
        first = ws.receive_json()["data"]
        ws.send_json({"type": "step", "data": {"action": ACTION, "expected_step": 0}})
        again = ws.receive_json()["data"]
        assert again["metadata"]["replayed"] is True and again["reward"] == first["reward"]
        ws.send_json({"type": "step", "data": {"action": ACTION, "expected_step": -1}})
        assert ws.receive_json()["data"]["field"] == "expected_step"


def test_an_evicted_client_gets_one_warning_per_loss_and_goes_on(tmp_path, server_starter):
    server = server_starter(tmp_path / "episodes.db", tmp_path / "server.log", env={"DCOPS_MAX_SESSIONS": "1"})
    try:
        mine, other = DcopsClient(server.url), DcopsClient(server.url)
        mine.reset(task=TASK, seed=1, n_steps=6)
        last = mine.step(mine.suggest())
        other.reset(task=TASK, seed=2, n_steps=6)  # the server is full: my idle session makes room
        with pytest.warns(SessionLostWarning, match="SESSION_EVICTED"):
            cut = mine.step(ACTION)
        assert cut.done is True and cut.reward == 0.0 and cut.metadata["session_lost"] == "SESSION_EVICTED"
        assert cut.observation == last.observation
        restarted = mine.reset(task=TASK, seed=1, n_steps=6)  # no session id left: no warning, a new session
        assert restarted.done is False and mine.step(mine.suggest()).metadata["step"] == 1
    finally:
        server.stop()


def test_a_server_restart_mid_episode_costs_the_client_one_warning(tmp_path, server_starter):
    db = tmp_path / "episodes.db"
    server = server_starter(db, tmp_path / "first.log")
    client = DcopsClient(server.url)
    client.reset(task=TASK, seed=5, n_steps=6)
    client.step(client.suggest())
    server.stop(signal.SIGKILL)
    restarted = server_starter(db, tmp_path / "second.log", port=server.port)
    try:
        with pytest.warns(SessionLostWarning) as caught:
            cut = client.step(ACTION)
            assert cut.done is True and cut.metadata["session_lost"] == "SESSION_NOT_FOUND"
            fresh = client.reset(task=TASK, seed=5, n_steps=6)
        assert len(caught) == 1 and fresh.done is False
        assert client.step(client.suggest()).metadata["step"] == 1
    finally:
        restarted.stop()


def test_reset_on_a_session_the_server_lost_opens_a_new_one_with_a_warning(tmp_path, server_starter):
    db = tmp_path / "episodes.db"
    server = server_starter(db, tmp_path / "first.log")
    client = DcopsClient(server.url)
    client.reset(task=TASK, seed=5, n_steps=6)
    old = client.session_id
    server.stop(signal.SIGKILL)
    restarted = server_starter(db, tmp_path / "second.log", port=server.port)
    try:
        with pytest.warns(SessionLostWarning, match="opening a new one"):
            client.reset(task=TASK, seed=6, n_steps=6)
        assert client.session_id not in (None, old)
        with DcopsClient(server.url, recover=False) as strict:
            strict.reset(task=TASK, seed=6, n_steps=6)
            strict.session_id = old
            with pytest.raises(Exception, match="SESSION_NOT_FOUND"):
                strict.step(ACTION)
    finally:
        restarted.stop()


def test_an_out_of_range_set_point_is_applied_clipped_and_the_reply_says_so(client_factory):
    with client_factory(None) as server:
        sid = _reset(server)
        reply = _step(server, sid, fan=1.5).json()
        echo = reply["metadata"]["action"]
        assert echo["clipped"] == [{"field": "fan_speed[hall]", "given": 1.5, "applied": 1.0}]
        assert echo["setpoints"][0] == 1.0
        assert "clipped" not in _step(server, sid, fan=0.5).json()["metadata"]["action"]


def test_the_scorecard_comes_after_the_episode_with_the_baseline_on_the_same_episode(client_factory):
    with client_factory(None) as server:
        reply = server.post("/reset", json={"task": "cluster/operations", "seed": 4, "options": {"n_windows": 3}})
        sid = reply.json()["session_id"]
        own = {"X-Session-Id": sid}
        early = server.get("/scorecard", headers=own)
        assert early.status_code == 409 and early.json()["code"] == "EPISODE_RUNNING"
        done = False
        while not done:  # the baseline itself plays: its scorecard must show a difference of exactly zero
            action = server.get("/suggest", headers=own).json()["action"]
            done = server.post("/step", json={"action": action}, headers=own).json()["done"]
        card = server.get("/scorecard", headers=own).json()
        assert card["score_minus_baseline"] == 0.0 and card["baseline_score"] == card["score"]
        assert 0.0 < card["fraction_of_bound"] <= 1.0 + 1e-9
        assert "env_seed" not in card
        server.post("/reset", json={"task": "cluster/operations", "seed": 4, "options": {"n_windows": 3}},
                    headers=own)
        done = False
        while not done:  # rejecting everything scores below the baseline on the same episode
            pending = server.get("/state", headers=own).json()["observation"]["view"]["pending"]
            decisions = [{"request_id": r["request_id"], "decision": "REJECT"} for r in pending]
            done = server.post("/step", json={"action": {"decisions": decisions}}, headers=own).json()["done"]
        rejecting = server.get("/scorecard", headers=own).json()
        assert rejecting["score_minus_baseline"] < 0.0 and rejecting["baseline_score"] == card["baseline_score"]


def test_a_step_whose_reply_is_lost_is_retried_and_played_once(tmp_path, server_starter, monkeypatch):
    import urllib.request

    server = server_starter(tmp_path / "episodes.db", tmp_path / "server.log")
    try:
        client = DcopsClient(server.url)
        client.reset(task=TASK, seed=2, n_steps=6)
        real = urllib.request.urlopen
        lost = []

        def lose_the_first_step_reply(request, *args, **kwargs):
            response = real(request, *args, **kwargs)  # the server has played the step...
            if request.full_url.endswith("/step") and not lost:
                lost.append(response.read())
                raise ConnectionResetError("the reply was lost on the way back")  # ...but the client never hears
            return response

        monkeypatch.setattr(urllib.request, "urlopen", lose_the_first_step_reply)
        result = client.step(ACTION)
        assert lost and result.metadata["step"] == 1 and result.metadata.get("replayed") is True
        assert client.state().step_count == 1  # played once, not twice
        assert client.step(ACTION).metadata["step"] == 2
    finally:
        server.stop()
