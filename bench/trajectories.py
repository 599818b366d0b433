"""Whole-trajectory digests of the cluster game, to check that a speed change changed no bit of the episodes.

Speed work on the cluster window must leave every observation, reward, termination, truncation and info of an
episode exactly as it was (and so every published figure). This module plays a fixed set of 18 configurations
(every scenario family at two seeds, game version 0, the team posterior, the rule cooling, a learner team, the
FIFO queue, a scheduler acting through the structured form, a cooling agent, and the vector env with and without
the structured view and under the rule) with seeded actions (every code of the scheduler's action, invalid
deferrals too), hashes everything the environment returns plus the episode's truth at its end, and prints one
SHA-256 per configuration::

    python -m dcops.bench.trajectories                      # this tree's digests
    python -m dcops.bench.trajectories --against HEAD~1     # and a revision's, side by side; exit 1 if any differ
    python -m dcops.bench.trajectories --baseline DIR       # a folder holding another checkout's dcops package

It covers what these configurations reach, not every option (the triage catalogue, the trace workload and
``max_cycles`` are not played). The other tree is played by this file's source in a fresh interpreter whose
``PYTHONPATH`` puts that tree's ``dcops`` first, which it checks (only public entry points are used:
``dcops.parallel_env``, ``dcops.make_vec_env``, ``episode_truth``), so a revision without this module can be
checked too, back to one that has every configuration's options (``--only`` picks some). ``DCOPS_JIT=0`` in the
environment plays both trees on the Python paths. A golden digest is never stored: the check is always between
two trees run now, so it says "the same" or "not the same", not "right".
"""

from __future__ import annotations

import argparse
import hashlib
import json
import struct
import sys
import tempfile
from enum import Enum
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
    "classic-structured-actions": {"scenario": "classic", "seed": 8, "structured_view": True,
                                   "structured_actions": True},
    "classic-cooling-agent": {"scenario": "classic", "seed": 10, "cooling": "agent", "structured_view": False},
    "vector-16": {"vector": 16, "steps": 40, "structured_view": False},
    "vector-4-view": {"vector": 4, "steps": 20, "structured_view": True},
    "vector-3-rule": {"vector": 3, "steps": 20, "structured_view": False, "cooling": "rule"},
}
"""Every configuration played, by name: ``parallel_env`` keyword arguments and a ``seed`` (and whether the scheduler
acts through the structured form), or a vector env of ``vector`` episodes stepped ``steps`` times."""


def _feed(digest: Any, value: Any) -> None:
    """Hash ``value`` by type and content, so that two values hash alike only where they are alike: every value
    is tagged with its type's name, containers with their length too; dicts in their own order (what callers
    see), their keys hashed as values; arrays by dtype, shape and bytes (object arrays element by element, never
    by address); floats by their eight bytes (NaN's sign and payload too). A type not listed raises rather than
    being hashed through a ``repr`` that could hide its content or show an address."""
    digest.update(type(value).__qualname__.encode() + b":")
    if isinstance(value, dict):
        digest.update(struct.pack("<q", len(value)))
        for key, item in value.items():
            _feed(digest, key)
            _feed(digest, item)
    elif isinstance(value, (list, tuple)):
        digest.update(struct.pack("<q", len(value)))
        for item in value:
            _feed(digest, item)
    elif isinstance(value, (set, frozenset)):
        digest.update(struct.pack("<q", len(value)))
        for item in sorted(value, key=repr):  # a set's order is the hash's; these hold strings and numbers
            _feed(digest, item)
    elif isinstance(value, np.ndarray):
        digest.update(f"{value.dtype.str}{value.shape}".encode())
        if value.dtype == object:
            for item in value.ravel():
                _feed(digest, item)
        else:
            digest.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, np.generic):
        digest.update(value.dtype.str.encode() + value.tobytes())
    elif isinstance(value, float):
        digest.update(struct.pack("<d", value))
    elif isinstance(value, Enum):
        _feed(digest, value.value)
    elif value is None or isinstance(value, (str, int)):  # bool is an int, told apart by its tag
        digest.update(repr(value).encode())
    else:
        raise TypeError(f"cannot hash a {type(value).__qualname__} by content; add it to _feed")


def _structured(view: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    """A structured scheduler action (``{"decisions": [...]}``) over the view's pending requests: each accepted,
    rejected or deferred one to four windows ahead (past the horizon too, which is an invalid decision)."""
    decisions = []
    for item in view["pending"]:
        kind = ("ACCEPT", "REJECT", "DEFER")[int(rng.integers(3))]
        entry = {"request_id": item["request_id"], "decision": kind}
        if kind == "DEFER":
            entry["defer_to_window"] = view["window"] + int(rng.integers(1, 5))
        decisions.append(entry)
    return {"decisions": decisions}


def _play_parallel(config: dict[str, Any]) -> str:
    """Play one episode of ``parallel_env(**config)`` (less ``seed`` and ``structured_actions``) with seeded
    actions: every code of the scheduler's array action (accept, reject, defer by one to four windows, past the
    horizon too), or a structured action read off the view; learner and cooling agents by their seeded spaces."""
    import dcops

    kwargs = {k: v for k, v in config.items() if k not in ("seed", "structured_actions")}
    seed = config["seed"]
    env = dcops.parallel_env(**kwargs)
    digest = hashlib.sha256()
    observations, infos = env.reset(seed=seed)
    _feed(digest, [observations, infos])
    rng = np.random.default_rng(seed)
    for agent in env.possible_agents:
        env.action_space(agent).seed(seed)
    while env.agents:
        actions = {agent: env.action_space(agent).sample() for agent in env.agents if agent != "scheduler"}
        actions["scheduler"] = (_structured(infos["scheduler"]["view"], rng) if config.get("structured_actions")
                                else rng.integers(0, env.action_space("scheduler").nvec))
        observations, rewards, terminations, truncations, infos = env.step(actions)
        _feed(digest, [observations, rewards, terminations, truncations, infos])
    _feed(digest, env.episode_truth())
    return digest.hexdigest()


def _play_vector(config: dict[str, Any]) -> str:
    """Step a vector env of ``config["vector"]`` episodes ``config["steps"]`` times with seeded array actions
    (every code, as :func:`_play_parallel`), through its resets."""
    import dcops

    n, steps = config["vector"], config["steps"]
    env = dcops.make_vec_env("cluster/operations", n, **{k: v for k, v in config.items()
                                                           if k not in ("vector", "steps")})
    digest = hashlib.sha256()
    _feed(digest, list(env.reset(seed=7)))
    rng = np.random.default_rng(1)
    codes = env.single_action_space.nvec
    for _ in range(steps):
        _feed(digest, list(env.step(rng.integers(0, codes, (n, len(codes))))))
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
    file's source in a fresh interpreter with that tree first on its path.

    :raises RuntimeError: the other interpreter failed, or played a ``dcops`` from somewhere else."""
    # Imported here, not at the top: this file's source also runs in the other tree, which may not have it.
    from dcops.bench.compare import run_source_in_tree

    played = run_source_in_tree(Path(__file__), tree, ["--json", *(["--only", ",".join(names)] if names else [])],
                                "playing the trajectories of")
    return dict(played["digests"])


def main(argv: list[str] | None = None) -> int:
    """The command (module docstring): 0 when every configuration is the same in both trees (or none was
    compared), 1 when any differs, 2 when a tree could not be played."""
    parser = argparse.ArgumentParser(prog="python -m dcops.bench.trajectories", description=__doc__.split("\n")[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--against", metavar="REV", help="also play git revision REV of this checkout and compare")
    group.add_argument("--baseline", metavar="DIR", help="also play the dcops package in DIR and compare")
    group.add_argument("--json", action="store_true", help="print this tree's digests (and which dcops played them) "
                       "as one JSON line only")
    parser.add_argument("--only", default="", help="comma-separated configuration names (default: all)")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.only.split(",") if n.strip()] or None
    unknown = sorted(set(names or []) - set(CONFIGURATIONS))
    if unknown:
        parser.error(f"--only: unknown configuration(s) {unknown}; known: {sorted(CONFIGURATIONS)}")
    ours = digests(names)
    if args.json:
        import dcops

        print(json.dumps({"dcops": dcops.__file__, "digests": ours}))
        return 0
    if args.against is None and args.baseline is None:
        for name, value in ours.items():
            print(f"{name}: {value}")
        return 0
    try:
        if args.baseline is not None:
            theirs, label = digests_of_tree(args.baseline, names), args.baseline
        else:
            from dcops.bench.compare import archive_revision

            with tempfile.TemporaryDirectory(prefix="dcops-trajectories-") as folder:
                theirs, label = digests_of_tree(str(archive_revision(args.against, folder)), names), args.against
    except (OSError, ValueError, RuntimeError) as error:
        print(f"python -m dcops.bench.trajectories: {error}", file=sys.stderr)
        return 2
    print(f"| configuration | this tree | {label} | same |")
    print("|---|---|---|---|")
    for name, value in ours.items():
        print(f"| {name} | {value[:16]} | {theirs[name][:16]} | {'yes' if value == theirs[name] else 'NO'} |")
    differ = [name for name in ours if ours[name] != theirs[name]]
    print(f"{len(ours) - len(differ)} of {len(ours)} configurations the same" + (f"; differ: {differ}" if differ else ""))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
