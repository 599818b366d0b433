"""The learned queue-ordering policy at run time: a per-job scoring network as a pure numpy forward pass.

Training happens in torch (:mod:`dcops.training.queue.ppo`); this module only reads the exported arrays, so
ranking jobs with the learned policy never imports torch.

Network (the same weights score every waiting job; H hidden units, x_j the features of job j from
:func:`dcops.cluster.queue.features.job_features`):

    h1_j   = tanh(x_j W1 + b1)                         per job, F -> H
    c      = mean_j h1_j                               the queue as a set (order-free context)
    h2_j   = tanh(h1_j W2 + c U2 + b2)                 per job, H -> H
    logit_j = atc_gain * atc_rel_j + h2_j . w3 + b3    a learned correction on top of ATC

``atc_rel`` is ATC's log-index relative to the queue's best (feature 4), so a network with a large
``atc_gain`` and a zero correction *is* ATC; the imitation warm start begins there and PPO learns the
correction. Greedy use: the highest logit runs next.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dcops.cluster.queue.features import FEATURE_NAMES, N_FEATURES, candidate_positions, job_features
from dcops.cluster.queue.simulator import QueueState

PARAM_SHAPES: dict[str, str] = {
    "W1": "(F, H)",
    "b1": "(H,)",
    "W2": "(H, H)",
    "U2": "(H, H)",
    "b2": "(H,)",
    "w3": "(H,)",
    "b3": "()",
    "atc_gain": "()",
}
ATC_FEATURE = FEATURE_NAMES.index("atc_rel")
WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
DEFAULT_WEIGHTS = WEIGHTS_DIR / "queue_policy.npz"


def forward_logits(params: dict[str, np.ndarray], features: np.ndarray) -> np.ndarray:
    """Logits of shape ``(n,)`` for a feature matrix of shape ``(n, F)`` (see the module docstring)."""
    x = features.astype(np.float64)
    h1 = np.tanh(x @ params["W1"] + params["b1"])
    context = h1.mean(axis=0)
    h2 = np.tanh(h1 @ params["W2"] + context @ params["U2"] + params["b2"])
    return float(params["atc_gain"]) * x[:, ATC_FEATURE] + h2 @ params["w3"] + float(params["b3"])


@dataclass
class ScoringPolicy:
    """The learned policy as a :class:`~dcops.cluster.queue.simulator.Policy`.

    :param params: network arrays (:data:`PARAM_SHAPES`).
    :param atc_k: ATC look-ahead used by the features (tuned on training seeds when the policy was trained).
    :param max_slots: jobs offered per decision (the best by ATC beyond that).
    :param name: label in reports.
    :param metadata: the training record (config, seeds, timesteps) read from the JSON beside the weights.
    """

    params: dict[str, np.ndarray]
    atc_k: float
    max_slots: int = 32
    name: str = "PPO"
    metadata: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        missing = sorted(set(PARAM_SHAPES) - set(self.params))
        if missing:
            raise ValueError(f"policy weights lack {', '.join(missing)}")
        if self.params["W1"].shape[0] != N_FEATURES:
            raise ValueError(f"W1 expects {self.params['W1'].shape[0]} features, the code has {N_FEATURES}")

    def logits(self, state: QueueState) -> tuple[np.ndarray, np.ndarray]:
        """Candidate positions and their logits."""
        positions = candidate_positions(state, self.atc_k, self.max_slots)
        features = job_features(state, self.atc_k)[positions]
        return positions, forward_logits(self.params, features)

    def scores(self, state: QueueState) -> np.ndarray:
        """One score per waiting job; jobs outside the candidate slots get ``-inf``."""
        positions, logits = self.logits(state)
        out = np.full(state.n_waiting, -np.inf)
        out[positions] = logits
        return out

    def save(self, path: Path) -> None:
        """Write ``path`` (``.npz`` arrays) and ``path.with_suffix('.json')`` (config and training record)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, **{k: np.asarray(v, dtype=np.float32) for k, v in self.params.items()})
        record = {
            "atc_k": self.atc_k,
            "max_slots": self.max_slots,
            "name": self.name,
            "feature_names": list(FEATURE_NAMES),
            **{k: v for k, v in self.metadata.items() if k not in ("atc_k", "max_slots", "name")},
        }
        path.with_suffix(".json").write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")

    @classmethod
    def load(cls, path: Path | None = None) -> ScoringPolicy:
        """Read a policy written by :meth:`save` (default: the shipped weights)."""
        path = Path(path) if path is not None else DEFAULT_WEIGHTS
        with np.load(path) as data:
            params = {k: data[k].astype(np.float64) for k in data.files}
        record = json.loads(path.with_suffix(".json").read_text())
        if list(record.get("feature_names", [])) != list(FEATURE_NAMES):
            raise ValueError(f"{path} was trained on other features: {record.get('feature_names')}")
        return cls(
            params, float(record["atc_k"]), int(record["max_slots"]), record.get("name", "PPO"), record
        )
