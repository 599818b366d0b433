"""The MCP endpoint's JSON-RPC handling (``dcops.server.mcp.handle``) driven directly, over a stand-in tool runner.

Why by hand: the contract tests reach ``/mcp`` through the whole app (about 11 s); these call ``handle`` on a
:func:`~dcops.server.mcp.tool_server` whose ``run_tool`` only echoes or raises, so each JSON-RPC rule of the module
docstring and of JSON-RPC 2.0 / MCP is checked in milliseconds: which requests are invalid, that only the exact
method names are answered, what ``initialize`` and ``tools/list`` announce, and how a failed tool call is reported.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from dcops.server import mcp
from dcops.server.sessions import ApiError


async def _run_tool(operation: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Echo the operation and arguments; a session id ``"api"`` fails as a client error, ``"crash"`` as a bug."""
    if arguments.get("session_id") == "api":
        raise ApiError(404, "SESSION_NOT_FOUND", "no such session", "session_id")
    if arguments.get("session_id") == "crash":
        raise RuntimeError("the runner broke")
    return {"operation": operation, **arguments}


TOOLS = mcp.tool_server(_run_tool)


def _handle(message: Any) -> dict[str, Any] | None:
    return asyncio.run(mcp.handle(json.dumps(message).encode(), TOOLS))


def _request(method: str, params: Any = None, request_id: Any = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    reply = _handle(message)
    assert reply is not None
    return reply


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return _request("tools/call", {"name": name, "arguments": arguments})["result"]


@pytest.mark.parametrize("request_id", [True, False, [1], {"n": 1}])
def test_an_id_that_is_neither_a_string_nor_a_number_is_an_invalid_request(request_id):
    """JSON-RPC 2.0: an id is a string, a number or null; a boolean is none of them (though Python's bool is an
    int), and the reply's id is null because the request's cannot be echoed."""
    reply = _request("ping", request_id=request_id)
    assert reply["id"] is None and reply["error"]["code"] == mcp.INVALID_REQUEST


@pytest.mark.parametrize("request_id", ["a", 7, 2.5])
def test_a_string_or_number_id_is_echoed(request_id):
    assert _request("ping", request_id=request_id) == {"jsonrpc": "2.0", "id": request_id, "result": {}}


@pytest.mark.parametrize("message", [
    {"id": 1, "method": "ping"},  # no jsonrpc member
    {"jsonrpc": "1.0", "id": 1, "method": "ping"},
    {"jsonrpc": "2.0", "id": 1, "method": 5},
    {"jsonrpc": "2.0", "id": 1},
])
def test_a_request_needs_jsonrpc_2_0_and_a_method_string(message):
    reply = _handle(message)
    assert reply is not None and reply["id"] == 1 and reply["error"]["code"] == mcp.INVALID_REQUEST


@pytest.mark.parametrize("method", ["completion/complete", "elicitation/create", "logging/setLevel",
                                    "prompts/list", "resources/list", "roots/list", "a", "zzz", "tools/callx"])
def test_a_method_not_served_is_not_found_whatever_it_sorts_next_to(method):
    """Only the exact names are answered: other MCP methods (completions, logging, prompts, resources, roots) are
    not served and get −32601, never another method's reply."""
    reply = _request(method, {})
    assert reply["error"] == {"code": mcp.METHOD_NOT_FOUND, "message": f"Method not found: {method!r}"}


def test_initialize_announces_the_protocol_and_a_fixed_tool_list():
    """The tool list never changes while the server runs, so ``listChanged`` is false (a client must not wait for
    ``notifications/tools/list_changed``)."""
    result = _request("initialize", {})["result"]
    assert result["protocolVersion"] == mcp.PROTOCOL_VERSION
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["serverInfo"]["name"] == "dcops"


def test_tools_list_uses_the_mcp_field_names_and_omits_absent_fields():
    """MCP's Tool object spells its schemas ``inputSchema``/``outputSchema`` and leaves out an optional field it
    has no value for (no ``null`` members)."""
    tools = _request("tools/list")["result"]["tools"]
    assert {t["name"] for t in tools} == mcp.TOOL_NAMES
    for tool in tools:
        assert "inputSchema" in tool and "outputSchema" in tool and "input_schema" not in tool
        assert None not in tool.values(), tool


def test_a_tool_call_reaches_the_runner_with_the_given_arguments_only():
    result = _call("play_action", {"session_id": "s", "action": {"slot": 0}})
    expected = {"operation": "step", "session_id": "s", "action": {"slot": 0}}
    assert result["isError"] is False and result["structuredContent"] == expected
    [content] = result["content"]
    assert content["type"] == "text" and json.loads(content["text"]) == expected


def test_a_client_error_of_the_sessions_keeps_its_code_and_field():
    result = _call("episode_state", {"session_id": "api"})
    assert result["isError"] is True
    assert result["structuredContent"] == {"code": "SESSION_NOT_FOUND", "message": "no such session",
                                           "field": "session_id"}


def test_any_other_failure_of_a_tool_is_a_tool_error_not_a_crash():
    result = _call("suggest_action", {"session_id": "crash"})
    assert result["isError"] is True
    error = result["structuredContent"]
    assert error["code"] == "TOOL_ERROR" and error["field"] is None and "the runner broke" in error["message"]


def test_bad_arguments_name_the_first_bad_argument_in_signature_order():
    """Several bad arguments: the error names the first of the tool's signature (``session_id`` before
    ``expected_step``), so a client fixes them in the order the schema lists them."""
    error = _call("play_action", {"action": {"slot": 0}, "expected_step": -1})["structuredContent"]
    assert error["code"] == "VALIDATION_ERROR" and error["field"] == "session_id"
    assert error["message"].startswith("session_id: ")


def test_tools_list_sends_a_tools_metadata_under_its_mcp_name():
    """MCP names a tool's metadata ``_meta`` on the wire; ``handle`` lists whatever FastMCP server it is given, so a
    tool that carries metadata (none of :func:`~dcops.server.mcp.tool_server`'s does yet) must list it so."""
    server = mcp.tool_server(_run_tool)

    async def version() -> dict[str, Any]:
        """The server's version."""
        return {}

    server.add_tool(version, meta={"origin": "by-hand"}, structured_output=True)
    reply = asyncio.run(mcp.handle(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode(), server))
    assert reply is not None
    [listed] = [t for t in reply["result"]["tools"] if t["name"] == "version"]
    assert listed["_meta"] == {"origin": "by-hand"} and "meta" not in listed
