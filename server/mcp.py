"""A minimal MCP endpoint (JSON-RPC 2.0 over ``POST /mcp``): ``initialize``, ``tools/list``, ``tools/call``.

Why: OpenEnv's production mode and tool-using LLM agents talk MCP; exposing ``start_episode``, ``play_action``,
``episode_state``, ``suggest_action`` and ``close_session`` as tools lets such an agent play any task over the
same sessions as HTTP. The names are not ``reset``/``step``/``state``/``close``: OpenEnv's harness reserves those
for itself and refuses a server that lists them as tools. Every reply is HTTP 200
with a JSON-RPC body (a parse error of an empty or broken body included), except notifications, which get 202
and no body, as the MCP streamable-HTTP transport says. Batches are not supported (MCP dropped them).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from dcops.models import API_VERSION
from dcops.server.serialize import dumps

PROTOCOL_VERSION = "2025-06-18"

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602

_SESSION = {"type": "string", "description": "session id returned by reset"}
TOOLS: list[dict[str, Any]] = [
    {
        "name": "start_episode",
        "description": "Start an episode (new session unless session_id is given); returns the first observation "
                       "and the session_id to pass to the other tools.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "task": {"type": "string"}, "seed": {"type": "integer", "minimum": 0},
                "episode_id": {"type": "string"}, "options": {"type": "object"}, "session_id": _SESSION,
            },
        },
    },
    {
        "name": "play_action",
        "description": "Play one action (the /schema endpoint gives each task family's action object); "
                       "expected_step (optional): the step count before it, so a retried call is not played twice.",
        "inputSchema": {
            "type": "object", "required": ["session_id", "action"],
            "properties": {"session_id": _SESSION, "action": {"type": "object"},
                           "expected_step": {"type": "integer", "minimum": 0}},
        },
    },
    {
        "name": "episode_state",
        "description": "The episode's ids, counters and current observation.",
        "inputSchema": {"type": "object", "required": ["session_id"], "properties": {"session_id": _SESSION}},
    },
    {
        "name": "suggest_action",
        "description": "The action the task's reference policy would play now.",
        "inputSchema": {"type": "object", "required": ["session_id"], "properties": {"session_id": _SESSION}},
    },
    {
        "name": "close_session",
        "description": "Close the session (its running episode is kept in the store as abandoned).",
        "inputSchema": {"type": "object", "required": ["session_id"], "properties": {"session_id": _SESSION}},
    },
]
OPERATIONS = {"start_episode": "reset", "play_action": "step", "episode_state": "state",
              "suggest_action": "suggest", "close_session": "close"}
"""Each tool's session operation (what ``run_tool`` is called with)."""

ToolRunner = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


def _error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _result(request_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


async def handle(body: bytes, run_tool: ToolRunner) -> dict[str, Any] | None:
    """Answer one JSON-RPC request; ``None`` for a notification (no reply). ``run_tool(name, arguments)`` runs a
    tool and raises :class:`dcops.server.sessions.ApiError` for client errors."""
    from dcops.server.sessions import ApiError

    try:
        message = json.loads(body) if body.strip() else None
    except (ValueError, UnicodeDecodeError):
        return _error(None, PARSE_ERROR, "Parse error: the body is not JSON")
    if message is None:
        return _error(None, PARSE_ERROR, "Parse error: empty body (send a JSON-RPC 2.0 request)")
    if not isinstance(message, dict):
        return _error(None, INVALID_REQUEST, "Invalid Request: expected one JSON-RPC object (batches are not supported)")
    request_id = message.get("id")
    if request_id is not None and (isinstance(request_id, bool) or not isinstance(request_id, (str, int, float))):
        return _error(None, INVALID_REQUEST, "Invalid Request: id must be a string or a number")
    method = message.get("method")
    if message.get("jsonrpc") != "2.0" or not isinstance(method, str):
        return _error(request_id, INVALID_REQUEST, "Invalid Request: need jsonrpc '2.0' and a method string")
    if "id" not in message:
        return None  # a notification (e.g. notifications/initialized)
    params = message.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        return _error(request_id, INVALID_PARAMS, "Invalid params: expected an object")

    if method == "initialize":
        return _result(request_id, {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "dcops", "version": API_VERSION},
        })
    if method == "ping":
        return _result(request_id, {})
    if method == "tools/list":
        return _result(request_id, {"tools": TOOLS})
    if method == "tools/call":
        name = params.get("name")
        arguments = params.get("arguments", {})
        if arguments is None:
            arguments = {}
        if name not in OPERATIONS:
            return _error(request_id, INVALID_PARAMS, f"Invalid params: unknown tool {name!r} (tools: "
                          f"{', '.join(OPERATIONS)})")
        if not isinstance(arguments, dict):
            return _error(request_id, INVALID_PARAMS, "Invalid params: arguments must be an object")
        try:
            output = await run_tool(OPERATIONS[name], arguments)
        except ApiError as exc:
            error = {"code": exc.code, "message": exc.message, "field": exc.field}
            return _result(request_id, {"content": [{"type": "text", "text": dumps(error)}],
                                        "structuredContent": error, "isError": True})
        return _result(request_id, {"content": [{"type": "text", "text": dumps(output)}],
                                    "structuredContent": output, "isError": False})
    return _error(request_id, METHOD_NOT_FOUND, f"Method not found: {method!r}")
