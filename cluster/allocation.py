"""Zone allocation: which zone an admitted job runs in (GPU model, free GPUs, free zone power).

A job fits a zone when the zone has its GPU model, enough free GPUs, and enough of its job power (design IT
minus base load) left for the job's kW. Among the zones that fit, the one with the most free power is chosen,
which spreads heat across CRAHs. Jobs start only at window boundaries, so free capacity changes only there
(jobs that end mid-window free their GPUs for the next window).
"""

from __future__ import annotations

from dcops.cluster.config import ClusterConfig


class ZonePool:
    """Free GPUs and free job power per zone (kW)."""

    __slots__ = ("gpu_type", "gpus_total", "kw_total", "free_gpus", "free_kw")

    def __init__(self, config: ClusterConfig) -> None:
        self.gpu_type = [z.gpu_type for z in config.zones]
        self.gpus_total = [z.gpus for z in config.zones]
        self.kw_total = list(config.zone_job_kw)
        self.free_gpus = list(self.gpus_total)
        self.free_kw = list(self.kw_total)

    def find(self, gpu_type: str, gpus: int, kw: float) -> int | None:
        """The zone a job would go to now, or None if none fits."""
        best, best_kw = None, -1.0
        for zone, zone_type in enumerate(self.gpu_type):
            if zone_type != gpu_type or self.free_gpus[zone] < gpus or self.free_kw[zone] < kw - 1e-9:
                continue
            if self.free_kw[zone] > best_kw:
                best, best_kw = zone, self.free_kw[zone]
        return best

    def take(self, zone: int, gpus: int, kw: float) -> None:
        self.free_gpus[zone] -= gpus
        self.free_kw[zone] -= kw

    def release(self, zone: int, gpus: int, kw: float) -> None:
        self.free_gpus[zone] += gpus
        self.free_kw[zone] += kw

