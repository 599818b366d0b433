"""Worker processes: environment steps off the event loop and on every core (``dcops serve --workers N``).

Why processes: a cluster window is milliseconds of Python, and Python threads share one core, so stepping
inline (or in threads) makes every client wait for every other and ``/health`` wait for all of them. With
``workers = N ≥ 1`` each session lives in one of N worker processes (the least loaded when it is created) and
the server only routes: the event loop parses requests, sends ``(op, session, arguments)`` down a pipe and awaits
the reply, so throughput grows with cores and the loop stays free. ``workers = 0`` keeps every session in the
server process (one process, no pipes: what tests and small deployments want).

A worker holds real :class:`~dcops.server.sessions.Session` objects and its own connection to the episode store
(SQLite in WAL mode serialises writers across processes), so everything a session does — keyed seeds, the truth
boundary, validation, ``expected_step`` retries, writing a step before replying — is the same code in both modes.
The server keeps a :class:`RemoteSession` per session: id, transport, lock, last use and whether its episode is
finished (from the replies), which is all the session manager needs to expire and evict. A worker that dies
fails its pending calls with 503 ``WORKER_GONE`` and the server closes each session that meets it (its next call
gets 404, which the clients recover from), and the pool starts a fresh worker in its place before it assigns
the next session (or when ``/health`` is probed), so a killed worker costs its own sessions, never capacity.

More than one machine: :class:`RayWorkerPool` makes the workers Ray actors spread over a Ray cluster
(``--ray-address auto``); the server is still the one front door and routes by session.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import multiprocessing
import threading
import time
from pathlib import Path
from typing import Any

import anyio

from dcops.server.serialize import Encoded
from dcops.server.sessions import ApiError

OPERATIONS = frozenset({"reset", "step", "state", "suggest", "scorecard"})


class SessionHost:
    """The sessions of one worker and the operations on them: what a worker process runs in its loop and what a
    Ray actor is (:class:`RayWorkerPool`). ``call`` returns ``("ok", reply JSON, done)``, ``("api", status, code,
    message, field)`` or ``("crash", text)``: plain data, so any transport carries it."""

    def __init__(self, db_path: Path | None, db_sync: str, store_observations: bool, default_task: str,
                 episode_secret: bytes) -> None:
        from dcops.server.store import EpisodeStore

        self.store = EpisodeStore(db_path, db_sync, store_observations) if db_path is not None else None
        self.default_task = default_task
        self.episode_secret = episode_secret
        self.sessions: dict[str, Any] = {}

    def call(self, op: str, sid: str, transport: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple:
        from dcops.server.serialize import dumps
        from dcops.server.sessions import Session

        try:
            if op not in OPERATIONS:
                raise ApiError(400, "UNKNOWN_OPERATION", f"unknown operation {op!r}")
            session = self.sessions.get(sid)
            if session is None:
                session = self.sessions[sid] = Session(sid, transport, self.store, self.default_task, time.monotonic,
                                                       self.episode_secret)
            reply = getattr(session, op)(*args, **kwargs)
            return ("ok", dumps(reply), bool(reply.get("done")))
        except ApiError as exc:
            return ("api", exc.status, exc.code, exc.message, exc.field)
        except Exception as exc:  # a bug, reported as the in-process server would (a 500), not a dead worker
            return ("crash", f"{type(exc).__name__}: {exc}")

    def close(self, sid: str) -> None:
        session = self.sessions.pop(sid, None)
        if session is not None:
            session.close()

    def shutdown(self) -> None:
        for sid in list(self.sessions):
            self.close(sid)
        if self.store is not None:
            self.store.close()
            self.store = None


def _serve(conn: Any, db_path: Path | None, db_sync: str, store_observations: bool, default_task: str,
           episode_secret: bytes) -> None:
    """A worker process's loop: ``(request id, op, session id, transport, args, kwargs)`` in, ``(request id,
    result)`` out; ``close`` messages get no reply; ``None`` (or the pipe closing) ends it."""
    host = SessionHost(db_path, db_sync, store_observations, default_task, episode_secret)
    try:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                break
            if message is None:
                break
            rid, op, sid, transport, args, kwargs = message
            if op == "close":
                host.close(sid)
                continue
            conn.send((rid, host.call(op, sid, transport, args, kwargs)))
    finally:
        host.shutdown()


class WorkerHandle:
    """One worker process and its pipe: calls are matched to replies by id (a reader thread resolves them), so any
    number of sessions may wait on one worker at once. Process and reader are daemons: neither holds up an exit."""

    def __init__(self, context: Any, db_path: Path | None, db_sync: str, store_observations: bool,
                 default_task: str, episode_secret: bytes) -> None:
        self._conn, child = context.Pipe()
        self.process = context.Process(
            target=_serve, args=(child, db_path, db_sync, store_observations, default_task, episode_secret),
            daemon=True, name="dcops-worker")
        self.process.start()
        child.close()
        self.sessions = 0
        self.alive = True
        self._ids = itertools.count()
        self._pending: dict[int, concurrent.futures.Future] = {}
        self._send_lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True, name="dcops-worker-reader")
        self._reader.start()

    def submit(self, op: str, sid: str, transport: str, args: tuple[Any, ...],
               kwargs: dict[str, Any]) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        future.set_running_or_notify_cancel()  # a cancelled await can no longer cancel it under the reader
        with self._send_lock:
            if not self.alive:
                future.set_exception(_worker_gone())
                return future
            rid = next(self._ids)
            self._pending[rid] = future
            try:
                self._conn.send((rid, op, sid, transport, args, kwargs))
            except (OSError, ValueError):
                self._pending.pop(rid, None)
                future.set_exception(_worker_gone())
        return future

    def send_close(self, sid: str) -> None:
        """Release a session in the worker (no reply awaited: closing must never wait behind a step)."""
        with self._send_lock:
            if self.alive:
                try:
                    self._conn.send((-1, "close", sid, "", (), {}))
                except (OSError, ValueError):
                    pass

    def _read(self) -> None:
        while True:
            try:
                rid, result = self._conn.recv()
            except (EOFError, OSError):
                break
            future = self._pending.pop(rid, None)
            if future is not None:
                future.set_result(result)
        with self._send_lock:
            self.alive = False
            pending, self._pending = self._pending, {}
        for future in pending.values():
            future.set_exception(_worker_gone())

    def stop(self, timeout_s: float = 10.0) -> None:
        with self._send_lock:
            if self.alive:
                try:
                    self._conn.send(None)
                except (OSError, ValueError):
                    pass
        self.process.join(timeout_s)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(timeout_s)
        self._conn.close()


def _worker_gone() -> ApiError:
    return ApiError(503, "WORKER_GONE", "the worker process holding this session stopped; reset to start again")


class WorkerPool:
    """``n`` worker processes (started with ``spawn``: a clean interpreter, safe beside the server's threads)."""

    def __init__(self, n: int, db_path: Path | None, db_sync: str, store_observations: bool, default_task: str,
                 episode_secret: bytes) -> None:
        if n < 1:
            raise ValueError(f"workers must be >= 1, got {n}")
        self._context = multiprocessing.get_context("spawn")
        self._args = (db_path, db_sync, store_observations, default_task, episode_secret)
        self.workers = [self._start() for _ in range(n)]
        self.replaced = 0
        """Workers found dead and replaced by fresh ones since the pool started."""

    def _start(self) -> WorkerHandle:
        return WorkerHandle(self._context, *self._args)

    def assign(self) -> WorkerHandle:
        """The worker with the fewest sessions, after replacing any that died (:meth:`replace_dead`)."""
        self.replace_dead()
        return min(self.workers, key=lambda w: w.sessions)

    def replace_dead(self) -> int:
        """Start a fresh worker in the place of each one that died (killed, out of memory, a crash of the
        interpreter), so the pool keeps its size: the dead worker's sessions are lost (their clients get
        ``WORKER_GONE`` once, then reset), every later session has all ``n`` workers again. Returns how many
        were replaced now."""
        dead = [i for i, worker in enumerate(self.workers) if not worker.alive]
        for i in dead:
            self.workers[i].stop(timeout_s=1.0)  # reap the process and close its pipe
            self.workers[i] = self._start()
        self.replaced += len(dead)
        return len(dead)

    def status(self) -> dict[str, int]:
        """Worker counts for ``/health``: configured, alive now, replaced since the start."""
        return {"configured": len(self.workers), "alive": sum(w.alive for w in self.workers),
                "replaced": self.replaced}

    def stop(self) -> None:
        for worker in self.workers:
            worker.stop()


class RemoteSession:
    """The server's side of a session that lives in a worker (module docstring): what the session manager reads
    (``id``, ``transport``, ``lock``, ``last_used``, ``finished``, ``closed``) and :meth:`call`."""

    def __init__(self, session_id: str, transport: str, worker: WorkerHandle, clock: Any) -> None:
        self.id = session_id
        self.transport = transport
        self.worker = worker
        self.lock = asyncio.Lock()
        self.closed = False
        self.finished = True
        self._clock = clock
        self.last_used = clock()
        worker.sessions += 1

    def touch(self) -> None:
        self.last_used = self._clock()

    async def call(self, op: str, *args: Any, **kwargs: Any) -> Encoded:
        """Run ``Session.<op>(*args, **kwargs)`` in the worker and return its reply as JSON text (the worker
        encodes it: the event loop only routes); the worker's :class:`ApiError` is raised here."""
        self.touch()
        # Sent from a thread: a pipe whose worker is busy can fill, and a full pipe must not stall the event loop.
        future = await anyio.to_thread.run_sync(self.worker.submit, op, self.id, self.transport, args, kwargs)
        status, *rest = await asyncio.wrap_future(future)
        if status == "api":
            raise ApiError(*rest)
        if status == "crash":
            raise RuntimeError(f"worker: {rest[0]}")
        text, done = rest
        if op == "reset":
            self.finished = False
        elif op == "step":
            self.finished = done
        return Encoded(text)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.worker.sessions -= 1
        self.worker.send_close(self.id)


class RayWorkerHandle:
    """A worker that is a Ray actor (a :class:`SessionHost`), anywhere in the Ray cluster."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor
        self.sessions = 0
        self.alive = True

    def submit(self, op: str, sid: str, transport: str, args: tuple[Any, ...],
               kwargs: dict[str, Any]) -> concurrent.futures.Future:
        result: concurrent.futures.Future = concurrent.futures.Future()
        result.set_running_or_notify_cancel()
        if not self.alive:
            result.set_exception(_worker_gone())
            return result
        inner = self.actor.call.remote(op, sid, transport, args, kwargs).future()

        def relay(done: concurrent.futures.Future) -> None:
            try:
                result.set_result(done.result())
            except Exception:  # the actor died (RayActorError) or its node went away
                self.alive = False
                result.set_exception(_worker_gone())

        inner.add_done_callback(relay)
        return result

    def send_close(self, sid: str) -> None:
        if self.alive:
            self.actor.close.remote(sid)

    def stop(self, timeout_s: float = 10.0) -> None:
        import ray

        if self.alive:
            try:
                ray.get(self.actor.shutdown.remote(), timeout=timeout_s)
            except Exception:  # already gone: nothing to release
                pass
        ray.kill(self.actor)


class RayWorkerPool(WorkerPool):
    """``n`` workers as Ray actors, so that sessions run on every machine of a Ray cluster (``dcops serve
    --workers N --ray-address auto`` on the head node; ``local`` starts a private Ray instance). The server stays
    the one front door and routes by session, as with processes. Each actor opens the episode store at the same
    path on its own machine (a shared file system makes it one store; ``DCOPS_DB=off`` keeps none). Ray tells of
    an actor's death only when a call to it fails, so a dead actor is replaced (:meth:`replace_dead`) once one of
    its calls has failed: an actor that dies idle costs the next session placed on it one ``WORKER_GONE``."""

    def __init__(self, n: int, db_path: Path | None, db_sync: str, store_observations: bool, default_task: str,
                 episode_secret: bytes, address: str) -> None:
        import ray

        if n < 1:
            raise ValueError(f"workers must be >= 1, got {n}")
        self._started_ray = not ray.is_initialized()
        if self._started_ray:
            if address == "local":
                ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False)
            else:
                ray.init(address=address, log_to_driver=False, configure_logging=False)
        cpus = ray.cluster_resources().get("CPU", 0.0)
        if n > cpus:
            raise ValueError(f"workers: {n} Ray actors of one CPU each, but the Ray cluster has {cpus:g} CPUs")
        self._actor_class = ray.remote(num_cpus=1, scheduling_strategy="SPREAD")(SessionHost)
        self._args = (db_path, db_sync, store_observations, default_task, episode_secret)
        self.workers = [self._start() for _ in range(n)]
        self.replaced = 0

    def _start(self) -> RayWorkerHandle:  # type: ignore[override]
        return RayWorkerHandle(self._actor_class.remote(*self._args))

    def stop(self) -> None:
        import ray

        super().stop()
        if self._started_ray:
            ray.shutdown()
