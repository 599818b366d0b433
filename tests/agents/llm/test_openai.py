"""The OpenAI-compatible backend against a fake chat-completions server on 127.0.0.1 (no internet)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from dcops.agents.llm.backends import answer_schema
from dcops.agents.llm.scheduler import make_llm_scheduler
from dcops.cluster.decisions import resolve_structured

pytest.importorskip("openai")


class FakeServer:
    """A chat-completions endpoint whose behaviour a test sets: ``mode`` is ``"schema"`` (answers from the
    JSON schema it was sent, refusing requests without one), ``"no_schema"`` (400 on ``response_format``, then
    answers with a fenced JSON object), ``"garbage"`` or ``"error"`` (HTTP 500)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's API
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append({"path": self.path, **body})
                status, payload = server.reply(body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        fmt = body.get("response_format")
        if self.mode == "error":
            return 500, {"error": {"message": "boom"}}
        if self.mode == "no_schema" and fmt is not None:
            return 400, {"error": {"message": "response_format is not supported", "type": "invalid_request_error"}}
        if self.mode == "schema" and fmt is None:
            return 400, {"error": {"message": "this test server wants a schema"}}
        if self.mode == "garbage":
            content = "Sure! I would accept everything."
        elif fmt is not None:
            schema = fmt["json_schema"]["schema"]
            content = json.dumps({rid: {"decision": "ACCEPT", "defer_to_window": None, "reasoning": "fits"}
                                  for rid in schema["required"]})
        else:
            now = body["messages"][0]["content"].split("# Now", 1)[1]
            ids = [line.split(" | ", 1)[0] for line in now.splitlines()
                   if line[:1] == "r" and " | team_" in line]
            content = "```json\n" + json.dumps({rid: {"decision": "REJECT"} for rid in ids}) + "\n```"
        return 200, {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                     "choices": [{"index": 0, "finish_reason": "stop",
                                  "message": {"role": "assistant", "content": content}}]}

    def __enter__(self) -> FakeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _valid(decisions, view):
    ids = [r["request_id"] for r in view["pending"]]
    assert [d["request_id"] for d in decisions] == ids
    assert resolve_structured(decisions, ids, view["window"], view["n_windows"]).report.count == 0


def test_json_schema_constrained_output(view):
    with FakeServer("schema") as server:
        scheduler = make_llm_scheduler("openai", base_url=server.url, model="fake-model")
        decisions = scheduler.decide(view)
    _valid(decisions, view)
    assert all(d["decision"] == "ACCEPT" for d in decisions)
    assert scheduler.last.format_ok and scheduler.n_invalid_outputs == 0
    sent = server.requests[0]
    assert sent["path"] == "/v1/chat/completions" and sent["model"] == "fake-model"
    assert sent["response_format"]["json_schema"]["schema"] == answer_schema(view)
    assert "# Now" in sent["messages"][0]["content"]


def test_schema_lists_exactly_the_pending_ids_and_allowed_windows(view):
    schema = answer_schema(view)
    ids = [r["request_id"] for r in view["pending"]]
    assert schema["required"] == ids and schema["additionalProperties"] is False
    entry = schema["properties"][ids[0]]
    windows = entry["properties"]["defer_to_window"]["anyOf"][0]["enum"]
    assert windows == list(range(view["window"] + 1, view["n_windows"]))
    last = answer_schema({**view, "window": view["n_windows"] - 1})
    assert last["properties"][ids[0]]["properties"]["decision"]["enum"] == ["ACCEPT", "REJECT"]


def test_a_server_without_response_format_is_asked_again_without_it(view):
    with FakeServer("no_schema") as server:
        scheduler = make_llm_scheduler("openai", base_url=server.url, model="m")
        decisions = scheduler.decide(view)
        scheduler.decide(view)
    _valid(decisions, view)
    assert all(d["decision"] == "REJECT" for d in decisions) and scheduler.last.format_ok
    # first call: refused with the schema, retried without; second call: no schema at all
    assert ["response_format" in r for r in server.requests] == [True, False, False]


@pytest.mark.parametrize("mode", ["garbage", "error"])
def test_bad_answers_and_server_errors_get_the_default_and_are_counted(view, mode):
    with FakeServer(mode) as server:
        scheduler = make_llm_scheduler("openai", base_url=server.url, model="m", json_schema=False)
        decisions = scheduler.decide(view)
    _valid(decisions, view)
    assert scheduler.n_invalid_outputs == 1
    assert {p.code for p in scheduler.last.problems} == {"invalid_json"}
    assert (scheduler.backend.errors != []) == (mode == "error")


def test_an_unreachable_server_does_not_crash(view):
    with FakeServer("schema") as server:
        url = server.url
    scheduler = make_llm_scheduler("openai", base_url=url, model="m", timeout_s=2.0)
    _valid(scheduler.decide(view), view)
    assert scheduler.n_invalid_outputs == 1 and scheduler.backend.errors
