"""Whole-trajectory digests of the cluster game, to check that a speed change changed no bit of any episode.

Speed work on the cluster window must leave every observation, reward, termination, truncation and info of every
episode exactly as it was (and so every published figure). This module plays a fixed set of configurations
(every scenario family at two seeds, game version 0, the team posterior, the rule cooling, a learner team, the
FIFO queue, and the vector env with and without the structured view and under the rule) with seeded actions,
hashes everything the environment returns plus the episode's truth at its end, and prints one SHA-256 per
configuration::

    python -m dcops.bench.trajectories                      # this tree's digests
    python -m dcops.bench.trajectories --against HEAD~1     # and a revision's, side by side; exit 1 if any differ
    python -m dcops.bench.trajectories --baseline DIR       # a folder holding another checkout's dcops package

The other tree is played by running this file's source in a fresh interpreter whose ``PYTHONPATH`` puts that tree's
``dcops`` first (only public entry points are used: ``dcops.parallel_env``, ``dcops.make_vec_env``,
``episode_truth``), so a revision without this module can be checked too. ``DCOPS_JIT=0`` in the environment
plays both trees on the Python paths. A golden digest is never stored: the check is always between two trees
run now, so it says "the same" or "not the same", not "right".
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

CONFIGURATIONS: dict[str, dict[str, Any]] = {
    **{f"{family}-seed{seed}": {"scenario": family, "seed": seed, "structured_view": True}
       for family in ("classic", "oversubscribed", "chiller_fault", "adversarial") for seed in (0, 5)},
    "classic-learner": {"scenario": "classic", "seed": 6, "structured_view": True,
                        "team_kinds": ("cooperative", "learner", "strategic", "adaptive")},
    "classic-version0": {"scenario": "classic", "seed": 3, "game_version": 0, "structured_view": True},
    "classic-team-posterior": {"scenario": "classic", "seed": 4, "team_posterior": True, "structured_view": False},
    "classic-rule-cooling": {"scenario": "classic", "seed": 2, "cooling": "rule", "structured_view": True},
    "adversarial-fifo-queue": {"scenario": "adversarial", "seed": 9, "queue_policy": "fifo",
                               "structured_view": False},
    "vector-16": {"vector": 16, "steps": 40, "structured_view": False},
    "vector-4-view": {"vector": 4, "steps": 20, "structured_view": True},
    "vector-3-rule": {"vector": 3, "steps": 20, "structured_view": False, "cooling": "rule"},
}
"""Every configuration played, by name: ``parallel_env`` keyword arguments and a ``seed``, or a vector env of
``vector`` episodes stepped ``steps`` times."""


def _feed(digest: Any, value: Any) -> None:
    """Hash ``value`` by content: dicts in key order, arrays by dtype and bytes (object arrays element by
    element, never by address), floats by ``repr`` (every bit)."""
    if isinstance(value, dict):
        for key in sorted(value, key=str):
            digest.update(str(key).encode())
            _feed(digest, value[key])
    elif isinstance(value, (list, tuple)):
        digest.update(b"[")
        for item in value:
            _feed(digest, item)
        digest.update(b"]")
    elif isinstance(value, np.ndarray) and value.dtype == object:
        _feed(digest, list(value.ravel()))
    elif isinstance(value, np.ndarray):
        digest.update(f"{value.dtype}{value.shape}".encode())
        digest.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, (set, frozenset)):
        _feed(digest, sorted(map(str, value)))
    else:
        digest.update(repr(value).encode())


def _play_parallel(config: dict[str, Any]) -> str:
    import dcops

    kwargs = {k: v for k, v in config.items() if k != "seed"}
    seed = config["seed"]
    env = dcops.parallel_env(**kwargs)
    digest = hashlib.sha256()
    observations, infos = env.reset(seed=seed)
    _feed(digest, [observations, infos])
    rng = np.random.default_rng(seed)
    for agent in env.possible_agents:
        env.action_space(agent).seed(seed)
    while env.agents:
        actions = {agent: rng.integers(0, 3, env.action_space(agent).shape) if agent == "scheduler"
                   else env.action_space(agent).sample() for agent in env.agents if agent != "cooling"}
        _feed(digest, list(env.step(actions)))
    _feed(digest, env.episode_truth())
    return digest.hexdigest()


def _play_vector(config: dict[str, Any]) -> str:
    import dcops

    n, steps = config["vector"], config["steps"]
    env = dcops.make_vec_env("cluster/operations", n, **{k: v for k, v in config.items()
                                                           if k not in ("vector", "steps")})
    digest = hashlib.sha256()
    _feed(digest, list(env.reset(seed=7)))
    rng = np.random.default_rng(1)
    for _ in range(steps):
        _feed(digest, list(env.step(rng.integers(0, 3, (n, env.single_action_space.shape[0])))))
    return digest.hexdigest()


def trajectory_digest(name: str) -> str:
    """The SHA-256 of configuration ``name``'s whole trajectory, played in this process."""
    config = CONFIGURATIONS[name]
    return _play_vector(config) if "vector" in config else _play_parallel(config)


def digests(names: list[str] | None = None) -> dict[str, str]:
    """Each configuration's digest (all of :data:`CONFIGURATIONS` by default), played in this process."""
    return {name: trajectory_digest(name) for name in (names or list(CONFIGURATIONS))}


def digests_of_tree(tree: str, names: list[str] | None = None) -> dict[str, str]:
    """The digests of the ``dcops`` package in folder ``tree`` (it holds ``dcops/__init__.py``), played by this
    file in a fresh interpreter with that tree first on its path."""
    if not (Path(tree) / "dcops" / "__init__.py").is_file():
        raise FileNotFoundError(f"{tree}: expected a folder holding dcops/__init__.py")
    env = dict(os.environ)
    env["PYTHONPATH"] = tree + os.pathsep + env.get("PYTHONPATH", "")
    # This file's source run with -c (not by path, which would put its folder first on the path).
    command = [sys.executable, "-c", Path(__file__).read_text(encoding="utf-8"), "--json",
               *(["--only", ",".join(names)] if names else [])]
    result = subprocess.run(command, env=env, cwd="/", text=True, stdout=subprocess.PIPE)
    if result.returncode != 0:
        raise RuntimeError(f"playing the trajectories of {tree} failed (exit {result.returncode}); its error is "
                           "printed above")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dcops.bench.trajectories", description=__doc__.split("\n")[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--against", metavar="REV", help="also play git revision REV of this checkout and compare")
    group.add_argument("--baseline", metavar="DIR", help="also play the dcops package in DIR and compare")
    parser.add_argument("--only", default="", help="comma-separated configuration names (default: all)")
    parser.add_argument("--json", action="store_true", help="print this tree's digests as one JSON line only")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.only.split(",") if n.strip()] or None
    unknown = sorted(set(names or []) - set(CONFIGURATIONS))
    if unknown:
        parser.error(f"--only: unknown configuration(s) {unknown}; known: {sorted(CONFIGURATIONS)}")
    ours = digests(names)
    if args.json:
        print(json.dumps(ours))
        return 0
    if args.against is None and args.baseline is None:
        for name, value in ours.items():
            print(f"{name}: {value}")
        return 0
    if args.baseline is not None:
        theirs = digests_of_tree(args.baseline, names)
        label = args.baseline
    else:
        from dcops.bench.compare import archive_revision

        with tempfile.TemporaryDirectory(prefix="dcops-trajectories-") as folder:
            theirs = digests_of_tree(str(archive_revision(args.against, folder)), names)
        label = args.against
    print(f"| configuration | this tree | {label} | same |")
    print("|---|---|---|---|")
    for name, value in ours.items():
        print(f"| {name} | {value[:16]} | {theirs[name][:16]} | {'yes' if value == theirs[name] else 'NO'} |")
    differ = [name for name in ours if ours[name] != theirs[name]]
    print(f"{len(ours) - len(differ)} of {len(ours)} configurations the same" + (f"; differ: {differ}" if differ else ""))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
