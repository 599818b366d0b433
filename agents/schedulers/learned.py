"""The RL scheduler (``ppo``): a slot-scoring network trained by behaviour cloning and MaskablePPO, run in numpy.

Trained by ``dcops train-scheduler-ppo`` (:mod:`dcops.training.scheduler.ppo`) and exported to
``data/ppo_scheduler.npz`` (arrays only, read with ``np.load(allow_pickle=False)``) beside
``data/ppo_scheduler.json`` (the recipe: hyperparameters, seeds, steps, wall time, versions, validation
figures). Run time needs those two files and numpy; torch is never imported here. A scenario family whose game
the shipped network cannot read (another number of teams) has its own weights, trained with ``--family``:
``data/ppo_scheduler_<family>.npz`` (:func:`family_policy`; the skill ladder plays them, and
:func:`family_weights` names the file and its SHA-256 in the ladder's rows).

**What it reads.** Only the scheduler's array observation (``dcops.cluster.observation``: ``requests``,
``request_mask``, ``action_mask``, ``cluster``, ``zones``, ``teams``), the same arrays
``dcops.env.SchedulerEnv`` gives a learner; not the structured view (one exception, below). So it declares
``reads_observation = True``: the evaluation (``dcops.evaluation.play.scheduler_action``) then calls
``decide(view, observation)`` with the window's observation, and the scheduler answers the array action
(``MultiDiscrete([2 + max_defer] × max_slots)`` codes: 0 ACCEPT, 1 REJECT, 1 + k DEFER by k windows), which the
environment validates like any action. ``view`` is accepted for the protocol and ignored (tested with ``None``),
except by a network trained with the team posterior, which takes each team's ``gaming_posterior`` from it where
the observation lacks that column (:meth:`LearnedScheduler.decide`).

**Network** (:class:`SlotPolicy`; S slots, A codes, H hidden units; every request slot is scored by the same
weights, so the policy does not care which slot a request landed in):

1. per slot, ``x_s`` = the request's row (26), its team's row of ``teams`` (15, or 16 for a network trained with
   ``--team-posterior``, whose last feature is the team's ``gaming_posterior``; the team index is
   ``requests[:, 1] · (T − 1)``), and three sums over the valid requests ahead of it in priority_threshold's
   order (higher stated priority, or equal and an earlier slot): their stated kW (in units of 200 kW, as the
   row's), the same over those on its GPU model, and their GPUs (in units of 128) on its GPU model; what a
   greedy admitter compares with the power headroom and the zones' free GPUs and power;
2. the global context ``g`` = ``cluster`` (20), ``zones`` (Z · 7), ``teams`` (T · 15, or T · 16), embedded
   ``g_e = tanh(g Wg + bg)``;
3. ``e_s = tanh(x_s W1 + g_e U1 + b1)``; their mean over valid slots ``p``; ``h_s = tanh(e_s W2 + p U2 + b2)``;
4. logits ``h_s W3 + b3`` (A per slot); invalid codes (``action_mask`` 0) are excluded and each slot takes
   its highest remaining logit: SB3's ``predict(deterministic=True)`` of the masked multi-categorical.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from dcops.cluster.observation import N_REQUEST_FEATURES

WEIGHTS_PACKAGE = "dcops.agents.schedulers"
WEIGHTS_NPZ = "data/ppo_scheduler.npz"
WEIGHTS_JSON = "data/ppo_scheduler.json"
FAMILY_WEIGHTS_NPZ = "data/ppo_scheduler_{family}.npz"
"""Weights trained on one scenario family (``dcops.cluster.scenarios``), beside their ``.json`` recipe."""
PARAM_NAMES: tuple[str, ...] = ("Wg", "bg", "W1", "U1", "b1", "W2", "U2", "b2", "W3", "b3")
"""The arrays of :class:`SlotPolicy`, each (inputs, outputs) or (outputs,)."""
N_SLOT_EXTRA = 3
"""Per-slot features computed from the observation (``ahead_kw``, ``ahead_same_gpu_kw``,
``ahead_same_gpu_gpus``), after the request and team rows."""


def slot_inputs(requests: NDArray[np.floating], request_mask: NDArray[np.floating],
                teams: NDArray[np.floating]) -> NDArray[np.float64]:
    """Per-slot inputs ``(..., S, 26 + F + 3)`` for F team features (15, or 16 with the team posterior; module
    docstring, step 1) from batched or single arrays."""
    requests = np.asarray(requests, dtype=np.float64)
    valid = np.asarray(request_mask, dtype=np.float64)
    teams = np.asarray(teams, dtype=np.float64)
    n_teams = teams.shape[-2]
    index = np.clip(np.rint(requests[..., 1] * (n_teams - 1)), 0, n_teams - 1).astype(np.int64)
    team_rows = np.take_along_axis(teams, index[..., None], axis=-2)
    priority = requests[..., 18]
    kw = requests[..., 12] * valid
    s = requests.shape[-2]
    earlier = np.tri(s, s, -1, dtype=bool)  # earlier[s, j]: j < s
    ahead = (priority[..., None, :] > priority[..., :, None]) | (
        (priority[..., None, :] == priority[..., :, None]) & earlier)
    gpu = requests[..., 15:18]
    same = ahead & ((gpu[..., :, None, :] * gpu[..., None, :, :]).sum(-1) > 0.5)
    gpus = requests[..., 14] * valid
    extra = [(ahead * kw[..., None, :]).sum(-1), (same * kw[..., None, :]).sum(-1), (same * gpus[..., None, :]).sum(-1)]
    return np.concatenate([requests, team_rows, np.stack(extra, axis=-1)], axis=-1)


def global_inputs(cluster: NDArray[np.floating], zones: NDArray[np.floating],
                  teams: NDArray[np.floating]) -> NDArray[np.float64]:
    """The global context ``g`` ``(..., 20 + Z·7 + T·F)`` (F team features; module docstring, step 2)."""
    cluster = np.asarray(cluster, dtype=np.float64)
    lead = cluster.shape[:-1]
    return np.concatenate([cluster, np.asarray(zones, dtype=np.float64).reshape(*lead, -1),
                           np.asarray(teams, dtype=np.float64).reshape(*lead, -1)], axis=-1)


@dataclass(frozen=True)
class SlotPolicy:
    """The exported actor (module docstring, **Network**), float64; ``params`` by :data:`PARAM_NAMES`."""

    params: dict[str, NDArray[np.float64]]
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def n_codes(self) -> int:
        return int(self.params["b3"].shape[0])

    @property
    def n_team_features(self) -> int:
        """Features per team row the network reads: 15, or 16 for one trained with the team posterior."""
        return int(self.params["W1"].shape[0]) - N_REQUEST_FEATURES - N_SLOT_EXTRA

    def fits(self, space: Any, posterior_from_view: bool = False) -> bool:
        """Whether this network reads observations of the scheduler's observation ``space`` (a ``gym.spaces.Dict``):
        its global context ``g`` takes ``20 + Z·7 + T·F`` values for the Z zones, T teams and F team features
        (:attr:`n_team_features`) it was trained with, and each slot's input a request row, a team row and the
        sums ahead, so a game with another number of teams or zones, or a team row of another width
        (``team_posterior``), needs weights trained for it.
        ``posterior_from_view``: a network that reads the team posterior may take it from the structured view
        where the space's rows lack it (:meth:`LearnedScheduler.decide`)."""
        n_teams, width = space["teams"].shape
        if posterior_from_view and self.n_team_features == width + 1:
            width += 1
        size = sum(int(np.prod(space[key].shape)) for key in ("cluster", "zones")) + n_teams * width
        slot = space["requests"].shape[-1] + width + N_SLOT_EXTRA
        codes = space["action_mask"].shape[-1] // max(space["request_mask"].shape[-1], 1)
        return size == self.params["Wg"].shape[0] and slot == self.params["W1"].shape[0] and codes == self.n_codes

    def logits(self, observation: dict[str, NDArray[Any]]) -> NDArray[np.float64]:
        """Unmasked logits ``(..., S, A)`` of one observation or a batch (arrays with a leading batch axis)."""
        p = self.params
        x = slot_inputs(observation["requests"], observation["request_mask"], observation["teams"])
        g = global_inputs(observation["cluster"], observation["zones"], observation["teams"])
        valid = np.asarray(observation["request_mask"], dtype=np.float64)[..., None]
        g_e = np.tanh(g @ p["Wg"] + p["bg"])
        e = np.tanh(x @ p["W1"] + (g_e @ p["U1"])[..., None, :] + p["b1"])
        pooled = (e * valid).sum(-2) / np.maximum(valid.sum(-2), 1.0)
        h = np.tanh(e @ p["W2"] + (pooled @ p["U2"])[..., None, :] + p["b2"])
        return h @ p["W3"] + p["b3"]

    def act(self, observation: dict[str, NDArray[Any]]) -> NDArray[np.int64]:
        """The deterministic masked action: per slot, the valid code with the highest logit ``(..., S)``."""
        logits = self.logits(observation)
        mask = np.asarray(observation["action_mask"]).reshape(logits.shape).astype(bool)
        return np.where(mask, logits, -np.inf).argmax(-1).astype(np.int64)

    def save(self, path: str | Path) -> None:
        """Write the arrays (``.npz``) and, beside it, the metadata (``.json``)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(path, **{name: self.params[name] for name in PARAM_NAMES})
        path.with_suffix(".json").write_text(json.dumps(self.metadata, indent=2, default=str) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> SlotPolicy:
        """Read a policy written by :meth:`save` (arrays only: no code is ever unpickled)."""
        path = Path(path)
        if not path.is_file():
            raise ValueError(f"weights {path}: no such file")
        with np.load(path, allow_pickle=False) as data:
            missing = [name for name in PARAM_NAMES if name not in data.files]
            if missing:
                raise ValueError(f"weights {path}: not a slot policy, arrays {missing} are missing")
            params = {name: data[name].astype(np.float64) for name in PARAM_NAMES}
        _check_shapes(params, path)
        meta = path.with_suffix(".json")
        return cls(params, json.loads(meta.read_text()) if meta.exists() else {})


def _check_shapes(params: dict[str, NDArray[np.float64]], path: Path) -> None:
    """Refuse arrays that do not chain into the network (module docstring), naming the array."""
    hidden = params["b1"].shape[0] if params["b1"].ndim == 1 else -1
    expected = {"Wg": (None, params["bg"].shape[0]), "U1": (params["bg"].shape[0], hidden), "W1": (None, hidden),
                "W2": (hidden, hidden), "U2": (hidden, hidden), "b2": (hidden,), "W3": (hidden, None),
                "b3": (params["W3"].shape[-1],)}
    for name, shape in expected.items():
        got = params[name].shape
        if len(got) != len(shape) or any(want is not None and want != have for want, have in zip(shape, got, strict=True)):
            raise ValueError(f"weights {path}: array {name} has shape {got}, the network needs "
                             f"{tuple('any' if w is None else w for w in shape)}")


def _packaged_policy(name: str) -> SlotPolicy:
    """The weights in package-data file ``name`` (of :data:`WEIGHTS_PACKAGE`)."""
    with resources.as_file(resources.files(WEIGHTS_PACKAGE) / name) as npz:
        return SlotPolicy.load(npz)


@cache
def shipped_policy() -> SlotPolicy:
    """The shipped weights (package data), read once per process."""
    return _packaged_policy(WEIGHTS_NPZ)


def family_weights_name(family: str) -> str:
    """The package-data file of the weights trained for scenario ``family`` (``dcops train-scheduler-ppo
    --family F --install``)."""
    return FAMILY_WEIGHTS_NPZ.format(family=family)


@cache
def family_weights(family: str) -> tuple[str, str]:
    """Which weights :func:`family_policy` plays on ``family``: the package-data file (the family's own where it
    ships, else the matrix-trained :data:`WEIGHTS_NPZ`) and the SHA-256 of its bytes (hex), so a report can say
    which network a row was played by. Read once per process, like the network itself. An unknown family raises
    ``ValueError``."""
    import hashlib

    from dcops.cluster.scenarios import scenario

    scenario(family)  # a misspelt family must not quietly play the matrix's weights
    name = family_weights_name(family)
    if not (resources.files(WEIGHTS_PACKAGE) / name).is_file():
        name = WEIGHTS_NPZ
    return name, hashlib.sha256((resources.files(WEIGHTS_PACKAGE) / name).read_bytes()).hexdigest()


@cache
def family_policy(family: str) -> SlotPolicy:
    """The weights trained for scenario ``family`` where they ship, else the shipped (matrix-trained) weights:
    the policy the skill ladder's ``ppo`` rung plays on that family (the file :func:`family_weights` names). An
    unknown family raises ``ValueError``."""
    name = family_weights(family)[0]
    return shipped_policy() if name == WEIGHTS_NPZ else _packaged_policy(name)


@dataclass
class LearnedScheduler:
    """The ``ppo`` scheduler: :class:`SlotPolicy` on the window's observation (module docstring).

    :param weights: an ``.npz`` written by :meth:`SlotPolicy.save`; None: the shipped weights.
    :param family: with no ``weights``, play the weights trained for this scenario family where they ship
        (:func:`family_policy`).
    """

    weights: str | None = None
    name: str = "ppo"
    family: str | None = None
    reads_observation: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if self.weights is not None:
            self.policy = SlotPolicy.load(self.weights)
        else:
            self.policy = family_policy(self.family) if self.family else shipped_policy()

    def decide(self, view: Any, observation: dict[str, NDArray[Any]]) -> NDArray[np.int64]:
        """The window's array action from the observation. ``view`` is read only by a network trained with the
        team posterior when the observation's ``teams`` lacks that column: each team's ``gaming_posterior`` is
        appended from the view (in float32, the value ``team_posterior=True`` gives); otherwise it is ignored."""
        teams = np.asarray(observation["teams"])
        if self.policy.n_team_features == teams.shape[-1] + 1:
            observation = {**observation, "teams": with_view_posterior(teams, view)}
        return self.policy.act(observation)


def with_view_posterior(teams: NDArray[Any], view: Any) -> NDArray[np.float32]:
    """``teams`` (T, 15) with each team's ``gaming_posterior`` from the structured view appended, rows in the
    observation's team order (``team_0`` … ``team_{T-1}``). ``ValueError`` where the view carries none."""
    try:
        column = [view["teams"][f"team_{i}"]["gaming_posterior"] for i in range(teams.shape[-2])]
    except (KeyError, TypeError):
        raise ValueError("view: this network reads each team's gaming_posterior, which neither the observation "
                         "nor the view carries; build the environment with structured_view=True (version 1) or "
                         "team_posterior=True") from None
    return np.concatenate([teams, np.asarray(column, dtype=np.float32)[:, None]], axis=-1)
