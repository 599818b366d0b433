"""The episode store: every served episode, step by step, in an embedded SQLite database.

Why SQLite in WAL mode, one transaction per step, committed before the reply: a client that has seen a step's
reply can rely on that step being on disk (in the WAL) even if the server process is killed the next instant
(SIGKILL, OOM killer): the operating system still holds the written pages and SQLite replays the WAL on the
next open. ``synchronous=NORMAL`` (the default here) skips the fsync per commit, so a *power loss* may lose the
last commits; set ``DCOPS_DB_SYNC=FULL`` to pay an fsync per step for that too.

Tables::

    episodes(uid PK, episode_id, session_id, transport, task, seed, config JSON, status, started_at,
             ended_at, n_steps, total_reward)
    steps(uid, t, action JSON, observation_digest, observation JSON, reward, done, info JSON, created_at)

``t = 0`` is the reset (no action, no reward); ``status`` is ``running``, ``done``, ``abandoned`` (the session
closed or was reset before the end) or ``interrupted`` (the server died; set on the next start). Observations
are stored whole, as their canonical JSON (sorted keys, ASCII: ``serialize.canonical_json``; for training
export), and as the SHA-256 digest of that text (for checking a replay). The session writes that text once a
step and the reply carries the same text, so a 30 kB cluster observation is not written again here. (Rows
written before commit 10508d3 hold the observation as compact UTF-8 JSON in the environment's key order; their
digest is of the canonical form all the same, so it is not the hash of their stored text but of the same value.)

Default location: ``$DCOPS_DB``, else ``$XDG_DATA_HOME/dcops/episodes.db``, else
``~/.local/share/dcops/episodes.db`` (what ``platformdirs`` gives on Linux, without the dependency).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dcops.server.serialize import canonical_json, dumps, text_digest

_SCHEMA = """
CREATE TABLE IF NOT EXISTS episodes (
    uid TEXT PRIMARY KEY,
    episode_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    transport TEXT NOT NULL,
    task TEXT NOT NULL,
    seed INTEGER,
    config TEXT NOT NULL,
    status TEXT NOT NULL,
    started_at REAL NOT NULL,
    ended_at REAL,
    n_steps INTEGER NOT NULL DEFAULT 0,
    total_reward REAL NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS steps (
    uid TEXT NOT NULL REFERENCES episodes(uid),
    t INTEGER NOT NULL,
    action TEXT,
    observation_digest TEXT NOT NULL,
    observation TEXT,
    reward REAL,
    done INTEGER NOT NULL,
    info TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (uid, t)
);
CREATE INDEX IF NOT EXISTS episodes_task ON episodes(task);
"""


def default_db_path() -> Path:
    """``$DCOPS_DB``, else the user's data directory (XDG on Linux)."""
    explicit = os.environ.get("DCOPS_DB")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "dcops" / "episodes.db"


class EpisodeStore:
    """Thread-safe writer and reader of the episode database (one connection, one lock).

    :param path: database file (created with its folder if missing).
    :param synchronous: SQLite ``synchronous`` pragma, ``NORMAL`` (crash-safe) or ``FULL`` (power-loss safe).
    :param store_observations: keep whole observations as well as their digests.
    """

    def __init__(self, path: str | Path, synchronous: str = "NORMAL", store_observations: bool = True) -> None:
        if synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ValueError(f"synchronous must be OFF, NORMAL, FULL or EXTRA, got {synchronous!r}")
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.store_observations = store_observations
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=30.0)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(f"PRAGMA synchronous={synchronous.upper()}")
        self._db.executescript(_SCHEMA)

    def mark_interrupted(self) -> int:
        """Mark episodes left ``running`` (by a server that died) as ``interrupted``; return how many.

        Called by a server at start only: a reader such as ``dcops export`` must not touch a live server's rows.
        """
        with self._lock:
            return self._db.execute("UPDATE episodes SET status='interrupted' WHERE status='running'").rowcount

    # ------------------------------------------------------------------------------------------- writing
    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """One locked transaction: committed when the block ends, rolled back if it raises."""
        with self._lock:
            self._db.execute("BEGIN")
            try:
                yield
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def start_episode(
        self, uid: str, episode_id: str, session_id: str, transport: str, task: str, seed: int | None,
        config: dict[str, Any], observation: Any, info: Any, observation_json: str | None = None,
    ) -> None:
        """Record a reset: the episode row and its step 0, in one transaction. ``observation_json``: the
        observation's canonical JSON where the caller has written it already (else it is written here); it is
        stored as given, not checked against ``observation`` (checking would write it again)."""
        now = time.time()
        obs_json = canonical_json(observation) if observation_json is None else observation_json
        with self._transaction():
            self._db.execute(
                "INSERT INTO episodes(uid, episode_id, session_id, transport, task, seed, config, status, started_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?)",
                (uid, episode_id, session_id, transport, task, seed, dumps(config), now),
            )
            self._db.execute(
                "INSERT INTO steps(uid, t, action, observation_digest, observation, reward, done, info, created_at)"
                " VALUES (?, 0, NULL, ?, ?, NULL, 0, ?, ?)",
                (uid, text_digest(obs_json), obs_json if self.store_observations else None, dumps(info), now),
            )

    def record_step(
        self, uid: str, t: int, action: Any, observation: Any, reward: float, done: bool, info: Any,
        observation_json: str | None = None,
    ) -> None:
        """Record step ``t`` (≥ 1) and update the episode's totals, in one committed transaction
        (``observation_json`` as for :meth:`start_episode`)."""
        now = time.time()
        obs_json = canonical_json(observation) if observation_json is None else observation_json
        with self._transaction():
            self._db.execute(
                "INSERT INTO steps(uid, t, action, observation_digest, observation, reward, done, info, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (uid, t, dumps(action), text_digest(obs_json), obs_json if self.store_observations else None,
                 float(reward), int(done), dumps(info), now),
            )
            self._db.execute(
                "UPDATE episodes SET n_steps=?, total_reward=total_reward+?, status=?, ended_at=? WHERE uid=?",
                (t, float(reward), "done" if done else "running", now if done else None, uid),
            )

    def abandon(self, uid: str) -> None:
        """Mark a running episode as abandoned (its session closed, expired or was reset)."""
        with self._lock:
            self._db.execute(
                "UPDATE episodes SET status='abandoned', ended_at=? WHERE uid=? AND status='running'", (time.time(), uid)
            )

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # ------------------------------------------------------------------------------------------- reading
    def episodes(self, task: str | None = None, status: str | None = None, since: float | None = None,
                 until: float | None = None, limit: int | None = None, offset: int = 0,
                 newest_first: bool = False) -> list[dict[str, Any]]:
        """Episode rows (oldest first, or newest first), optionally filtered by task, status and start time (Unix
        seconds, ``since`` ≤ started_at < ``until``) and paged (``limit`` rows from ``offset``)."""
        query = "SELECT * FROM episodes"
        clauses: list[str] = []
        params: list[Any] = []
        for clause, value in (("task = ?", task), ("status = ?", status), ("started_at >= ?", since),
                              ("started_at < ?", until)):
            if value is not None and value != "":
                clauses.append(clause)
                params.append(value)
        if clauses:
            query += " WHERE " + " AND ".join(clauses)
        query += " ORDER BY started_at DESC, rowid DESC" if newest_first else " ORDER BY started_at, rowid"
        if limit is not None:
            query += " LIMIT ? OFFSET ?"
            params += [int(limit), int(offset)]
        with self._lock:
            cursor = self._db.execute(query, params)
            names = [c[0] for c in cursor.description]
            rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        for row in rows:
            row["config"] = json.loads(row["config"])
        return rows

    def episode(self, uid: str) -> dict[str, Any] | None:
        """One episode row, or None."""
        with self._lock:
            cursor = self._db.execute("SELECT * FROM episodes WHERE uid = ?", (uid,))
            names = [c[0] for c in cursor.description]
            row = cursor.fetchone()
        if row is None:
            return None
        episode = dict(zip(names, row, strict=True))
        episode["config"] = json.loads(episode["config"])
        return episode

    def steps(self, uid: str, offset: int = 0, limit: int | None = None) -> list[dict[str, Any]]:
        """The steps of episode ``uid`` in order (``limit`` of them from step ``offset``), JSON columns decoded."""
        query, params = "SELECT * FROM steps WHERE uid = ? AND t >= ? ORDER BY t", [uid, int(offset)]
        if limit is not None:
            query += " LIMIT ?"
            params.append(int(limit))
        with self._lock:
            cursor = self._db.execute(query, params)
            names = [c[0] for c in cursor.description]
            rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        for row in rows:
            for key in ("action", "observation", "info"):
                row[key] = json.loads(row[key]) if row[key] is not None else None
            row["done"] = bool(row["done"])
        return rows

    def prune(self, keep_days: float | None = None, max_bytes: int | None = None,
              now: float | None = None) -> dict[str, int]:
        """Delete ended episodes (never running ones): those started more than ``keep_days`` ago, then the oldest
        until the stored steps take at most ``max_bytes``; reclaim the space (``VACUUM``). Returns the episodes
        deleted, the database file's size before and after, bytes, and whether the space was returned
        (``vacuumed``: False when a live server's writes kept ``VACUUM`` out; the space is then reused).

        A step's stored size is the length of its JSON texts (observation where kept, info, action) plus 64 bytes
        for the row: the measure ``max_bytes`` caps, the same whether observations are kept or only digested."""
        now = time.time() if now is None else now
        before = self._file_bytes()
        doomed: list[str] = []
        with self._lock:
            ended = self._db.execute(
                "SELECT e.uid, e.started_at, COALESCE(SUM(COALESCE(LENGTH(s.observation), 0) + LENGTH(s.info) + "
                "COALESCE(LENGTH(s.action), 0) + 64), 0) FROM episodes e LEFT JOIN steps s ON s.uid = e.uid "
                "WHERE e.status != 'running' GROUP BY e.uid ORDER BY e.started_at, e.rowid").fetchall()
            total = self._db.execute(
                "SELECT COALESCE(SUM(COALESCE(LENGTH(observation), 0) + LENGTH(info) + COALESCE(LENGTH(action), 0) + 64), 0) "
                "FROM steps").fetchone()[0]
        for uid, started_at, size in ended:
            old = keep_days is not None and started_at < now - keep_days * 86400.0
            big = max_bytes is not None and total > max_bytes
            if old or big:
                doomed.append(uid)
                total -= size
        with self._transaction():
            for uid in doomed:
                self._db.execute("DELETE FROM steps WHERE uid = ?", (uid,))
                self._db.execute("DELETE FROM episodes WHERE uid = ?", (uid,))
        vacuumed = True
        if doomed:
            try:
                with self._lock:
                    self._db.execute("VACUUM")
            except sqlite3.OperationalError:  # a live server is writing: the space is reused, just not returned
                vacuumed = False
        return {"deleted_episodes": len(doomed), "bytes_before": before, "bytes_after": self._file_bytes(),
                "vacuumed": vacuumed}

    def _file_bytes(self) -> int:
        with self._lock, contextlib.suppress(sqlite3.OperationalError):
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return sum(p.stat().st_size for p in (self.path, self.path.with_name(self.path.name + "-wal"))
                   if p.exists())

    def trajectories(self, task: str | None = None, status: str | None = None) -> Iterator[dict[str, Any]]:
        """One dict per episode: its row plus ``steps`` (what ``dcops export`` writes, one JSON line each)."""
        for episode in self.episodes(task=task, status=status):
            yield {**episode, "steps": self.steps(episode["uid"])}


def export_jsonl(store: EpisodeStore, out: str | Path, task: str | None = None, status: str | None = None) -> int:
    """Write every episode (filtered) to ``out`` as JSON lines; return the number of episodes written."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with out.open("w", encoding="utf-8") as handle:
        for trajectory in store.trajectories(task=task, status=status):
            handle.write(json.dumps(trajectory, separators=(",", ":"), allow_nan=False) + "\n")
            n += 1
    return n
