"""Train the linear GPU placement policy with the cross-entropy method (numpy only).

``dcops train-placement`` (or ``python -m dcops.training.placement.linear``) reproduces the shipped
``cluster/placement/weights/linear.npz`` and ``linear.json`` with the defaults of :class:`TrainConfig`.

Objective: the mean normalised score ``(R − R_defer) / (R_opt − R_defer)`` of the deterministic argmax
policy over ``n_scenarios`` generated training scenarios, seeds ``TRAIN_SEED_START + i`` (1 000 000 and
up), disjoint from the evaluation seeds 0..99. ``R_opt`` (exact DP) and ``R_defer`` are computed once per
training scenario. Scenarios whose optimum gains nothing over doing nothing are skipped.

Cross-entropy method: a diagonal Gaussian over the weight vector, starting at mean 0 and standard
deviation ``init_std``; each iteration draws ``population`` weight vectors from
``numpy.random.default_rng(seed)``, keeps the ``elite`` best, and refits the mean and the standard deviation
(floored at ``min_std``). The best weights ever evaluated (candidates and means) are returned; the whole
run is deterministic given the config. Cost: ``iterations × (population + 1) × n_scenarios`` episodes
(about 2-4 minutes on one CPU core with the defaults).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dcops.cluster.placement.evaluate import normalised_score
from dcops.cluster.placement.features import N_FEATURES
from dcops.cluster.placement.generator import EVAL_SEEDS, TRAIN_SEED_START, generate_scenario
from dcops.cluster.placement.heuristics import HEURISTICS, AlwaysDefer
from dcops.cluster.placement.linear import WEIGHTS_DIR, LinearPolicy, save_weights
from dcops.cluster.placement.optimum import optimal_value
from dcops.cluster.placement.policy import PlacementPolicy, run_episode
from dcops.cluster.placement.scenarios import Scenario


@dataclass(frozen=True)
class TrainConfig:
    """Cross-entropy method settings (defaults reproduce the shipped weights)."""

    seed: int = 0
    iterations: int = 16
    population: int = 24
    elite: int = 6
    n_scenarios: int = 100
    init_std: float = 1.0
    min_std: float = 0.05

    def __post_init__(self) -> None:
        if self.iterations < 1 or self.population < 2 or self.n_scenarios < 1:
            raise ValueError("iterations >= 1, population >= 2 and n_scenarios >= 1 are required")
        if not 1 <= self.elite <= self.population:
            raise ValueError("elite: must be in 1..population")


@dataclass(frozen=True)
class TrainingSet:
    """Training scenarios with their reference (do-nothing) and optimal rewards."""

    scenarios: list[Scenario]
    reference: list[float]
    optimum: list[float]

    def score(self, policy: PlacementPolicy) -> float:
        """Mean normalised score of ``policy`` over the set."""
        scores = []
        for scenario, ref, opt in zip(self.scenarios, self.reference, self.optimum, strict=True):
            value = normalised_score(run_episode(scenario, policy).total_reward, ref, opt)
            scores.append(0.0 if value is None else value)
        return float(np.mean(scores))


def training_set(n_scenarios: int) -> TrainingSet:
    """Generated scenarios ``TRAIN_SEED_START + i`` whose optimum beats doing nothing."""
    assert TRAIN_SEED_START > max(EVAL_SEEDS), "training seeds must not overlap the evaluation seeds"
    scenarios, reference, optimum = [], [], []
    seed = TRAIN_SEED_START
    while len(scenarios) < n_scenarios:
        scenario = generate_scenario(seed)
        seed += 1
        ref = run_episode(scenario, AlwaysDefer()).total_reward
        opt = optimal_value(scenario)
        if opt - ref > 1e-9:
            scenarios.append(scenario)
            reference.append(ref)
            optimum.append(opt)
    return TrainingSet(scenarios, reference, optimum)


def train(
    config: TrainConfig | None = None, progress: Callable[[str], None] | None = None
) -> tuple[np.ndarray, dict[str, Any]]:
    """Run the cross-entropy method; return the best weights and a JSON-ready info dict."""
    cfg = config or TrainConfig()
    say = progress or (lambda message: None)
    started = time.perf_counter()
    data = training_set(cfg.n_scenarios)
    rng = np.random.default_rng(cfg.seed)
    mean = np.zeros(N_FEATURES)
    std = np.full(N_FEATURES, cfg.init_std)
    best_w, best_score = mean.copy(), data.score(LinearPolicy(mean))
    history = []
    for iteration in range(cfg.iterations):
        candidates = mean + std * rng.standard_normal((cfg.population, N_FEATURES))
        scores = np.array([data.score(LinearPolicy(w)) for w in candidates])
        elite = candidates[np.argsort(-scores, kind="stable")[: cfg.elite]]
        if scores.max() > best_score:
            best_score, best_w = float(scores.max()), candidates[int(np.argmax(scores))].copy()
        mean = elite.mean(axis=0)
        std = np.maximum(elite.std(axis=0), cfg.min_std)
        mean_score = data.score(LinearPolicy(mean))
        if mean_score > best_score:
            best_score, best_w = mean_score, mean.copy()
        history.append({"iteration": iteration, "best_candidate": float(scores.max()), "mean_weights": mean_score})
        say(f"iteration {iteration + 1}/{cfg.iterations}: best candidate {scores.max():.4f}, "
            f"mean weights {mean_score:.4f}, best so far {best_score:.4f}")
    heuristics = {cls().name: data.score(cls()) for cls in HEURISTICS}
    info = {
        "method": "cross-entropy method (diagonal Gaussian), deterministic argmax policy",
        "config": asdict(cfg),
        "objective": "mean normalised score (R - R_defer) / (R_opt - R_defer) over the training scenarios",
        "training_seeds": f"{TRAIN_SEED_START}.. (first {cfg.n_scenarios} whose optimum beats doing nothing)",
        "evaluation_seeds": f"{min(EVAL_SEEDS)}..{max(EVAL_SEEDS)} (never used for training)",
        "training_score": best_score,
        "heuristic_training_scores": heuristics,
        "history": history,
        "numpy": np.__version__,
        "command": "dcops train-placement",
    }
    say(f"done in {time.perf_counter() - started:.0f} s: training score {best_score:.4f}; heuristics {heuristics}")
    return best_w, info


def train_and_save(
    config: TrainConfig | None = None, out: Path | str | None = None, progress: Callable[[str], None] | None = None
) -> tuple[Path, Path]:
    """Train and write ``linear.npz`` + ``linear.json`` to ``out`` (default: the package's ``weights/``)."""
    weights, info = train(config, progress)
    paths = save_weights(weights, info, out if out is not None else WEIGHTS_DIR)
    if progress:
        progress("wrote " + ", ".join(str(p) for p in paths))
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    train_and_save(out=args.out, progress=print)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
