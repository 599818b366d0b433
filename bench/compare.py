"""Speed of this tree against another checkout of dcops, measured side by side (``python -m dcops.bench.compare``).

Why: on a shared machine the absolute figures of ``dcops bench`` move with the load, but two processes running
at the same time share it alike, so their ratio is steady. Each round starts one process on this tree and one
on the baseline tree (a folder holding a ``dcops`` package, e.g. ``git archive <commit>`` unpacked into
``BASE/dcops``), both timing the same workloads through public entry points only (so any version runs them),
each as the fastest of repeated bursts of CPU time; rounds alternate which starts first.

    mkdir -p /tmp/base/dcops && git archive 81cdd14 | tar -x -C /tmp/base/dcops
    python -m dcops.bench.compare --baseline /tmp/base --rounds 3

or, from a git checkout, ``dcops bench --against HEAD~1`` (what ``make bench`` runs): :func:`compare_revision`
unpacks the revision with ``git archive`` into a temporary folder and removes it afterwards.

The loaded server (``dcops bench --server --against REV``, :func:`compare_server_revision`) is measured the other
way: a server under 32 clients takes both cores, so the two trees run in turn, not at once, each through its own
``dcops.bench.server_bench``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

# Runs inside each tree's interpreter: only public entry points of dcops, stable across versions.
_PROBE = r'''
import json, sys, time
import numpy as np
import dcops

def best_rate(work, seconds=3.0):
    work()
    best, total = 0.0, 0.0
    while total < seconds:
        start = time.process_time()
        items = work()
        elapsed = time.process_time() - start
        if elapsed > 0:
            total += elapsed
            best = max(best, items / elapsed)
    return best

def plant():
    from dcops.physics.plant import PlantBoundary, PlantConfig, PlantControl, initial_state, step_plant
    config = PlantConfig.default()
    z = config.n_zones
    state = initial_state(config, 25.0, 12.0)
    control = PlantControl(np.full(z, 0.7), np.full(z, 22.0), np.asarray(12.0), np.asarray(1.0))
    boundary = PlantBoundary(config.zone_design_it_kw * 0.7, np.asarray(25.0), np.asarray(18.0),
                             np.ones(config.n_chillers), np.ones(z))
    def work():
        s = state
        for _ in range(200):
            s, _ = step_plant(config, s, control, boundary, 300.0)
        return 200
    return best_rate(work)

def cooling_env():
    env = dcops.make_env("cooling/cascading_chiller_failure")
    action = (env.action_space.low + env.action_space.high) / 2.0
    def work():
        env.reset(seed=0)
        steps, done = 0, False
        while not done:
            done = env.step(action)[2]
            steps += 1
        return steps
    return best_rate(work)

def cluster(cooling, **config):
    env = dcops.parallel_env(**{"structured_view": False, "cooling": cooling, **config})
    action = {"scheduler": np.zeros(env.config.max_slots, dtype=np.int64)}
    best = {}
    for _ in range(6):
        for seed in range(4):
            start = time.process_time()
            env.reset(seed=seed)
            while env.agents:
                env.step(action)
            best[seed] = min(best.get(seed, 1e9), time.process_time() - start)
    return 8 * len(best) / sum(best.values())

def cluster_vector(n):
    env = dcops.make_vec_env("cluster/operations", n, structured_view=False)
    action = np.zeros((n, env.single_action_space.shape[0]), dtype=np.int64)
    def work():  # one episode of each of the n, its reset included, as cluster() counts them
        env.reset(seed=0)
        for _ in range(8):
            env.step(action)
        return 8 * n
    return best_rate(work)

figures = {"physics_steps_per_s": plant(), "cooling_env_steps_per_s": cooling_env(),
           "cluster_windows_per_s_rule": cluster("rule"), "cluster_windows_per_s_ppo": cluster("ppo"),
           "cluster_windows_per_s_ppo_with_view": cluster("ppo", structured_view=True)}
try:  # a version without the option (before e94ed02) has no such figure
    figures["cluster_windows_per_s_ppo_team_posterior"] = cluster("ppo", team_posterior=True)
except (TypeError, ValueError):
    pass
try:  # a version without the cluster vector env (before 9a5eb47) has no such figure
    figures["cluster_vector_windows_per_s_16"] = cluster_vector(16)
except (AttributeError, KeyError, TypeError, ValueError):
    pass
print(json.dumps(figures))
'''


def baseline_folder(baseline: str) -> str:
    """``baseline`` as an absolute folder (a probe of another tree runs from ``/``, where a relative folder would
    miss it and the probe would import this tree's dcops instead).

    :raises FileNotFoundError: the folder does not hold ``dcops/__init__.py``."""
    folder = os.path.abspath(baseline)
    if not (Path(folder) / "dcops" / "__init__.py").is_file():
        raise FileNotFoundError(f"--baseline {baseline}: expected a folder holding dcops/__init__.py")
    return folder


def probe_environment(tree: str | None) -> tuple[dict[str, str], str | None]:
    """The environment and working folder of a fresh interpreter probing ``tree`` (a :func:`baseline_folder`;
    None: this tree): that tree first on ``PYTHONPATH``, run from ``/`` so that nothing in the caller's folder
    shadows it."""
    env = dict(os.environ)
    if tree is None:
        return env, None
    env["PYTHONPATH"] = os.pathsep.join(p for p in (tree, env.get("PYTHONPATH", "")) if p)
    return env, "/"


def run_source_in_tree(source: Path, tree: str, arguments: list[str], doing: str) -> dict[str, Any]:
    """Run the Python file ``source`` (its text, with ``-c``: run by path its folder would come first on the path)
    with ``arguments`` in a fresh interpreter probing the ``dcops`` package in folder ``tree``
    (:func:`probe_environment`); return the JSON object its last output line prints, which must say which
    ``dcops`` it imported (``"dcops"``: that package's ``__init__.py``). ``doing`` names the work for errors.

    :raises RuntimeError: the other interpreter failed, or imported a ``dcops`` from somewhere else."""
    folder = baseline_folder(tree)
    env, cwd = probe_environment(folder)
    command = [sys.executable, "-c", source.read_text(encoding="utf-8"), *arguments]
    result = subprocess.run(command, env=env, cwd=cwd, text=True, stdout=subprocess.PIPE)
    if result.returncode != 0:
        raise RuntimeError(f"{doing} {tree} failed (exit {result.returncode}); its error is printed above")
    printed = json.loads(result.stdout.strip().splitlines()[-1])
    if not os.path.abspath(printed["dcops"]).startswith(os.path.join(folder, "dcops") + os.sep):
        raise RuntimeError(f"the interpreter for {tree} imported the dcops at {printed['dcops']}, not the tree's")
    return dict(printed)


def _start(tree: str | None) -> subprocess.Popen[str]:
    env, cwd = probe_environment(tree)
    return subprocess.Popen([sys.executable, "-c", _PROBE], env=env, stdout=subprocess.PIPE, text=True, cwd=cwd)


def compare(baseline: str, rounds: int = 3) -> dict[str, dict[str, float]]:
    """Median over rounds of each figure for both trees and their ratio (this tree over the baseline)."""
    baseline = baseline_folder(baseline)
    ours: list[dict[str, float]] = []
    theirs: list[dict[str, float]] = []
    for k in range(rounds):
        order = [None, baseline] if k % 2 == 0 else [baseline, None]
        processes = {tree: _start(tree) for tree in order}
        results = {}
        for tree, process in processes.items():
            output = process.communicate()[0]
            if process.returncode != 0:
                raise RuntimeError(f"the probe of {tree or 'this tree'} failed (exit {process.returncode}); "
                                   "its error is printed above")
            results[tree] = json.loads(output)
        ours.append(results[None])
        theirs.append(results[baseline])
    return median_table(ours, theirs)


def median_table(ours: list[dict[str, float]], theirs: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    """Per figure both trees measured, the median over rounds of this tree's and the baseline's values, and
    their ratio (this tree over the baseline)."""
    table: dict[str, dict[str, float]] = {}
    for key in [k for k in ours[0] if k in theirs[0]]:
        a = statistics.median(r[key] for r in ours)
        b = statistics.median(r[key] for r in theirs)
        table[key] = {"this_tree": a, "baseline": b, "ratio": a / b}
    return table


def package_root() -> Path:
    """The folder of this ``dcops`` package (the repository root of a git checkout)."""
    return Path(__file__).resolve().parent.parent


def archive_revision(revision: str, destination: str | Path, repository: str | Path | None = None) -> Path:
    """Unpack ``revision`` of the git checkout ``repository`` (default: this package's) into
    ``destination/dcops`` with ``git archive``; return ``destination`` (a ``--baseline`` folder).

    :raises ValueError: ``repository`` is not a git checkout or does not have ``revision`` (git's message).
    """
    repository = Path(repository) if repository is not None else package_root()
    result = subprocess.run(["git", "-C", str(repository), "archive", "--format=tar", revision],
                            capture_output=True)
    if result.returncode != 0:
        message = result.stderr.decode(errors="replace").strip()
        raise ValueError(f"cannot take revision {revision!r} of {repository}: {message}")
    target = Path(destination) / "dcops"
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile() as handle:
        handle.write(result.stdout)
        handle.seek(0)
        with tarfile.open(fileobj=handle) as archive:
            if hasattr(tarfile, "data_filter"):  # Python 3.10.12+ / 3.11.4+: refuse links and paths out of target
                archive.extractall(target, filter="data")
            else:  # our own git archive, of our own tree
                archive.extractall(target)  # noqa: S202
    return Path(destination)


def compare_revision(revision: str, rounds: int = 3) -> dict[str, dict[str, float]]:
    """:func:`compare` against ``revision`` of this checkout, unpacked in a temporary folder removed after."""
    with tempfile.TemporaryDirectory(prefix="dcops-bench-") as folder:
        return compare(str(archive_revision(revision, folder)), rounds)


# Runs inside each tree's interpreter: that tree's own server benchmark (``dcops.bench.server_bench``, present
# since the server had worker processes), one worker count, the figures as one JSON line.
_SERVER_PROBE = r'''
import json, sys
from dcops.bench.server_bench import run_cluster_scaling

workers = int(sys.argv[1])
row = run_cluster_scaling((workers,))[f"workers_{workers}"]
one, many = row["one_client"], row["32_clients"]
print(json.dumps({"one_client_steps_per_s": one["steps_per_s"], "32_clients_steps_per_s": many["steps_per_s"],
                  "scaling": row["scaling"], "server_cpu_ms_per_step_one_client": one["server_cpu_ms_per_step"],
                  "server_cpu_ms_per_step_32_clients": many["server_cpu_ms_per_step"]}))
'''


def compare_server(baseline: str, workers: int = 2, rounds: int = 3) -> dict[str, dict[str, float]]:
    """The server under load (``dcops bench --server`` with ``workers``) for this tree and the baseline folder,
    one after the other (a loaded server takes both cores, so the two cannot run at once), alternating which goes
    first, median of ``rounds``: each figure for both trees and their ratio (this tree over the baseline)."""
    baseline = baseline_folder(baseline)
    runs: dict[str | None, list[dict[str, float]]] = {None: [], baseline: []}
    for k in range(rounds):
        for tree in ([None, baseline] if k % 2 == 0 else [baseline, None]):
            env, cwd = probe_environment(tree)
            result = subprocess.run([sys.executable, "-c", _SERVER_PROBE, str(workers)], env=env, text=True,
                                    stdout=subprocess.PIPE, cwd=cwd)
            if result.returncode != 0:
                raise RuntimeError(f"the server probe of {tree or 'this tree'} failed (exit {result.returncode}); "
                                   "its error is printed above")
            runs[tree].append(json.loads(result.stdout.strip().splitlines()[-1]))
    return median_table(runs[None], runs[baseline])


def compare_server_revision(revision: str, workers: int = 2, rounds: int = 3) -> dict[str, dict[str, float]]:
    """:func:`compare_server` against ``revision`` of this checkout (unpacked as :func:`compare_revision` does)."""
    with tempfile.TemporaryDirectory(prefix="dcops-bench-") as folder:
        return compare_server(str(archive_revision(revision, folder)), workers, rounds)


def print_table(table: dict[str, dict[str, float]]) -> None:
    print("| figure | this tree | baseline | ratio |")
    print("|---|---|---|---|")
    for key, row in table.items():
        print(f"| {key} | {_figure(row['this_tree'])} | {_figure(row['baseline'])} | {row['ratio']:.2f} |")


def _figure(value: float) -> str:
    """A rate as a whole number with thousands separators; a small figure (a ratio, milliseconds) to 3 digits."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="folder holding the baseline dcops package")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    table = compare(args.baseline, args.rounds)
    print_table(table)
    print(json.dumps(table, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
