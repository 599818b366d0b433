"""Playing one cluster episode with a view-reading scheduler, and fingerprinting its arrivals.

Below every evaluation module that plays episodes (the cluster report, the matrix runner, the ladder, the
truth planner, the scheduler search), so none of them needs another to play.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any


def run_episode(scheduler: Any, seed: int, env: Any = None, **config: Any) -> dict[str, Any]:
    """Play one episode of ``datacenter_ops`` (the default version unless ``config`` names one) with a view-reading
    scheduler; return its summary."""
    import dcops

    env = env if env is not None else dcops.parallel_env(**config)
    _, infos = env.reset(seed=seed)
    rewards = []
    while env.agents:
        decisions = scheduler.decide(infos["scheduler"]["view"])
        _, reward, _, _, infos = env.step({"scheduler": decisions})
        rewards.append(reward["scheduler"])
    summary = dict(infos["scheduler"]["episode"])
    summary["window_rewards"] = rewards
    summary["arrivals_key"] = arrivals_key(env)
    return summary


def arrivals_key(env: Any) -> str:
    """A fingerprint of the episode's arrivals and truth (equal keys: the same bound)."""
    digest = hashlib.sha256()
    for row in env.episode_truth():
        digest.update(repr((row["request_id"], row["team"], row["job_type"], row["kw"], row["submitted_window"],
                            row["true_priority"], row["true_deadline_window"], row["true_carbon_flexible"],
                            row["true_runtime_h"], row["gpus"])).encode())
    return digest.hexdigest()


def ordered_map(func: Callable[[Any], Any], tasks: Iterable[Any], workers: int = 1) -> Iterator[tuple[Any, Any]]:
    """``(task, func(task))`` for every task, in the tasks' order, over ``workers`` spawned processes (in this
    process when ``workers <= 1``). ``func`` must be a module-level function (it is pickled by name)."""
    tasks = list(tasks)
    if workers <= 1:
        for task in tasks:
            yield task, func(task)
        return
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        yield from zip(tasks, pool.imap(func, tasks), strict=True)
