"""Playing one cluster episode with a scheduler, and fingerprinting its arrivals.

Below every evaluation module that plays episodes (the cluster report, the matrix runner, the ladder, the
truth planner, the scheduler search), so none of them needs another to play.

**What a scheduler is given** (:func:`scheduler_action`, through which :func:`run_episode` asks every scheduler,
so ``dcops eval``'s cells and the skill ladder; other tools that call ``decide(view)`` directly, such as the
injection test, play view-reading schedulers only). Every scheduler gets the
window's structured public view (``infos["scheduler"]["view"]``) through ``decide(view)``. A scheduler that
decides from the array observation instead (the learned ``ppo`` scheduler,
``dcops.agents.schedulers.learned``: its network reads the arrays ``dcops.env.SchedulerEnv`` gives a learner,
some of which, such as the last window's peak facility power, the view does not carry) declares
``reads_observation = True`` and gets ``decide(view, observation)``, ``observation`` being the scheduler's
observation dict of the same window (``observations["scheduler"]``). Both are public by construction; the
answer is a structured decision list or the array action, validated by the environment either way.
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
    observations, infos = env.reset(seed=seed)
    rewards = []
    while env.agents:
        decisions = scheduler_action(scheduler, infos["scheduler"]["view"], observations["scheduler"])
        observations, reward, _, _, infos = env.step({"scheduler": decisions})
        rewards.append(reward["scheduler"])
    summary = dict(infos["scheduler"]["episode"])
    summary["window_rewards"] = rewards
    summary["arrivals_key"] = arrivals_key(env)
    return summary


def scheduler_action(scheduler: Any, view: dict[str, Any], observation: dict[str, Any]) -> Any:
    """The scheduler's action for a window (module docstring): ``decide(view, observation)`` for a scheduler that
    declares ``reads_observation``, ``decide(view)`` for every other."""
    if getattr(scheduler, "reads_observation", False):
        return scheduler.decide(view, observation)
    return scheduler.decide(view)


def arrivals_key(env: Any) -> str:
    """A fingerprint of the episode's arrivals and truth (equal keys: the same bound)."""
    digest = hashlib.sha256()
    for row in env.episode_truth():
        digest.update(repr((row["request_id"], row["team"], row["job_type"], row["kw"], row["submitted_window"],
                            row["true_priority"], row["true_deadline_window"], row["true_carbon_flexible"],
                            row["true_runtime_h"], row["gpus"])).encode())
    return digest.hexdigest()


def save_each(func: Callable[[Any], Any], tasks: list[Any], workers: int, save: Callable[[Any, Any], None],
              progress: bool, desc: str) -> None:
    """``save(task, func(task))`` for every task as it finishes (:func:`ordered_map`), with a progress bar
    (``desc``, one unit an episode) when ``progress``: the resumable data commands write one shard a task."""
    bar = None
    if progress and tasks:
        from tqdm import tqdm

        bar = tqdm(total=len(tasks), desc=desc, unit="ep")
    for task, result in ordered_map(func, tasks, workers):
        save(task, result)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()


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
