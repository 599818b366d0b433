"""Teacher data for the RL scheduler: what a teacher decided, window by window, beside what the student sees.

``dcops scheduler-teacher --seeds N --validation-seeds M --out DIR`` plays each seed with each teacher and
records, for every admission window:

- the scheduler's **public observation exactly as** ``dcops.env.SchedulerEnv`` **gives it**: the arrays of
  ``dcops.cluster.observation`` (``requests`` (S, 26), ``request_mask`` (S,), ``action_mask`` (S · A,),
  ``cluster`` (20,), ``zones`` (Z, 7), ``teams`` (T, 15), or (T, 16) with ``--team-posterior``: the teams'
  ``gaming_posterior`` as a last column), the dict the learned policy reads, key by key;
- the teacher's decisions as **per-slot codes** of the array action (``dcops.cluster.decisions``: 0 ACCEPT,
  1 REJECT, 1 + k DEFER by k windows; empty slots 0): :func:`decisions_to_codes`;
- the window reward, and the seed, window, mix and condition.

**Teachers.** ``truth_planner`` (privileged: it plans from the episode's private truth through the evaluator
API, ``dcops.evaluation.truth_planner``; the student sees only the public observation of the windows it
played) and ``priority_threshold`` (the best public baseline of the evaluation). The episode is played *with
the recorded codes* (the array action), so the stored observations are exactly the ones those codes lead to:
replaying the codes in a ``SchedulerEnv`` of the same scenario and seed gives the same arrays (tested). Two
places where the array action cannot say what the teacher said: a DEFER further than ``max_defer`` windows
becomes DEFER by ``max_defer`` (the request comes back and is deferred again, to the same effect; counted as
``clipped_defers``), and requests past the ``max_slots`` slots get the environment's default.

**Scenarios.** By default the evaluation matrix's (``dcops.evaluation.matrix``): seed ``s`` plays mix
``MIXES[s % 7]`` under condition ``CONDITIONS[(s // 7) % 6]`` (:func:`scenario_of`), so every 42 consecutive
seeds cover every (mix, condition) once, with the matrix's team factory and configuration
(``dcops.evaluation.runner.env_kwargs``), game version 1. With ``family`` (``--family``), every seed plays that
scenario family of ``dcops.cluster.scenarios`` as the skill ladder builds it (``dcops.parallel_env(scenario=
family)``), so a scheduler can be trained for a family whose teams the matrix does not have (the
``oversubscribed`` game's six, the ``adversarial`` game's seven).

**Split, fixed by seed**: for the matrix, training seeds ``1000 … 1000 + N − 1`` (N ≤ 1000), validation seeds
``2000 … 2000 + M − 1`` (M ≤ 1000); the evaluation's public seeds 0–19 are never used (and ``dcops eval``
resets them through a keyed HMAC anyway, ``dcops.boundary``). For a family, training seeds are
``dcops.training.scheduler.search.teacher_seeds`` (its first ladder seed + 10,000 …) and validation seeds its
``validation_seeds`` (first ladder seed + 700 …, the search's validation seeds): never a ladder seed.

**Teachers** for a family also include ``searched``, the family's public-information scheduler as ``dcops
search-scheduler`` tuned it (``agents/schedulers/data/parametric_<family>.json``).

**Output** (``DIR``): ``shards/<teacher>/<seed>.npz`` as each seed finishes (a rerun skips the seeds on disk:
resumable), then ``<teacher>_<split>.npz`` with every window of the split end to end and ``manifest.json``
(seeds, split, counts, teachers' mean episode scores, clipped defers, package versions). Arrays are read with
``np.load(allow_pickle=False)``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dcops.evaluation.report import versions

OBS_KEYS: tuple[str, ...] = ("requests", "request_mask", "action_mask", "cluster", "zones", "teams")
"""The keys of the scheduler's observation (``dcops.cluster.observation``), stored as they come."""
TEACHERS: tuple[str, ...] = ("truth_planner", "priority_threshold")
"""The teachers of the matrix's data."""
FAMILY_TEACHERS: tuple[str, ...] = (*TEACHERS, "searched")
"""The teachers of a family's data (the searched scheduler ships per family)."""
MATRIX = ""
"""``family`` value meaning the evaluation matrix's scenarios (module docstring)."""
TRAIN_SEED_START = 1000
VALIDATION_SEED_START = 2000
MAX_SPLIT_SEEDS = 1000
"""At most this many seeds per split, so the two ranges never meet."""


def split_seeds(n_train: int, n_validation: int, family: str = MATRIX) -> dict[str, list[int]]:
    """The fixed split (module docstring): ``{"train": [...], "validation": [...]}``."""
    for name, n in (("n_train", n_train), ("n_validation", n_validation)):
        if not 0 <= n <= MAX_SPLIT_SEEDS:
            raise ValueError(f"{name}: between 0 and {MAX_SPLIT_SEEDS} seeds, got {n}")
    if family != MATRIX:
        from dcops.training.scheduler.search import (
            MAX_FAMILY_VALIDATION_SEEDS,
            teacher_seeds,
            validation_seeds,
        )

        if n_validation > MAX_FAMILY_VALIDATION_SEEDS:
            raise ValueError(f"n_validation: a family has {MAX_FAMILY_VALIDATION_SEEDS} validation seeds, asked "
                             f"{n_validation}")
        return {"train": list(teacher_seeds(family, n_train)), "validation": list(validation_seeds(family, n_validation))}
    return {"train": list(range(TRAIN_SEED_START, TRAIN_SEED_START + n_train)),
            "validation": list(range(VALIDATION_SEED_START, VALIDATION_SEED_START + n_validation))}


def validation_split(n: int, family: str = MATRIX) -> list[int]:
    """The first ``n`` validation seeds of the split (the RL scheduler's checkpoint selection plays them; the
    matrix's range has no cap here, as before families)."""
    if family == MATRIX:
        return list(range(VALIDATION_SEED_START, VALIDATION_SEED_START + n))
    return split_seeds(0, n, family)["validation"]


def check_family(family: str) -> str:
    """``family`` if it names a scenario family (or is :data:`MATRIX`); ``ValueError`` naming the known ones."""
    from dcops.cluster.scenarios import SCENARIOS

    if family != MATRIX and family not in SCENARIOS:
        raise ValueError(f"family: unknown {family!r}; known: {sorted(SCENARIOS)} (or '' for the evaluation matrix)")
    return family


def scenario_of(seed: int) -> tuple[str, str]:
    """The (mix, condition) of the evaluation matrix a teacher seed plays (module docstring)."""
    from dcops.evaluation.matrix import CONDITIONS, MIXES

    mixes, conditions = list(MIXES), list(CONDITIONS)
    return mixes[seed % len(mixes)], conditions[(seed // len(mixes)) % len(conditions)]


def scenario_env_kwargs(seed: int, n_windows: int = 8) -> dict[str, Any]:
    """``dcops.parallel_env`` / ``SchedulerEnv`` keyword arguments of the seed's scenario (game version 1)."""
    from dcops.evaluation.runner import env_kwargs

    mix, condition = scenario_of(seed)
    return env_kwargs(mix, condition, n_windows, game_version=1)


def episode_key(seed: int, family: str = MATRIX, team_posterior: bool = False) -> tuple[str, ...]:
    """What distinguishes the environment a seed plays in: ``(family,)``, or the matrix's (mix, condition)
    (and ``"team_posterior"`` after it where the observation carries the team posterior)."""
    key = (family,) if family != MATRIX else scenario_of(seed)
    return (*key, "team_posterior") if team_posterior else key


def episode_env_kwargs(seed: int, family: str = MATRIX, team_posterior: bool = False) -> dict[str, Any]:
    """``dcops.parallel_env`` / ``SchedulerEnv`` keyword arguments of the environment ``seed`` plays in: the
    family's, as the skill ladder builds it (``dcops.evaluation.ladder.family_env``), or the matrix's; with
    ``team_posterior`` the observation's ``teams`` carries each team's ``gaming_posterior`` (``dcops.env``)."""
    kwargs = {"scenario": check_family(family)} if family != MATRIX else scenario_env_kwargs(seed)
    return {**kwargs, "team_posterior": True} if team_posterior else kwargs


def decisions_to_codes(decisions: Any, view: dict[str, Any], max_slots: int, max_defer: int) -> tuple[np.ndarray, int]:
    """Structured decisions (a list, or ``{"decisions": [...]}``) as the array action's per-slot codes, and how
    many DEFERs were clipped to ``max_defer`` windows. A pending request with no decision gets the environment's
    default (DEFER to the next window, REJECT in the last); empty slots get 0 (ignored)."""
    if isinstance(decisions, dict):
        decisions = decisions.get("decisions", [])
    by_id = {d["request_id"]: d for d in decisions}
    window, last = view["window"], view["n_windows"] - 1
    codes = np.zeros(max_slots, dtype=np.int64)
    clipped = 0
    for item in view["pending"]:
        slot = item["slot"]
        if slot is None:
            continue
        rid = item["request_id"]
        decision = by_id.get(rid)
        kind = str(decision["decision"]).upper() if decision else ("REJECT" if window == last else "DEFER")
        if kind == "ACCEPT":
            codes[slot] = 0
        elif kind == "REJECT":
            codes[slot] = 1
        elif kind == "DEFER":
            target = decision.get("defer_to_window") if decision else window + 1
            if target is None or int(target) <= window:  # a training label must be a decision the env takes
                raise ValueError(f"request {rid}: DEFER to window {target} in window {window} is not a later window")
            k = int(target) - window
            if k > max_defer:
                clipped += 1
                k = max_defer
            codes[slot] = 1 + k
        else:
            raise ValueError(f"request {rid}: decision {kind!r} is not ACCEPT, REJECT or DEFER")
    return codes, clipped


def record_episode(env: Any, decide: Callable[[dict[str, Any]], Any], seed: int) -> dict[str, Any]:
    """Play ``seed`` on ``env`` (a ``dcops.parallel_env`` with the structured view) with ``decide(view)``, stepping
    with the codes of its decisions; return the window arrays (module docstring) and the episode's score."""
    cfg = env.config
    observations, infos = env.reset(seed=seed)
    rows: dict[str, list[Any]] = {key: [] for key in (*OBS_KEYS, "action", "reward", "window")}
    clipped = 0
    while env.agents:
        obs = observations["scheduler"]
        view = infos["scheduler"]["view"]
        codes, n_clipped = decisions_to_codes(decide(view), view, cfg.max_slots, cfg.max_defer)
        clipped += n_clipped
        for key in OBS_KEYS:
            rows[key].append(obs[key].copy())
        rows["action"].append(codes.astype(np.int8))
        rows["window"].append(view["window"])
        observations, rewards, _, _, infos = env.step({"scheduler": codes})
        rows["reward"].append(rewards["scheduler"])
    arrays = {key: np.stack(values) for key, values in rows.items() if key not in ("reward", "window")}
    arrays["reward"] = np.asarray(rows["reward"], dtype=np.float32)
    arrays["window"] = np.asarray(rows["window"], dtype=np.int16)
    arrays["seed"] = np.full(len(rows["window"]), seed, dtype=np.int64)
    return {"arrays": arrays, "score": float(infos["scheduler"]["episode"]["score"]), "clipped_defers": clipped}


_ENVS: dict[tuple[str, ...], Any] = {}


def _scenario_env(seed: int, family: str = MATRIX, team_posterior: bool = False) -> Any:
    """The seed's scenario environment (cached per process, as the evaluation's runner caches its own)."""
    key = episode_key(seed, family, team_posterior)
    if key not in _ENVS:
        import dcops

        _ENVS[key] = dcops.parallel_env(**episode_env_kwargs(seed, family, team_posterior))
    return _ENVS[key]


def teacher_episode(task: tuple[str, int, int, tuple[str, ...], str, bool]) -> dict[str, Any]:
    """One (teacher, seed, planner passes, planner starts, family, team_posterior): the recorded episode
    (:func:`record_episode`) plus the teacher's own score (for the truth planner, its best structured run's; the
    recorded replay of its plan can differ where a DEFER was clipped or a request overflowed the slots).
    Module-level, so worker processes can run it."""
    teacher, seed, passes, starts, family, team_posterior = task
    env = _scenario_env(seed, family, team_posterior)
    started = time.perf_counter()
    if teacher == "truth_planner":
        from dcops.evaluation.truth_planner import PlanFollower, play_truth_planner

        # The value objective only, as the published teacher data were made (before the score objective).
        planned = play_truth_planner(env, seed, passes=passes, starts=starts, objectives=("value",))
        record = record_episode(env, PlanFollower(planned.starts).decide, seed)
        record["teacher_score"] = float(planned.summary["score"])
    elif teacher == "priority_threshold":
        from dcops.agents.schedulers import PriorityThresholdScheduler

        record = record_episode(env, PriorityThresholdScheduler().decide, seed)
        record["teacher_score"] = record["score"]
    elif teacher == "searched" and family != MATRIX:
        from dcops.agents.schedulers.parametric import searched_scheduler

        scheduler = searched_scheduler(family)
        record = record_episode(env, scheduler.decide, seed)
        record["teacher_score"] = record["score"]
    else:
        raise ValueError(f"teacher: unknown {teacher!r}; known: {FAMILY_TEACHERS if family != MATRIX else TEACHERS}")
    record["wall_s"] = time.perf_counter() - started
    return record


def _shard_path(out: Path, teacher: str, seed: int) -> Path:
    return out / "shards" / teacher / f"{seed}.npz"


def _write_shard(path: Path, record: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, **record["arrays"], score=np.asarray(record["score"]),
                        teacher_score=np.asarray(record["teacher_score"]),
                        clipped_defers=np.asarray(record["clipped_defers"]), wall_s=np.asarray(record["wall_s"]))
    tmp.replace(path)  # a crash never leaves a half-written shard that a rerun would trust


def build_teacher_dataset(out: str | Path, n_train: int, n_validation: int,
                          teachers: Sequence[str] = TEACHERS, workers: int = 1, progress: bool = True,
                          planner_passes: int = 4, planner_starts: tuple[str, ...] = ("electrical", "probe"),
                          family: str = MATRIX, team_posterior: bool = False) -> dict[str, Any]:
    """Play every missing (teacher, seed), then merge the shards of each (teacher, split) and write the manifest
    (module docstring); a manifest already in ``out`` keeps its entries of the teachers not played here. Returns
    the manifest.

    :param planner_passes: plans the truth planner follows per start budget (``play_truth_planner``'s
        ``passes``; it stops early once a plan runs without incident). About 15 s a seed here with the
        defaults; ``2`` and ``("electrical",)`` take about a third of that.
    :param planner_starts: the truth planner's start budgets.
    :param family: a scenario family to play every seed in (module docstring), or :data:`MATRIX`.
    :param team_posterior: record the observation with the team posterior column (``dcops.env``'s
        ``team_posterior``), for a student that reads it (``SchedulerPPOConfig.team_posterior``).
    """
    from dcops.evaluation.play import save_each

    out = Path(out)
    known = FAMILY_TEACHERS if check_family(family) != MATRIX else TEACHERS
    unknown = [t for t in teachers if t not in known]
    if unknown:
        raise ValueError(f"teachers: unknown {unknown}; known: {known}")
    splits = split_seeds(n_train, n_validation, family)
    previous = json.loads((out / "manifest.json").read_text()) if (out / "manifest.json").exists() else {}
    if previous and previous.get("family", MATRIX) != family:
        # Shards are reused by (teacher, seed): episodes of another family would mislabel the dataset.
        raise ValueError(f"family: {out} holds data of {previous.get('family') or 'the matrix'!r}; use another --out")
    if previous and bool(previous.get("team_posterior", False)) != team_posterior:
        raise ValueError(f"team_posterior: {out} holds observations {'with' if not team_posterior else 'without'} "
                         "the team posterior column; use another --out")
    planner = {"passes": planner_passes, "starts": list(planner_starts)}
    recorded = previous.get("teachers", {}).get("truth_planner", {}).get("planner")
    if "truth_planner" in teachers and recorded is not None and recorded != planner:
        # Shards are reused by (teacher, seed): mixing plans of other settings would mislabel the dataset.
        raise ValueError(f"planner_passes/planner_starts: {out} holds truth-planner shards made with {recorded}; "
                         f"use the same settings or another --out (asked: {planner})")
    # Teacher by teacher, each over its training seeds and then its validation seeds; shards already on disk
    # are kept, so a stopped run resumes where it stopped.
    tasks = [(t, s, planner_passes, tuple(planner_starts), family, team_posterior) for t in teachers
             for s in sorted(splits["train"] + splits["validation"]) if not _shard_path(out, t, s).exists()]
    started = time.perf_counter()
    save_each(teacher_episode, tasks, workers,
              lambda task, record: _write_shard(_shard_path(out, task[0], task[1]), record), progress,
              "teacher episodes")
    rule = (f"every seed plays the scenario family {family!r} (dcops.parallel_env(scenario={family!r}))"
            if family != MATRIX else
            "mix = MIXES[seed % 7], condition = CONDITIONS[(seed // 7) % 6] (dcops.evaluation.matrix)")
    manifest: dict[str, Any] = {
        "scenario_rule": rule,
        **({"family": family} if family != MATRIX else {}),  # the matrix's manifest stays as published
        **({"team_posterior": True} if team_posterior else {}),
        "teachers": previous.get("teachers", {}),
        "observation_keys": list(OBS_KEYS),
        "action": "per-slot codes: 0 ACCEPT, 1 REJECT, 1 + k DEFER by k windows (empty slots 0)",
        "play_seconds_last_run": round(time.perf_counter() - started, 1),
        "versions": versions("scipy", "gymnasium"),
    }
    for teacher in teachers:
        entry: dict[str, Any] = {"seeds": {name: f"{seeds[0]}-{seeds[-1]}" if seeds else ""
                                           for name, seeds in splits.items()}}
        if teacher == "truth_planner":
            entry["planner"] = planner
        for split, seeds in splits.items():
            if not seeds:
                continue
            merged, scores, teacher_scores, clipped, wall = _merge([_shard_path(out, teacher, s) for s in seeds],
                                                                   team_posterior)
            path = out / f"{teacher}_{split}.npz"
            np.savez_compressed(path, **merged)
            entry[split] = {"file": path.name, "seeds": len(seeds), "windows": int(len(merged["seed"])),
                            "decisions": int(merged["request_mask"].sum()),
                            "mean_score_recorded": float(np.mean(scores)),
                            "mean_score_teacher": float(np.mean(teacher_scores)),
                            "clipped_defers": int(clipped), "play_seconds": round(float(wall), 1)}
            if family != MATRIX and teacher != REFERENCE_TEACHER:  # the matrix's manifest stays as published
                entry[split]["vs_" + REFERENCE_TEACHER] = paired_with_reference(out, teacher, seeds)
        manifest["teachers"][teacher] = entry
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


REFERENCE_TEACHER = "priority_threshold"
"""The family's best public baseline (the skill ladder's reference in every family)."""


def paired_with_reference(out: str | Path, teacher: str, seeds: Sequence[int]) -> dict[str, float] | None:
    """The teacher's recorded episode score minus :data:`REFERENCE_TEACHER`'s on the seeds both played (their
    shards in ``out``): mean and 95 % t-interval, or None where the reference has not played them. These are
    the *recorded* episodes, played through the array action a learner has (module docstring): where more
    requests wait than ``max_slots`` (windows of the ``oversubscribed`` and ``adversarial`` families), the ones
    past the slots take the environment's default, so the figure is what a student of the teacher could reach, not the teacher's own
    structured play."""
    from dcops.intervals import t_interval

    out = Path(out)
    both = [s for s in seeds if _shard_path(out, REFERENCE_TEACHER, s).exists()]
    if len(both) < 2:
        return None

    def score(name: str, seed: int) -> float:
        with np.load(_shard_path(out, name, seed), allow_pickle=False) as data:
            return float(data["score"])

    diff = np.array([score(teacher, s) - score(REFERENCE_TEACHER, s) for s in both])
    mean, low, high = t_interval(diff)
    return {"seeds": len(both), "mean": float(mean), "low": float(low), "high": float(high)}


def _merge(paths: list[Path], team_posterior: bool = False,
           ) -> tuple[dict[str, np.ndarray], list[float], list[float], int, float]:
    """The shards' arrays end to end, with their scores, clipped defers and wall time; a shard whose team rows
    are not of the run's width (one left by a stopped run with the other ``team_posterior``) is refused, naming
    it."""
    from dcops.cluster.observation import N_TEAM_FEATURES

    width = N_TEAM_FEATURES + int(team_posterior)
    parts: dict[str, list[np.ndarray]] = {}
    scores, teacher_scores, clipped, wall = [], [], 0, 0.0
    for path in paths:
        with np.load(path, allow_pickle=False) as data:
            if data["teams"].shape[-1] != width:
                raise ValueError(f"team_posterior: shard {path} has {data['teams'].shape[-1]} team features, this "
                                 f"run records {width}; use another --out")
            for key in (*OBS_KEYS, "action", "reward", "window", "seed"):
                parts.setdefault(key, []).append(data[key])
            scores.append(float(data["score"]))
            teacher_scores.append(float(data["teacher_score"]))
            clipped += int(data["clipped_defers"])
            wall += float(data["wall_s"])
    return {k: np.concatenate(v) for k, v in parts.items()}, scores, teacher_scores, clipped, wall


def load_split(directory: str | Path, teacher: str, split: str) -> dict[str, np.ndarray]:
    """The merged arrays of one teacher's split (``np.load(allow_pickle=False)``, read into memory)."""
    with np.load(Path(directory) / f"{teacher}_{split}.npz", allow_pickle=False) as data:
        return {key: data[key] for key in data.files}
