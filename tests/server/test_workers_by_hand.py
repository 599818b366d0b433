"""The worker machinery's parts by hand, without a process or a Ray cluster: what a worker's host answers, the
server-side session's first flags, and a Ray pool's start and stop with ``ray`` replaced by a fake that records
what it was asked. The processes and a real Ray instance are tested in ``test_workers.py``."""

from __future__ import annotations

import concurrent.futures
import json
import multiprocessing
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


def test_a_host_answers_an_unknown_operation_with_a_400_and_goes_on_serving():
    host = SessionHost(None, "normal", True, COOLING, SECRET)
    try:
        assert host.call("teleport", "s1", "http", (), {})[:3] == ("api", 400, "UNKNOWN_OPERATION")
        status, _, done = host.call("reset", "s1", "http", (), {"task": COOLING, "seed": 1})
        assert (status, done) == ("ok", False)
    finally:
        host.shutdown()


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


def test_a_ray_worker_is_asked_to_shut_down_only_while_alive_and_killed_either_way(fake_ray):
    pool = _pool(2, "auto")
    fake_ray.calls.clear()
    alive, dead = pool.workers
    dead.alive = False
    alive.stop()
    dead.stop()
    assert fake_ray.calls == [("get", ("shutdown", "actor0")), ("kill", "actor0"), ("kill", "actor1")]
    assert isinstance(alive, RayWorkerHandle)


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


class _BrokenPipe:
    """A worker's pipe end after the worker died: sends fail; receives wait until released, then end."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def send(self, message: Any) -> None:
        raise BrokenPipeError("the worker is gone")

    def recv(self) -> Any:
        self.release.wait(10)
        raise EOFError

    def close(self) -> None:
        self.release.set()


def test_stopping_a_worker_whose_pipe_broke_does_not_raise():
    pipe = _BrokenPipe()
    process = types.SimpleNamespace(start=lambda: None, join=lambda timeout=None: None, is_alive=lambda: False,
                                    terminate=lambda: None)
    context = types.SimpleNamespace(Pipe=lambda: (pipe, types.SimpleNamespace(close=lambda: None)),
                                    Process=lambda **kwargs: process)
    handle = WorkerHandle(context, None, "normal", True, COOLING, SECRET)
    assert handle.alive  # the reader has not seen the pipe end yet
    handle.send_close("s")  # a close to a dead worker is dropped
    assert handle.submit("step", "s", "http", (), {}).exception(timeout=0).code == "WORKER_GONE"
    handle.stop(timeout_s=0.1)
    assert pipe.release.is_set()
