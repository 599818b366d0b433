"""Guards of the server's request handling that a weaker test suite let slip (issue #30): a failed reset frees its
session, a body too large is refused however it is framed, a Content-Length that is not a byte count is a clear
400, and an option given twice in a reset is a 422 naming it. Then what mutation testing of ``server/app.py`` found
untested: Ray workers need worker processes, the scorecard route, the episode pages' limits, MCP's
``expected_step`` and a refused MCP reset, and what ``dcops serve`` hands the app.

Framing tests call the app as an ASGI server would (one ``http.request`` message per chunk), so what reaches the
middleware is exactly what the test sends, whatever an HTTP client would add or refuse.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from dcops.boundary import secret_from_text
from dcops.server.app import create_app
from dcops.server.config import ServerConfig

COOLING = "cooling/single_zone_recovery"
GOOD_RESET = json.dumps({"task": COOLING, "seed": 1}).encode()


def app_with(**overrides: Any) -> Any:
    return create_app(ServerConfig(db_path=None, episode_secret=secret_from_text("mutation guards"), **overrides))


def asgi_post(app: Any, path: str, chunks: list[bytes], headers: list[tuple[str, str]]) -> tuple[int, dict[str, Any]]:
    """POST ``chunks`` (one ASGI message each, ``more_body`` on all but the last) with exactly ``headers``;
    returns the status and the JSON body of the response."""
    messages = [{"type": "http.request", "body": c, "more_body": i < len(chunks) - 1} for i, c in enumerate(chunks)]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
             "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers],
             "client": ("127.0.0.1", 50000), "server": ("testserver", 80)}
    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], json.loads(body)


def open_sessions(app: Any) -> int:
    return len(app.state.sessions)


# ---------------------------------------------------------------------------------------------- failed resets
@pytest.mark.parametrize(
    "bad_reset",
    [
        {"task": "cooling/no_such_task"},
        {"task": COOLING, "n_steps": 0},
        {"task": COOLING, "options": {"turbo": True}},
    ],
)
def test_a_reset_that_fails_validation_frees_its_session_so_a_full_server_still_takes_a_good_one(db_path,
                                                                                              client_factory,
                                                                                              bad_reset):
    with client_factory(db_path, max_sessions=1) as one:
        for _ in range(3):
            failed = one.post("/reset", json=bad_reset)
            assert failed.status_code == 422, failed.text
            assert one.get("/health").json()["sessions"] == 0
        good = one.post("/reset", json={"task": COOLING, "seed": 0})
        assert good.status_code == 200, good.text
        assert one.get("/health").json()["sessions"] == 1


# ---------------------------------------------------------------------------------------------- body size
def test_a_chunked_body_over_the_limit_is_refused_with_413_before_the_app_reads_it():
    """11 kB in 1 kB chunks, no Content-Length (chunked transfer): over a 4 kB limit, so 413, and no session."""
    app = app_with(max_body_bytes=4096)
    body = json.dumps({"task": COOLING, "episode_id": "x" * 11_000}).encode()
    assert len(body) > 11_000
    chunks = [body[i:i + 1000] for i in range(0, len(body), 1000)]
    status, reply = asgi_post(app, "/reset", chunks, [("content-type", "application/json"),
                                                      ("transfer-encoding", "chunked")])
    assert status == 413 and reply["code"] == "PAYLOAD_TOO_LARGE"
    assert open_sessions(app) == 0
    # a chunked body under the limit goes through
    small = [GOOD_RESET[: len(GOOD_RESET) // 2], GOOD_RESET[len(GOOD_RESET) // 2:]]
    status, reply = asgi_post(app, "/reset", small, [("content-type", "application/json"),
                                                     ("transfer-encoding", "chunked")])
    assert status == 200 and reply["session_id"]


def test_a_streamed_client_body_over_the_limit_is_413(db_path, client_factory):
    """The same through an HTTP client streaming the body (no Content-Length)."""
    body = json.dumps({"task": COOLING, "episode_id": "x" * 11_000}).encode()

    def stream():
        for i in range(0, len(body), 1000):
            yield body[i:i + 1000]

    with client_factory(db_path, max_body_bytes=4096) as small:
        reply = small.post("/reset", content=stream(), headers={"Content-Type": "application/json"})
        assert reply.status_code == 413 and reply.json()["code"] == "PAYLOAD_TOO_LARGE"
        assert small.get("/health").json()["sessions"] == 0


# ---------------------------------------------------------------------------------------------- Content-Length
@pytest.mark.parametrize("length", ["abc", "12x", "", "1.5"])
def test_a_non_numeric_content_length_is_a_clear_400(length):
    app = app_with(max_body_bytes=4096)
    status, reply = asgi_post(app, "/reset", [GOOD_RESET], [("content-type", "application/json"),
                                                            ("content-length", length)])
    assert status == 400 and reply["code"] == "BAD_REQUEST" and "Content-Length" in reply["detail"]
    assert open_sessions(app) == 0


@pytest.mark.parametrize("length", ["-1", "-100000", "+12", " 12"])
def test_a_negative_content_length_is_a_clear_400(length):
    app = app_with(max_body_bytes=4096)
    status, reply = asgi_post(app, "/reset", [GOOD_RESET], [("content-type", "application/json"),
                                                            ("content-length", length)])
    assert status == 400 and reply["code"] == "BAD_REQUEST"


# ---------------------------------------------------------------------------------------------- duplicate options
@pytest.mark.parametrize("key", ["n_steps", "climate"])
def test_an_option_given_both_at_top_level_and_in_options_is_422_naming_it(db_path, client_factory, key):
    value = {"n_steps": 12, "climate": "seattle"}[key]
    with client_factory(db_path, max_sessions=1) as one:
        reply = one.post("/reset", json={"task": COOLING, key: value, "options": {key: value}})
        assert reply.status_code == 422, reply.text
        body = reply.json()
        assert body["code"] == "VALIDATION_ERROR" and body["field"] == key and key in body["message"]
        assert one.get("/health").json()["sessions"] == 0
        # either place alone is fine
        assert one.post("/reset", json={"task": COOLING, "options": {key: value}}).status_code == 200


def test_a_reset_the_environment_refuses_after_its_session_opened_releases_that_session(db_path, client_factory,
                                                                                        monkeypatch):
    """Options that pass the schema but that the environment refuses (here: made to refuse) fail inside the
    session's reset, after its slot was taken: the slot must be given back, not left open."""
    from dcops.server.adapters import CoolingAdapter

    def refuse(self, task, options):
        raise ValueError("the plant cannot be built with these options")

    monkeypatch.setattr(CoolingAdapter, "make_env", refuse)
    with client_factory(db_path, max_sessions=4) as server:
        failed = server.post("/reset", json={"task": COOLING, "seed": 0})
        assert failed.status_code == 422 and failed.json()["field"] == "options"
        summary = server.get("/sessions").json()
        assert summary["totals"]["created"] == 1 and summary["open"] == 0


def test_ray_workers_without_worker_processes_are_refused_by_name():
    with pytest.raises(ValueError, match="workers: Ray workers"):
        app_with(ray_address="auto", workers=0)


def test_the_scorecard_route_answers_once_the_episode_is_over(db_path, client_factory):
    with client_factory(db_path) as server:
        reply = server.post("/reset", json={"task": COOLING, "seed": 1, "options": {"n_steps": 1}}).json()
        headers = {"X-Session-Id": reply["session_id"]}
        early = server.get("/scorecard", headers=headers)
        assert early.status_code == 409 and early.json()["code"] == "EPISODE_RUNNING"
        action = {"fan_speed": 0.8, "supply_setpoint_c": 19.0, "chw_setpoint_c": 9.0, "economiser_on": False}
        assert server.post("/step", json={"action": action}, headers=headers).json()["done"] is True
        card = server.get("/scorecard", headers=headers)
        assert card.status_code == 200 and card.json()["task"] == COOLING


def _mcp(server, name: str, arguments: dict[str, Any], rid: int = 1) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    return server.post("/mcp", json=body).json()["result"]


def _served_configs(monkeypatch: pytest.MonkeyPatch, *argvs: list[str]) -> list[ServerConfig]:
    """The configuration ``dcops serve`` hands the app for each command line (the app and uvicorn stubbed)."""
    import argparse

    from dcops.server import app as server_app
    from dcops.server.config import add_serve_arguments

    built: list[ServerConfig] = []
    monkeypatch.setattr(server_app, "create_app", lambda config: built.append(config) or object())
    monkeypatch.setattr("uvicorn.run", lambda application, **kwargs: None)
    parser = argparse.ArgumentParser()
    add_serve_arguments(parser)
    for argv in argvs:
        assert server_app.serve(parser.parse_args(argv)) == 0
    return built


def test_mcp_takes_any_non_negative_expected_step_and_refuses_a_negative_one(db_path, client_factory):
    with client_factory(db_path) as server:
        sid = _mcp(server, "start_episode", {"task": "queue/weighted_tardiness", "seed": 1,
                                             "options": {"n_jobs": 10}})["structuredContent"]["session_id"]
        stale = _mcp(server, "play_action", {"session_id": sid, "action": {"slot": 0}, "expected_step": 2}, 2)
        assert stale["isError"] is True and stale["structuredContent"]["code"] == "STALE_STEP"
        negative = _mcp(server, "play_action", {"session_id": sid, "action": {"slot": 0}, "expected_step": -1}, 3)
        assert negative["structuredContent"]["code"] == "VALIDATION_ERROR"
        assert negative["structuredContent"]["field"] == "expected_step"


def test_an_mcp_reset_refused_by_its_arguments_opens_no_session(db_path, client_factory):
    with client_factory(db_path) as server:
        refused = _mcp(server, "start_episode", {"task": "cooling/no_such_task"})
        assert refused["isError"] is True and refused["structuredContent"]["code"] == "VALIDATION_ERROR"
        assert server.get("/sessions").json()["totals"]["created"] == 0


def test_dcops_serve_hands_the_app_its_workers_and_ray_address(monkeypatch):
    monkeypatch.delenv("DCOPS_WORKERS", raising=False)
    monkeypatch.delenv("DCOPS_RAY_ADDRESS", raising=False)
    given, default = _served_configs(monkeypatch, ["--db", "off", "--workers", "3", "--ray-address", "auto"],
                                     ["--db", "off"])
    assert (given.workers, given.ray_address) == (3, "auto")
    assert (default.workers, default.ray_address) == (ServerConfig().workers, None)


@pytest.mark.parametrize("kind", ["bogus", "zap", "suggestion"])
def test_a_websocket_frame_of_an_unknown_type_is_named_whatever_it_sorts_after(client, kind):
    with client.websocket_connect("/ws") as ws:
        ws.send_json({"type": kind, "data": {}})
        frame = ws.receive_json()
    assert frame["type"] == "error" and frame["data"]["code"] == "UNKNOWN_TYPE" and frame["data"]["field"] == "type"


def test_a_session_id_of_up_to_128_characters_is_looked_up_and_a_longer_one_refused(client):
    unknown = client.get("/state", params={"session_id": "x" * 128})
    assert unknown.status_code == 404 and unknown.json()["code"] == "SESSION_NOT_FOUND"
    assert client.get("/state", params={"session_id": "x" * 129}).status_code == 422


def test_browsing_a_server_without_a_store_is_404_no_store(client_factory):
    with client_factory(None, operator_token="pages") as server:
        reply = server.get("/episodes", headers={"X-Operator-Token": "pages"})
        assert reply.status_code == 404 and reply.json()["code"] == "NO_STORE"


def test_the_schema_of_an_unknown_task_is_a_validation_error_naming_the_task(client):
    reply = client.get("/schema", params={"task": "cooling/no_such_task"})
    assert reply.status_code == 422 and reply.json()["field"] == "task"
    assert client.get("/schema", params={"task": COOLING}).json()["action"]["title"] == "CoolingAction"


def test_the_mcp_endpoint_documents_an_optional_body(client):
    """A JSON-RPC notification may come with no body; the OpenAPI document (what schemathesis and client
    generators read) must not call it required."""
    assert client.get("/openapi.json").json()["paths"]["/mcp"]["post"]["requestBody"]["required"] is False


def test_an_operator_token_header_of_up_to_256_characters_is_read_and_a_longer_one_refused(client_factory, db_path):
    with client_factory(db_path, operator_token="t" * 256) as server:
        assert server.get("/episodes", headers={"X-Operator-Token": "t" * 256}).status_code == 200
        assert server.get("/episodes", headers={"X-Operator-Token": "t" * 257}).status_code == 422


def test_the_mcp_endpoint_documents_its_202_for_notifications(client):
    assert "202" in client.get("/openapi.json").json()["paths"]["/mcp"]["post"]["responses"]


def test_an_idle_websocket_is_told_why_and_closed_normally(client_factory, db_path):
    from starlette.websockets import WebSocketDisconnect

    with client_factory(db_path, session_idle_s=0.2) as server, server.websocket_connect("/ws") as ws:
        frame = ws.receive_json()  # nothing sent: the idle timeout passes
        assert frame["type"] == "error" and frame["data"]["code"] == "SESSION_EXPIRED"
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
        assert closed.value.code == 1000


def test_a_chunked_body_of_exactly_the_limit_goes_through():
    reset = json.dumps({"task": COOLING, "seed": 1}).encode()
    app = app_with(max_body_bytes=len(reset))
    chunks = [reset[:10], reset[10:]]
    status, _ = asgi_post(app, "/reset", chunks, [("content-type", "application/json"),
                                                  ("transfer-encoding", "chunked")])
    assert status == 200
    status, reply = asgi_post(app, "/reset", [reset + b" "], [("content-type", "application/json")])
    assert status == 413 and reply["code"] == "PAYLOAD_TOO_LARGE"


def test_a_reset_with_bad_options_takes_no_session_at_all(client):
    refused = client.post("/reset", json={"task": COOLING, "options": {"n_steps": 0}})
    assert refused.status_code == 422 and refused.json()["field"] == "options.n_steps"
    assert client.get("/sessions").json()["totals"]["created"] == 0  # refused before a slot was taken


def test_ray_workers_with_worker_processes_are_accepted_until_the_server_starts():
    for workers in (1, 2):
        app_with(ray_address="auto", workers=workers)  # nothing starts before the server does (no Ray here)


def test_a_request_with_several_errors_is_refused_naming_the_first(client):
    from pydantic import ValidationError

    from dcops.models import ResetRequest

    body = {"task": 5, "seed": "x", "episode_id": 7}
    with pytest.raises(ValidationError) as caught:
        ResetRequest.model_validate(body)
    first = ".".join(str(p) for p in caught.value.errors()[0]["loc"])
    reply = client.post("/reset", json=body)
    assert reply.status_code == 422 and reply.json()["field"] == first and len(caught.value.errors()) > 1


def test_episode_browsing_checks_its_query_bounds(db_path, client_factory):
    token = {"X-Operator-Token": "pages"}
    with client_factory(db_path, operator_token="pages") as server:
        for params, status in (({"limit": 0}, 422), ({"limit": 1}, 200), ({"limit": 1000}, 200), ({"limit": 1001}, 422),
                               ({"offset": -1}, 422), ({"task": "t" * 200}, 200), ({"task": "t" * 201}, 422)):
            assert server.get("/episodes", params=params, headers=token).status_code == status, params
        missing = server.get("/episodes/no-such-uid", headers=token)
        assert missing.status_code == 404 and missing.json()["code"] == "EPISODE_NOT_FOUND"


def test_an_mcp_reset_the_environment_refuses_frees_its_session(monkeypatch, client):
    from dcops.server.adapters import CoolingAdapter

    def refuse(*args, **kwargs):
        raise ValueError("no such combination")

    monkeypatch.setattr(CoolingAdapter, "make_env", refuse)
    refused = _mcp(client, "start_episode", {"task": COOLING, "seed": 1})
    assert refused["isError"] is True and refused["structuredContent"]["field"] == "options"
    assert client.get("/sessions").json()["open"] == 0


@pytest.mark.parametrize("expected_step", ["2", True, 1.5])
def test_mcp_refuses_an_expected_step_that_is_not_an_integer(client, expected_step):
    sid = _mcp(client, "start_episode", {"task": "queue/weighted_tardiness", "seed": 1,
                                         "options": {"n_jobs": 10}})["structuredContent"]["session_id"]
    reply = _mcp(client, "play_action", {"session_id": sid, "action": {"slot": 0}, "expected_step": expected_step})
    assert reply["isError"] is True and reply["structuredContent"]["field"] == "expected_step"


def test_a_websocket_takes_expected_step_zero_refuses_a_stale_one_and_closes_normally_when_asked(client):
    from starlette.websockets import WebSocketDisconnect

    action = {"fan_speed": 0.8, "supply_setpoint_c": 19.0, "chw_setpoint_c": 9.0, "economiser_on": False}
    with client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "reset", "data": {"task": COOLING, "seed": 1}})
        assert ws.receive_json()["type"] == "observation"
        ws.send_json({"type": "step", "data": {"action": action, "expected_step": 0}})
        assert ws.receive_json()["type"] == "observation"
        ws.send_json({"type": "step", "data": {"action": {**action, "fan_speed": 0.7}, "expected_step": 3}})
        stale = ws.receive_json()
        assert stale["type"] == "error" and stale["data"]["code"] == "STALE_STEP"
        ws.send_json({"type": "close"})
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
        assert closed.value.code == 1000


def test_dcops_serve_hands_the_app_its_episode_store(monkeypatch, tmp_path):
    from pathlib import Path

    monkeypatch.setenv("DCOPS_DB", str(tmp_path / "from-env.db"))
    built = _served_configs(monkeypatch, ["--db", str(tmp_path / "given.db")], ["--db", "off"], ["--db", "None"], [])
    assert [c.db_path for c in built] == [Path(tmp_path / "given.db"), None, None, Path(tmp_path / "from-env.db")]


# ---------------------------------------------------------------------------------------------- app.py, second pass
def test_a_session_header_of_up_to_128_characters_is_looked_up_and_a_longer_one_refused(client):
    assert client.get("/state", headers={"X-Session-Id": "x" * 128}).status_code == 404
    assert client.get("/state", headers={"X-Session-Id": "x" * 129}).status_code == 422


def test_the_openapi_document_lists_the_documented_errors_and_hides_the_console(client):
    paths = client.get("/openapi.json").json()["paths"]
    assert {"403", "404"} <= set(paths["/episodes"]["get"]["responses"])
    assert {"409", "413", "422", "503"} <= set(paths["/reset"]["post"]["responses"])
    assert not {"/", "/web", "/docs", "/redoc"} & set(paths)
    action = client.get("/openapi.json").json()["components"]["schemas"]["StepRequest"]["properties"]["action"]
    assert "anyOf" in action or "oneOf" in action  # the typed actions, not a bare object


def test_the_console_routes_redirect_to_it(client):
    for path in ("/", "/web"):
        reply = client.get(path, follow_redirects=False)
        assert reply.status_code in (302, 307) and reply.headers["location"] == "/web/"


def test_a_declared_body_of_exactly_the_limit_is_read():
    reset = json.dumps({"task": COOLING, "seed": 1}).encode()
    app = app_with(max_body_bytes=len(reset))
    status, _ = asgi_post(app, "/reset", [reset], [("content-type", "application/json"),
                                                   ("content-length", str(len(reset)))])
    assert status == 200


def test_a_full_server_says_when_to_retry_and_other_errors_do_not(client_factory, db_path):
    with client_factory(db_path, max_sessions=1) as server, server.websocket_connect("/ws"):
        full = server.post("/reset", json={"task": COOLING})
        assert full.status_code == 503 and full.headers["retry-after"] == "5"
        missing = server.get("/state", headers={"X-Session-Id": "nope"})
        assert missing.status_code == 404 and "retry-after" not in missing.headers


def test_a_websocket_refused_for_capacity_is_told_to_try_later(client_factory, db_path):
    from starlette.websockets import WebSocketDisconnect

    with client_factory(db_path, max_sessions=1) as server, server.websocket_connect("/ws"):
        with server.websocket_connect("/ws") as second:
            assert second.receive_json()["data"]["code"] == "CAPACITY_REACHED"
            with pytest.raises(WebSocketDisconnect) as closed:
                second.receive_json()
            assert closed.value.code == 1013


def test_episode_pages_order_and_continue_where_they_stopped(db_path, client_factory):
    token = {"X-Operator-Token": "pages"}
    with client_factory(db_path, operator_token="pages") as server:
        assert server.get("/episodes").status_code == 403  # no token at all
        seeds = (1, 2, 3)
        for seed in seeds:
            sid = server.post("/reset", json={"task": COOLING, "seed": seed}).json()["session_id"]
            if seed == 1:
                action = {"fan_speed": 0.8, "supply_setpoint_c": 19.0, "chw_setpoint_c": 9.0, "economiser_on": False}
                for _ in range(2):
                    server.post("/step", json={"action": action}, headers={"X-Session-Id": sid})
        def page(**params):
            return server.get("/episodes", params=params, headers=token).json()
        assert [e["seed"] for e in page(order="asc")["episodes"]] == [1, 2, 3]
        assert [e["seed"] for e in page(order="desc")["episodes"]] == [3, 2, 1]
        middle = page(limit=1, offset=1)
        assert [e["seed"] for e in middle["episodes"]] == [2] and middle["next_offset"] == 2
        assert page(limit=2)["next_offset"] == 2 and page(limit=3)["next_offset"] is None  # the page ends exactly
        uid = page()["episodes"][0]["uid"]
        steps = server.get(f"/episodes/{uid}", params={"limit": 1}, headers=token).json()
        assert [s["t"] for s in steps["steps"]] == [0] and steps["next_offset"] == 1
        rest = server.get(f"/episodes/{uid}", params={"offset": 1}, headers=token).json()
        assert [s["t"] for s in rest["steps"]] == [1, 2] and rest["next_offset"] is None
        for params in ({"limit": 0}, {"limit": 1001}, {"offset": -1}):
            assert server.get(f"/episodes/{uid}", params=params, headers=token).status_code == 422


def test_the_schema_of_a_task_name_of_200_characters_is_looked_up(client):
    reply = client.get("/schema", params={"task": "t" * 200})
    assert reply.status_code == 422 and "unknown task" in reply.json()["message"]
    longer = client.get("/schema", params={"task": "t" * 201})
    assert longer.status_code == 422 and longer.json()["field"] == "query.task"  # refused before any lookup


def test_an_mcp_reset_with_invalid_arguments_names_them(client):
    reply = _mcp(client, "start_episode", {"task": COOLING, "seed": "x"})
    assert reply["isError"] is True and reply["structuredContent"]["code"] == "VALIDATION_ERROR"
    # Arguments the tool's signature takes but a reset request refuses (a task name over 200 characters, an
    # empty episode label) are named as the arguments, not reported as a failure of the tool.
    for arguments in ({"task": "t" * 201}, {"task": COOLING, "episode_id": ""}):
        refused = _mcp(client, "start_episode", arguments)["structuredContent"]
        assert (refused["code"], refused["field"]) == ("VALIDATION_ERROR", "arguments"), arguments


def test_a_websocket_frame_of_exactly_the_limit_is_read_and_its_errors_name_the_first_field(client_factory, db_path):
    frame = json.dumps({"type": "reset", "data": {"task": COOLING, "seed": 1}})
    with client_factory(db_path, max_body_bytes=len(frame)) as server, server.websocket_connect("/ws") as ws:
        ws.send_text(frame)
        assert ws.receive_json()["type"] == "observation"
    with client_factory(db_path) as server, server.websocket_connect("/ws") as ws:
        ws.send_json({"type": "reset", "data": {"task": 5, "seed": "x", "episode_id": 7}})
        error = ws.receive_json()["data"]
        from pydantic import ValidationError

        from dcops.models import ResetRequest
        with pytest.raises(ValidationError) as caught:
            ResetRequest.model_validate({"task": 5, "seed": "x", "episode_id": 7})
        assert error["field"] == ".".join(str(p) for p in caught.value.errors()[0]["loc"])
        ws.send_json({"type": "reset", "data": {"task": COOLING, "seed": 1}})
        ws.receive_json()
        ws.send_json({"type": "step", "data": {"action": {"fan_speed": 0.8, "supply_setpoint_c": 19.0,
                                                          "chw_setpoint_c": 9.0, "economiser_on": False},
                                               "expected_step": -1}})
        assert ws.receive_json()["data"]["field"] == "expected_step"


def test_the_lazy_app_builds_one_server_on_first_use(monkeypatch, tmp_path):
    from fastapi.testclient import TestClient

    from dcops.server import app as server_app

    monkeypatch.setenv("DCOPS_DB", "off")
    lazy = server_app._LazyApp()
    with TestClient(lazy) as test_client:
        assert test_client.get("/health").json()["status"] == "healthy"
        built = lazy._app
        assert built is not None and test_client.get("/health").status_code == 200 and lazy._app is built


def test_mcp_tools_do_what_they_are_named_for(client):
    first = _mcp(client, "start_episode", {"task": COOLING, "seed": 5})["structuredContent"]
    again = _mcp(client, "start_episode", {"task": COOLING, "seed": 5}, 2)["structuredContent"]
    assert first["metadata"]["seed"] == 5 and first["observation"] == again["observation"]  # the seed is used
    sid = first["session_id"]
    suggestion = _mcp(client, "suggest_action", {"session_id": sid}, 3)["structuredContent"]
    assert set(suggestion) == {"policy", "action"}  # a suggestion, neither a step nor the state
    assert _mcp(client, "episode_state", {"session_id": sid}, 4)["structuredContent"]["step_count"] == 0


def test_a_websocket_step_without_an_action_is_a_validation_error_not_a_dropped_socket(client):
    with client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "reset", "data": {"task": COOLING, "seed": 1}})
        ws.receive_json()
        ws.send_json({"type": "step", "data": {"expected_step": 0}})
        error = ws.receive_json()
        assert error["type"] == "error" and error["data"]["code"] == "VALIDATION_ERROR"
        ws.send_json({"type": "state"})
        assert ws.receive_json()["type"] == "state"  # the socket is still open


def test_the_metadata_says_whether_episodes_are_stored(client_factory, db_path):
    with client_factory(db_path) as stored, client_factory(None) as unstored:
        assert stored.get("/metadata").json()["episode_store"] is True
        assert unstored.get("/metadata").json()["episode_store"] is False


def test_an_episodes_steps_take_the_same_token_and_paging_rules(client_factory, db_path):
    with client_factory(db_path, operator_token="t" * 256) as server:
        server.post("/reset", json={"task": COOLING, "seed": 1})
        uid = server.get("/episodes", headers={"X-Operator-Token": "t" * 256}).json()["episodes"][0]["uid"]
        assert server.get(f"/episodes/{uid}", params={"offset": 0},
                          headers={"X-Operator-Token": "t" * 256}).status_code == 200
        assert server.get(f"/episodes/{uid}", headers={"X-Operator-Token": "t" * 257}).status_code == 422


@pytest.mark.parametrize(("option", "value", "field"), [("--idle-timeout", "30", "session_idle_s"),
                                                       ("--max-sessions", "7", "max_sessions")])
def test_dcops_serve_hands_the_app_its_session_limits(monkeypatch, option, value, field):
    given, default = _served_configs(monkeypatch, ["--db", "off", option, value], ["--db", "off"])
    assert getattr(given, field) == float(value) and getattr(default, field) == getattr(ServerConfig.from_env(), field)


# ---------------------------------------------------------------------------------------------- worker routing
_OK_REPLY = ("ok", '{"observation": {}, "reward": 0.0, "done": false}', False)
"""A worker's answer to a reset or step that went well: (status, reply JSON, done)."""


class _FakeWorker:
    """A worker process's stand-in: every reset succeeds, every step gets ``step_reply`` (the worker's
    ``(status, *rest)`` tuple), so the app's handling of a worker's answers is tested without a process."""

    def __init__(self, step_reply: tuple[Any, ...]) -> None:
        self.sessions = 0
        self.step_reply = step_reply

    def submit(self, op: str, sid: str, transport: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        import concurrent.futures

        future: concurrent.futures.Future[tuple[Any, ...]] = concurrent.futures.Future()
        future.set_result(_OK_REPLY if op == "reset" else self.step_reply)
        return future

    def send_close(self, sid: str) -> None:
        pass


def _fake_pools(monkeypatch: pytest.MonkeyPatch, step_reply: tuple[Any, ...]) -> list[str]:
    """Replace both pool kinds in the app by fakes whose workers answer steps with ``step_reply``; returns the
    list each fake pool appends its kind to when the server starts it."""
    from dcops.server import app as server_app

    started: list[str] = []

    def pool(kind: str) -> Any:
        class FakePool:
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                started.append(kind)
                self.worker = _FakeWorker(step_reply)

            def assign(self) -> _FakeWorker:
                return self.worker

            def stop(self) -> None:
                pass

        return FakePool

    monkeypatch.setattr(server_app, "WorkerPool", pool("processes"))
    monkeypatch.setattr(server_app, "RayWorkerPool", pool("ray"))
    return started


@pytest.mark.parametrize("ray_address, kind", [(None, "processes"), ("auto", "ray")])
def test_the_server_starts_the_worker_pool_its_configuration_names(monkeypatch, client_factory, ray_address, kind):
    started = _fake_pools(monkeypatch, _OK_REPLY)
    with client_factory(None, workers=1, ray_address=ray_address) as server:
        assert server.post("/reset", json={"task": COOLING, "seed": 1}).status_code == 200
    assert started == [kind]


def test_a_worker_gone_error_frees_the_session_and_any_other_worker_error_keeps_it(monkeypatch, client_factory):
    step = {"action": {"fan_speed": 0.8, "supply_setpoint_c": 19.0, "chw_setpoint_c": 9.0, "economiser_on": False}}
    for code, status, kept in (("WORKER_GONE", 503, False), ("STALE_STEP", 409, True),
                               ("Z_SORTS_AFTER_WORKER_GONE", 409, True), ("A_SORTS_BEFORE", 409, True)):
        _fake_pools(monkeypatch, ("api", status, code, "the worker said no"))
        with client_factory(None, workers=1) as server:
            sid = server.post("/reset", json={"task": COOLING, "seed": 1}).headers["X-Session-Id"]
            refused = server.post("/step", json=step, headers={"X-Session-Id": sid})
            assert refused.status_code == status and refused.json()["code"] == code
            assert server.get("/sessions").json()["open"] == int(kept), code
            again = server.post("/step", json=step, headers={"X-Session-Id": sid})
            assert again.json()["code"] == (code if kept else "SESSION_NOT_FOUND"), code


# ---------------------------------------------------------------------------------------------- reaper, paging
def test_the_reaper_wakes_every_quarter_of_the_idle_timeout_within_half_a_second_and_a_minute(monkeypatch):
    from dcops.server import app as server_app

    for idle_s, expected_sleep_s in ((1.0, 0.5), (8.0, 2.0), (10.0, 2.5), (100.0, 25.0), (1000.0, 60.0)):
        slept: list[float] = []
        reaped: list[int] = []

        async def fake_sleep(seconds: float, slept: list[float] = slept) -> None:
            slept.append(seconds)
            if len(slept) == 3:
                raise asyncio.CancelledError

        class Manager:
            def reap_idle(self, reaped: list[int] = reaped) -> list[str]:
                reaped.append(1)
                return []

        monkeypatch.setattr(server_app.asyncio, "sleep", fake_sleep)
        with pytest.raises(asyncio.CancelledError):
            asyncio.run(server_app._reap_forever(Manager(), idle_s))
        monkeypatch.undo()
        assert slept == [expected_sleep_s] * 3 and len(reaped) == 2, idle_s


def test_episode_pages_hold_100_rows_unless_asked_and_take_offset_zero(client_factory, db_path):
    from dcops.server.store import EpisodeStore

    token = {"X-Operator-Token": "pages"}
    store = EpisodeStore(db_path)
    for i in range(101):
        store.start_episode(f"u{i:03d}", f"e{i}", f"s{i}", "http", COOLING, i, {}, {}, {})
    for t in range(1, 101):  # step 0 came with the reset: 101 steps in all
        store.record_step("u000", t, {"a": t}, {}, 0.0, False, {})
    store.close()
    with client_factory(db_path, operator_token="pages") as server:
        page = server.get("/episodes", params={"offset": 0}, headers=token).json()
        assert len(page["episodes"]) == 100 and page["next_offset"] == 100
        assert page["episodes"][0]["uid"] == "u000"
        steps = server.get("/episodes/u000", headers=token).json()
        assert len(steps["steps"]) == 100 and steps["next_offset"] == 100
        assert server.get("/episodes/u000", params={"limit": 1000}, headers=token).json()["next_offset"] is None


def test_a_websocket_step_refuses_an_expected_step_that_is_not_a_non_negative_integer(client):
    action = {"fan_speed": 0.8, "supply_setpoint_c": 19.0, "chw_setpoint_c": 9.0, "economiser_on": False}
    with client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "reset", "data": {"task": COOLING, "seed": 1}})
        ws.receive_json()
        for expected in ("2", True, 1.5, -1):
            ws.send_json({"type": "step", "data": {"action": action, "expected_step": expected}})
            error = ws.receive_json()
            assert error["type"] == "error" and error["data"]["code"] == "VALIDATION_ERROR", expected
            assert error["data"]["field"] == "expected_step", expected
        ws.send_json({"type": "step", "data": {"action": action, "expected_step": 0}})
        assert ws.receive_json()["type"] == "observation"  # the socket is still open and the step still first
