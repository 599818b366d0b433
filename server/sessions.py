"""Sessions: one environment per client, addressed by an unguessable id, bounded in number and idle time.

Why a session layer of our own: the upstream OpenEnv reference server forgets the environment between plain
HTTP requests (its ``/step`` cannot continue an episode). Here a reset creates a session whose id comes back in
the ``X-Session-Id`` header and the ``session_id`` field; ``/step`` and ``/state`` take it back (header or
``?session_id=``), so ``curl`` users play whole episodes. A WebSocket connection is a session too (its lifetime
is the connection), so both transports share the one limit.

A :class:`Session` is used under its ``lock`` (an ``asyncio.Lock``): FastAPI runs handlers concurrently, and
two requests on one session must not interleave inside an environment step. Sessions never share an
environment, so trajectories are isolated. Every reset and step is written to the episode store (if any)
*before* the reply is built: a reply the client saw is a step on disk.

Lifecycle (why: a training loop of ``POST /reset`` without ``DELETE /session`` must never lock other users
out). A session stays open until it is closed, idle past the timeout, or evicted: when the server is full, a
new session takes the place of the least recently used HTTP session that is not busy, finished episodes first
(a session without a running episode), then running ones. WebSocket sessions are never evicted (their
connection is their lifetime) and a busy session (inside a request) is never evicted, so 503 comes only when
every slot is a WebSocket or busy. An evicted or expired id gets 404 with ``SESSION_EVICTED`` or
``SESSION_NOT_FOUND``; the clients in :mod:`dcops.client` then open a new session with a warning.

Retries: a step may carry ``expected_step`` (the step count the client believes the episode is at). A step whose
``expected_step`` is one behind, with the same action as the last step, is a retry of a step whose reply was
lost: it gets that reply again (``metadata.replayed``), not a second step; any other mismatch is 409
``STALE_STEP``.

Errors a client can cause raise :class:`ApiError`, which carries both its HTTP status and its WebSocket code.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from dcops.boundary import DIAGNOSTIC_INFO_KEYS, private_seed, split_info
from dcops.server.adapters import ActionError, Episode, adapter_for
from dcops.server.serialize import Reply, canonical_json, to_jsonable
from dcops.server.store import EpisodeStore

HTTP = "http"
WEBSOCKET = "ws"
"""Session transports: an HTTP session (addressed by its id) or a WebSocket connection."""


class ApiError(Exception):
    """A client-caused error: HTTP ``status``, WebSocket/JSON ``code``, message and (optional) field."""

    def __init__(self, status: int, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field

    @classmethod
    def from_action_error(cls, exc: ActionError) -> ApiError:
        return cls(422, "VALIDATION_ERROR", str(exc), exc.field)

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"detail": self.message, "code": self.code, "message": self.message}
        if self.field is not None:
            body["field"] = self.field
            body["detail"] = [{"loc": ["body", *self.field.split(".")], "msg": self.message, "type": "value_error"}]
        return body


class Session:
    """One client's environment and current episode (see the module docstring)."""

    def __init__(self, session_id: str, transport: str, store: EpisodeStore | None, default_task: str,
                 clock: Callable[[], float], episode_secret: bytes) -> None:
        self.id = session_id
        self.transport = transport
        self.store = store
        self._episode_secret = episode_secret
        self.default_task = default_task
        self._clock = clock
        self.last_used = clock()
        self.lock = asyncio.Lock()
        self.episode: Episode | None = None
        self.episode_id: str | None = None
        self.uid: str | None = None
        self.closed = False
        self._last_step: tuple[Any, dict[str, Any]] | None = None  # (the last action, its reply), for retries

    def touch(self) -> None:
        self.last_used = self._clock()

    @property
    def finished(self) -> bool:
        """No episode running (never reset, or the episode is over): the first to be evicted."""
        return self.episode is None or self.episode.done

    # ------------------------------------------------------------------------------------------ operations
    def reset(self, task: str | None = None, seed: int | None = None, episode_id: str | None = None,
              options: dict[str, Any] | None = None) -> dict[str, Any]:
        """Start a new episode (of ``task``, or the current/default one) and return the reset reply."""
        self.touch()
        task = task or (self.episode.task if self.episode is not None else self.default_task)
        try:
            adapter = adapter_for(task)
            options = adapter.parse_options(options or {})
        except ActionError as exc:
            raise ApiError.from_action_error(exc) from None
        if seed is None:
            seed = secrets.randbelow(2**31)  # every stored episode can be replayed
        previous = self.episode
        if previous is not None and previous.task == task and previous.options == options:
            episode = Episode(task, adapter, previous.env, options)  # same configuration: reuse the environment
        else:
            try:
                env = adapter.make_env(task, options)
            except (TypeError, ValueError) as exc:
                raise ApiError(422, "VALIDATION_ERROR", f"options: {exc}", "options") from None
            episode = Episode(task, adapter, env, options)
        self._abandon_current()
        episode.seed = seed
        env_seed = private_seed(self._episode_secret, seed)  # the public seed alone reproduces nothing
        try:
            adapter.reset(episode, env_seed)
        except (TypeError, ValueError) as exc:
            raise ApiError(422, "VALIDATION_ERROR", f"options: {exc}", "options") from None
        self.episode = episode
        self.uid = uuid.uuid4().hex
        self.episode_id = episode_id or self.uid
        self._last_step = None
        info = self._public_info(episode, episode.info)
        observation_json = canonical_json(episode.observation)  # written once: the store's and the reply's
        if self.store is not None:
            config = {"task": task, "options": options, "seed": seed, "env_seed": env_seed}
            self.store.start_episode(self.uid, self.episode_id, self.id, self.transport, task, seed, config,
                                     episode.observation, info, observation_json)
        return self._reply(None, info, extra={"seed": seed, "baseline": adapter.baseline_name},
                           observation_json=observation_json)

    def step(self, action: Any, expected_step: int | None = None) -> dict[str, Any]:
        """Play one action of the current episode and return the step reply. ``expected_step``: the episode's
        step count before this action as the client believes it (the module docstring says what a mismatch does)."""
        self.touch()
        episode = self._require_episode()
        if expected_step is not None and expected_step != episode.step_count:
            return self._retried_step(episode, action, expected_step)
        if episode.done:
            raise ApiError(409, "EPISODE_OVER", "the episode is over: reset to start another")
        if not isinstance(action, dict):
            raise ApiError(422, "VALIDATION_ERROR", "action: must be a JSON object", "action")
        try:
            env_action, canonical = episode.adapter.parse_action(episode, action)
        except ActionError as exc:
            raise ApiError.from_action_error(exc) from None
        try:
            obs, reward, terminated, truncated, info = episode.adapter.play(episode, env_action)
        except ValueError as exc:  # the environment's own validation names the field
            raise ApiError(422, "VALIDATION_ERROR", f"action: {exc}", "action") from None
        episode.step_count += 1
        episode.raw_observation, episode.info = obs, info
        episode.done = bool(terminated or truncated)
        episode.last_reward = float(reward)
        episode.total_reward += float(reward)
        episode.observation = episode.adapter.observe(episode, obs, info)
        public = self._public_info(episode, info)
        extra: dict[str, Any] = {"action": canonical, "truncated": bool(truncated)}
        if episode.done and episode.diagnostics:  # the withheld diagnostics, once the episode can't be played
            extra["diagnostics"] = {"reset": episode.diagnostics[0], "steps": episode.diagnostics[1:]}

        observation_json = canonical_json(episode.observation)  # written once: the store's and the reply's
        if self.store is not None:
            self.store.record_step(self.uid, episode.step_count, canonical, episode.observation, float(reward),
                                   episode.done, public, observation_json)
        reply = self._reply(float(reward), public, extra=extra, observation_json=observation_json)
        self._last_step = (action, reply)  # compared only when a retry comes (_retried_step)
        return reply

    def _retried_step(self, episode: Episode, action: Any, expected_step: int) -> dict[str, Any]:
        """A step whose ``expected_step`` is not the episode's count: the last reply again if it is a retry of
        the last step (same action), else 409 ``STALE_STEP``."""
        last = self._last_step
        if expected_step == episode.step_count - 1 and last is not None and _action_key(last[0]) == _action_key(action):
            reply = json.loads(json.dumps(last[1], default=str))
            reply["metadata"]["replayed"] = True
            return reply
        raise ApiError(409, "STALE_STEP", f"expected_step: the episode is at step {episode.step_count}, not "
                       f"{expected_step} (another client or a retry has already played it); read the state "
                       "and continue from there", "expected_step")

    def state(self) -> dict[str, Any]:
        """The ``/state`` reply: ids, task, seed, counters and the current observation."""
        self.touch()
        episode = self.episode
        if episode is None:
            return {"session_id": self.id, "step_count": 0, "done": False, "total_reward": 0.0}
        return {
            "session_id": self.id, "episode_id": self.episode_id, "task": episode.task, "seed": episode.seed,
            "step_count": episode.step_count, "done": episode.done, "total_reward": episode.total_reward,
            "last_reward": episode.last_reward, "observation": episode.observation, "options": episode.options,
        }

    def scorecard(self) -> dict[str, Any]:
        """Once the episode is over: its score beside the task's baseline on the same episode and, where the
        task has one, its fraction of the hindsight bound (computed on request: it replays the episode)."""
        self.touch()
        episode = self._require_episode()
        if not episode.done:
            raise ApiError(409, "EPISODE_RUNNING", "the scorecard comes once the episode is over")
        if episode.scorecard is None:
            episode.scorecard = to_jsonable(episode.adapter.scorecard(episode))
        return {"task": episode.task, "episode_id": self.episode_id, **episode.scorecard}

    def suggest(self) -> dict[str, Any]:
        """What the task's reference policy would play now."""
        self.touch()
        episode = self._require_episode()
        if episode.done:
            raise ApiError(409, "EPISODE_OVER", "the episode is over: reset to start another")
        try:
            action = episode.adapter.suggest(episode)
        except ActionError as exc:
            raise ApiError.from_action_error(exc) from None
        return {"policy": episode.adapter.baseline_name, "action": action}

    def close(self) -> None:
        """Release the environment; a running episode is marked abandoned in the store."""
        if self.closed:
            return
        self.closed = True
        self._abandon_current()
        if self.episode is not None:
            self.episode.env.close()
            self.episode = None

    # ------------------------------------------------------------------------------------------ helpers
    def _require_episode(self) -> Episode:
        if self.episode is None:
            raise ApiError(409, "NOT_RESET", "no episode yet: reset first")
        return self.episode

    def _abandon_current(self) -> None:
        if self.store is not None and self.uid is not None and self.episode is not None and not self.episode.done:
            self.store.abandon(self.uid)

    @staticmethod
    def _public_info(episode: Episode, info: dict[str, Any]) -> dict[str, Any]:
        """What a client is told of ``info`` (``dcops.boundary``); the diagnostics are kept for the end."""
        family = episode.adapter.family
        if not DIAGNOSTIC_INFO_KEYS[family]:  # nothing to withhold (cluster, queue, placement)
            return episode.adapter.public_info(info)
        public, diagnostics = split_info(family, info)
        episode.diagnostics.append(to_jsonable(diagnostics))
        return episode.adapter.public_info(public)

    def _reply(self, reward: float | None, info: dict[str, Any], extra: dict[str, Any],
               observation_json: str | None = None) -> Reply:
        """The reply to a reset or step; ``observation_json``: the observation's canonical JSON, which
        ``serialize.dumps`` splices in instead of writing the observation again."""
        episode = self.episode
        assert episode is not None
        metadata = {
            "session_id": self.id, "episode_id": self.episode_id, "task": episode.task, "step": episode.step_count,
            "total_reward": episode.total_reward, "info": info, **extra,
        }
        return Reply({"observation": episode.observation, "reward": reward, "done": episode.done,
                      "metadata": metadata, "session_id": self.id}, observation_json=observation_json)


def _action_key(action: Any) -> str:
    """An action's canonical JSON (to recognise a retried step)."""
    try:
        return json.dumps(action, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return repr(action)


class SessionManager:
    """Creates, finds, expires, evicts and closes sessions; never more than ``max_sessions`` at once (the module
    docstring gives the eviction order).

    :param clock: seconds, monotonic (injectable so that expiry can be tested without waiting).
    """

    FORGET_AFTER = 4096  # evicted ids remembered, so that their owner is told why (404 SESSION_EVICTED)

    def __init__(self, max_sessions: int, idle_timeout_s: float, store: EpisodeStore | None, default_task: str,
                 episode_secret: bytes, clock: Callable[[], float] = time.monotonic,
                 session_factory: Callable[[str, str], Any] | None = None) -> None:
        """``session_factory(id, transport)`` makes the session object (default: a :class:`Session` in this
        process; :mod:`dcops.server.workers` passes one that lives in a worker process)."""
        self.episode_secret = episode_secret
        self.session_factory = session_factory or (
            lambda sid, transport: Session(sid, transport, store, default_task, clock, episode_secret))
        self.max_sessions = max_sessions
        self.idle_timeout_s = idle_timeout_s
        self.store = store
        self.default_task = default_task
        self.clock = clock
        self._sessions: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._evicted: OrderedDict[str, None] = OrderedDict()
        self.counts = {"created": 0, "expired": 0, "evicted": 0, "refused": 0}

    def __len__(self) -> int:
        return len(self._sessions)

    @property
    def saturated(self) -> bool:
        """Full with nothing evictable: the next new session would be refused (503)."""
        return len(self._sessions) >= self.max_sessions and not self._evictable()

    def summary(self) -> dict[str, Any]:
        """Capacity and occupancy (``GET /sessions``): never the ids, which are the sessions' only credential."""
        sessions = list(self._sessions.values())
        return {"capacity": self.max_sessions, "open": len(sessions),
                "running": sum(not s.finished for s in sessions), "finished": sum(s.finished for s in sessions),
                "websocket": sum(s.transport == WEBSOCKET for s in sessions),
                "evictable": len(self._evictable()), "idle_timeout_s": self.idle_timeout_s,
                "totals": dict(self.counts)}

    def create(self, transport: str) -> Session:
        """A new session; when full, the least recently used evictable session makes room (module docstring);
        :class:`ApiError` 503 ``CAPACITY_REACHED`` only when none is evictable."""
        self.reap_idle()
        with self._lock:
            if len(self._sessions) >= self.max_sessions:
                candidates = self._evictable()
                if not candidates:
                    self.counts["refused"] += 1
                    raise ApiError(503, "CAPACITY_REACHED",
                                   f"the server holds its maximum of {self.max_sessions} sessions, all of them "
                                   "WebSocket connections or busy; retry later")
                victim = candidates[0]
                self._sessions.pop(victim.id)
                self._evicted[victim.id] = None
                while len(self._evicted) > self.FORGET_AFTER:
                    self._evicted.popitem(last=False)
                self.counts["evicted"] += 1
            else:
                victim = None
            session = self.session_factory(secrets.token_urlsafe(18), transport)
            self._sessions[session.id] = session
            self.counts["created"] += 1
        if victim is not None:
            victim.close()
        return session

    def _evictable(self) -> list[Session]:
        """HTTP sessions not inside a request, finished ones first, least recently used first."""
        candidates = [s for s in self._sessions.values()
                      if s.transport == HTTP and not s.closed and not s.lock.locked()]
        return sorted(candidates, key=lambda s: (not s.finished, s.last_used))

    def get(self, session_id: str | None, transport: str = "http") -> Session:
        """The live session ``session_id`` of ``transport`` (:class:`ApiError` 400 if none given, 404 if unknown)."""
        if not session_id:
            raise ApiError(400, "NO_SESSION",
                           "no session id: give the session id that reset returned (HTTP: the X-Session-Id header or "
                           "?session_id=; MCP: the session_id argument)")
        session = self._sessions.get(session_id)
        if session is None and session_id in self._evicted:
            raise ApiError(404, "SESSION_EVICTED",
                           f"session {session_id[:64]!r} was closed to make room for new sessions (the server was "
                           "full and it was the least recently used); reset without a session id to start again")
        if session is None or session.closed or session.transport != transport:
            raise ApiError(404, "SESSION_NOT_FOUND", f"unknown or expired session {session_id[:64]!r}")
        if self._expired(session):
            self.close(session_id)
            self.counts["expired"] += 1
            raise ApiError(404, "SESSION_NOT_FOUND", f"session {session_id[:64]!r} expired after being idle")
        return session

    def close(self, session_id: str) -> bool:
        """Close and forget a session; False if it did not exist."""
        with self._lock:
            session = self._sessions.pop(session_id, None)
        if session is None:
            return False
        session.close()
        return True

    def reap_idle(self) -> list[str]:
        """Close every HTTP session idle for longer than the timeout (WebSocket sessions end with their socket)."""
        expired = [s.id for s in list(self._sessions.values()) if s.transport == HTTP and self._expired(s)]
        for session_id in expired:
            self.close(session_id)
        self.counts["expired"] += len(expired)
        return expired

    def close_all(self) -> None:
        for session_id in list(self._sessions):
            self.close(session_id)

    def _expired(self, session: Session) -> bool:
        return self.clock() - session.last_used > self.idle_timeout_s
