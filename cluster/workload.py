"""Workloads: where the teams' request rates and job runtimes come from.

``ClusterConfig.workload`` names one:

``synthetic``            (the default, every published figure) each team submits 1 + Binomial(max_requests − 1,
                         rate) requests a window at its own constant rate, and a job's true runtime is uniform
                         in its type's range (``dcops.agents.teams.base``).
``azure_llm_2023``       the shape of a public production trace, the **Azure LLM inference trace 2023** (Patel et
                         al., "Splitwise", ISCA 2024; `Azure/AzurePublicDataset`, code and conversation
                         services, CC BY 4.0, see ``cluster/data/AZURE_LLM_2023_LICENSE.md``): the per-window
                         **arrival intensity** and the **runtime quantiles** below, shipped as a small derived
                         file (``cluster/data/azure_llm_2023.json``, made by :func:`derive` from the two CSVs).

The trace is an hour of second-scale inference requests, not a day of hour-long GPU jobs, so it is used for
its *shape*, rescaled, never for its absolute scale:

- **arrivals**: the trace's requests are counted in :data:`BINS` equal time bins (both services pooled); the
  counts over their mean give an intensity I_b (mean 1). Window w of an episode uses bin ``w · BINS //
  n_windows`` (the episode's windows spread over the trace's hour), and each of a team's request slots beyond
  the first is taken with probability ``min(1, rate · I_b)`` instead of ``rate``: bursty windows and quiet
  ones, with the same mean demand;
- **runtimes**: the generated-token count of a request measures its work. The quantiles of
  ``log(tokens)``, scaled to [0, 1] between the trace's 1st and 99th percentiles (:data:`QUANTILES` points),
  replace the uniform position of a job's runtime inside its type's range: most jobs short, a heavy tail.

Both use the team's draws as they are, so the synthetic workload is unchanged bit for bit, and the trace
workload keeps every property the streams give (honest twins draw the same jobs).
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

WORKLOADS = ("synthetic", "azure_llm_2023")
"""Known values of ``ClusterConfig.workload``."""
BINS = 48
"""Time bins of the arrival intensity."""
QUANTILES = 101
"""Points of the runtime quantile function (0 %, 1 %, …, 100 %)."""
_DATA = Path(__file__).resolve().parent / "data"


@dataclass(frozen=True)
class Workload:
    """An arrival intensity per bin (mean 1) and a runtime quantile function on [0, 1]."""

    name: str
    intensity: tuple[float, ...]
    runtime_quantiles: tuple[float, ...]

    def rate_factor(self, window: int, n_windows: int) -> float:
        """The arrival intensity of ``window`` of an ``n_windows`` episode."""
        return self.intensity[min(len(self.intensity) - 1, window * len(self.intensity) // max(1, n_windows))]

    def runtime_position(self, u: float) -> float:
        """Where in its type's runtime range a job with uniform draw ``u`` lies, in [0, 1]."""
        q = self.runtime_quantiles
        x = u * (len(q) - 1)
        i = min(int(x), len(q) - 2)
        return q[i] + (q[i + 1] - q[i]) * (x - i)


def workload(name: str) -> Workload | None:
    """The workload called ``name``: ``None`` for ``synthetic``; ``ValueError`` naming the field otherwise."""
    if name == "synthetic":
        return None
    if name not in WORKLOADS:
        raise ValueError(f"workload: unknown {name!r}; known: {list(WORKLOADS)}")
    return _load(name)


@cache
def _load(name: str) -> Workload:
    data = json.loads((_DATA / f"{name}.json").read_text())
    return Workload(name, tuple(data["intensity"]), tuple(data["runtime_quantiles"]))


def _timestamp(text: str) -> float:
    # The trace writes seven fractional digits; datetime takes six.
    head, _, frac = text.partition(".")
    return datetime.fromisoformat(head).timestamp() + float(f"0.{frac or '0'}")


def derive(paths: list[Path], bins: int = BINS, quantiles: int = QUANTILES) -> dict[str, Any]:
    """The derived file of the module docstring from trace CSVs (columns TIMESTAMP, ContextTokens,
    GeneratedTokens); each file's times are taken from its own first request, so the services overlay."""
    times: list[np.ndarray] = []
    tokens: list[np.ndarray] = []
    for path in paths:
        with open(path, newline="") as handle:
            rows = list(csv.DictReader(handle))
        if not rows:
            raise ValueError(f"{path}: no requests")
        t = np.array([_timestamp(r["TIMESTAMP"]) for r in rows])
        times.append((t - t.min()) / max(t.max() - t.min(), 1e-9))
        tokens.append(np.array([float(r["GeneratedTokens"]) for r in rows]))
    when = np.concatenate(times)
    counts = np.bincount(np.minimum((when * bins).astype(int), bins - 1), minlength=bins).astype(float)
    logs = np.log(np.maximum(np.concatenate(tokens), 1.0))
    lo, hi = np.percentile(logs, [1.0, 99.0])
    scaled = np.clip((logs - lo) / max(hi - lo, 1e-9), 0.0, 1.0)
    return {
        "source": "Azure LLM inference trace 2023 (Azure/AzurePublicDataset, data/AzureLLMInferenceTrace_code.csv "
                  "and _conv.csv), Patel et al., Splitwise, ISCA 2024",
        "licence": "CC BY 4.0 (cluster/data/AZURE_LLM_2023_LICENSE.md)",
        "derived_by": "dcops.cluster.workload.derive",
        "requests": int(len(when)),
        "intensity": [round(float(c), 6) for c in counts / counts.mean()],
        "runtime_quantiles": [round(float(q), 6) for q in np.quantile(scaled, np.linspace(0.0, 1.0, quantiles))],
        "generated_tokens_p1_p99": [round(math.exp(lo), 3), round(math.exp(hi), 3)],
    }
