"""``dcops export`` and ``dcops store prune`` in process: what they write and print, and every bad argument
refused with a message naming it (the episode store itself is tested in ``test_store.py``)."""

from __future__ import annotations

import json
import time

import pytest

from dcops.cli import main
from dcops.server.store import EpisodeStore


def _store(path, episodes: int = 3, steps: int = 2) -> None:
    """``episodes`` finished episodes of ``steps`` steps (two tasks), and one still running."""
    store = EpisodeStore(path)
    try:
        for i in range(episodes + 1):
            uid = f"u{i}"
            task = "cooling/a" if i % 2 == 0 else "cooling/b"
            store.start_episode(uid, f"e{i}", f"s{i}", "http", task, i, {}, {"x": [0.0] * 50}, {})
            for t in range(1, steps + 1):
                done = t == steps and i < episodes
                store.record_step(uid, t, {"a": t}, {"x": [float(t)] * 50}, 1.0, done, {})
    finally:
        store.close()


def test_export_writes_each_episode_with_its_steps(tmp_path, capsys):
    db, out = tmp_path / "e.db", tmp_path / "out" / "all.jsonl"
    _store(db)
    assert main(["export", "--db", str(db), "--out", str(out)]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [e["uid"] for e in lines] == ["u0", "u1", "u2", "u3"] and all(len(e["steps"]) == 3 for e in lines)
    assert f"wrote 4 episode(s) from {db} to {out}" in capsys.readouterr().out
    only = tmp_path / "a.jsonl"
    assert main(["export", "--db", str(db), "--out", str(only), "--task", "cooling/a", "--status", "done"]) == 0
    assert [json.loads(line)["uid"] for line in only.read_text().splitlines()] == ["u0", "u2"]


def test_export_needs_an_output_and_an_existing_database(tmp_path, capsys):
    db = tmp_path / "e.db"
    _store(db)
    with pytest.raises(SystemExit) as refused:
        main(["export", "--db", str(db)])  # --out is required, even with a database to read
    assert refused.value.code == 2 and "--out" in capsys.readouterr().err  # argparse's usage error
    with pytest.raises(SystemExit, match="--db: no episode database at"):
        main(["export", "--db", str(tmp_path / "missing.db"), "--out", str(tmp_path / "x.jsonl")])


def test_prune_by_size_reports_what_it_deleted_in_megabytes(tmp_path, capsys):
    db = tmp_path / "e.db"
    _store(db, episodes=3, steps=40)
    before = EpisodeStore(db)
    try:
        sizes = [e["uid"] for e in before.episodes()]
        bytes_before = before._file_bytes()
    finally:
        before.close()
    assert main(["store", "prune", "--db", str(db), "--max-mb", "0"]) == 0
    text = capsys.readouterr().out
    assert f"deleted 3 ended episode(s) from {db}: " in text and "(running episodes kept)" in text
    before_mb, after_mb = (float(part.split()[0]) for part in text.split(": ")[1].split(" -> "))
    assert f": {bytes_before / 1e6:.2f} MB -> " in text
    assert before_mb > after_mb > 0.0
    store = EpisodeStore(db)
    try:
        assert [e["uid"] for e in store.episodes()] == ["u3"] and sizes == ["u0", "u1", "u2", "u3"]
        assert f"-> {store._file_bytes() / 1e6:.2f} MB" in text  # the database file, in 10^6 bytes
    finally:
        store.close()


def test_prune_by_size_keeps_what_fits_the_cap(tmp_path, capsys):
    """A cap of 1 MB holds these few small episodes: nothing is deleted."""
    db = tmp_path / "e.db"
    _store(db)
    assert main(["store", "prune", "--db", str(db), "--max-mb", "1"]) == 0
    assert "deleted 0 ended episode(s)" in capsys.readouterr().out


def test_prune_by_age_deletes_only_old_ended_episodes(tmp_path, capsys, monkeypatch):
    db = tmp_path / "e.db"
    _store(db)
    assert main(["store", "prune", "--db", str(db), "--keep-days", "0.5"]) == 0
    assert "deleted 0 ended episode(s)" in capsys.readouterr().out
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + 86400.0)
    assert main(["store", "prune", "--db", str(db), "--keep-days", "0.5"]) == 0
    assert "deleted 3 ended episode(s)" in capsys.readouterr().out


@pytest.mark.parametrize(("args", "message"), [
    ([], "give --keep-days and/or --max-mb"),
    (["--keep-days", "-1"], "--keep-days: must be a number >= 0, got -1.0"),
    (["--max-mb", "-0.5"], "--max-mb: must be a number >= 0, got -0.5"),
    (["--keep-days", "nan"], "--keep-days: must be a number >= 0, got nan"),
    (["--keep-days", "1", "--max-mb", "-2"], "--max-mb: must be a number >= 0"),
])
def test_prune_refuses_bad_limits_by_name(tmp_path, args, message):
    db = tmp_path / "e.db"
    _store(db)
    with pytest.raises(SystemExit, match=message.replace("+", r"\+")):
        main(["store", "prune", "--db", str(db), *args])


def test_prune_accepts_zero_limits_and_needs_an_existing_database(tmp_path):
    db = tmp_path / "e.db"
    _store(db)
    assert main(["store", "prune", "--db", str(db), "--keep-days", "0", "--max-mb", "0"]) == 0
    with pytest.raises(SystemExit, match="--db: no episode database at"):
        main(["store", "prune", "--db", str(tmp_path / "missing.db"), "--keep-days", "1"])
