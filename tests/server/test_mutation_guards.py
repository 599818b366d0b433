"""Guards of the server's request handling that a weaker test suite let slip (issue #30): a failed reset frees its
session, a body too large is refused however it is framed, a Content-Length that is not a byte count is a clear
400, and an option given twice in a reset is a 422 naming it.

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
