"""The OpenEnv HTTP/WebSocket server: a FastAPI factory (:func:`create_app`), the module-level ``app`` and
:func:`main` (the ``server`` script; ``dcops serve`` does the same).

Endpoints (wire models in :mod:`dcops.models`):

=====================  ==========================================================================================
``WS /ws``             one session per connection; frames ``{"type": "reset"|"step"|"state"|"suggest"|"close",
                       "data"}``; replies ``observation`` / ``state`` / ``suggestion`` / ``error`` (``{"message",
                       "code", "field"}``) frames;
                       past the session limit one ``CAPACITY_REACHED`` error frame, then close
``POST /reset``        ``{seed?, episode_id?, task?, options?, ...}`` → ``{observation, reward: null, done,
                       metadata, session_id}`` (+ ``X-Session-Id`` header); with a session id, resets that session
``POST /step``         ``{"action": {...}, "expected_step"?: n}`` + session id → ``{observation, reward, done,
                       metadata}`` (a retry of the last step with ``expected_step`` gets the same reply again)
``GET /state``         session id → :class:`~dcops.models.EpisodeState`
``GET /suggest``       session id → the reference policy's action (what "let a baseline decide" plays; 422 on a
                      cluster episode reset with observation="arrays": the baseline reads the view)
``GET /scorecard``     session id, after the episode → score beside the baseline's on the same episode, and the
                       fraction of the hindsight bound where the task has one
``DELETE /session``    close a session (its running episode is marked abandoned)
``GET /sessions``      capacity and occupancy: open, running, finished, WebSocket, evictable, totals (no ids)
``GET /episodes``      stored episodes (``?task=&status=&since=&until=&limit=&offset=``), operator token only
``GET /episodes/{uid}`` one stored episode and its steps (``?offset=&limit=``), operator token only
``GET /schema``        action, observation and state JSON schemas (``?task=`` narrows the action schema)
``GET /metadata``      name, description, version, tasks with their options, limits
``GET /health``        ``{"status": "healthy" | "degraded", ...}`` (degraded: every session slot taken)
``POST /mcp``          JSON-RPC 2.0 (``initialize``, ``tools/list``, ``tools/call``); HTTP 200 even when empty
``GET /web/``          the web console (``/`` redirects there)
=====================  ==========================================================================================

The session id goes in the ``X-Session-Id`` header or the ``session_id`` query parameter. Client errors never
produce a 500: a malformed action is 422 naming the field (the episode stays usable), an unknown session 404,
a missing one 400, a finished episode or a stale ``expected_step`` 409, a full server 503 (only when every
slot is a WebSocket or busy: idle HTTP sessions are evicted first, :mod:`dcops.server.sessions`), an oversized
body 413.

Environment work runs under the session's lock. With ``workers = 0`` (the default) steps run inline on the event
loop (a cooling step takes a fraction of a millisecond), resets and baseline suggestions in a worker thread
(``anyio.to_thread``) so that building an environment never stalls the other sessions. With ``workers = N``
every session lives in one of N worker processes (:mod:`dcops.server.workers`) and the event loop only routes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import hmac
import importlib.util
import json
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
from fastapi import Body, FastAPI, Header, Query, Request, WebSocket, WebSocketDisconnect
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import TypeAdapter
from starlette.exceptions import HTTPException as StarletteHTTPException

import dcops
from dcops.models import (
    API_VERSION,
    AnyAction,
    EpisodeState,
    ErrorResponse,
    HealthResponse,
    MetadataResponse,
    Observation,
    ResetRequest,
    SchemaResponse,
    SessionsResponse,
    StepRequest,
    StepResponse,
    SuggestResponse,
)
from dcops.server import mcp
from dcops.server.adapters import FAMILIES, ActionError, adapter_for, served_tasks
from dcops.server.config import ServerConfig, add_serve_arguments
from dcops.server.serialize import Encoded, dumps
from dcops.server.sessions import HTTP, WEBSOCKET, ApiError, Session, SessionManager
from dcops.server.store import EpisodeStore
from dcops.server.workers import RayWorkerPool, RemoteSession, WorkerPool

WEB_DIR = Path(__file__).parent / "web"
DOCS_ASSETS = Path(importlib.util.find_spec("fastapi_offline").origin).parent / "static"  # type: ignore[union-attr]
DESCRIPTION = (
    "dcops: datacenter operations environments (cluster operations, cooling plant control, GPU placement, queue "
    "ordering) over "
    "OpenEnv HTTP and WebSocket, with stateful HTTP sessions, an episode store and a web console."
)

_SESSION_HEADER = Header(default=None, alias="X-Session-Id", max_length=128, description="from POST /reset")
_SESSION_QUERY = Query(default=None, max_length=128, description="alternative to the X-Session-Id header")

_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"description": description, "model": ErrorResponse} for code, description in (
        (400, "no session id given, or a malformed request (BAD_REQUEST)"),
        (403, "episode browsing off, or a missing or wrong operator token"),
        (404, "unknown, expired (SESSION_NOT_FOUND) or evicted (SESSION_EVICTED) session"),
        (409, "no episode yet, the episode is over (or not yet, for /scorecard), or a stale expected_step"),
        (413, "request body too large (PAYLOAD_TOO_LARGE)"),
        (422, "a field is invalid (VALIDATION_ERROR, field names it)"),
        (503, "session limit reached (CAPACITY_REACHED) or the session's worker stopped (WORKER_GONE)"),
    )
}


class BodySizeLimit:
    """ASGI middleware: a request body over ``max_bytes`` gets 413 before any handler reads it.

    Why buffer: FastAPI parses JSON bodies before the handler runs, so the only safe place to refuse a large
    (or chunked, length-less) body is here; bodies are small by contract, so buffering costs nothing.
    """

    def __init__(self, app: Any, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: dict[str, Any], receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length")
        if length is not None:
            declared = int(length) if length.isdigit() else -1  # digits only: no sign, space, or fraction
            if declared < 0:
                await _send_json(send, 400, {"detail": "invalid Content-Length", "code": "BAD_REQUEST",
                                             "message": "invalid Content-Length", "field": "Content-Length"})
                return
            if declared > self.max_bytes:
                await _send_json(send, 413, _too_large(self.max_bytes))
                return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await _send_json(send, 413, _too_large(self.max_bytes))
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def _too_large(max_bytes: int) -> dict[str, Any]:
    message = f"request body larger than {max_bytes} bytes"
    return {"detail": message, "code": "PAYLOAD_TOO_LARGE", "message": message}


async def _send_json(send: Callable, status: int, content: dict[str, Any]) -> None:
    body = json.dumps(content).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class StrictJSONResponse(JSONResponse):
    """Strict JSON through :func:`dcops.server.serialize.dumps` (numpy-safe, NaN → null, one pass)."""

    def render(self, content: Any) -> bytes:
        return dumps(content).encode("utf-8")  # an Encoded reply (from a worker) passes through as it is


def _json(content: Any, status: int = 200, session_id: str | None = None) -> JSONResponse:
    headers = {"X-Session-Id": session_id} if session_id else None
    return StrictJSONResponse(content, status_code=status, headers=headers)


def _error_response(exc: ApiError) -> JSONResponse:
    headers = {"Retry-After": "5"} if exc.status == 503 else None
    return JSONResponse(exc.body(), status_code=exc.status, headers=headers)


def _clean_errors(errors: Sequence[Any]) -> list[dict[str, Any]]:
    """Pydantic errors without ``input``/``ctx`` (they may hold NaN or bytes, which JSON cannot carry)."""
    return [{"loc": list(e.get("loc", ())), "msg": str(e.get("msg", "")), "type": str(e.get("type", ""))}
            for e in errors]


def _reset_arguments(request: ResetRequest | None) -> dict[str, Any]:
    """Split a reset body into task, seed, episode id and options (unknown top-level fields are options)."""
    if request is None:
        return {}
    options = dict(request.options or {})
    for key, value in (request.model_extra or {}).items():
        if key in options:
            raise ApiError(422, "VALIDATION_ERROR", f"{key}: given both at top level and in options", key)
        options[key] = value
    return {"task": request.task, "seed": request.seed, "episode_id": request.episode_id, "options": options}


def _public_episode(row: dict[str, Any]) -> dict[str, Any]:
    """A stored episode's row without what no one may read back: the session id (a live credential) and the
    private seed (it reproduces the episode's truth)."""
    return {"uid": row["uid"], "episode_id": row["episode_id"], "task": row["task"], "seed": row["seed"],
            "options": row["config"].get("options"), "transport": row["transport"], "status": row["status"],
            "started_at": row["started_at"], "ended_at": row["ended_at"], "n_steps": row["n_steps"],
            "total_reward": row["total_reward"]}


def _check_reset(arguments: dict[str, Any], default_task: str) -> None:
    """Refuse a reset whose task or options are invalid before it takes a session slot (422 naming the field)."""
    try:
        adapter_for(arguments.get("task") or default_task).parse_options(arguments.get("options") or {})
    except ActionError as exc:
        raise ApiError.from_action_error(exc) from None


def create_app(config: ServerConfig | None = None, clock: Callable[[], float] | None = None) -> FastAPI:
    """Build the app. ``config`` defaults to :meth:`ServerConfig.from_env`; ``clock`` (monotonic seconds)
    is injectable for session-expiry tests."""
    config = config or ServerConfig.from_env()
    if config.ray_address is not None and config.workers < 1:
        raise ValueError("workers: Ray workers (ray_address) need workers >= 1")
    adapter_for(config.default_task)  # fail at start, not at the first reset, on a bad default task
    holder: dict[str, Any] = {}

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        reaper = asyncio.create_task(_reap_forever(manager, config.session_idle_s))
        if config.workers:
            pool_args = (config.workers, config.db_path, config.db_sync, config.store_observations,
                         config.default_task, config.episode_secret)
            holder["pool"] = (RayWorkerPool(*pool_args, address=config.ray_address) if config.ray_address
                              else WorkerPool(*pool_args))
            app.state.pool = holder["pool"]
        try:
            yield
        finally:
            reaper.cancel()
            manager.close_all()
            if holder.get("pool") is not None:
                holder.pop("pool").stop()
            if holder.get("store") is not None:
                holder["store"].close()

    store = (EpisodeStore(config.db_path, config.db_sync, config.store_observations)
             if config.db_path is not None else None)
    if store is not None:
        store.mark_interrupted()  # episodes a previous server left running can never finish
    holder["store"] = store
    clock_kw = {"clock": clock} if clock is not None else {}

    def remote_session(sid: str, transport: str) -> RemoteSession:
        return RemoteSession(sid, transport, holder["pool"].assign(), manager.clock)

    manager = SessionManager(config.max_sessions, config.session_idle_s, store, config.default_task,
                             config.episode_secret, session_factory=remote_session if config.workers else None,
                             **clock_kw)

    # /docs and /redoc from the Swagger UI and ReDoc assets a PyPI package ships (fastapi-offline), so they render
    # without network (FastAPI's defaults load them from a CDN).
    app = FastAPI(title="dcops OpenEnv server", version=API_VERSION, description=DESCRIPTION, lifespan=lifespan,
                  docs_url=None, redoc_url=None)
    app.mount("/docs-assets", StaticFiles(directory=str(DOCS_ASSETS)), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    async def docs() -> Response:
        return get_swagger_ui_html(openapi_url="/openapi.json", title="dcops OpenEnv server — API",
                                   swagger_js_url="/docs-assets/swagger-ui-bundle.js",
                                   swagger_css_url="/docs-assets/swagger-ui.css",
                                   swagger_favicon_url="/docs-assets/favicon.png")

    @app.get("/redoc", include_in_schema=False)
    async def redoc() -> Response:
        return get_redoc_html(openapi_url="/openapi.json", title="dcops OpenEnv server — API",
                              redoc_js_url="/docs-assets/redoc.standalone.js",
                              redoc_favicon_url="/docs-assets/favicon.png", with_google_fonts=False)
    app.state.config = config
    app.state.sessions = manager
    app.state.store = store
    app.add_middleware(BodySizeLimit, max_bytes=config.max_body_bytes)

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return _error_response(exc)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        """FastAPI's own errors (a body it cannot parse, an unknown path, a wrong method) in the error body
        every other error has."""
        message = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        code = {400: "BAD_REQUEST", 404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED"}.get(exc.status_code,
                                                                                    f"HTTP_{exc.status_code}")
        return JSONResponse({"detail": message, "code": code, "message": message, "field": None},
                            status_code=exc.status_code, headers=getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = _clean_errors(exc.errors())
        first = errors[0] if errors else {"loc": [], "msg": "invalid request"}
        field = ".".join(str(p) for p in first["loc"] if p != "body") or "body"
        message = f"{field}: {first['msg']}"
        return JSONResponse({"detail": errors, "code": "VALIDATION_ERROR", "message": message, "field": field},
                            status_code=422)

    async def in_session(session: Session | RemoteSession, op: str, *args: Any, offload: bool = False,
                         **kwargs: Any) -> Any:
        """``session.<op>(*args, **kwargs)`` under the session's lock: in its worker process (``workers`` > 0),
        else inline for steps and state (sub-millisecond for cooling; a thread hop would cost a fifth of the
        round trip) and in a thread for resets and suggestions (building an environment or a baseline can take
        longer and must not stall the other sessions)."""
        async with session.lock:
            if session.closed:  # evicted or expired between the lookup and the lock
                manager.get(session.id, session.transport)
                raise ApiError(404, "SESSION_NOT_FOUND", "the session was closed; reset to start again")
            if isinstance(session, RemoteSession):
                try:
                    return await session.call(op, *args, **kwargs)
                except ApiError as exc:
                    if exc.code == "WORKER_GONE":  # its environment died with the worker: free the slot
                        manager.close(session.id)
                    raise
            fn = functools.partial(getattr(session, op), *args, **kwargs)
            if offload:
                return await anyio.to_thread.run_sync(fn)
            return fn()

    # ------------------------------------------------------------------------------------------ simulation
    @app.post("/reset", response_model=StepResponse, responses=_ERRORS, tags=["Environment Control"],
              summary="Start an episode (creates a session unless one is given)")
    async def reset(
        request: ResetRequest | None = Body(default=None),  # noqa: B008
        x_session_id: str | None = _SESSION_HEADER,
        session_id: str | None = _SESSION_QUERY,
    ) -> Response:
        arguments = _reset_arguments(request)
        sid = x_session_id or session_id
        if not sid:
            _check_reset(arguments, config.default_task)  # a bad request takes no slot (and evicts no one)
        session = manager.get(sid) if sid else manager.create(HTTP)
        try:
            reply = await in_session(session, "reset", offload=True, **arguments)
        except ApiError:
            if not sid:  # a session created for a failed reset is of no use to anyone
                manager.close(session.id)
            raise
        return _json(reply, session_id=session.id)

    @app.post("/step", response_model=StepResponse, responses=_ERRORS, tags=["Environment Control"],
              summary="Play one action in the session's episode")
    async def step(request: StepRequest, x_session_id: str | None = _SESSION_HEADER,
                   session_id: str | None = _SESSION_QUERY) -> Response:
        session = manager.get(x_session_id or session_id)
        reply = await in_session(session, "step", request.action, request.expected_step)
        return _json(reply, session_id=session.id)

    @app.get("/state", response_model=EpisodeState, responses=_ERRORS, tags=["State Management"],
             summary="The session's episode: ids, counters, current observation")
    async def state(x_session_id: str | None = _SESSION_HEADER, session_id: str | None = _SESSION_QUERY) -> Response:
        session = manager.get(x_session_id or session_id)
        reply = await in_session(session, "state")
        return _json(reply, session_id=session.id)

    @app.get("/suggest", response_model=SuggestResponse, responses=_ERRORS, tags=["Environment Control"],
             summary="The action the task's reference policy would play now")
    async def suggest(x_session_id: str | None = _SESSION_HEADER, session_id: str | None = _SESSION_QUERY) -> Response:
        session = manager.get(x_session_id or session_id)
        reply = await in_session(session, "suggest", offload=True)
        return _json(reply, session_id=session.id)

    @app.get("/scorecard", responses=_ERRORS, tags=["Environment Control"],
             summary="After the episode: its score beside the baseline's on the same episode, fraction of bound")
    async def scorecard(x_session_id: str | None = _SESSION_HEADER, session_id: str | None = _SESSION_QUERY) -> Response:
        session = manager.get(x_session_id or session_id)
        reply = await in_session(session, "scorecard", offload=True)
        return _json(reply, session_id=session.id)

    @app.delete("/session", responses=_ERRORS, tags=["Environment Control"], summary="Close a session")
    async def close_session(x_session_id: str | None = _SESSION_HEADER,
                            session_id: str | None = _SESSION_QUERY) -> Response:
        session = manager.get(x_session_id or session_id)
        async with session.lock:
            manager.close(session.id)
        return _json({"closed": session.id})

    # ------------------------------------------------------------------------------------------ episode store
    def operator_store(token: str | None) -> EpisodeStore:
        """The store, for the operator only (``ServerConfig.operator_token`` says why)."""
        if config.operator_token is None:
            raise ApiError(403, "BROWSING_OFF", "episode browsing is off: the operator sets DCOPS_OPERATOR_TOKEN "
                           "and sends it in the X-Operator-Token header")
        if token is None or not hmac.compare_digest(token.encode(), config.operator_token.encode()):
            raise ApiError(403, "FORBIDDEN", "X-Operator-Token: missing or wrong", "X-Operator-Token")
        if store is None:
            raise ApiError(404, "NO_STORE", "this server keeps no episode store (DCOPS_DB=off)")
        return store

    @app.get("/episodes", tags=["Episode Store"], responses=_ERRORS,
             summary="Stored episodes, filtered and paged (operator only)")
    async def list_episodes(
        task: str | None = Query(default=None, max_length=200),  # noqa: B008
        status: str | None = Query(default=None, pattern="^(running|done|abandoned|interrupted)$"),  # noqa: B008
        since: float | None = Query(default=None, description="started at or after (Unix s)"),  # noqa: B008
        until: float | None = Query(default=None, description="started before (Unix s)"),  # noqa: B008
        limit: int = Query(default=100, ge=1, le=1000),  # noqa: B008
        offset: int = Query(default=0, ge=0),  # noqa: B008
        order: str = Query(default="asc", pattern="^(asc|desc)$", description="by start time"),  # noqa: B008
        x_operator_token: str | None = Header(default=None, alias="X-Operator-Token", max_length=256),  # noqa: B008
    ) -> Response:
        rows = operator_store(x_operator_token).episodes(task, status, since, until, limit + 1, offset,
                                                         newest_first=order == "desc")
        more = len(rows) > limit
        return _json({"episodes": [_public_episode(r) for r in rows[:limit]],
                      "next_offset": offset + limit if more else None})

    @app.get("/episodes/{uid}", tags=["Episode Store"], responses=_ERRORS,
             summary="One stored episode and its steps, paged (operator only)")
    async def get_episode(
        uid: str,
        offset: int = Query(default=0, ge=0),  # noqa: B008
        limit: int = Query(default=100, ge=1, le=1000),  # noqa: B008
        x_operator_token: str | None = Header(default=None, alias="X-Operator-Token", max_length=256),  # noqa: B008
    ) -> Response:
        episodes = operator_store(x_operator_token)
        row = episodes.episode(uid[:64])
        if row is None:
            raise ApiError(404, "EPISODE_NOT_FOUND", f"no stored episode {uid[:64]!r}")
        steps = episodes.steps(row["uid"], offset, limit + 1)
        more = len(steps) > limit
        return _json({"episode": _public_episode(row), "steps": steps[:limit],
                      "next_offset": steps[limit]["t"] if more else None})

    # ------------------------------------------------------------------------------------------ description
    @app.get("/sessions", response_model=SessionsResponse, tags=["State Management"],
             summary="Session capacity and occupancy (no ids)")
    async def sessions() -> Response:
        return _json(manager.summary())

    @app.get("/health", response_model=HealthResponse, tags=["Health"])
    async def health() -> Response:
        status = "degraded" if manager.saturated else "healthy"
        body: dict[str, Any] = {"status": status, "sessions": len(manager), "max_sessions": config.max_sessions,
                                "version": API_VERSION}
        pool = holder.get("pool")
        if pool is not None:  # the probe also replaces a worker that died since the last session was assigned
            pool.replace_dead()
            body["workers"] = pool.status()
        return _json(body)

    @app.get("/metadata", response_model=MetadataResponse, tags=["Environment Info"])
    async def metadata() -> Response:
        tasks = []
        for task in served_tasks():
            adapter = adapter_for(task)
            tasks.append({"id": task, "family": adapter.family, "description": adapter.description,
                          "options": adapter.options_model.model_json_schema()})
        return _json({
            "name": "dcops", "description": DESCRIPTION, "version": API_VERSION, "package_version": dcops.__version__,
            "default_task": config.default_task, "tasks": tasks, "max_sessions": config.max_sessions,
            "session_idle_timeout_s": config.session_idle_s, "episode_store": store is not None,
        })

    @app.get("/schema", response_model=SchemaResponse, tags=["Schema"])
    async def schema(task: str | None = Query(default=None, max_length=200)) -> Response:  # noqa: B008
        by_family = {name: adapter.action_schema() for name, adapter in FAMILIES.items()}
        if task is not None:
            try:
                action = adapter_for(task).action_schema()
            except ActionError as exc:
                raise ApiError.from_action_error(exc) from None
        else:
            action = {"title": "Action", "description": "one of the task families' actions",
                      "anyOf": list(by_family.values())}
        return _json({"action": action, "observation": TypeAdapter(Observation).json_schema(),
                      "state": EpisodeState.model_json_schema(), "actions_by_family": by_family})

    # ------------------------------------------------------------------------------------------ MCP
    async def run_tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        reply = await _run_tool(name, arguments)
        return json.loads(reply) if isinstance(reply, Encoded) else reply

    async def _run_tool(name: str, arguments: dict[str, Any]) -> Any:
        sid = arguments.get("session_id")
        if sid is not None and not isinstance(sid, str):
            raise ApiError(422, "VALIDATION_ERROR", "session_id: must be a string", "session_id")
        if name == "reset":
            try:
                request = ResetRequest.model_validate({k: v for k, v in arguments.items() if k != "session_id"})
            except ValueError as exc:
                raise ApiError(422, "VALIDATION_ERROR", f"arguments: {exc}", "arguments") from None
            if not sid:
                _check_reset(_reset_arguments(request), config.default_task)
            session = manager.get(sid) if sid else manager.create(HTTP)
            try:
                return await in_session(session, "reset", offload=True, **_reset_arguments(request))
            except ApiError:
                if not sid:
                    manager.close(session.id)
                raise
        session = manager.get(sid)
        if name == "step":
            expected = arguments.get("expected_step")
            if expected is not None and (isinstance(expected, bool) or not isinstance(expected, int) or expected < 0):
                raise ApiError(422, "VALIDATION_ERROR", "expected_step: must be a non-negative integer",
                               "expected_step")
            return await in_session(session, "step", arguments.get("action"), expected)
        if name == "close":
            async with session.lock:
                manager.close(session.id)
            return {"closed": session.id}
        if name == "state":
            return await in_session(session, "state")
        return await in_session(session, "suggest", offload=True)

    tools = mcp.tool_server(run_tool)

    @app.post("/mcp", tags=["MCP"], summary="JSON-RPC 2.0 (MCP tools start_episode, play_action, episode_state, "
              "suggest_action, close_session)",
              openapi_extra={"requestBody": {"required": False, "content": {"application/json": {"schema": {}}}}},
              responses={202: {"description": "notification accepted (no body)"}})
    async def mcp_endpoint(request: Request) -> Response:
        reply = await mcp.handle(await request.body(), tools)
        if reply is None:
            return Response(status_code=202)
        return _json(reply)

    # ------------------------------------------------------------------------------------------ WebSocket
    @app.websocket("/ws")
    async def websocket_endpoint(websocket: WebSocket) -> None:
        await websocket.accept()
        try:
            session = manager.create(WEBSOCKET)
        except ApiError as exc:
            await _send_error(websocket, exc)
            await websocket.close(code=1013)  # try again later
            return
        try:
            await _serve_socket(websocket, session, config, in_session)
        except WebSocketDisconnect:
            pass
        finally:
            manager.close(session.id)

    # ------------------------------------------------------------------------------------------ console
    @app.get("/", include_in_schema=False)
    async def root() -> RedirectResponse:
        return RedirectResponse("/web/")

    @app.get("/web", include_in_schema=False)
    async def web_root() -> RedirectResponse:
        return RedirectResponse("/web/")

    app.mount("/web", StaticFiles(directory=WEB_DIR, html=True), name="web")
    _document_actions(app)
    return app


def _document_actions(app: FastAPI) -> None:
    """Publish the typed action models in the OpenAPI document: ``StepRequest.action`` is validated per task
    family at run time (the session's task decides which model applies), so FastAPI only sees a dict; the
    document shows (and schemathesis generates) the real action shapes instead."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = generate()
        actions = TypeAdapter(AnyAction).json_schema(ref_template="#/components/schemas/{model}")
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        components.update(actions.pop("$defs", {}))
        step_request = components.get("StepRequest", {}).get("properties", {})
        if "action" in step_request:
            step_request["action"] = {**actions, "description": step_request["action"].get("description", "")}
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


async def _reap_forever(manager: SessionManager, idle_s: float) -> None:
    """Expire idle HTTP sessions every quarter of the timeout, 0.5 to 60 s apart (creation expires them too)."""
    while True:
        await asyncio.sleep(min(max(idle_s / 4.0, 0.5), 60.0))
        manager.reap_idle()


def _frame(kind: str, data: Any) -> str:
    """A WebSocket frame's text; a worker's already-encoded reply is spliced in, not decoded and encoded again."""
    return '{"type":' + json.dumps(kind) + ',"data":' + dumps(data) + "}"


async def _send_error(websocket: WebSocket, exc: ApiError) -> None:
    await websocket.send_text(dumps({"type": "error", "data": {"message": exc.message, "code": exc.code,
                                                                "field": exc.field}}))


async def _serve_socket(websocket: WebSocket, session: Session, config: ServerConfig,
                        in_session: Callable[..., Any]) -> None:
    """The frame loop of one WebSocket session (see the module docstring for the protocol)."""
    while True:
        try:
            raw = await asyncio.wait_for(websocket.receive_text(), timeout=config.session_idle_s)
        except asyncio.TimeoutError:
            await _send_error(websocket, ApiError(408, "SESSION_EXPIRED", "idle for too long; reconnect"))
            await websocket.close(code=1000)
            return
        try:
            if len(raw) > config.max_body_bytes:
                raise ApiError(413, "PAYLOAD_TOO_LARGE", f"frame larger than {config.max_body_bytes} bytes")
            try:
                frame = json.loads(raw)
            except ValueError as exc:
                raise ApiError(400, "INVALID_JSON", f"invalid JSON: {exc}") from None
            if not isinstance(frame, dict):
                raise ApiError(400, "INVALID_JSON", "a frame must be a JSON object with 'type' and 'data'")
            kind = frame.get("type")
            data = frame.get("data", {})
            if data is None:
                data = {}
            if not isinstance(data, dict):
                raise ApiError(422, "VALIDATION_ERROR", "data: must be a JSON object", "data")
            if kind == "reset":
                try:
                    request = ResetRequest.model_validate(data)
                except ValueError as exc:
                    errors = _clean_errors(getattr(exc, "errors", lambda: [])())
                    field = ".".join(str(p) for p in errors[0]["loc"]) if errors else "data"
                    raise ApiError(422, "VALIDATION_ERROR", f"{field}: {errors[0]['msg'] if errors else exc}",
                                   field) from None
                arguments = _reset_arguments(request)
                reply = await in_session(session, "reset", offload=True, **arguments)
                out = _frame("observation", reply)
            elif kind == "step":
                # The OpenEnv client sends the action itself as data; {"action": {...}, "expected_step"?: n}
                # is accepted too.
                expected = None
                if "action" in data and isinstance(data["action"], dict) and set(data) <= {"action", "expected_step"}:
                    action, expected = data["action"], data.get("expected_step")
                    if expected is not None and (isinstance(expected, bool) or not isinstance(expected, int)
                                                 or expected < 0):
                        raise ApiError(422, "VALIDATION_ERROR", "expected_step: must be a non-negative integer",
                                       "expected_step")
                else:
                    action = data
                reply = await in_session(session, "step", action, expected)
                out = _frame("observation", reply)
            elif kind == "state":
                out = _frame("state", await in_session(session, "state"))
            elif kind == "suggest":
                out = _frame("suggestion", await in_session(session, "suggest", offload=True))
            elif kind == "close":
                await websocket.close(code=1000)
                return
            else:
                raise ApiError(400, "UNKNOWN_TYPE", f"type: must be reset, step, state, suggest or close, got {kind!r}",
                               "type")
        except ApiError as exc:
            await _send_error(websocket, exc)
            continue
        await websocket.send_text(out)


# ---------------------------------------------------------------------------------------------- entry points
def serve(args: argparse.Namespace) -> int:
    """Run uvicorn on the app built from the environment plus the command-line overrides."""
    import dataclasses

    import uvicorn

    config = ServerConfig.from_env()
    overrides: dict[str, Any] = {}
    if args.db is not None:
        overrides["db_path"] = None if args.db.lower() in ("off", "none") else Path(args.db).expanduser()
    if args.max_sessions is not None:
        overrides["max_sessions"] = args.max_sessions
    if args.idle_timeout is not None:
        overrides["session_idle_s"] = args.idle_timeout
    if args.workers is not None:
        overrides["workers"] = args.workers
    if args.ray_address is not None:
        overrides["ray_address"] = args.ray_address
    config = dataclasses.replace(config, **overrides)
    application = create_app(config)
    where = config.db_path if config.db_path is not None else "off"
    print(f"dcops server on http://{args.host}:{args.port} (console /web/, episode store: {where}, "
          f"{config.workers or 'no'} worker processes)", flush=True)
    uvicorn.run(application, host=args.host, port=args.port, log_level=args.log_level,
                ws_max_size=config.max_body_bytes, timeout_graceful_shutdown=5, ws_per_message_deflate=config.ws_compression)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """The ``server`` script: ``server [--host H] [--port P] [--db PATH] ...``."""
    parser = argparse.ArgumentParser(prog="server", description="dcops OpenEnv HTTP/WebSocket server")
    add_serve_arguments(parser)
    return serve(parser.parse_args(argv))


class _LazyApp:
    """``dcops.server.app:app`` for ``uvicorn`` and OpenEnv tooling, built on first use (so that importing
    this module opens no database)."""

    _app: FastAPI | None = None

    async def __call__(self, scope: dict[str, Any], receive: Callable, send: Callable) -> None:
        if self._app is None:
            self._app = create_app()
        await self._app(scope, receive, send)


app = _LazyApp()

if __name__ == "__main__":
    raise SystemExit(main())
