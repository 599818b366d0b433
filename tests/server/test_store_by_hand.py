"""The episode store's own contract (``dcops.server.store``), on a store written directly rather than by a server.

Each test reads its expectation from a docstring of the module: where the database lives by default, what a
step records, how an ended episode is dated, what ``prune`` deletes (by age, strictly older; by size, down to at
most the cap, counting each stored step as its JSON lengths plus 64 bytes), that a failed write leaves the store
as it was and usable, and that ``export_jsonl`` writes strict JSON lines.
"""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3

import pytest

from dcops.server.serialize import canonical_json, digest, dumps
from dcops.server.store import EpisodeStore, default_db_path, export_jsonl

DAY_S = 86400.0


def _episode(store: EpisodeStore, uid: str, steps: int = 2, done: bool = True, observation: object = None,
             info: object = None) -> None:
    observation = {"x": [1.0, 2.0]} if observation is None else observation
    info = {"k": uid} if info is None else info
    store.start_episode(uid, f"e-{uid}", "s", "http", "cooling/single_zone_recovery", 7, {"task": "t"},
                        observation, info)
    for t in range(1, steps + 1):
        store.record_step(uid, t, {"a": t}, observation, 0.5, done and t == steps, info)


def _started(store: EpisodeStore, uid: str) -> float:
    episode = store.episode(uid)
    assert episode is not None
    return float(episode["started_at"])


# ---- where the database lives -----------------------------------------------------------------------------------


def test_the_default_path_is_dcops_db_then_xdg_data_home_then_the_home_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DCOPS_DB", "~/mine/runs.db")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_db_path() == tmp_path / "home" / "mine" / "runs.db"  # expanded
    monkeypatch.setenv("DCOPS_DB", "")  # set but empty: as if unset
    assert default_db_path() == tmp_path / "xdg" / "dcops" / "episodes.db"
    monkeypatch.delenv("DCOPS_DB")
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_db_path() == tmp_path / "home" / ".local" / "share" / "dcops" / "episodes.db"


def test_a_store_creates_its_folders(tmp_path):
    path = tmp_path / "a" / "b" / "episodes.db"
    store = EpisodeStore(path)
    try:
        assert path.exists()
    finally:
        store.close()


def test_an_unknown_synchronous_mode_is_refused_by_name(tmp_path):
    with pytest.raises(ValueError, match="synchronous must be OFF, NORMAL, FULL or EXTRA, got 'SOMETIMES'"):
        EpisodeStore(tmp_path / "x.db", synchronous="SOMETIMES")


# ---- what is written ----------------------------------------------------------------------------------------------


def test_observations_are_kept_unless_asked_not_to(tmp_path):
    kept, digests_only = EpisodeStore(tmp_path / "a.db"), EpisodeStore(tmp_path / "b.db", store_observations=False)
    try:
        for store in (kept, digests_only):
            _episode(store, "u", steps=1, observation={"inlet_c": 24.5})
        assert [s["observation"] for s in kept.steps("u")] == [{"inlet_c": 24.5}] * 2
        assert [s["observation"] for s in digests_only.steps("u")] == [None, None]
        assert kept.steps("u")[1]["observation_digest"] == digests_only.steps("u")[1]["observation_digest"]
    finally:
        kept.close()
        digests_only.close()


def test_an_observation_is_stored_as_its_canonical_json_and_hashed_as_stored(tmp_path):
    """The module docstring: observations are kept as their canonical JSON and the digest is of that text; text
    a caller has written already is kept as it is (the session hands over the text its reply carries)."""
    store = EpisodeStore(tmp_path / "a.db")
    observation = {"z": [1.0, 0.1], "a": {"name": "é"}}
    try:
        store.start_episode("u", "e", "s", "http", "t", 1, {}, observation, {})
        store.record_step("u", 1, {}, observation, 0.5, False, {}, observation_json=canonical_json(observation))
        store.record_step("u", 2, {}, observation, 0.5, True, {}, observation_json='{"given":1}')
        rows = store._db.execute("SELECT observation, observation_digest FROM steps ORDER BY t").fetchall()
    finally:
        store.close()
    written = '{"a":{"name":"\\u00e9"},"z":[1.0,0.1]}'
    assert [text for text, _ in rows] == [written, written, '{"given":1}']
    assert [d for _, d in rows] == [hashlib.sha256(text.encode()).hexdigest() for text, _ in rows]
    assert rows[0][1] == digest(observation)


def test_an_episode_is_dated_when_it_ends_and_not_before(tmp_path):
    store = EpisodeStore(tmp_path / "x.db")
    try:
        _episode(store, "u", steps=2, done=False)
        running = store.episode("u")
        assert running is not None and (running["status"], running["ended_at"]) == ("running", None)
        store.record_step("u", 3, {"a": 3}, {"x": 0}, 1.0, True, {})
        ended = store.episode("u")
        assert ended is not None and ended["status"] == "done"
        assert ended["ended_at"] >= ended["started_at"]
        assert (ended["n_steps"], ended["total_reward"]) == (3, 2.0)
    finally:
        store.close()


def test_a_failed_write_changes_nothing_and_the_store_stays_usable(tmp_path):
    store = EpisodeStore(tmp_path / "x.db")
    try:
        _episode(store, "u", steps=1, done=False)
        with pytest.raises(sqlite3.IntegrityError):
            store.record_step("u", 1, {"a": 9}, {"x": 9}, 100.0, True, {})  # step 1 again: the key refuses it
        episode = store.episode("u")
        assert episode is not None and (episode["n_steps"], episode["total_reward"]) == (1, 0.5)
        store.record_step("u", 2, {"a": 2}, {"x": 2}, 1.0, True, {})  # not left inside a transaction
        assert [s["t"] for s in store.steps("u")] == [0, 1, 2]
    finally:
        store.close()


def test_paging_starts_at_the_first_row_unless_told_otherwise(tmp_path):
    store = EpisodeStore(tmp_path / "x.db")
    try:
        for uid in ("a", "b", "c"):
            _episode(store, uid, steps=3)
        assert [e["uid"] for e in store.episodes(limit=2)] == ["a", "b"]
        assert [e["uid"] for e in store.episodes(limit=2, offset=1)] == ["b", "c"]
        assert [s["t"] for s in store.steps("a", limit=2)] == [0, 1]
        assert [s["t"] for s in store.steps("a", offset=2)] == [2, 3]
    finally:
        store.close()


# ---- prune --------------------------------------------------------------------------------------------------------


def test_prune_by_age_deletes_what_started_strictly_more_than_keep_days_ago_and_keeps_the_rest(tmp_path):
    store = EpisodeStore(tmp_path / "x.db")
    try:
        _episode(store, "old")
        _episode(store, "young")
        started = _started(store, "old")
        young = _started(store, "young")
        # Exactly two days after "old" started, with keep_days = 2: not more than two days old, kept.
        assert store.prune(keep_days=2.0, now=started + 2 * DAY_S)["deleted_episodes"] == 0
        # A twentieth of a day (72 min) kept, the clock 2 h after "young" started: both are older, both go.
        result = store.prune(keep_days=0.05, now=young + 7200.0)
        assert result["deleted_episodes"] == 2
        assert store.episodes() == []
        # Younger than two days is kept; a second over two days is not.
        _episode(store, "u")
        started = _started(store, "u")
        assert store.prune(keep_days=2.0, now=started + 1.5 * DAY_S)["deleted_episodes"] == 0
        assert store.prune(keep_days=2.0, now=started + 2 * DAY_S + 1.0)["deleted_episodes"] == 1
    finally:
        store.close()


def _step_bytes(observation: object, info: object, action: object | None) -> int:
    """The stored size of one step, as ``prune`` documents it: its JSON texts' lengths plus 64 bytes."""
    texts = [dumps(info)] + ([] if observation is None else [dumps(observation)])
    texts += [] if action is None else [dumps(action)]
    return sum(len(text) for text in texts) + 64


@pytest.mark.parametrize("store_observations", [True, False])
def test_prune_by_size_deletes_the_oldest_until_at_most_the_cap_remains(tmp_path, store_observations):
    store = EpisodeStore(tmp_path / "x.db", store_observations=store_observations)
    observation, info = {"x": [1.0, 2.0]}, {"k": "v"}
    try:
        for uid in ("a", "b", "c"):
            _episode(store, uid, steps=2, observation=observation, info=info)
        kept_observation = observation if store_observations else None
        one = (_step_bytes(kept_observation, info, None)
               + sum(_step_bytes(kept_observation, info, {"a": t}) for t in (1, 2)))
        # Exactly two episodes' worth is "at most the cap": only the oldest goes.
        assert store.prune(max_bytes=2 * one)["deleted_episodes"] == 1
        assert [e["uid"] for e in store.episodes()] == ["b", "c"]
        # One byte under one episode's worth: both remaining go.
        assert store.prune(max_bytes=one - 1)["deleted_episodes"] == 2
    finally:
        store.close()


def test_prune_never_deletes_a_running_episode(tmp_path):
    store = EpisodeStore(tmp_path / "x.db")
    try:
        _episode(store, "live", done=False)
        _episode(store, "ended")
        now = _started(store, "ended") + 10 * DAY_S
        assert store.prune(keep_days=1.0, max_bytes=0, now=now)["deleted_episodes"] == 1
        assert [e["uid"] for e in store.episodes()] == ["live"]
    finally:
        store.close()


def test_prune_returns_the_space_it_frees(tmp_path):
    store = EpisodeStore(tmp_path / "x.db")
    try:
        _episode(store, "big", steps=40, observation={"blob": "z" * 4000})
        _episode(store, "small", steps=1)
        result = store.prune(max_bytes=1000)
        assert result["deleted_episodes"] == 1 and result["vacuumed"] is True
        assert result["bytes_after"] < result["bytes_before"] - 100_000  # 40 steps × 4 kB came back
        assert [e["uid"] for e in store.episodes()] == ["small"]
        assert store.prune()["vacuumed"] is True  # nothing to delete: nothing left unreclaimed either
    finally:
        store.close()


class _NoVacuum:
    """A connection that refuses VACUUM as SQLite does while another connection writes."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
        if sql == "VACUUM":
            raise sqlite3.OperationalError("database is locked")
        return self._db.execute(sql, *args)

    def close(self) -> None:
        self._db.close()


def test_prune_says_when_the_space_could_not_be_returned(tmp_path):
    store = EpisodeStore(tmp_path / "x.db")
    try:
        _episode(store, "u")
        store._db = _NoVacuum(store._db)  # type: ignore[assignment]
        result = store.prune(max_bytes=0)
        assert (result["deleted_episodes"], result["vacuumed"]) == (1, False)
        assert store.episodes() == []  # the deletion itself stands
    finally:
        store.close()


# ---- export -------------------------------------------------------------------------------------------------------


def test_export_writes_one_strict_json_line_per_episode_into_new_folders(tmp_path):
    store = EpisodeStore(tmp_path / "x.db")
    try:
        for uid in ("a", "b"):
            _episode(store, uid)
        out = tmp_path / "new" / "folder" / "runs.jsonl"
        assert export_jsonl(store, out) == 2
        lines = out.read_text(encoding="utf-8").splitlines()
        assert [json.loads(line)["uid"] for line in lines] == ["a", "b"]
        assert export_jsonl(store, out) == 2  # to an existing folder, over the old file
        assert len(out.read_text(encoding="utf-8").splitlines()) == 2
        assert export_jsonl(store, tmp_path / "none.jsonl", status="abandoned") == 0
    finally:
        store.close()


def test_export_refuses_to_write_a_number_json_has_no_word_for(tmp_path):
    store = EpisodeStore(tmp_path / "x.db")
    try:
        store.start_episode("u", "e", "s", "http", "t", None, {}, {"x": 1}, {})
        store.record_step("u", 1, {"a": 1}, {"x": 1}, math.inf, True, {})  # SQLite keeps an infinite reward
        with pytest.raises(ValueError):
            export_jsonl(store, tmp_path / "out.jsonl")
    finally:
        store.close()

