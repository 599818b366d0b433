"""The worker machinery's parts by hand, without a process or a Ray cluster: what a worker's host answers, the
server-side session's first flags, and a Ray pool's start and stop with ``ray`` replaced by a fake that records
what it was asked. The processes and a real Ray instance are tested in ``test_workers.py``."""

from __future__ import annotations

import concurrent.futures
import json
import multiprocessing
import queue
import sys
import threading
import types
from typing import Any

import pytest

from dcops.server.sessions import Session
from dcops.server.workers import (
    RayWorkerHandle,
    RayWorkerPool,
    RemoteSession,
    SessionHost,
    WorkerHandle,
    _serve,
)

COOLING = "cooling/single_zone_recovery"
SECRET = b"workers by hand"


# ---------------------------------------------------------------------------------- a worker's host and its loop

def test_a_host_answers_an_unknown_operation_with_a_400_and_goes_on_serving():
    host = SessionHost(None, "normal", True, COOLING, SECRET)
    try:
        assert host.call("teleport", "s1", "http", (), {})[:3] == ("api", 400, "UNKNOWN_OPERATION")
        status, _, done = host.call("reset", "s1", "http", (), {"task": COOLING, "seed": 1})
        assert (status, done) == ("ok", False)
    finally:
        host.shutdown()



def test_a_host_closes_what_it_holds_and_ignores_what_it_does_not(tmp_path):
    host = SessionHost(tmp_path / "host.db", "normal", True, COOLING, SECRET)
    for sid in ("a", "b"):
        assert host.call("reset", sid, "http", (), {"task": COOLING, "seed": 1})[0] == "ok"
    a, b = host.sessions["a"], host.sessions["b"]
    host.close("a")
    host.close("never-opened")
    assert a.closed and not b.closed and list(host.sessions) == ["b"]
    host.shutdown()
    assert b.closed and host.sessions == {} and host.store is None
    SessionHost(None, "normal", True, COOLING, SECRET).shutdown()  # no store: nothing to close



def test_a_bug_in_a_session_is_reported_as_a_crash_not_raised(monkeypatch):
    def broken(self: Session) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(Session, "state", broken)
    host = SessionHost(None, "normal", True, COOLING, SECRET)
    assert host.call("state", "a", "http", (), {}) == ("crash", "RuntimeError: boom")
    host.shutdown()



def test_a_worker_loop_answers_by_request_id_skips_closes_and_ends_on_none():
    """``_serve`` run in a thread on one end of a pipe: a reset is answered under its request id, a close gets no
    reply, and ``None`` ends the loop even though the pipe stays open."""
    ours, theirs = multiprocessing.Pipe()
    loop = threading.Thread(target=_serve, args=(theirs, None, "normal", True, COOLING, SECRET), daemon=True)
    loop.start()
    try:
        ours.send((7, "reset", "s1", "http", (), {"task": COOLING, "seed": 1}))
        assert ours.poll(30)
        rid, (status, _, done) = ours.recv()
        assert (rid, status, done) == (7, "ok", False)
        ours.send((-1, "close", "s1", "", (), {}))
        ours.send((8, "state", "s1", "http", (), {}))  # the closed session is gone: a fresh one answers
        rid, (status, state, _) = ours.recv()
        assert (rid, status) == (8, "ok") and "episode_id" not in json.loads(state)  # never reset: no episode
        ours.send(None)
        loop.join(5)
        assert not loop.is_alive()
    finally:
        ours.close()  # ends a loop that ignored None (EOF)
        loop.join(5)



class _ScriptedConn:
    """A worker's end of the pipe that hands out ``messages`` (an exception instance is raised) and then fails the
    test if read again."""

    def __init__(self, *messages: Any) -> None:
        self.messages = list(messages)
        self.sent: list[Any] = []

    def recv(self) -> Any:
        if not self.messages:
            raise AssertionError("read after the end")
        message = self.messages.pop(0)
        if isinstance(message, BaseException):
            raise message
        return message

    def send(self, message: Any) -> None:
        self.sent.append(message)



@pytest.mark.parametrize("end", [EOFError(), OSError("bad file descriptor"), None])
def test_a_worker_loop_ends_at_the_end_of_its_pipe_or_a_none_and_reads_no_further(end):
    conn = _ScriptedConn((3, "teleport", "a", "http", (), {}), (-1, "close", "a", "", (), {}),
                         (4, "abort", "a", "http", (), {}), end)  # unknown operations after and before "close"
    _serve(conn, None, "normal", True, COOLING, SECRET)  # returns: raises nothing, reads nothing after the end
    assert conn.messages == []
    assert [(rid, result[:3]) for rid, result in conn.sent] == [(3, ("api", 400, "UNKNOWN_OPERATION")),
                                                                (4, ("api", 400, "UNKNOWN_OPERATION"))]


# -------------------------------------------------------------------------- a worker's pipe and the process pool

class _Pipe:
    """The server's end of a worker's pipe: records what is sent (or fails every send with ``send_error``);
    ``recv`` hands out what the test puts in ``replies``, and ``None`` there is the worker's end (EOF)."""

    def __init__(self, send_error: Exception | None = None) -> None:
        self.sent: list[Any] = []
        self.replies: queue.Queue[Any] = queue.Queue()
        self.send_error = send_error
        self.closed = False

    def send(self, message: Any) -> None:
        if self.send_error is not None:
            raise self.send_error
        self.sent.append(message)

    def recv(self) -> Any:
        reply = self.replies.get(timeout=10)
        if reply is None:
            raise EOFError
        return reply

    def close(self) -> None:
        self.closed = True
        self.replies.put(None)



class _Process:
    """A worker process that starts, joins at once and is alive after a join only if told so (one that ignored
    its stop message) until terminated."""

    def __init__(self, alive_after_join: bool, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.started = self.terminated = False
        self.alive_after_join = alive_after_join
        self.joins: list[float | None] = []

    def start(self) -> None:
        self.started = True

    def join(self, timeout: float | None = None) -> None:
        self.joins.append(timeout)

    def is_alive(self) -> bool:
        return self.alive_after_join and not self.terminated

    def terminate(self) -> None:
        self.terminated = True



def _context(pipes: list[_Pipe], alive_after_join: bool = False) -> Any:
    """A multiprocessing context whose pipes are ``pipes`` (one per worker, in order) and whose processes are fakes
    (``context.processes``)."""
    processes: list[_Process] = []

    def process(**kwargs: Any) -> _Process:
        processes.append(_Process(alive_after_join, **kwargs))
        return processes[-1]

    ends = iter(pipes)
    return types.SimpleNamespace(Pipe=lambda: (next(ends), types.SimpleNamespace(close=lambda: None)),
                                 Process=process, processes=processes)



def _handle(pipe: _Pipe, alive_after_join: bool = False) -> tuple[WorkerHandle, _Process]:
    context = _context([pipe], alive_after_join)
    return WorkerHandle(context, None, "normal", True, COOLING, SECRET), context.processes[0]



def test_a_worker_handle_starts_a_daemon_worker_and_matches_replies_to_calls_by_id():
    pipe = _Pipe()
    handle, process = _handle(pipe)
    assert process.started and process.kwargs["daemon"] is True and handle._reader.daemon is True
    assert handle.sessions == 0 and handle.alive
    first = handle.submit("reset", "a", "http", (), {"seed": 1})
    second = handle.submit("step", "b", "http", ({"x": 1},), {})
    (rid_a, *call_a), (rid_b, *call_b) = pipe.sent
    assert call_a == ["reset", "a", "http", (), {"seed": 1}] and call_b == ["step", "b", "http", ({"x": 1},), {}]
    pipe.replies.put((rid_b, ("ok", "B", False)))  # answered out of order
    pipe.replies.put((rid_a, ("ok", "A", False)))
    assert first.result(timeout=10) == ("ok", "A", False) and second.result(timeout=10) == ("ok", "B", False)
    pipe.close()



@pytest.mark.parametrize("error", [BrokenPipeError("gone"), ValueError("closed handle")])
def test_a_call_that_cannot_be_sent_fails_as_worker_gone_and_leaves_nothing_pending(error):
    pipe = _Pipe(send_error=error)
    handle, _ = _handle(pipe)
    assert handle.submit("state", "a", "http", (), {}).exception(timeout=0).code == "WORKER_GONE"
    assert handle._pending == {}
    assert handle.alive  # the reader has not seen the pipe's end: only the send failed
    handle.send_close("a")  # a close that cannot be sent is dropped
    handle.stop(timeout_s=0.0)  # and so is the stop message; the pipe is closed all the same
    assert pipe.closed



def test_the_end_of_the_pipe_fails_every_pending_call_and_the_worker_counts_dead():
    pipe = _Pipe()
    handle, _ = _handle(pipe)
    pending = [handle.submit("step", sid, "http", (), {}) for sid in ("a", "b")]
    handle.send_close("a")
    assert [m[1:3] for m in pipe.sent] == [("step", "a"), ("step", "b"), ("close", "a")]
    pipe.close()  # the worker died
    assert [f.exception(timeout=10).code for f in pending] == ["WORKER_GONE", "WORKER_GONE"]
    handle._reader.join(10)
    assert handle.alive is False and handle._pending == {}
    sent = len(pipe.sent)
    handle.send_close("b")
    assert handle.submit("state", "b", "http", (), {}).exception(timeout=0).code == "WORKER_GONE"
    assert len(pipe.sent) == sent  # nothing is sent to a dead worker



@pytest.mark.parametrize("ignores_stop", [False, True])
def test_stopping_a_worker_asks_it_to_end_and_terminates_it_only_if_it_does_not(ignores_stop):
    pipe = _Pipe()
    handle, process = _handle(pipe, alive_after_join=ignores_stop)
    handle.stop(timeout_s=0.25)
    assert pipe.sent == [None] and pipe.closed
    assert process.terminated is ignores_stop and process.joins == ([0.25, 0.25] if ignores_stop else [0.25])



def test_a_process_pool_needs_a_worker_starts_each_and_stops_them_all(monkeypatch):
    from dcops.server import workers

    pipes = [_Pipe(), _Pipe()]
    monkeypatch.setattr(workers.multiprocessing, "get_context", lambda method: _context(pipes))
    with pytest.raises(ValueError, match="workers must be >= 1, got 0"):
        workers.WorkerPool(0, None, "normal", True, COOLING, SECRET)
    pool = workers.WorkerPool(2, None, "normal", True, COOLING, SECRET)
    assert pool.status() == {"configured": 2, "alive": 2, "replaced": 0}
    pool.workers[0].sessions = 1
    assert pool.assign() is pool.workers[1]  # the least loaded
    pool.stop()
    assert [p.sent for p in pipes] == [[None], [None]] and all(p.closed for p in pipes)


# ----------------------------------------------------------------------------------------------- remote sessions

def test_a_remote_session_starts_as_an_in_process_session_does():
    """Before its first reply a session in a worker has no episode: finished (the first to be evicted), as an
    in-process session that was never reset is; it counts against its worker until closed."""
    worker = types.SimpleNamespace(sessions=0, closed=[])
    worker.send_close = worker.closed.append
    remote = RemoteSession("s", "http", worker, lambda: 5.0)
    local = Session("s", "http", None, COOLING, lambda: 5.0, SECRET)
    assert (remote.finished, remote.closed, remote.last_used) == (local.finished, local.closed, local.last_used)
    assert remote.finished is True and worker.sessions == 1
    remote.close()
    remote.close()  # closing twice releases once
    assert worker.sessions == 0 and worker.closed == ["s"]



class _ScriptedWorker:
    """A worker stand-in whose reply to each operation is ``replies[op]``."""

    def __init__(self, replies: dict[str, tuple[Any, ...]]) -> None:
        self.sessions = 0
        self.replies = replies

    def submit(self, op: str, *args: Any) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        future.set_result(self.replies[op])
        return future



def test_a_remote_session_is_finished_as_its_episode_is_and_only_resets_and_steps_say_so():
    import asyncio

    worker = _ScriptedWorker({"reset": ("ok", "{}", False), "step": ("ok", "{}", False),
                              "state": ("ok", "{}", True), "suggest": ("ok", "{}", False),
                              "scorecard": ("ok", "{}", False)})
    session = RemoteSession("s", "http", worker, lambda: 0.0)

    async def play() -> list[bool]:
        seen = []
        for op, done in (("reset", False), ("step", False), ("step", True), ("state", True), ("suggest", False),
                         ("scorecard", False)):
            if op == "step":
                worker.replies["step"] = ("ok", "{}", done)
            await session.call(op)
            seen.append(session.finished)
        return seen

    assert asyncio.run(play()) == [False, False, True, True, True, True]



def test_a_worker_crash_is_a_runtime_error_that_quotes_it_and_an_api_error_is_raised_as_such():
    import asyncio

    from dcops.server.sessions import ApiError

    worker = _ScriptedWorker({"state": ("crash", "RuntimeError: boom"),
                              "step": ("api", 409, "STALE_STEP", "stale", "expected_step")})
    session = RemoteSession("s", "http", worker, lambda: 0.0)
    with pytest.raises(RuntimeError, match=r"^worker: RuntimeError: boom$"):
        asyncio.run(session.call("state"))
    with pytest.raises(ApiError) as refused:
        asyncio.run(session.call("step"))
    assert (refused.value.status, refused.value.code, refused.value.field) == (409, "STALE_STEP", "expected_step")


# ----------------------------------------------------------------------------------------------------------- Ray

class _FakeRay(types.ModuleType):
    """What ``RayWorkerPool`` and ``RayWorkerHandle`` use of ``ray``, recording each call."""

    def __init__(self, initialized: bool = False, cpus: float = 4.0) -> None:
        super().__init__("ray")
        self.calls: list[tuple[Any, ...]] = []
        self.initialized = initialized
        self.cpus = cpus

    def is_initialized(self) -> bool:
        return self.initialized

    def init(self, **kwargs: Any) -> None:
        self.calls.append(("init", kwargs))
        self.initialized = True

    def shutdown(self) -> None:
        self.calls.append(("shutdown",))
        self.initialized = False

    def cluster_resources(self) -> dict[str, float]:
        return {"CPU": self.cpus}

    def remote(self, **options: Any) -> Any:
        fake = self

        def actor_class(cls: type) -> Any:
            class ActorClass:
                @staticmethod
                def remote(*args: Any) -> Any:
                    name = f"actor{sum(c[0] == 'actor' for c in fake.calls)}"
                    fake.calls.append(("actor", name, options))
                    def method(op: str) -> Any:  # actor.<op>.remote(*a) gives a reference naming the call
                        return types.SimpleNamespace(remote=lambda *a: (op, name, *a))
                    return types.SimpleNamespace(name=name, shutdown=method("shutdown"), close=method("close"))
            return ActorClass
        return actor_class

    def get(self, ref: Any, timeout: float | None = None) -> Any:
        self.calls.append(("get", ref))
        return ref

    def kill(self, actor: Any) -> None:
        self.calls.append(("kill", actor.name))



@pytest.fixture
def fake_ray(monkeypatch: pytest.MonkeyPatch) -> _FakeRay:
    fake = _FakeRay()
    monkeypatch.setitem(sys.modules, "ray", fake)
    return fake



def _pool(n: int, address: str) -> RayWorkerPool:
    return RayWorkerPool(n, None, "normal", True, COOLING, SECRET, address=address)



def test_a_ray_pool_needs_a_worker(fake_ray):
    with pytest.raises(ValueError, match="workers must be >= 1"):
        _pool(0, "local")
    assert fake_ray.calls == []  # refused before Ray was started
    assert len(_pool(1, "local").workers) == 1



@pytest.mark.parametrize("address", ["local", "auto", "ray://head:10001", "a"])
def test_local_starts_a_private_ray_instance_and_any_other_address_joins_that_cluster(fake_ray, address):
    """Either way the server's output and logging stay its own: Ray neither forwards its workers' logs to the
    server process nor configures the server's logging (and a private instance runs no dashboard)."""
    pool = _pool(2, address)
    init = fake_ray.calls[0]
    if address == "local":
        assert init == ("init", {"include_dashboard": False, "log_to_driver": False, "configure_logging": False})
    else:
        assert init == ("init", {"address": address, "log_to_driver": False, "configure_logging": False})
    assert [c[1] for c in fake_ray.calls if c[0] == "actor"] == ["actor0", "actor1"]
    pool.stop()
    assert fake_ray.calls[-1] == ("shutdown",)  # the pool shuts down the Ray instance it started



def test_a_pool_in_a_running_ray_leaves_it_running_and_refuses_more_actors_than_cpus(fake_ray):
    fake_ray.initialized = True
    pool = _pool(4, "auto")
    pool.stop()
    assert not [c for c in fake_ray.calls if c[0] in ("init", "shutdown")] and fake_ray.initialized
    with pytest.raises(ValueError, match="5 Ray actors of one CPU each, but the Ray cluster has 4 CPUs"):
        _pool(5, "auto")



def test_ray_actors_take_one_cpu_each_spread_over_the_cluster(fake_ray):
    pool = _pool(2, "auto")
    options = [c[2] for c in fake_ray.calls if c[0] == "actor"]
    assert options == [{"num_cpus": 1, "scheduling_strategy": "SPREAD"}] * 2
    assert pool.replaced == 0 and all(w.sessions == 0 and w.alive for w in pool.workers)
    assert pool.status() == {"configured": 2, "alive": 2, "replaced": 0}



def test_a_ray_cluster_that_reports_no_cpus_takes_no_actor(fake_ray, monkeypatch):
    monkeypatch.setattr(fake_ray, "cluster_resources", lambda: {})
    with pytest.raises(ValueError, match="the Ray cluster has 0 CPUs"):
        _pool(1, "auto")



def test_a_ray_worker_talks_to_its_actor_only_while_alive_and_kills_it_either_way(fake_ray, monkeypatch):
    """Closes and the shutdown request go to a live actor only; the actor is killed whether it was alive, dead, or
    died while asked to shut down."""
    pool = _pool(3, "auto")
    fake_ray.calls.clear()
    closed: list[str] = []
    alive, dead, dying = pool.workers
    for worker in pool.workers:
        worker.actor.close = types.SimpleNamespace(remote=closed.append)
    dead.alive = False
    alive.send_close("a")
    dead.send_close("b")
    assert closed == ["a"]
    alive.stop()
    dead.stop()
    assert fake_ray.calls == [("get", ("shutdown", "actor0")), ("kill", "actor0"), ("kill", "actor1")]

    def gone(ref: Any, timeout: float | None = None) -> Any:
        raise RuntimeError("the actor died")

    monkeypatch.setattr(fake_ray, "get", gone)
    dying.stop()
    assert fake_ray.calls[-1] == ("kill", "actor2") and isinstance(dying, RayWorkerHandle)



def test_a_ray_worker_whose_call_fails_is_gone_for_that_call_and_dead_for_the_pool():
    failed: concurrent.futures.Future[Any] = concurrent.futures.Future()
    failed.set_exception(RuntimeError("the actor died"))
    actor = types.SimpleNamespace(call=types.SimpleNamespace(remote=lambda *a: types.SimpleNamespace(
        future=lambda: failed)))
    handle = RayWorkerHandle(actor)
    with pytest.raises(Exception) as gone:
        handle.submit("step", "s", "http", (), {}).result(timeout=5)
    assert getattr(gone.value, "code", None) == "WORKER_GONE" and handle.alive is False
    again = handle.submit("step", "s", "http", (), {})  # a dead worker fails at once, without a call
    assert again.exception(timeout=0).code == "WORKER_GONE"
