"""Server configuration: one dataclass, read from environment variables by :meth:`ServerConfig.from_env`.

Why environment variables: the same app object is started by ``dcops serve``, by ``uvicorn
dcops.server.app:app`` and by OpenEnv tooling, and only the environment reaches all three.

==========================  ===========================================  =====================
variable                    meaning                                      default
==========================  ===========================================  =====================
``DCOPS_MAX_SESSIONS``      concurrent sessions (HTTP + WebSocket)       64
``DCOPS_SESSION_IDLE_S``    an idle session is closed after this (s)     900
``DCOPS_DB``                episode database file; ``off`` disables it   user data directory
``DCOPS_DB_SYNC``           SQLite ``synchronous``: NORMAL or FULL       NORMAL
``DCOPS_STORE_OBS``         store whole observations (1) or digests (0)  1
``DCOPS_MAX_BODY_BYTES``    largest request body or WebSocket frame      1048576
``DCOPS_DEFAULT_TASK``      task of a reset that names none              cluster/operations
``DCOPS_EPISODE_SECRET``    key of the episodes' private seeds           drawn per process
``DCOPS_WORKERS``           worker processes for sessions (0: inline)    0
``DCOPS_OPERATOR_TOKEN``    token of the episode-browsing endpoints      unset (browsing off)
``DCOPS_RAY_ADDRESS``       the workers are Ray actors there (``auto``,  unset (processes)
                            ``ray://…``, or ``local``)
``DCOPS_WS_COMPRESSION``    WebSocket per-message deflate (1) or not (0) 0
==========================  ===========================================  =====================

``DCOPS_WS_COMPRESSION`` (``dcops serve`` only; ``uvicorn`` itself takes ``--ws-per-message-deflate``): off by
default because compressing every reply costs more than it saves on loopback and LAN, where training clients
run: ``dcops bench --server`` measured the server process's CPU per cluster step at 1.65 ms with it and 1.0 ms
without, and 32 clients' steps/s 215 → 230; over a slow link turn it on (a cluster reply of about 19 kB of JSON
shrinks several-fold).

``DCOPS_EPISODE_SECRET`` (any text) makes served episodes reproducible across restarts for the operator: an
episode with public seed s was reset with ``dcops.boundary.private_seed(secret, s)``, which the episode store
also records. Unset, each process draws its own, and no one can replay a served episode from its public seed.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field
from pathlib import Path

from dcops.boundary import new_secret, secret_from_text
from dcops.server.store import default_db_path

DEFAULT_TASK = "cluster/operations"


def _env_int(name: str, default: int, minimum: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name} must be an integer, got {raw!r}") from None
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def _env_float(name: str, default: float, minimum: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number, got {raw!r}") from None
    if not value >= minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


@dataclass(frozen=True)
class ServerConfig:
    """Everything the app factory needs.

    :param max_sessions: most concurrent sessions; one more gets ``CAPACITY_REACHED`` (HTTP 503 or an error frame).
    :param session_idle_s: seconds without a request after which a session is closed and its episode abandoned.
    :param db_path: episode database, or ``None`` to serve without storing (benchmarks, throwaway servers).
    :param db_sync: SQLite ``synchronous`` pragma (see :mod:`dcops.server.store`).
    :param store_observations: store whole observations as well as their digests.
    :param max_body_bytes: largest accepted request body / WebSocket frame (larger → 413 / error frame).
    :param default_task: the task of a reset that does not name one.
    :param episode_secret: the key of every episode's private seed (``dcops.boundary``); never sent to a client.
    :param operator_token: the ``X-Operator-Token`` that ``GET /episodes`` and ``GET /episodes/{uid}`` require;
        None turns them off. Why a token: a stored episode of public seed s shows what comes next in any new
        episode of seed s (same private seed), so reading stored episodes is for the operator, never a policy.
    :param ray_address: run the workers as Ray actors on this cluster (``auto``, ``ray://host:10001``, or
        ``local`` for a private instance) instead of local processes: sessions then run on every machine.
    :param workers: worker processes that hold the sessions and run their steps (:mod:`dcops.server.workers`);
        0 runs them in the server process.
    :param ws_compression: negotiate WebSocket per-message deflate (``dcops serve`` passes it to uvicorn).
    """

    max_sessions: int = 64
    session_idle_s: float = 900.0
    db_path: Path | None = field(default_factory=default_db_path)
    db_sync: str = "NORMAL"
    store_observations: bool = True
    max_body_bytes: int = 1 << 20
    default_task: str = DEFAULT_TASK
    episode_secret: bytes = field(default_factory=new_secret, repr=False)
    workers: int = 0
    operator_token: str | None = field(default=None, repr=False)
    ray_address: str | None = None
    ws_compression: bool = False

    @classmethod
    def from_env(cls) -> ServerConfig:
        db = os.environ.get("DCOPS_DB", "")
        db_path = None if db.lower() in ("off", "none", "0") else default_db_path()
        return cls(
            max_sessions=_env_int("DCOPS_MAX_SESSIONS", 64, 1),
            session_idle_s=_env_float("DCOPS_SESSION_IDLE_S", 900.0, 0.001),
            db_path=db_path,
            db_sync=os.environ.get("DCOPS_DB_SYNC", "NORMAL") or "NORMAL",
            store_observations=os.environ.get("DCOPS_STORE_OBS", "1") != "0",
            max_body_bytes=_env_int("DCOPS_MAX_BODY_BYTES", 1 << 20, 1024),
            default_task=os.environ.get("DCOPS_DEFAULT_TASK", DEFAULT_TASK) or DEFAULT_TASK,
            episode_secret=(secret_from_text(os.environ["DCOPS_EPISODE_SECRET"])
                            if os.environ.get("DCOPS_EPISODE_SECRET") else new_secret()),
            workers=_env_int("DCOPS_WORKERS", 0, 0),
            operator_token=os.environ.get("DCOPS_OPERATOR_TOKEN") or None,
            ray_address=os.environ.get("DCOPS_RAY_ADDRESS") or None,
            ws_compression=os.environ.get("DCOPS_WS_COMPRESSION", "0") not in ("", "0"),
        )


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``dcops serve`` and of the ``server`` script."""
    parser.add_argument("--host", default="0.0.0.0", help="interface to listen on (default 0.0.0.0)")
    parser.add_argument("--port", type=int, default=8000, help="TCP port (default 8000)")
    parser.add_argument("--db", default=None,
                        help="episode database (default $DCOPS_DB or the user data dir; 'off' to disable)")
    parser.add_argument("--max-sessions", type=int, default=None, help="session limit (default 64)")
    parser.add_argument("--idle-timeout", type=float, default=None, help="idle session timeout, s (default 900)")
    parser.add_argument("--workers", type=int, default=None,
                        help="worker processes holding the sessions, so steps use every core and never block the "
                             "server (default $DCOPS_WORKERS or 0: sessions in the server process)")
    parser.add_argument("--ray-address", default=None,
                        help="run the --workers as Ray actors on this cluster (auto, ray://host:10001, local)")
    parser.add_argument("--log-level", default="info", help="uvicorn log level")
