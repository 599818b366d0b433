"""Server speed: steps/s and step latency (p50/p99) over WebSocket on loopback, with 1 and 32 concurrent
clients, against stepping the same task in-process; the overhead ratio is in-process steps/s over served
steps/s (one client).

Why measured this way: a training loop sees round-trip latency per step (one client) and aggregate throughput
(many clients on one server); both include what a deployment pays — JSON, the event loop, the worker-thread hop
and the SQLite commit of every step (the episode store is on, as served by default). Clients and server share
this machine's cores, so the figures are a floor for a separate client machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

import dcops

TASK = "cooling/multi_zone_sensor_drift"
ACTION = [0.6, 0.6, 0.6, 21.0, 21.0, 21.0, 12.0, 1.0]


def _percentiles(latencies_s: list[float]) -> dict[str, float]:
    ms = np.asarray(latencies_s) * 1000.0
    return {"p50_ms": float(np.percentile(ms, 50)), "p99_ms": float(np.percentile(ms, 99))}


def in_process(n_steps: int, task: str = TASK) -> dict[str, Any]:
    """Step ``task`` in this process (resetting at episode ends, not timed)."""
    env = dcops.make_env(task)
    action = np.asarray(ACTION)
    env.reset(seed=0)
    latencies, done, seed = [], False, 0
    for _ in range(n_steps):
        if done:
            seed += 1
            env.reset(seed=seed)
        start = time.perf_counter()
        _, _, terminated, truncated, _ = env.step(action)
        latencies.append(time.perf_counter() - start)
        done = terminated or truncated
    return {"steps": n_steps, "steps_per_s": n_steps / sum(latencies), **_percentiles(latencies)}


def session_steps(n_steps: int, db: str | None) -> dict[str, Any]:
    """The server's own work per step without any transport: :meth:`Session.step` plus the reply's JSON
    (with the episode store at ``db``, or none)."""
    from dcops.server.serialize import dumps
    from dcops.server.sessions import SessionManager
    from dcops.server.store import EpisodeStore

    store = EpisodeStore(db) if db else None
    session = SessionManager(1, 3600.0, store, TASK, secrets.token_bytes(32)).create("ws")
    session.reset(seed=0)
    action = {"setpoints": ACTION}
    latencies = []
    for k in range(n_steps):
        start = time.perf_counter()
        reply = session.step(action)
        _ = '{"type":"observation","data":' + dumps(reply) + "}"  # the WebSocket frame, as the server writes it
        latencies.append(time.perf_counter() - start)
        if reply["done"]:
            session.reset(seed=k + 1)
    session.close()
    if store is not None:
        store.close()
    return {"steps": n_steps, "steps_per_s": n_steps / sum(latencies), **_percentiles(latencies)}


async def _client(url: str, n_steps: int, seed: int, latencies: list[float]) -> None:
    from websockets.asyncio.client import connect

    step = json.dumps({"type": "step", "data": {"setpoints": ACTION}})
    async with connect(url + "/ws", max_size=None) as ws:
        async def reset(s: int) -> None:
            await ws.send(json.dumps({"type": "reset", "data": {"task": TASK, "seed": s}}))
            reply = json.loads(await ws.recv())
            assert reply["type"] == "observation", reply

        await reset(seed)
        for _ in range(n_steps):
            start = time.perf_counter()
            await ws.send(step)
            reply = json.loads(await ws.recv())
            latencies.append(time.perf_counter() - start)
            assert reply["type"] == "observation", reply
            if reply["data"]["done"]:
                seed += 1000
                await reset(seed)


def over_websocket(url: str, clients: int, steps_per_client: int) -> dict[str, Any]:
    """``clients`` concurrent WebSocket sessions, each playing ``steps_per_client`` steps."""
    latencies: list[float] = []

    async def run() -> float:
        start = time.perf_counter()
        await asyncio.gather(*(_client(url, steps_per_client, i, latencies) for i in range(clients)))
        return time.perf_counter() - start

    wall = asyncio.run(run())
    total = clients * steps_per_client
    return {"clients": clients, "steps": total, "steps_per_s": total / wall, **_percentiles(latencies)}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start_server(db: str, port: int, workers: int = 0) -> subprocess.Popen:
    env = {**os.environ, "DCOPS_DB": db}
    process = subprocess.Popen(
        [sys.executable, "-m", "dcops.server.app", "--host", "127.0.0.1", "--port", str(port), "--db", db,
         "--log-level", "warning", "--workers", str(workers)], env=env, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60.0
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                return process
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("the server did not start within 60 s")


def process_tree_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` and its live descendants (its worker processes), from Linux's
    ``/proc``; None where there is no ``/proc`` or the process is gone."""
    ticks = os.sysconf("SC_CLK_TCK")
    total, stack = 0.0, [pid]
    try:
        while stack:
            current = stack.pop()
            stat = Path(f"/proc/{current}/stat").read_text()
            fields = stat[stat.rindex(")") + 2:].split()  # after the command name, which may hold spaces
            total += (int(fields[11]) + int(fields[12])) / ticks  # utime and stime, fields 14 and 15 of proc(5)
            for task in Path(f"/proc/{current}/task").iterdir():
                stack.extend(int(child) for child in (task / "children").read_text().split())
    except (OSError, ValueError):
        return None
    return total


@contextlib.contextmanager
def _served(store: bool = True, workers: int = 0) -> Iterator[tuple[int, int]]:
    """A real server process on a free loopback port (its episode store in a temporary folder, or none); yields
    its port and process id and stops the server (SIGTERM, then kill) however the block ends."""
    with tempfile.TemporaryDirectory() as folder:
        port = _free_port()
        server = _start_server(str(Path(folder) / "episodes.db") if store else "off", port, workers=workers)
        try:
            yield port, server.pid
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()


def run_server_bench(single_steps: int = 2000, concurrent_clients: int = 32, steps_per_client: int = 150,
                     store: bool = True) -> dict[str, Any]:
    """All the figures of the module docstring (a real server process on a free loopback port)."""
    with _served(store=store) as (port, _):
        url = f"ws://127.0.0.1:{port}"
        over_websocket(url, 1, 50)  # warm-up: imports, first environments
        one = over_websocket(url, 1, single_steps)
        many = over_websocket(url, concurrent_clients, steps_per_client)
    local = in_process(single_steps)
    with tempfile.TemporaryDirectory() as folder:
        session_store = session_steps(single_steps, str(Path(folder) / "episodes.db"))
    session_bare = session_steps(single_steps, None)
    return {
        "task": TASK,
        "episode_store": store,
        "in_process": local,
        "session_step_no_transport_no_store": session_bare,
        "session_step_no_transport_with_store": session_store,
        "ws_1_client": one,
        f"ws_{concurrent_clients}_clients": many,
        "overhead_ratio_steps_per_s": local["steps_per_s"] / one["steps_per_s"],
        "overhead_ratio_p50_latency": one["p50_ms"] / local["p50_ms"],
    }


CLUSTER_TASK = "cluster/operations"


async def _cluster_client(url: str, n_steps: int, seed: int, latencies: list[float], errors: list[str],
                          observation: str | None = None) -> None:
    """One WebSocket client playing ``cluster/operations`` windows (deciding nothing: the server's defaults);
    ``observation``: the reset option of that name (None: the default, view and arrays)."""
    from websockets.asyncio.client import connect

    step = json.dumps({"type": "step", "data": {"action": {"decisions": []}}})
    options = {} if observation is None else {"options": {"observation": observation}}
    async with connect(url + "/ws", max_size=None) as ws:
        async def reset(s: int) -> None:
            await ws.send(json.dumps({"type": "reset", "data": {"task": CLUSTER_TASK, "seed": s, **options}}))
            reply = json.loads(await ws.recv())
            if reply["type"] != "observation":
                errors.append(str(reply)[:200])

        await reset(seed)
        for _ in range(n_steps):
            start = time.perf_counter()
            await ws.send(step)
            reply = json.loads(await ws.recv())
            latencies.append(time.perf_counter() - start)
            if reply["type"] != "observation":
                errors.append(str(reply)[:200])
                continue
            if reply["data"]["done"]:
                seed += 1000
                await reset(seed)


def _probe_health(url: str, stop: Any, latencies: list[float], errors: list[str]) -> None:
    """``GET /health`` every 20 ms from a thread of its own until ``stop`` is set."""
    while not stop.is_set():
        start = time.perf_counter()
        try:
            with urllib.request.urlopen(url + "/health", timeout=10) as response:
                response.read()
            latencies.append(time.perf_counter() - start)
        except OSError as exc:
            errors.append(f"health: {exc}")
        stop.wait(0.02)


def cluster_clients(http_url: str, clients: int, steps_per_client: int, server_pid: int | None = None,
                    observation: str | None = None) -> dict[str, Any]:
    """``clients`` concurrent cluster sessions over WebSocket with ``/health`` probed throughout; with
    ``server_pid``, also the CPU milliseconds per step of this (the clients') process and of the server's process
    tree, which show where the machine's cores went."""
    import threading

    ws_url = "ws" + http_url[len("http"):]
    latencies: list[float] = []
    health: list[float] = []
    errors: list[str] = []
    stop = threading.Event()
    prober = threading.Thread(target=_probe_health, args=(http_url, stop, health, errors), daemon=True)

    async def run() -> float:
        start = time.perf_counter()
        await asyncio.gather(*(_cluster_client(ws_url, steps_per_client, i, latencies, errors, observation)
                               for i in range(clients)))
        return time.perf_counter() - start

    server_cpu = process_tree_cpu_s(server_pid) if server_pid is not None else None
    client_cpu = time.process_time()
    prober.start()
    try:
        wall = asyncio.run(run())
    finally:
        stop.set()
        prober.join(10)
    total = clients * steps_per_client
    cpu = {"clients_cpu_ms_per_step": (time.process_time() - client_cpu) * 1000.0 / total}
    server_after = process_tree_cpu_s(server_pid) if server_pid is not None else None
    if server_cpu is not None and server_after is not None:
        cpu["server_cpu_ms_per_step"] = (server_after - server_cpu) * 1000.0 / total
    h = np.asarray(health) * 1000.0
    return {"clients": clients, "steps": total, "steps_per_s": total / wall, **_percentiles(latencies),
            "health_p50_ms": float(np.percentile(h, 50)) if h.size else None,
            "health_p99_ms": float(np.percentile(h, 99)) if h.size else None,
            "health_probes": int(h.size), "errors": len(errors), "first_errors": errors[:3], **cpu}


def run_cluster_scaling(workers: tuple[int, ...] = (0, 2), clients: int = 32, steps_per_client: int = 24,
                        single_steps: int = 200, observation: str | None = None) -> dict[str, Any]:
    """``cluster/operations`` served with each worker count: one client, then ``clients`` at once with ``/health``
    probed; the scaling figure is the many-client steps/s over the one-client steps/s (episode store on).
    ``observation``: the clients' reset option (``"arrays"``: no structured view; None: the default)."""
    results: dict[str, Any] = {"task": CLUSTER_TASK, "cpus": os.cpu_count(), "observation": observation or "full"}
    for n in workers:
        with _served(workers=n) as (port, pid):
            url = f"http://127.0.0.1:{port}"
            cluster_clients(url, 2, 8, observation=observation)  # warm-up: imports, first environments
            one = cluster_clients(url, 1, single_steps, server_pid=pid, observation=observation)
            many = cluster_clients(url, clients, steps_per_client, server_pid=pid, observation=observation)
        results[f"workers_{n}"] = {"one_client": one, f"{clients}_clients": many,
                                   "scaling": many["steps_per_s"] / one["steps_per_s"]}
    return results


if __name__ == "__main__":
    print(json.dumps(run_server_bench(), indent=2))
