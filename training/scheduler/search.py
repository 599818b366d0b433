"""``dcops search-scheduler``: the cross-entropy method over the parametric public-information scheduler.

It answers the ladder's middle question: is the headroom between the baselines and the truth planner
reachable *without* the truth? The policy class is :class:`~dcops.agents.schedulers.parametric.ParametricScheduler`
(10 parameters, 14 with ``--parameters extended``, 11 with ``--parameters bayes``; public view only). The search (Rubinstein's cross-entropy
method with a diagonal Gaussian):

1. draw ``population`` parameter vectors from N(mean, diag(std²)) (seeded, :data:`SEARCH_RNG_SEED`) over the
   chosen parameter set (``--parameters``: ``base``, the ten of the shipped files, ``extended``, fourteen, or
   ``bayes``, the ten and the posterior mix);
2. score each by its mean episode score over the family's **search seeds** (:func:`search_seeds`: disjoint
   from the seeds the ladder reports, so the ladder's figure is out of sample), the same seeds for every
   candidate (common random numbers);
3. refit mean and std to the ``elite`` best (std floored at :data:`MIN_STD` of the initial spread) and repeat.

The shipped recipe (the command's defaults): 16 iterations of 32 candidates, the 6 best refitted, 32 search
seeds per candidate (16,416 episodes a family; 4 min a family on two workers here). It starts at
``priority_threshold``'s equivalent (``ParametricScheduler()``'s defaults) and keeps the best
candidate ever scored. The result ships as ``agents/schedulers/data/parametric_<family>.json`` with the command,
the seeds and the per-iteration history; the ladder's ``searched`` rung loads it.

**Validation** (``--validation-seeds N``; the shipped files were made without): the best candidate is the best of
some 500 on the same 32 seeds, so its search score is biased upwards. The command then plays it,
``priority_threshold`` and the parameters already shipped for the family on :func:`validation_seeds`, disjoint from
the search's and every ladder's, and records the three means: out-of-sample evidence for choosing between a new
search and the shipped one without looking at the ladder's seeds.

**Another catalogue** (``--catalogue triage``, ``ClusterConfig.catalogue``): every candidate and the validation
play the family under that public job catalogue, on the same seeds; the validation's ``shipped`` entry is then
the family's shipped file, tuned on the classic catalogue, played under the other one. The result is written
to ``reports/cluster/headroom/searched_<family>_<catalogue>.json`` (a report: no rung loads it).

**A perfect monitor** (``--oracle kind|record``, evaluator-only: ``dcops.evaluation.perfect_monitor``): every
candidate and the validation play with each team's ``gaming_posterior`` replaced by the truth about the team, so
the result is the ceiling of what any better oversight monitor could give this policy class. ``--oracle
told:<share>`` instead tells them the truth of that share of the pending requests. The validation also
scores the shipped file with the real monitor (``shipped_real_monitor``) on the same seeds. The result is a report,
``reports/cluster/information/searched_<family>_perfect_<oracle>.json``; nothing plays it outside the evaluation.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from dcops.command import Command

SEARCH_RNG_SEED = 20261203
SEARCH_SEED_OFFSET = 500
"""A family's search seeds start this far above its first ladder seed."""
VALIDATION_SEED_OFFSET = 700
"""A family's validation seeds start this far above its first ladder seed."""
MAX_FAMILY_VALIDATION_SEEDS = 300
"""At most this many validation seeds of a family (first ladder seed + 700 … + 999): the next family's ladder
starts 1000 above, and the RL scheduler's fresh-seed check plays the ones its training did not use."""
TEACHER_SEED_OFFSET = 10_000
"""A family's training seeds for the RL scheduler (teacher data, ``dcops scheduler-teacher --family``) start this
far above its first ladder seed."""
MIN_STD = 0.1
RECIPE = {"iterations": 16, "population": 32, "elite": 6, "n_seeds": 32}
"""The shipped search (module docstring): the defaults of :func:`cross_entropy_search` and of the command."""
INITIAL_STD: dict[str, float] = {"stated": 0.5, "type_prior": 0.5, "flag_discount": 0.3,
                                 "deadline_gap_discount": 0.3, "tight_bonus": 0.5, "wait_bonus": 0.3,
                                 "carbon_shift": 5.0, "posterior_discount": 0.5, "threshold": 0.5,
                                 "margin": 0.03, "size_bonus": 0.3, "length_penalty": 0.3, "reserve": 0.15,
                                 "reserve_level": 0.7, "posterior_mix": 0.4}
LOWER: dict[str, float] = {"carbon_shift": 0.0, "margin": -0.05, "reserve": 0.0, "posterior_mix": 0.0}
UPPER: dict[str, float] = {"margin": 0.2, "reserve": 0.6, "posterior_mix": 1.0}


def _seeds(family: str, n: int, offset: int, what: str) -> tuple[int, ...]:
    from dcops.cluster.scenarios import SCENARIOS, scenario

    first = scenario(family).seeds[0] + offset
    seeds = tuple(range(first, first + n))
    for name, other in SCENARIOS.items():  # a seed another family reports is kept out too, to be safe
        if set(seeds) & set(other.seeds):
            raise ValueError(f"seeds: {n} {what} seeds of {family} would reach the {name} ladder's seeds")
    return seeds


def search_seeds(family: str, n: int) -> tuple[int, ...]:
    """``n`` seeds of ``family`` for the search, disjoint from its ladder seeds (module docstring)."""
    return _seeds(family, n, SEARCH_SEED_OFFSET, "search")


def validation_seeds(family: str, n: int) -> tuple[int, ...]:
    """``n`` seeds of ``family`` for validating a search (module docstring), disjoint from its ladder seeds (and
    from its search seeds while the search uses at most 200; :func:`cross_entropy_search` checks)."""
    return _seeds(family, n, VALIDATION_SEED_OFFSET, "validation")


def teacher_seeds(family: str, n: int) -> tuple[int, ...]:
    """``n`` seeds of ``family`` for the RL scheduler's teacher data (at most 1000), disjoint from its ladder,
    search and validation seeds."""
    return _seeds(family, n, TEACHER_SEED_OFFSET, "teacher")


def _clip(vector: np.ndarray, names: tuple[str, ...]) -> np.ndarray:
    out = vector.copy()
    for i, name in enumerate(names):
        out[i] = min(max(out[i], LOWER.get(name, -math.inf)), UPPER.get(name, math.inf))
    return out


def _parameter_names(parameter_set: str) -> tuple[str, ...]:
    from dcops.agents.schedulers.parametric import ParametricScheduler

    try:
        return ParametricScheduler.PARAMETER_SETS[parameter_set]
    except KeyError:
        raise ValueError(f"parameters: unknown set {parameter_set!r}; "
                         f"known: {sorted(ParametricScheduler.PARAMETER_SETS)}") from None


_ENVS: dict[str, Any] = {}


def _evaluate(task: tuple[Any, ...]) -> float:
    """Mean episode score over ``seeds`` of ``family`` under job catalogue ``catalogue`` of the parametric
    scheduler with ``parameters`` (the others at their defaults), or of ``priority_threshold`` for ``None``:
    ``task = (family, seeds, parameters, catalogue[, oracle])``. With an ``oracle`` (evaluator-only,
    ``dcops.evaluation.perfect_monitor.with_oracle``) the parametric scheduler plays under it; priority_threshold,
    the reference every lead is measured against, always plays as it is."""
    import dcops
    from dcops.agents.schedulers import PriorityThresholdScheduler
    from dcops.agents.schedulers.parametric import ParametricScheduler
    from dcops.evaluation.play import run_episode

    family, seeds, parameters, catalogue, *rest = task
    oracle = rest[0] if rest else None
    key = f"{family}/{catalogue}"
    if key not in _ENVS:
        _ENVS[key] = dcops.parallel_env(scenario=family, catalogue=catalogue)
    env = _ENVS[key]
    scheduler = PriorityThresholdScheduler() if parameters is None else ParametricScheduler(**parameters)
    if oracle is not None and parameters is not None:
        from dcops.evaluation.perfect_monitor import with_oracle

        scheduler = with_oracle(env, scheduler, oracle)
    return float(np.mean([run_episode(scheduler, s, env=env)["score"] for s in seeds]))


def cross_entropy_search(family: str, iterations: int = RECIPE["iterations"],
                         population: int = RECIPE["population"], elite: int = RECIPE["elite"],
                         n_seeds: int = RECIPE["n_seeds"], workers: int = 1, progress: Any = None,
                         parameter_set: str = "base", n_validation: int = 0,
                         catalogue: str = "classic", oracle: str | None = None) -> dict[str, Any]:
    """Run the search of the module docstring; return the best parameters, the history and, with
    ``n_validation`` seeds, the validation (module docstring). ``catalogue`` plays the family under that public
    job catalogue (``ClusterConfig.catalogue``) on the same seeds. ``oracle`` (evaluator-only, module docstring)
    plays every candidate with that perfect monitor in place of the real one, or told the truth of a share of the
    pending requests (``told:<share>``)."""
    from dcops.agents.schedulers.parametric import ParametricScheduler
    from dcops.evaluation.perfect_monitor import parse_oracle

    names = _parameter_names(parameter_set)
    if oracle is not None:
        parse_oracle(oracle)
    seeds = search_seeds(family, n_seeds)
    checked = validation_seeds(family, n_validation)
    if set(checked) & set(seeds):
        raise ValueError(f"seeds: {n_seeds} search seeds of {family} overlap its {n_validation} validation seeds")
    rng = np.random.default_rng(SEARCH_RNG_SEED)
    start = ParametricScheduler()
    mean = np.array([getattr(start, n) for n in names], dtype=np.float64)
    std0 = np.array([INITIAL_STD[n] for n in names])
    std = std0.copy()
    history = []
    pool = None
    if workers > 1:
        import multiprocessing

        pool = multiprocessing.get_context("spawn").Pool(workers)
    try:
        plain_map = pool.map if pool is not None else (lambda f, xs: list(map(f, xs)))

        def evaluate_all(tasks: list[tuple[Any, ...]]) -> list[float]:
            """The search's evaluations: as the public view is, or under ``oracle``."""
            return plain_map(_evaluate, [(*task, oracle) for task in tasks])

        def as_parameters(vector: np.ndarray) -> dict[str, float]:
            return dict(zip(names, map(float, vector), strict=True))

        start_score = evaluate_all([(family, seeds, as_parameters(mean), catalogue)])[0]
        best_vector, best_score = mean.copy(), start_score
        for it in range(iterations):
            candidates = [_clip(mean + std * rng.standard_normal(len(names)), names) for _ in range(population)]
            scores = np.array(evaluate_all([(family, seeds, as_parameters(c), catalogue) for c in candidates]))
            order = np.argsort(-scores)
            elites = np.array([candidates[i] for i in order[:elite]])
            mean = elites.mean(axis=0)
            std = np.maximum(elites.std(axis=0), MIN_STD * std0)
            if scores[order[0]] > best_score:
                best_score, best_vector = float(scores[order[0]]), candidates[order[0]].copy()
            history.append({"iteration": it, "best": float(scores[order[0]]), "elite_mean": float(scores[order[:elite]].mean()),
                            "population_mean": float(scores.mean()), "best_so_far": best_score})
            if progress is not None:
                progress(history[-1])
        result = {"family": family, "parameters": as_parameters(best_vector),
                  "search_score": best_score, "start_score": start_score, "search_seeds": list(seeds),
                  "iterations": iterations, "population": population, "elite": elite, "history": history}
        if parameter_set != "base":
            result["parameter_set"] = parameter_set
        if catalogue != "classic":
            result["catalogue"] = catalogue
        if oracle is not None:
            result["oracle"] = oracle
        if checked:
            shipped = data_path(family)
            tasks = [(family, checked, None, catalogue), (family, checked, result["parameters"], catalogue)]
            if shipped.exists():
                tasks.append((family, checked, json.loads(shipped.read_text())["parameters"], catalogue))
            means = [float(m) for m in evaluate_all(tasks)]
            result["validation"] = {"seeds": list(checked), "priority_threshold": means[0], "searched": means[1],
                                    "shipped": means[2] if shipped.exists() else None}
            if oracle is not None and shipped.exists():  # the shipped file with the real monitor, for the ceiling
                result["validation"]["shipped_real_monitor"] = plain_map(_evaluate, [tasks[2]])[0]
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    return result


def data_path(family: str, catalogue: str = "classic", oracle: str | None = None) -> Path:
    """Where the search of ``family`` writes by default: for the classic catalogue the shipped file the
    ladder's ``searched`` rung loads; for another, a report, ``reports/cluster/headroom/searched_<family>_
    <catalogue>.json`` under the working folder (no rung loads it); under an oracle, a report,
    ``reports/cluster/information/searched_<family>[_<catalogue>]_perfect_<kind|record>.json`` for a perfect
    monitor and ``…_told-<share>.json`` for told requests."""
    from dcops.agents.schedulers.parametric import searched_path
    from dcops.evaluation.perfect_monitor import parse_oracle

    if oracle is not None:
        suffix = "" if catalogue == "classic" else f"_{catalogue}"
        kind, share = parse_oracle(oracle)
        name = f"told-{share:g}" if kind == "told" else f"perfect_{kind}"
        return Path("reports/cluster/information") / f"searched_{family}{suffix}_{name}.json"
    if catalogue != "classic":
        return Path("reports/cluster/headroom") / f"searched_{family}_{catalogue}.json"
    return searched_path(family)


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--family", required=True, help="scenario family (dcops.cluster.scenarios), or 'all'")
    parser.add_argument("--iterations", type=int, default=RECIPE["iterations"])
    parser.add_argument("--population", type=int, default=RECIPE["population"])
    parser.add_argument("--elite", type=int, default=RECIPE["elite"])
    parser.add_argument("--seeds", type=int, default=RECIPE["n_seeds"], help="search seeds per candidate")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--parameters", default="base", help="parameter set to search: base (the ten of the "
                        "shipped files), extended (also the size and length terms and the reserve) or bayes (the "
                        "ten and the posterior mix)")
    parser.add_argument("--validation-seeds", type=int, default=0, help="validation seeds, disjoint from the "
                        "search's and the ladder's: the result, priority_threshold and the shipped parameters are "
                        "scored on them and recorded (default 0: none, as the shipped files were made)")
    parser.add_argument("--catalogue", default="classic", help="public job catalogue to play the family under "
                        "(dcops.cluster.job_types.catalogue; default classic, as the shipped files were made)")
    parser.add_argument("--oracle", default=None, help="evaluator-only: play every candidate with a perfect "
                        "oversight monitor in place of the real one (dcops.evaluation.perfect_monitor: kind or "
                        "record), or told the truth of a share of the pending requests (told:<share>); writes a "
                        "report, never the shipped file")
    parser.add_argument("--out", default=None, help="output file (default: the shipped agents/schedulers/data/"
                        "parametric_<family>.json; reports/cluster/headroom/searched_<family>_<catalogue>.json "
                        "for another catalogue; reports/cluster/information/searched_<family>_… with --oracle)")


def _run(args: argparse.Namespace) -> int:
    from dcops.cluster.scenarios import SCENARIOS, scenario

    families = list(SCENARIOS) if args.family == "all" else [args.family]
    for family in families:
        try:
            scenario(family)
        except ValueError as error:
            raise SystemExit(f"--family: {error}") from None
    for name in ("iterations", "population", "seeds", "workers"):
        if getattr(args, name) < 1:
            raise SystemExit(f"--{name}: must be >= 1")
    if not 1 <= args.elite <= args.population:
        raise SystemExit("--elite: must be between 1 and --population")
    if not 0 <= args.validation_seeds <= 200:
        raise SystemExit("--validation-seeds: must be between 0 and 200")
    try:
        _parameter_names(args.parameters)
    except ValueError as error:
        raise SystemExit(f"--{error}") from None
    from dcops.cluster.job_types import catalogue
    from dcops.evaluation.perfect_monitor import parse_oracle

    try:
        catalogue(args.catalogue)
    except ValueError as error:
        raise SystemExit(f"--{error}") from None
    if args.oracle is not None:
        try:
            parse_oracle(args.oracle)
        except ValueError as error:
            raise SystemExit(f"--{error}") from None
    if args.oracle is not None and args.out and len(families) == 1 \
            and Path(args.out).resolve() == data_path(families[0]).resolve():
        raise SystemExit(f"--out: {args.out} is the shipped file the ladder plays; an oracle's search is a report")
    for family in families:
        result = cross_entropy_search(family, args.iterations, args.population, args.elite, args.seeds,
                                      args.workers, progress=lambda h, f=family: print(f, json.dumps(h), flush=True),
                                      parameter_set=args.parameters, n_validation=args.validation_seeds,
                                      catalogue=args.catalogue, oracle=args.oracle)
        result["command"] = (f"dcops search-scheduler --family {family} --iterations {args.iterations} "
                             f"--population {args.population} --elite {args.elite} --seeds {args.seeds}"
                             + (f" --parameters {args.parameters}" if args.parameters != "base" else "")
                             + (f" --catalogue {args.catalogue}" if args.catalogue != "classic" else "")
                             + (f" --oracle {args.oracle}" if args.oracle else "")
                             + (f" --validation-seeds {args.validation_seeds}" if args.validation_seeds else ""))
        out = Path(args.out) if args.out and len(families) == 1 else data_path(family, args.catalogue, args.oracle)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=1) + "\n")
        print(f"{family}: {result['start_score']:+.4f} -> {result['search_score']:+.4f} on the search seeds; wrote {out}")
        if "validation" in result:
            v = result["validation"]
            shipped = "none shipped" if v["shipped"] is None else f"shipped {v['shipped']:+.4f}"
            real = (f", shipped with the real monitor {v['shipped_real_monitor']:+.4f}"
                    if "shipped_real_monitor" in v else "")
            print(f"{family} validation ({len(v['seeds'])} seeds): priority_threshold {v['priority_threshold']:+.4f}, "
                  f"this search {v['searched']:+.4f}, {shipped}{real}")
    return 0


COMMANDS = [Command("search-scheduler", "Cross-entropy search of the parametric public-information scheduler "
                    "per scenario family (ships agents/schedulers/data/parametric_<family>.json)", _arguments, _run)]
