"""The linear learned policy: argmax over candidate actions of ``features · w``.

The weights are trained with the cross-entropy method (numpy only) by ``dcops train-placement``
(:mod:`dcops.training.placement.linear`) on generated scenarios whose seeds never overlap the evaluation
seeds, and shipped as ``weights/linear.npz`` next to ``weights/linear.json`` (the training config, seed,
feature names and training score). Candidates are only the feasible placements and ``defer()``, so the
policy never makes an invalid action.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dcops.cluster.placement.actions import Action, Defer, Place
from dcops.cluster.placement.features import FEATURE_NAMES, N_FEATURES, candidate_features
from dcops.cluster.placement.observation import PlacementObservation

WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
WEIGHTS_FILE = WEIGHTS_DIR / "linear.npz"
CONFIG_FILE = WEIGHTS_DIR / "linear.json"


@dataclass
class LinearPolicy:
    """Scores every candidate with ``weights`` (length :data:`N_FEATURES`) and plays the best (first on ties)."""

    weights: np.ndarray = field(default_factory=lambda: load_weights())
    name: str = "linear"

    def __post_init__(self) -> None:
        self.weights = np.asarray(self.weights, dtype=float)
        if self.weights.shape != (N_FEATURES,):
            raise ValueError(f"weights: expected shape ({N_FEATURES},), got {self.weights.shape}")

    def act(self, observation: PlacementObservation) -> Action:
        actions, features = candidate_features(observation)
        scores = features @ self.weights
        best = int(np.argmax(scores))
        top = np.argsort(-np.abs(features[best] * self.weights))[:2]
        why = f"linear: score {scores[best]:.2f} (" + ", ".join(
            f"{FEATURE_NAMES[i]} {features[best, i] * self.weights[i]:+.2f}" for i in top
        ) + ")"
        action = actions[best]
        return Place(action.job_id, action.gpu_id, why) if isinstance(action, Place) else Defer(why)


def load_weights(path: Path | str = WEIGHTS_FILE) -> np.ndarray:
    """The weight vector stored in ``path`` (an ``.npz`` with a ``weights`` array)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no linear placement weights; run `dcops train-placement`")
    with np.load(path) as data:
        weights = np.asarray(data["weights"], dtype=float)
    if weights.shape != (N_FEATURES,):
        raise ValueError(f"{path}: weights have shape {weights.shape}, expected ({N_FEATURES},)")
    return weights


def save_weights(weights: np.ndarray, info: dict[str, Any], directory: Path | str = WEIGHTS_DIR) -> tuple[Path, Path]:
    """Write ``linear.npz`` and ``linear.json`` (config, seed, feature names, scores) into ``directory``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    npz, meta = directory / WEIGHTS_FILE.name, directory / CONFIG_FILE.name
    np.savez(npz, weights=np.asarray(weights, dtype=float))
    payload = {"feature_names": list(FEATURE_NAMES), "weights": [float(w) for w in weights], **info}
    meta.write_text(json.dumps(payload, indent=2) + "\n")
    return npz, meta
