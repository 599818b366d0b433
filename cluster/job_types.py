"""The public catalogue of GPU types and job types: what an operator knows about the workload mix.

Every field here is *public* knowledge (a site's service catalogue and its history): the GPU models and their
power per GPU, and for each job type its GPU model, typical size, typical priority, typical deadline slack and
how often such jobs are carbon-flexible. Teams draw their requests from these norms (with per-team variation,
``dcops.agents.teams``) and oversight compares stated fields against them (``dcops.oversight``), so a detector
that uses the norms uses nothing an operator could not know.

A site's catalogue is named by ``ClusterConfig.catalogue`` (:func:`catalogue`): ``classic``, the types below
(every published figure), or ``triage``, the same types with another priority mix (:data:`PRIORITY_MIXES`).

Units: power in kW, durations in hours, deadline slack in admission windows, priorities as
:class:`~dcops.cluster.requests.Priority` levels 0 (LOW) to 3 (CRITICAL).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from types import MappingProxyType

import numpy as np


@dataclass(frozen=True)
class GpuType:
    """A GPU model: name and electrical power per GPU including its share of the host, kW at full load."""

    name: str
    kw_per_gpu: float


GPU_TYPES: tuple[GpuType, ...] = (
    GpuType("H100", 1.6),  # 8-GPU HGX node ≈ 10.2 kW at full load, plus network/storage share
    GpuType("A100", 1.0),  # 8-GPU HGX A100 ≈ 6.5 kW plus share
    GpuType("L40S", 0.55),  # 4-GPU PCIe inference server ≈ 2 kW plus share
)
GPU_TYPE_NAMES: tuple[str, ...] = tuple(g.name for g in GPU_TYPES)
GPU_KW: dict[str, float] = {g.name: g.kw_per_gpu for g in GPU_TYPES}


@dataclass(frozen=True)
class JobType:
    """One job type of the catalogue.

    :param name: short id, shown to the scheduler.
    :param gpu_type: the GPU model it needs.
    :param gpus: (min, max) GPU count.
    :param duration_h: (min, max) true runtime, hours.
    :param priority_probs: probability of each true priority LOW..CRITICAL (sums to 1).
    :param slack_windows: (min, max) true deadline slack: windows between the earliest possible completion
        window and the true deadline window (a large slack can put the deadline past the episode horizon).
    :param flexible_prob: probability that such a job is truly carbon-flexible (may be shifted in time at no
        loss of value).
    :param description: free-text template (``{gpus}``, ``{gpu_type}``, ``{hours}`` are filled in).
    """

    name: str
    gpu_type: str
    gpus: tuple[int, int]
    duration_h: tuple[float, float]
    priority_probs: tuple[float, float, float, float]
    slack_windows: tuple[int, int]
    flexible_prob: float
    description: str

    @property
    def typical_priority(self) -> float:
        """Expected priority level (0–3) under the norm."""
        return float(np.dot(self.priority_probs, np.arange(4)))

    @property
    def priority_std(self) -> float:
        """Standard deviation of the priority level under the norm."""
        levels = np.arange(4)
        return float(np.sqrt(np.dot(self.priority_probs, (levels - self.typical_priority) ** 2)))

    @property
    def typical_slack(self) -> float:
        return (self.slack_windows[0] + self.slack_windows[1]) / 2.0


JOB_TYPES: tuple[JobType, ...] = (
    JobType("pretrain_shard", "H100", (32, 64), (3.0, 6.0), (0.0, 0.6, 0.4, 0.0), (2, 6), 0.8,
            "Pre-training shard of a foundation model on {gpus}×{gpu_type}, about {hours} h"),
    JobType("finetune", "H100", (8, 24), (1.0, 3.0), (0.2, 0.5, 0.3, 0.0), (1, 4), 0.6,
            "Fine-tune of a production model on {gpus}×{gpu_type}, about {hours} h"),
    JobType("rlhf_run", "H100", (16, 48), (2.0, 4.0), (0.0, 0.5, 0.5, 0.0), (1, 3), 0.3,
            "RLHF / reward-model training on {gpus}×{gpu_type}, about {hours} h"),
    JobType("hotfix_retrain", "H100", (8, 16), (0.5, 1.5), (0.0, 0.0, 0.3, 0.7), (0, 1), 0.0,
            "Retrain to fix a regression in a served model, {gpus}×{gpu_type}, about {hours} h"),
    JobType("eval_suite", "A100", (8, 32), (0.5, 1.5), (0.2, 0.6, 0.2, 0.0), (0, 2), 0.3,
            "Evaluation suite for a release candidate, {gpus}×{gpu_type}, about {hours} h"),
    JobType("hparam_sweep", "A100", (16, 64), (1.5, 4.0), (0.6, 0.4, 0.0, 0.0), (3, 8), 0.9,
            "Hyper-parameter sweep, {gpus}×{gpu_type}, about {hours} h"),
    JobType("data_preprocessing", "A100", (8, 24), (1.0, 2.5), (0.7, 0.3, 0.0, 0.0), (2, 8), 0.9,
            "Tokenisation and data preprocessing, {gpus}×{gpu_type}, about {hours} h"),
    JobType("batch_inference", "L40S", (32, 96), (1.0, 3.0), (0.5, 0.5, 0.0, 0.0), (2, 6), 0.8,
            "Offline batch inference / embedding backfill, {gpus}×{gpu_type}, about {hours} h"),
    JobType("inference_scaleout", "L40S", (32, 64), (1.0, 2.0), (0.0, 0.3, 0.5, 0.2), (0, 1), 0.0,
            "Scale-out of online inference for a traffic peak, {gpus}×{gpu_type}, about {hours} h"),
    JobType("render_sim", "L40S", (48, 128), (2.0, 5.0), (0.5, 0.5, 0.0, 0.0), (2, 6), 0.7,
            "Rendering / simulation batch, {gpus}×{gpu_type}, about {hours} h"),
)
JOB_TYPE_NAMES: tuple[str, ...] = tuple(j.name for j in JOB_TYPES)
JOB_TYPE_INDEX: dict[str, int] = {name: i for i, name in enumerate(JOB_TYPE_NAMES)}
JOB_TYPE_BY_NAME: dict[str, JobType] = {j.name: j for j in JOB_TYPES}


# ---------------------------------------------------------------------------------------------- catalogues
URGENT_TYPES: tuple[str, ...] = ("hotfix_retrain", "inference_scaleout")
"""The two job types that exist to answer an emergency (a served model's regression, a traffic peak)."""

PRIORITY_MIXES = MappingProxyType({
    "triage": MappingProxyType({j.name: (0.0, 0.0, 0.3, 0.7) if j.name in URGENT_TYPES else (0.8, 0.15, 0.05, 0.0)
                                for j in JOB_TYPES}),
})
"""Per named catalogue other than ``classic``: each job type's true-priority distribution (LOW..CRITICAL).

``triage``: a site whose queue is mostly best-effort bulk work with a little urgent production work. The eight
bulk types are 80 % LOW, 15 % MEDIUM and 5 % HIGH; the two urgent types 30 % HIGH and 70 % CRITICAL. A stated
priority then hides more value (a LOW job stated HIGH is worth a quarter of a true HIGH one), which is the
lever the headroom sweep names last (``reports/cluster/headroom/``)."""

CATALOGUE_NAMES: tuple[str, ...] = ("classic", *PRIORITY_MIXES)
"""Every catalogue ``ClusterConfig.catalogue`` may name."""


def catalogue(name: str) -> tuple[JobType, ...]:
    """The job types of catalogue ``name``: :data:`JOB_TYPES` for ``classic``; otherwise the same types (names,
    GPU models, sizes, runtimes, slacks, flexibility, in the same order, so an observation's job-type columns
    mean the same) with the priority distributions of :data:`PRIORITY_MIXES`. A catalogue is public: the
    teams draw their true priorities from it, and the oversight norms and a scheduler's type prior read it.
    Anything but a known name (an unknown string, a list, None) raises ``ValueError`` naming the field."""
    if not isinstance(name, str) or name not in CATALOGUE_NAMES:
        raise ValueError(f"catalogue: unknown {name!r}; known: {list(CATALOGUE_NAMES)}")
    return _catalogue(name)


@cache
def _catalogue(name: str) -> tuple[JobType, ...]:
    if name == "classic":
        return JOB_TYPES
    mix = PRIORITY_MIXES[name]
    return tuple(replace(j, priority_probs=mix[j.name]) for j in JOB_TYPES)
