"""Sub-commands of the server (see ``dcops.cli``): ``serve``, ``export`` and ``store prune``.

Only argparse declarations happen at import time; FastAPI and uvicorn are imported inside ``run``.
"""

from __future__ import annotations

import argparse

from dcops.command import Command
from dcops.server.config import add_serve_arguments


def _serve_run(args: argparse.Namespace) -> int:
    from dcops.server.app import serve

    return serve(args)


def _export_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, help="JSONL file to write (one episode per line)")
    parser.add_argument("--db", default=None, help="episode database (default $DCOPS_DB or the user data dir)")
    parser.add_argument("--task", default=None, help="only episodes of this task")
    parser.add_argument("--status", default=None, choices=["running", "done", "abandoned", "interrupted"],
                        help="only episodes with this status (default: all)")


def _export_run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from dcops.server.store import EpisodeStore, default_db_path, export_jsonl

    path = Path(args.db).expanduser() if args.db else default_db_path()
    if not path.exists():
        raise SystemExit(f"--db: no episode database at {path}")
    store = EpisodeStore(path)
    try:
        n = export_jsonl(store, args.out, task=args.task, status=args.status)
    finally:
        store.close()
    print(f"wrote {n} episode(s) from {path} to {args.out}")
    return 0


def _store_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["prune"], help="prune: delete ended episodes by age and size")
    parser.add_argument("--db", default=None, help="episode database (default $DCOPS_DB or the user data dir)")
    parser.add_argument("--keep-days", type=float, default=None, help="delete ended episodes older than this")
    parser.add_argument("--max-mb", type=float, default=None,
                        help="then delete the oldest ended episodes until the steps take at most this (MB)")


def _store_run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from dcops.server.store import EpisodeStore, default_db_path

    if args.keep_days is None and args.max_mb is None:
        raise SystemExit("store prune: give --keep-days and/or --max-mb")
    for name, value in (("--keep-days", args.keep_days), ("--max-mb", args.max_mb)):
        if value is not None and not value >= 0:
            raise SystemExit(f"{name}: must be a number >= 0, got {value}")
    path = Path(args.db).expanduser() if args.db else default_db_path()
    if not path.exists():
        raise SystemExit(f"--db: no episode database at {path}")
    store = EpisodeStore(path)
    try:
        result = store.prune(args.keep_days, None if args.max_mb is None else int(args.max_mb * 1e6))
    finally:
        store.close()
    print(f"deleted {result['deleted_episodes']} ended episode(s) from {path}: "
          f"{result['bytes_before'] / 1e6:.2f} MB -> {result['bytes_after'] / 1e6:.2f} MB (running episodes kept)")
    return 0


COMMANDS = [
    Command("serve", "Serve every task over OpenEnv HTTP/WebSocket with the web console (default 0.0.0.0:8000)",
            add_serve_arguments, _serve_run),
    Command("export", "Write the served episodes (episode store) to JSONL for training", _export_arguments,
            _export_run),
    Command("store", "Maintain the episode store: `dcops store prune --keep-days 30 --max-mb 500`",
            _store_arguments, _store_run),
]
