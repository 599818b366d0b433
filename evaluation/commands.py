"""``dcops eval``: the scripted-team adversarial evaluation matrix (argparse only; heavy imports inside
``run``).

``--quick`` is the documented small subset (:data:`QUICK`): every baseline and the hindsight bound, every team
mix and condition, seeds 0–2 (60 cells per baseline, 300 in all, plus 12 bounds), under
``reports/eval/quick``. The default matrix is the same with seeds 0–19 (2,000 scheduler cells and 80 bounds).
``--families`` plays the skill ladder's scenario families as conditions of their own, with their own teams
(``dcops.evaluation.matrix``); alone, without the matrix's mixes and conditions.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from typing import Any

from dcops.command import Command

DEFAULT_REFERENCE = "priority_threshold"
QUICK = {"seeds": 3}
"""``--quick``: seeds 0–2 (everything else as the default matrix), written to ``reports/eval/quick``."""


def _llm_model() -> dict[str, Any]:
    """What the llm: schedulers' base model name resolved to (``$DCOPS_LLM_MODEL``, default gemma)."""
    from dataclasses import asdict

    from dcops.agents.llm.model import default_model_name, resolve_model

    return asdict(resolve_model(default_model_name()))


def _csv(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--quick",
        action="store_true",
        help="the small documented subset (seeds 0-2; every scheduler, mix, condition); name 'quick'",
    )
    parser.add_argument(
        "--name",
        default=None,
        help="run name: output under <out>/<name> (default 'default', or 'quick' with --quick)",
    )
    parser.add_argument("--out", default="reports/eval", help="output root folder")
    parser.add_argument(
        "--schedulers",
        default=None,
        help="comma-separated scheduler names (default: every baseline and hindsight_bound)",
    )
    parser.add_argument(
        "--policy",
        action="append",
        default=[],
        metavar="SPEC",
        help="add a scheduler: 'module:callable' (returns an object with decide(view)), an http(s) "
        "URL (POST the view as JSON, answer {'decisions': [...]}) or 'llm:constrained', 'llm:fewshot', "
        "'llm:grpo', 'llm:sft', 'llm:sft_grpo' (shipped adapters) or 'llm:<one of those>@<adapter dir>' (slow: "
        "use few workers); repeatable",
    )
    parser.add_argument(
        "--llm-model",
        default=None,
        metavar="NAME",
        help="base model of the llm: schedulers: gemma (default), a local model folder or a Hugging Face id "
        "already in the local cache (nothing is downloaded); grpo, sft and sft_grpo then need @<adapter dir>",
    )
    parser.add_argument("--mixes", default=None, help="comma-separated team mixes (default: all, or none with "
                        "--families)")
    parser.add_argument("--conditions", default=None, help="comma-separated conditions (default: all, or none "
                        "with --families)")
    parser.add_argument("--families", default=None, help="comma-separated scenario families (dcops.cluster."
                        "scenarios) to play with their own teams, each a condition 'family:<name>', or 'all' "
                        "(default: none); there 'ppo' and 'searched' play the family's own weights and parameters "
                        "(outside the families: the matrix-trained network and classic's parameters), and "
                        "'truth_planner' (evaluator-only) may be named with --schedulers")
    parser.add_argument(
        "--seeds", type=int, default=None, help="number of seeds, 0..N-1 (default 20; 3 with --quick)"
    )
    parser.add_argument("--n-windows", type=int, default=8, help="admission windows per episode (default 8)")
    parser.add_argument("--game-version", type=int, default=1,
                        help="datacenter_ops version (default 1, the sound game; 0: the first round's game)")
    parser.add_argument("--seed-key", default=None,
                        help="hex secret keying the episodes' seeds (dcops.boundary): default none for version 0; "
                             "for version 1 the run's own, drawn at its first invocation and kept in run.json")
    parser.add_argument(
        "--reference", default=DEFAULT_REFERENCE, help="reference scheduler of the paired comparisons"
    )
    parser.add_argument("--workers", type=int, default=2, help="local worker processes (or Ray CPUs)")
    parser.add_argument(
        "--ray", action="store_true", help="spread cells over Ray (ray.init(); local if no address)"
    )
    parser.add_argument(
        "--ray-address", default=None, help="Ray cluster address (with --ray; default: local Ray)"
    )
    parser.add_argument("--serial", action="store_true", help="run in this process (debugging)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def _run(args: argparse.Namespace) -> int:
    import os

    from dcops.agents.llm.model import MODEL_VARIABLE

    previous_model = os.environ.get(MODEL_VARIABLE)
    if args.llm_model is not None:
        os.environ[MODEL_VARIABLE] = args.llm_model.strip()  # the workers inherit it; restored on return
    try:
        return _run_matrix(args)
    finally:
        if previous_model is None:
            os.environ.pop(MODEL_VARIABLE, None)
        else:
            os.environ[MODEL_VARIABLE] = previous_model


def _learned(name: str) -> bool:
    """Whether scheduler ``name`` is a learned network (``ppo``, ``ppo@weights``), which must read the game's
    observation."""
    from dcops.evaluation.policies import learned_names

    return name.partition("@")[0] in learned_names()


def _reads_family(name: str) -> bool:
    """Whether scheduler ``name`` depends on the family it plays: ``searched`` (the family's parameters) and a
    learned network (the family's weights, or weights of its own that must read the family's observation)."""
    from dcops.evaluation.policies import SEARCHED

    return name == SEARCHED or _learned(name)


def _plays_per_family(name: str) -> bool:
    """Whether scheduler ``name`` plays files of the family it is evaluated on (``searched``, and a learned
    scheduler named without its own weights), so that its family cells are keyed by those files' digest."""
    return _reads_family(name) and "@" not in name


def _check_family_schedulers(schedulers: list[str], families: list[str]) -> None:
    """Refuse, before any worker starts, a family-dependent scheduler with no files for a family and a learned
    network that cannot read a family's observation (its number of teams or zones): ``ValueError`` naming both."""
    if not families:
        return
    import dcops
    from dcops.evaluation.policies import make_policy

    for family in families:
        space = None
        for name in filter(_reads_family, schedulers):
            policy = make_policy(name, family=family)
            network = getattr(policy, "policy", None)
            if network is not None and hasattr(network, "fits"):
                space = space or dcops.parallel_env(scenario=family).observation_space("scheduler")
                if not network.fits(space, posterior_from_view=True):  # evaluation envs build the view
                    raise ValueError(f"{name!r} cannot read family {family!r}'s observation (its teams, zones "
                                     "or team features differ from those the network was trained with)")


def _check_version_0_networks(schedulers: list[str]) -> None:
    """Refuse, before any worker starts, a learned network that cannot read game version 0's observation, whose
    view has no team posterior to give a network trained with it (``ValueError`` naming the scheduler)."""
    import dcops
    from dcops.evaluation.policies import make_policy

    space = None
    for name in filter(_learned, schedulers):
        network = getattr(make_policy(name), "policy", None)
        if network is not None and hasattr(network, "fits"):
            space = space or dcops.parallel_env(game_version=0).observation_space("scheduler")
            if not network.fits(space):  # no posterior_from_view: version 0's view has none
                raise ValueError(f"{name!r} cannot read game version 0's observation (a network trained with the "
                                 "team posterior needs version 1's view); play it on version 1")


def _run_matrix(args: argparse.Namespace) -> int:
    import signal
    from pathlib import Path

    from dcops.evaluation.executor import run_matrix
    from dcops.evaluation.matrix import BOUND, CONDITIONS, MIXES, TRUTH, build_matrix, family_condition
    from dcops.evaluation.policies import (
        ADAPTER_MODES,
        baseline_names,
        llm_available,
        make_policy,
        policy_digest,
        validate_scheduler,
    )
    from dcops.evaluation.report import versions, write
    from dcops.evaluation.store import CellStore

    schedulers = _csv(args.schedulers) if args.schedulers else [*baseline_names(), BOUND]
    schedulers += [p for p in args.policy if p not in schedulers]
    if any(name.startswith("llm:") for name in schedulers):
        from dcops.agents.llm.model import MODEL_VARIABLE, default_model_name, resolve_model

        model = default_model_name()
        try:
            resolve_model(model)
        except ValueError as error:
            raise SystemExit(f"--llm-model (or ${MODEL_VARIABLE}): {error}") from None
        bare = [n for n in schedulers if model != "gemma" and n in {f"llm:{m}" for m in ADAPTER_MODES}]
        if bare:
            raise SystemExit(f"--llm-model: {', '.join(bare)} on {model!r} need @<adapter dir> (the shipped "
                             "adapters are Gemma's)")
    try:
        for name in schedulers:
            validate_scheduler(name)
            if name.startswith("llm:") and not llm_available():
                raise ValueError(
                    f"scheduler {name!r}: dcops.agents.llm.scheduler.make_llm_scheduler is not importable"
                )
            if name not in (BOUND, TRUTH) and not name.startswith(("http://", "https://", "llm:")):
                make_policy(name)  # fail here, not in a worker, on a bad module:callable
    except (ValueError, RuntimeError, FileNotFoundError) as error:
        raise SystemExit(f"--schedulers/--policy: {error}") from None
    n_seeds = args.seeds if args.seeds is not None else (QUICK["seeds"] if args.quick else 20)
    if n_seeds < 1:
        raise SystemExit("--seeds: must be >= 1")
    from dcops.cluster.scenarios import SCENARIOS

    families = (list(SCENARIOS) if args.families == "all" else _csv(args.families)) if args.families else []
    for family in families:
        if family not in SCENARIOS:
            raise SystemExit(f"--families: unknown {family!r}; known: {', '.join(SCENARIOS)} or 'all'")
    family_names = [family_condition(f) for f in families]  # each family: a mix and a condition of its own
    if families and bool(args.mixes) != bool(args.conditions):
        raise SystemExit("--mixes/--conditions: with --families, name both (the matrix's mixes crossed with its "
                         "conditions) or neither (the families alone)")
    mixes = _csv(args.mixes) if args.mixes else ([] if families else list(MIXES))
    conditions = _csv(args.conditions) if args.conditions else ([] if families else list(CONDITIONS))
    try:
        _check_family_schedulers(schedulers, families)
    except (ValueError, FileNotFoundError) as error:
        raise SystemExit(f"--schedulers/--families: {error}") from None
    seeds = list(range(n_seeds))
    from dcops.cluster.config import GAME_VERSIONS

    if args.game_version not in GAME_VERSIONS:
        raise SystemExit(f"--game-version: must be one of {GAME_VERSIONS}, got {args.game_version}")
    if args.game_version == 0:
        try:
            _check_version_0_networks(schedulers)
        except (ValueError, FileNotFoundError) as error:
            raise SystemExit(f"--schedulers/--game-version: {error}") from None
    name = args.name or ("quick" if args.quick else "default")
    out = Path(args.out) / name
    seed_key = _seed_key(args, out / "run.json")
    if seed_key:
        _record_seed_key(out / "run.json", seed_key)
    try:
        digests: dict[str | tuple[str, str], str] = {
            name: policy_digest(name) for name in schedulers if name != BOUND}
        digests.update({(name, family): policy_digest(name, family) for name in schedulers for family in families
                        if _plays_per_family(name)})
        cells = build_matrix(schedulers, mixes, conditions, seeds, args.n_windows, args.game_version, seed_key,
                             digests, families)
    except ValueError as error:
        raise SystemExit(f"--mixes/--conditions/--families/--schedulers: {error}") from None
    executor = "ray" if args.ray else ("serial" if args.serial else "local")
    store = CellStore(out / "cells.jsonl")
    print(f"dcops eval: {len(cells)} cells -> {out} ({executor}, {args.workers} workers)", file=sys.stderr)
    already = len(set(store.load()) & {c.cell_id for c in cells})
    start = time.perf_counter()
    signal.signal(signal.SIGTERM, _exit_on_sigterm)  # `kill` stops the workers too (executor._terminate_workers)
    rows = run_matrix(
        cells,
        store,
        executor=executor,
        workers=args.workers,
        progress=not args.no_progress,
        ray_address=args.ray_address,
    )
    wall = time.perf_counter() - start
    meta = {
        "name": name,
        "command": shlex.join(["dcops", *sys.argv[1:]])
        if sys.argv[1:2] == ["eval"]
        else "dcops eval " + " ".join(_argv(args)),
        "versions": versions(),
        "schedulers": schedulers,
        "mixes": mixes + family_names,
        "conditions": conditions + family_names,
        **({"families": families} if families else {}),
        "seeds": seeds,
        "n_windows": args.n_windows,
        "game_version": args.game_version,
        "seed_key": seed_key,
        # a family's own files: "<scheduler> (<family>)"
        "policy_digests": {(name if isinstance(name, str) else f"{name[0]} ({name[1]})"): digest
                           for name, digest in digests.items() if digest},
        "llm_model": _llm_model() if any(s.startswith("llm:") for s in schedulers) else None,
        "executor": executor,
        "workers": args.workers,
        "wall_s": wall,
        "cells": len(cells),
        "cells_resumed": already,
        "llm_available": llm_available(),
        "cell_seconds": sum(r.get("wall_s", 0.0) for r in rows.values()),
    }
    meta["invocations"] = _previous_invocations(out / "run.json") + [
        {"command": meta["command"], "wall_s": wall, "cells_computed": len(cells) - already}
    ]
    paths = write(rows, meta, out, args.reference)
    print((out / "headline.md").read_text())
    print(f"{len(cells)} cells in {wall:.0f} s; wrote " + ", ".join(str(p) for p in paths))
    return 0


def _seed_key(args: argparse.Namespace, run_json: Any) -> str:
    """The run's seed key: ``--seed-key``; else, from game version 1, the key an earlier invocation of this run
    recorded (so that it resumes) or a fresh one; none for version 0. A policy never receives it: it reaches
    only the environment's reset, and the report records it once the run is written."""
    import json
    import secrets

    if args.seed_key is not None:
        try:
            bytes.fromhex(args.seed_key)
        except ValueError:
            raise SystemExit(f"--seed-key: must be hexadecimal, got {args.seed_key!r}") from None
        return args.seed_key.lower()
    if args.game_version == 0:
        return ""
    try:
        recorded = json.loads(run_json.read_text()).get("seed_key")
    except (OSError, ValueError):
        recorded = None
    return recorded or secrets.token_hex(16)


def _record_seed_key(path: Any, key: str) -> None:
    """Write the run's key into ``run.json`` before any cell runs, so that a run interrupted before its report
    resumes with the same key (and finds its cells) instead of drawing another."""
    import json

    try:
        meta = json.loads(path.read_text())
    except (OSError, ValueError):
        meta = {}
    if meta.get("seed_key") != key:
        meta["seed_key"] = key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(meta, indent=1, default=str))


def _previous_invocations(path: Any) -> list[dict[str, Any]]:
    """The invocations recorded in an earlier ``run.json`` of this run folder (resumed runs keep their history)."""
    import json

    try:
        return list(json.loads(path.read_text()).get("invocations", []))
    except (OSError, ValueError, AttributeError):
        return []


def _argv(args: argparse.Namespace) -> list[str]:
    """A reconstruction of the arguments when not run from the ``dcops`` script (e.g. tests)."""
    out = ["--quick"] if args.quick else []
    for flag, value in (
        ("--name", args.name),
        ("--schedulers", args.schedulers),
        ("--mixes", args.mixes),
        ("--conditions", args.conditions),
        ("--families", args.families),
        ("--seeds", args.seeds),
        ("--llm-model", args.llm_model),
    ):
        if value is not None:
            out += [flag, str(value)]
    out += [f"--policy={p}" for p in args.policy]
    return (
        out
        + ["--n-windows", str(args.n_windows), "--workers", str(args.workers)]
        + (["--game-version", str(args.game_version)] if args.game_version != 1 else [])
        + (["--ray"] if args.ray else [])
    )


COMMANDS = [
    Command(
        "eval",
        "Scripted-team adversarial evaluation: schedulers x team mixes x conditions x seeds, with the "
        "gaming payoff, paired CIs, plots; resumable",
        _arguments,
        _run,
    ),
]
