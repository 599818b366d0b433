"""The wire models describe what is really sent: every served cluster view validates against the typed view
(with no field left over, both game versions), every error reply against the error body, and the OpenAPI
document and /schema carry both."""

from __future__ import annotations

import pytest

from dcops.models import ClusterView, ErrorResponse

COOLING = "cooling/single_zone_recovery"


@pytest.mark.parametrize("game_version", [0, 1])
def test_every_served_cluster_view_is_a_typed_view_with_nothing_left_over(client_factory, game_version):
    with client_factory(None) as server:
        for seed in (0, 1):
            reply = server.post("/reset", json={"task": "cluster/operations", "seed": seed,
                                                "options": {"game_version": game_version}}).json()
            sid = reply["session_id"]
            views = [reply["observation"]["view"]]
            while not reply["done"]:
                action = server.get("/suggest", headers={"X-Session-Id": sid}).json()["action"]
                reply = server.post("/step", json={"action": action}, headers={"X-Session-Id": sid}).json()
                views.append(reply["observation"]["view"])
            for view in views:
                typed = ClusterView.model_validate(view)
                assert typed.window == view["window"]
            assert any(v["audits"] for v in views) and any(v["running"] for v in views)  # the lists were reached


def test_every_error_reply_is_an_error_body(client_factory):
    with client_factory(None, max_body_bytes=4096) as server:
        sid = server.post("/reset", json={"task": COOLING, "seed": 1}).json()["session_id"]
        own = {"X-Session-Id": sid}
        action = {"fan_speed": 0.6, "supply_setpoint_c": 20.0, "chw_setpoint_c": 10.0, "economiser_on": False}
        replies = [
            server.post("/step", json={"action": action}),  # 400: no session id
            server.post("/step", json={"action": action}, headers={"X-Session-Id": "nope"}),  # 404
            server.post("/step", json={"action": {**action, "fan_speed": "fast"}}, headers=own),  # 422
            server.post("/step", json={"action": action, "expected_step": 9}, headers=own),  # 409
            server.post("/reset", json={"episode_id": "x" * 10_000}),  # 413
            server.post("/reset", content=b"{}", headers={"Content-Type": "application/json", "Content-Length": "x"}),
            server.get("/episodes"),  # 403: browsing off
            server.post("/reset", json={"task": "cooling/nope"}),  # 422
        ]
        assert sorted({r.status_code for r in replies}) == [400, 403, 404, 409, 413, 422]
        for reply in replies:
            body = ErrorResponse.model_validate(reply.json())
            assert body.code and body.message


def test_the_openapi_document_and_schema_carry_the_typed_view_and_the_error_body(client):
    spec = client.get("/openapi.json").json()
    responses = spec["paths"]["/step"]["post"]["responses"]
    for status in ("400", "404", "409", "422", "503"):
        assert responses[status]["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorResponse")
    assert "STALE_STEP" in str(spec["components"]["schemas"]["ErrorResponse"])
    observation = client.get("/schema").json()["observation"]
    assert "ClusterView" in observation["$defs"]
    assert "fits_now" in observation["$defs"]["PendingRequestView"]["properties"]


def test_fastapis_own_errors_have_the_error_body_too(client):
    sid = client.post("/reset", json={"task": COOLING, "seed": 1}).json()["session_id"]
    unparsable = client.post("/step", content=b"\xff\xfe{", headers={"Content-Type": "application/json",
                                                                        "X-Session-Id": sid})
    missing = client.get("/no-such-path")
    wrong = client.put("/step")
    for reply, status in ((unparsable, 400), (missing, 404), (wrong, 405)):
        assert reply.status_code == status, reply.text
        assert ErrorResponse.model_validate(reply.json()).code in {"BAD_REQUEST", "NOT_FOUND", "METHOD_NOT_ALLOWED"}


def test_the_typed_view_refuses_a_field_it_does_not_know_even_in_an_empty_last_window(client):
    from pydantic import ValidationError

    view = client.post("/reset", json={"task": "cluster/operations", "seed": 2}).json()["observation"]["view"]
    assert view["last_window"] == {}
    ClusterView.model_validate(view)
    with pytest.raises(ValidationError):
        ClusterView.model_validate({**view, "last_window": {"window": 0, "true_priority": "HIGH"}})
    with pytest.raises(ValidationError):
        ClusterView.model_validate({**view, "team_kinds": {"team_0": "strategic"}})
