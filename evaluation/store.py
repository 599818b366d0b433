"""The append-only cell store: one JSON line per finished cell, keyed by ``cell_id``; what makes runs
resumable.

A line is written (and flushed) only when its cell is complete, so an interrupted run loses at most the cells
in flight. A torn last line (the process killed mid-write) is ignored on load and overwritten by the rerun of
its cell; a cell present twice keeps its first row (the rerun never recomputes it anyway).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


class CellStore:
    """``cells.jsonl`` under a run folder."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def load(self) -> dict[str, dict[str, Any]]:
        """Every complete row, by cell id."""
        rows: dict[str, dict[str, Any]] = {}
        if not self.path.exists():
            return rows
        with self.path.open() as handle:
            for line in handle:
                line = line.strip()
                if not line:
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a torn line from an interrupted write: its cell reruns
                rows.setdefault(row["cell_id"], row)
        return rows

    def repair(self) -> None:
        """Drop a torn trailing line so that appends start on a fresh line."""
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            cut = data.rfind(b"\n") + 1
            with self.path.open("r+b") as handle:
                handle.truncate(cut)

    def append(self, row: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a") as handle:
            handle.write(json.dumps(row, sort_keys=True) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
