"""Bad input and limits: 422 naming the field, 404/400 for sessions, 413, 503 at capacity, error frames, expiry.
The episode always stays usable after an error."""

from __future__ import annotations

import pytest

COOLING = "cooling/multi_zone_sensor_drift"
GOOD = {"fan_speed": [0.6, 0.6, 0.6], "supply_setpoint_c": 21, "chw_setpoint_c": 12, "economiser_on": True}


@pytest.fixture
def cooling(client):
    return {"X-Session-Id": client.post("/reset", json={"task": COOLING, "seed": 0}).json()["session_id"]}


@pytest.mark.parametrize(
    ("action", "field"),
    [
        ({**GOOD, "fan_speed": [0.6, 0.6]}, "action.fan_speed"),
        ({**GOOD, "fan_speed": "fast"}, "action.fan_speed"),
        ({k: v for k, v in GOOD.items() if k != "chw_setpoint_c"}, "action.chw_setpoint_c"),
        ({**GOOD, "economiser_on": "yes"}, "action.economiser_on"),
        ({**GOOD, "valve": 3}, "action.valve"),
        ({"setpoints": [0.5, 20, 10]}, "action.setpoints"),
        ({"setpoints": [0.5] * 8, "fan_speed": 0.5}, "action"),
    ],
)
def test_a_malformed_cooling_action_is_422_naming_the_field_and_the_episode_goes_on(client, cooling, action, field):
    reply = client.post("/step", json={"action": action}, headers=cooling)
    assert reply.status_code == 422, reply.text
    body = reply.json()
    assert body["field"] == field and body["code"] == "VALIDATION_ERROR"
    assert field.split(".")[-1] in body["message"]
    good = client.post("/step", json={"action": GOOD}, headers=cooling)
    assert good.status_code == 200
    assert client.get("/state", headers=cooling).json()["step_count"] == 1


def test_a_non_finite_set_point_is_422_not_500(client, cooling):
    body = b'{"action": {"setpoints": [0.5, 0.5, 0.5, 20, 20, 20, NaN, 1]}}'
    reply = client.post("/step", content=body, headers={**cooling, "Content-Type": "application/json"})
    assert reply.status_code == 422 and "setpoints" in reply.json()["field"]
    body = b'{"action": {"fan_speed": Infinity, "supply_setpoint_c": 20, "chw_setpoint_c": 10, "economiser_on": true}}'
    reply = client.post("/step", content=body, headers={**cooling, "Content-Type": "application/json"})
    assert reply.status_code == 422 and reply.json()["field"] == "action.fan_speed"


def test_placement_actions_are_validated_but_impossible_placements_are_the_games_invalid_actions(client):
    headers = {"X-Session-Id": client.post("/reset", json={"task": "placement/deadline_crunch"}).json()["session_id"]}
    missing_type = client.post("/step", json={"action": {"job_id": "J1", "gpu_id": "h100-0"}}, headers=headers)
    assert missing_type.status_code == 422 and missing_type.json()["field"] == "action.type"
    out_of_space = client.post("/step", json={"action": {"type": "index", "index": 10_000}}, headers=headers)
    assert out_of_space.status_code == 422 and out_of_space.json()["field"] == "action.index"
    unknown_job = client.post("/step", json={"action": {"type": "place", "job_id": "J99", "gpu_id": "h100-0"}},
                              headers=headers)
    assert unknown_job.status_code == 200  # the environment penalises it, as in-process
    assert unknown_job.json()["metadata"]["info"]["invalid_reason"]
    assert unknown_job.json()["reward"] < 0


def test_cluster_decisions_are_validated_but_unknown_ids_are_the_games_invalid_decisions(client):
    reset = client.post("/reset", json={"task": "cluster/operations", "seed": 2, "n_windows": 3})
    headers = {"X-Session-Id": reset.json()["session_id"]}
    bad = client.post("/step", json={"action": {"decisions": [{"request_id": "r0001", "decision": "MAYBE"}]}},
                      headers=headers)
    assert bad.status_code == 422 and bad.json()["field"].startswith("action.decisions.0.decision")
    both = client.post("/step", json={"action": {"decisions": [], "codes": [0]}}, headers=headers)
    assert both.status_code == 422
    unknown = client.post("/step", json={"action": {"decisions": [{"request_id": "nope", "decision": "ACCEPT"}]}},
                          headers=headers)
    assert unknown.status_code == 200  # counted and penalised by the environment, as in-process
    assert unknown.json()["metadata"]["info"]["invalid"]["unknown_ids"] == ["nope"]


@pytest.mark.parametrize("slot", ["first", True, 1.5, None])
def test_a_queue_slot_must_be_an_integer(client, slot):
    headers = {"X-Session-Id": client.post("/reset", json={"task": "queue/weighted_tardiness", "n_jobs": 10}).json()["session_id"]}
    reply = client.post("/step", json={"action": {"slot": slot}}, headers=headers)
    assert reply.status_code == 422 and reply.json()["field"] == "action.slot"


def test_unknown_sessions_are_404_and_missing_ones_400(client):
    unknown = client.post("/step", json={"action": GOOD}, headers={"X-Session-Id": "nope"})
    assert unknown.status_code == 404 and unknown.json()["code"] == "SESSION_NOT_FOUND"
    assert client.get("/state", params={"session_id": "nope"}).status_code == 404
    assert client.post("/reset", json={}, headers={"X-Session-Id": "nope"}).status_code == 404
    assert client.post("/step", json={"action": GOOD}).status_code == 400


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"task": "cooling/no_such_task"}, "task"),
        ({"task": COOLING, "n_steps": 0}, "options.n_steps"),
        ({"task": COOLING, "climate": "mars"}, "options.climate"),
        ({"task": COOLING, "options": {"turbo": True}}, "options.turbo"),
        ({"task": "queue/weighted_tardiness", "n_jobs": 10**9}, "options.n_jobs"),
        ({"seed": -1}, "seed"),
        ({"seed": "abc"}, "seed"),
    ],
)
def test_bad_reset_requests_are_422_naming_the_field(client, body, field):
    reply = client.post("/reset", json=body)
    assert reply.status_code == 422, reply.text
    assert reply.json()["field"] == field


def test_a_body_that_is_not_json_is_422(client, cooling):
    reply = client.post("/step", content=b"{not json", headers={**cooling, "Content-Type": "application/json"})
    assert reply.status_code == 422


def test_an_oversized_body_is_413(db_path, client_factory):
    with client_factory(db_path, max_body_bytes=4096) as small:
        reply = small.post("/reset", json={"episode_id": "x" * 10_000})
        assert reply.status_code == 413 and reply.json()["code"] == "PAYLOAD_TOO_LARGE"
        assert small.post("/reset", json={}).status_code == 200


def test_past_the_session_limit_websocket_gets_one_capacity_frame_and_http_503_when_nothing_is_evictable(
        db_path, client_factory):
    with client_factory(db_path, max_sessions=2) as small:
        with small.websocket_connect("/ws") as first, small.websocket_connect("/ws") as second:
            first.send_json({"type": "state"})
            second.send_json({"type": "state"})
            assert first.receive_json()["type"] == second.receive_json()["type"] == "state"
            full = small.post("/reset", json={})
            assert full.status_code == 503 and full.json()["code"] == "CAPACITY_REACHED"
            assert small.get("/health").json()["status"] == "degraded"
            assert small.get("/sessions").json()["websocket"] == 2
            with small.websocket_connect("/ws") as third:
                frame = third.receive_json()
                assert frame == {"type": "error", "data": {"message": frame["data"]["message"],
                                                           "code": "CAPACITY_REACHED", "field": None}}
        assert small.post("/reset", json={}).status_code == 200


def test_idle_sessions_expire(db_path):
    now = [0.0]
    from fastapi.testclient import TestClient

    from dcops.server.app import create_app
    from dcops.server.config import ServerConfig

    app = create_app(ServerConfig(db_path=db_path, session_idle_s=60.0), clock=lambda: now[0])
    with TestClient(app) as c:
        headers = {"X-Session-Id": c.post("/reset", json={}).json()["session_id"]}
        now[0] = 59.0
        assert c.get("/state", headers=headers).status_code == 200  # touching renews it
        now[0] = 59.0 + 61.0
        assert c.get("/state", headers=headers).status_code == 404
        assert c.get("/health").json()["sessions"] == 0


def test_websocket_errors_are_frames_and_the_session_survives_them(client):
    with client.websocket_connect("/ws") as ws:
        ws.send_text("{oops")
        assert ws.receive_json()["data"]["code"] == "INVALID_JSON"
        ws.send_json({"type": "dance"})
        assert ws.receive_json()["data"]["code"] == "UNKNOWN_TYPE"
        ws.send_json({"type": "step", "data": GOOD})
        assert ws.receive_json()["data"]["code"] == "NOT_RESET"
        ws.send_json({"type": "reset", "data": {"task": COOLING, "seed": 1}})
        assert ws.receive_json()["type"] == "observation"
        ws.send_json({"type": "step", "data": {**GOOD, "fan_speed": [1, 1]}})
        error = ws.receive_json()
        assert error["type"] == "error" and error["data"]["field"] == "action.fan_speed"
        ws.send_json({"type": "step", "data": {"action": GOOD}})  # the {"action": ...} form works too
        assert ws.receive_json()["data"]["metadata"]["step"] == 1
        ws.send_json({"type": "reset", "data": {"seed": -5}})
        assert ws.receive_json()["data"]["field"] == "seed"
        ws.send_json({"type": "state"})
        state = ws.receive_json()
        assert state["type"] == "state" and state["data"]["step_count"] == 1


def test_an_oversized_websocket_frame_is_an_error_frame(db_path, client_factory):
    with client_factory(db_path, max_body_bytes=2048) as small, small.websocket_connect("/ws") as ws:
        ws.send_text('{"type": "reset", "data": {"episode_id": "' + "x" * 5000 + '"}}')
        assert ws.receive_json()["data"]["code"] == "PAYLOAD_TOO_LARGE"
        ws.send_json({"type": "reset", "data": {}})
        assert ws.receive_json()["type"] == "observation"


@pytest.mark.parametrize(
    ("options", "field"),
    [({"scenario": "nope"}, "options.scenario"), ({"catalogue": "nope"}, "options.catalogue"),
     ({"workload": "nope"}, "options.workload")],
)
def test_unknown_cluster_scenario_workload_or_catalogue_is_422_naming_the_option(client, options, field):
    reply = client.post("/reset", json={"task": "cluster/operations", "options": options})
    assert reply.status_code == 422, reply.text
    assert reply.json()["field"] == field


def test_a_catalogue_its_game_version_cannot_judge_is_422_naming_it_and_the_server_goes_on(client):
    reply = client.post("/reset", json={"task": "cluster/operations",
                                        "options": {"catalogue": "triage", "game_version": 0, "n_windows": 2}})
    assert reply.status_code == 422, reply.text
    assert reply.json()["field"] == "options" and "catalogue: 'triage' needs game_version 1" in reply.json()["message"]
    served = client.post("/reset", json={"task": "cluster/operations", "seed": 3,
                                         "options": {"scenario": "adversarial", "catalogue": "triage",
                                                     "n_windows": 2, "cooling": "rule"}})
    assert served.status_code == 200, served.text
    view = served.json()["observation"]["view"]
    assert view["catalogue"] == "triage" and len(view["teams"]) == 7  # the adversarial family's seven teams
    client.delete("/session", headers={"X-Session-Id": served.json()["session_id"]})
