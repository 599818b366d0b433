"""A minimal MCP endpoint (JSON-RPC 2.0 over ``POST /mcp``): ``initialize``, ``tools/list``, ``tools/call``.

Why: OpenEnv's production mode and tool-using LLM agents talk MCP; exposing ``start_episode``, ``play_action``,
``episode_state``, ``suggest_action`` and ``close_session`` as tools lets such an agent play any task over the
same sessions as HTTP. The names are not ``reset``/``step``/``state``/``close``: OpenEnv's harness reserves those
for itself and refuses a server that lists them as tools.

The tools are defined with the MCP SDK's ``FastMCP`` (:func:`tool_server`: input and output schemas from the
signatures, arguments validated by the SDK); the transport is this module's JSON-RPC, because OpenEnv's validator
posts ``{}`` to ``/mcp`` without an ``Accept`` header and wants HTTP 200 with a JSON-RPC body, which the SDK's
streamable-HTTP transport refuses (406). Every reply is HTTP 200 with a JSON-RPC body (a parse error of an empty
or broken body included), except notifications, which get 202 and no body, as the MCP streamable-HTTP transport
says. Batches are not supported (MCP dropped them).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from pydantic import Field, ValidationError

from dcops.models import API_VERSION
from dcops.server.serialize import dumps

PROTOCOL_VERSION = "2025-06-18"

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602

TOOL_NAMES = frozenset({"start_episode", "play_action", "episode_state", "suggest_action", "close_session"})

ToolRunner = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


def tool_server(run_tool: ToolRunner) -> FastMCP:
    """The tools, defined with the MCP SDK's :class:`FastMCP` (input and output schemas from the signatures,
    arguments validated by it); each calls ``run_tool(operation, arguments)`` on the server's sessions."""
    server = FastMCP("dcops")

    def given(**arguments: Any) -> dict[str, Any]:
        return {k: v for k, v in arguments.items() if v is not None}

    async def start_episode(task: str | None = None, seed: Annotated[int, Field(ge=0)] | None = None,
                            episode_id: str | None = None, options: dict[str, Any] | None = None,
                            session_id: str | None = None) -> dict[str, Any]:
        """Start an episode (a new session unless session_id is given); returns the first observation and the
        session_id to pass to the other tools."""
        return await run_tool("reset", given(task=task, seed=seed, episode_id=episode_id, options=options,
                                             session_id=session_id))

    async def play_action(session_id: str, action: dict[str, Any],
                          expected_step: Annotated[int, Field(ge=0)] | None = None) -> dict[str, Any]:
        """Play one action (the /schema endpoint gives each task family's action object); expected_step
        (optional): the step count before it, so a retried call is not played twice."""
        return await run_tool("step", given(session_id=session_id, action=action, expected_step=expected_step))

    async def episode_state(session_id: str) -> dict[str, Any]:
        """The episode's ids, counters and current observation."""
        return await run_tool("state", {"session_id": session_id})

    async def suggest_action(session_id: str) -> dict[str, Any]:
        """The action the task's reference policy would play now."""
        return await run_tool("suggest", {"session_id": session_id})

    async def close_session(session_id: str) -> dict[str, Any]:
        """Close the session (its running episode is kept in the store as abandoned)."""
        return await run_tool("close", {"session_id": session_id})

    for tool in (start_episode, play_action, episode_state, suggest_action, close_session):
        server.add_tool(tool, structured_output=True)
    return server


def _tool_error(exc: ToolError) -> dict[str, Any]:
    """A failed call's structured error: the session's :class:`ApiError`, or the SDK's argument validation."""
    from dcops.server.sessions import ApiError

    cause = exc.__cause__
    if isinstance(cause, ApiError):
        return {"code": cause.code, "message": cause.message, "field": cause.field}
    if isinstance(cause, ValidationError) and cause.errors():
        first = cause.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "arguments"
        return {"code": "VALIDATION_ERROR", "message": f"{field}: {first['msg']}", "field": field}
    return {"code": "TOOL_ERROR", "message": str(exc), "field": None}


def _error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _result(request_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


async def handle(body: bytes, tools: FastMCP) -> dict[str, Any] | None:
    """Answer one JSON-RPC request; ``None`` for a notification (no reply). ``tools`` is :func:`tool_server`'s."""
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
        listed = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in await tools.list_tools()]
        return _result(request_id, {"tools": listed})
    if method == "tools/call":
        name = params.get("name")
        arguments = params.get("arguments", {})
        if arguments is None:
            arguments = {}
        if name not in TOOL_NAMES:
            return _error(request_id, INVALID_PARAMS, f"Invalid params: unknown tool {name!r} (tools: "
                          f"{', '.join(sorted(TOOL_NAMES))})")
        if not isinstance(arguments, dict):
            return _error(request_id, INVALID_PARAMS, "Invalid params: arguments must be an object")
        try:
            _, output = await tools.call_tool(name, arguments)
        except ToolError as exc:
            error = _tool_error(exc)
            return _result(request_id, {"content": [{"type": "text", "text": dumps(error)}],
                                        "structuredContent": error, "isError": True})
        return _result(request_id, {"content": [{"type": "text", "text": dumps(output)}],
                                    "structuredContent": output, "isError": False})
    return _error(request_id, METHOD_NOT_FOUND, f"Method not found: {method!r}")
