"""Typed clients of the dcops OpenEnv server: :class:`DcopsClient` (plain HTTP, stateful sessions) and
:class:`DcopsWebSocketClient` (one session per connection, lowest latency).

Why two: HTTP suits scripts, notebooks and ``curl``-like use (the session id travels in a header); the
WebSocket suits training loops (no connection per step). Both return the same :class:`StepResult` and
:class:`~dcops.models.EpisodeState`, validate actions with the wire models of :mod:`dcops.models` when given
one, and raise :class:`ServerError` (HTTP status, code, message, field) on an error reply. The HTTP client
uses only the standard library; the WebSocket one needs ``websockets`` (a dependency of the server).

Recovery (``recover=True``, the default), because servers restart and evict idle sessions:

- a lost connection or a timeout is retried (``retries`` times, with back-off) for every call that is safe to
  repeat: ``state``, ``suggest``, ``metadata``, ``close``, ``reset`` (a repeated reset starts a fresh episode;
  an orphaned session is reclaimed by the server) and ``step``, which carries ``expected_step`` so that the
  server answers a repeated step with the reply it already gave instead of playing it twice;
- ``reset`` on a session the server no longer has (restarted, expired, evicted) opens a new one, with a warning;
- ``step`` on a session the server no longer has ends the episode there, with a warning: it returns the last
  observation with ``done=True``, ``reward=0.0`` and ``metadata["session_lost"]`` (the episode was cut short,
  as Gymnasium's truncation), so the next ``reset`` starts a new one. No exception reaches a training loop.

Example::

    from dcops.client import DcopsClient

    with DcopsClient("http://127.0.0.1:8000") as env:
        result = env.reset(task="cooling/single_zone_recovery", seed=7)
        while not result.done:
            result = env.step(env.suggest())        # or your own action dict / model
        print(env.state().total_reward)
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
import warnings
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from dcops.models import EpisodeState


@dataclass(frozen=True)
class StepResult:
    """A reset or step reply: the observation (a dict of the task family's observation model), the reward
    (``None`` after a reset), ``done`` and the metadata (session and episode ids, the environment's ``info``)."""

    observation: dict[str, Any]
    reward: float | None
    done: bool
    metadata: dict[str, Any]

    @classmethod
    def from_reply(cls, reply: dict[str, Any]) -> StepResult:
        return cls(reply["observation"], reply.get("reward"), bool(reply.get("done", False)),
                   reply.get("metadata") or {})


class ServerError(RuntimeError):
    """An error reply: ``status`` (HTTP, 0 over WebSocket), ``code`` (e.g. ``VALIDATION_ERROR``), ``field``."""

    def __init__(self, status: int, code: str, message: str, field: str | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.status, self.code, self.message, self.field = status, code, message, field


GONE_CODES = frozenset({"SESSION_NOT_FOUND", "SESSION_EVICTED", "SESSION_EXPIRED", "NOT_RESET", "WORKER_GONE"})
"""Error codes meaning the server no longer holds the client's session or episode."""


class SessionLostWarning(UserWarning):
    """The server no longer had the client's session (it restarted, or the session expired or was evicted)."""


def _lost_result(last: StepResult | None, why: str) -> StepResult:
    """The truncated step a recovering client returns when its episode is gone (module docstring)."""
    observation = last.observation if last is not None else {}
    metadata = {**(last.metadata if last is not None else {}), "session_lost": why, "truncated": True}
    return StepResult(observation, 0.0, True, metadata)


def _action_dict(action: Any) -> dict[str, Any]:
    if isinstance(action, BaseModel):
        return action.model_dump(exclude_none=True)
    if isinstance(action, dict):
        return action
    raise TypeError(f"action must be a dict or a dcops.models action, got {type(action).__name__}")


def _reset_body(task: str | None, seed: int | None, episode_id: str | None, options: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {k: v for k, v in (("task", task), ("seed", seed), ("episode_id", episode_id)) if v is not None}
    if options:
        body["options"] = options
    return body


class DcopsClient:
    """HTTP client: ``reset`` opens (or reuses) a session, ``step``/``state``/``suggest`` use it, ``close``
    releases it. ``timeout_s`` bounds each request."""

    def __init__(self, base_url: str = "http://127.0.0.1:8000", timeout_s: float = 30.0, recover: bool = True,
                 retries: int = 3) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.recover = recover
        self.retries = retries if recover else 0
        self.session_id: str | None = None
        self._last: StepResult | None = None
        self._step_count = 0

    def _request(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        """One call, repeated on a lost connection or a timeout (every call this client makes is safe to repeat:
        the module docstring says why)."""
        for attempt in range(self.retries + 1):
            try:
                return self._request_once(method, path, body)
            except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
                if isinstance(exc, urllib.error.HTTPError) or attempt == self.retries:
                    raise
                time.sleep(min(0.2 * 2**attempt, 2.0))
        raise AssertionError("unreachable")

    def _request_once(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base_url + path, data=data, method=method)
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if self.session_id:
            request.add_header("X-Session-Id", self.session_id)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as exc:
            try:
                payload = json.loads(exc.read() or b"{}")
            except ValueError:
                payload = {}
            message = payload.get("message") or payload.get("detail") or exc.reason
            raise ServerError(exc.code, payload.get("code", "HTTP_ERROR"), str(message), payload.get("field")) from None

    def reset(self, task: str | None = None, seed: int | None = None, episode_id: str | None = None,
              **options: Any) -> StepResult:
        """Start an episode; extra keyword arguments are task options (see ``/metadata``)."""
        body = _reset_body(task, seed, episode_id, options)
        try:
            reply = self._request("POST", "/reset", body)
        except ServerError as exc:
            if not (self.recover and self.session_id and exc.code in GONE_CODES):
                raise
            warnings.warn(f"the server no longer has session {self.session_id[:8]}… ({exc.code}); opening a new "
                          "one", SessionLostWarning, stacklevel=2)
            self.session_id = None
            reply = self._request("POST", "/reset", body)
        self.session_id = reply["session_id"]
        return self._remember(StepResult.from_reply(reply))

    def step(self, action: Any) -> StepResult:
        """Play an action (a dict or a :mod:`dcops.models` action model)."""
        body = {"action": _action_dict(action)}
        if self.recover:
            body["expected_step"] = self._step_count
        try:
            return self._remember(StepResult.from_reply(self._request("POST", "/step", body)))
        except ServerError as exc:
            if not (self.recover and exc.code in GONE_CODES):
                raise
            warnings.warn(f"the server no longer has this episode ({exc.code}: {exc.message}); it ends here "
                          "(done, metadata['session_lost']): reset to start another", SessionLostWarning,
                          stacklevel=2)
            self.session_id = None
            return _lost_result(self._last, exc.code)

    def _remember(self, result: StepResult) -> StepResult:
        self._last = result
        self._step_count = int(result.metadata.get("step", 0))
        return result

    def state(self) -> EpisodeState:
        return EpisodeState.model_validate(self._request("GET", "/state"))

    def suggest(self) -> dict[str, Any]:
        """The action the task's reference policy would play now (a dict ready for :meth:`step`)."""
        return self._request("GET", "/suggest")["action"]

    def metadata(self) -> dict[str, Any]:
        return self._request("GET", "/metadata")

    def close(self) -> None:
        """Close the session on the server (its episode is kept in the store)."""
        if self.session_id is not None:
            try:
                self._request("DELETE", "/session")
            except (ServerError, OSError):
                pass  # already expired or the server is gone: nothing left to release
            self.session_id = None

    def __enter__(self) -> DcopsClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class DcopsWebSocketClient:
    """WebSocket client (synchronous): one connection = one server session. ``base_url`` may be ``http://``
    or ``ws://``; ``/ws`` is appended."""

    def __init__(self, base_url: str = "ws://127.0.0.1:8000", timeout_s: float = 30.0, recover: bool = True) -> None:
        url = base_url.rstrip("/")
        for http, ws in (("http://", "ws://"), ("https://", "wss://")):
            if url.startswith(http):
                url = ws + url[len(http):]
        self.url = url + "/ws"
        self.timeout_s = timeout_s
        self.recover = recover
        self._ws: Any = None
        self._last: StepResult | None = None
        self._step_count = 0

    def connect(self) -> DcopsWebSocketClient:
        from websockets.sync.client import connect

        if self._ws is None:
            # Entered as a context manager (websockets >= 17.1 warns otherwise); ``close`` closes it.
            self._ws = connect(self.url, open_timeout=self.timeout_s, max_size=None).__enter__()
        return self

    def _exchange(self, frame: dict[str, Any]) -> dict[str, Any]:
        self.connect()
        self._ws.send(json.dumps(frame))
        reply = json.loads(self._ws.recv(timeout=self.timeout_s))
        if reply.get("type") == "error":
            data = reply.get("data", {})
            raise ServerError(0, data.get("code", "ERROR"), data.get("message", ""), data.get("field"))
        return reply

    def _drop(self) -> None:
        """Forget a dead connection (the next exchange opens a new one, i.e. a new session)."""
        if self._ws is not None:
            try:
                self._ws.close()
            except Exception:  # already broken: nothing to release
                pass
            self._ws = None

    def reset(self, task: str | None = None, seed: int | None = None, episode_id: str | None = None,
              **options: Any) -> StepResult:
        frame = {"type": "reset", "data": _reset_body(task, seed, episode_id, options)}
        try:
            reply = self._exchange(frame)
        except (OSError, _connection_closed()) as exc:
            if not self.recover:
                raise
            warnings.warn(f"the connection was lost ({type(exc).__name__}); reconnecting (a new session)",
                          SessionLostWarning, stacklevel=2)
            self._drop()
            reply = self._exchange(frame)
        return self._remember(StepResult.from_reply(reply["data"]))

    def step(self, action: Any) -> StepResult:
        data: dict[str, Any] = {"action": _action_dict(action)}
        if self.recover:
            data["expected_step"] = self._step_count
        try:
            return self._remember(StepResult.from_reply(self._exchange({"type": "step", "data": data})["data"]))
        except (OSError, _connection_closed()) as exc:
            if not self.recover:
                raise
            warnings.warn(f"the connection was lost ({type(exc).__name__}), and its session with it; the episode "
                          "ends here (done, metadata['session_lost']): reset to start another",
                          SessionLostWarning, stacklevel=2)
            self._drop()
            return _lost_result(self._last, "CONNECTION_LOST")
        except ServerError as exc:
            if not (self.recover and exc.code in GONE_CODES):
                raise
            warnings.warn(f"the server ended this session ({exc.code}: {exc.message}); the episode ends here "
                          "(done, metadata['session_lost']): reset to start another", SessionLostWarning,
                          stacklevel=2)
            self._drop()
            return _lost_result(self._last, exc.code)

    def _remember(self, result: StepResult) -> StepResult:
        self._last = result
        self._step_count = int(result.metadata.get("step", 0))
        return result

    def state(self) -> EpisodeState:
        return EpisodeState.model_validate(self._exchange({"type": "state"})["data"])

    def close(self) -> None:
        if self._ws is not None:
            try:
                self._ws.send(json.dumps({"type": "close"}))
            except Exception:  # the socket may already be gone; closing must not fail
                pass
            self._ws.close()
            self._ws = None

    def __enter__(self) -> DcopsWebSocketClient:
        return self.connect()

    def __exit__(self, *exc: object) -> None:
        self.close()


def _connection_closed() -> type[BaseException]:
    """``websockets``' connection-closed error (imported lazily: the HTTP client needs no ``websockets``)."""
    from websockets.exceptions import ConnectionClosed

    return ConnectionClosed
