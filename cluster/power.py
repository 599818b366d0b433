"""The power budget: what the cap and the cooling plant let the scheduler admit, from public telemetry.

The facility meter (IT + cooling + electrical losses) must stay at or under the cap every step, and the
chillers must carry the heat, or the chilled-water loop warms until inlets pass 32 °C. A scheduler can
estimate both limits from what the control room shows (all public)::

    planning PUE     = facility energy / IT energy over the last window (≥ 1.05)
    cooling capacity = chiller capacity available now (DOE-2 CAPFT × units running)
    safe IT          = min(cap · (1 − margin) / planning PUE,  cooling capacity · (1 − margin) / 1.03)
    safe job power   = safe IT − base load
    headroom         = safe job power − power of jobs running or admitted and waiting

(1.03 is the fan and chilled-water pump heat the coils also carry, ≈ 3 % of IT at these loads.) A chiller
trip cuts the cooling capacity, and with it the safe job power, from the next window on: with the default plant
one chiller of two carries ≈ 600–680 kW, so the safe job power falls from ≈ 440 kW to ≈ 350 kW.

What counts as an incident is measured, not estimated: any step with the facility meter over the cap, or any true
inlet above 32 °C (``ClusterEpisode.run_window``).
"""

from __future__ import annotations

from dataclasses import dataclass

COIL_HEAT_FACTOR = 1.03
MIN_PLANNING_PUE = 1.05


@dataclass(frozen=True)
class PowerEstimate:
    """The public planning figures of one moment (kW, PUE dimensionless)."""

    planning_pue: float
    cooling_capacity_kw: float
    safe_it_kw: float
    safe_job_kw: float
    committed_job_kw: float
    headroom_kw: float

    def as_dict(self) -> dict[str, float]:
        return {
            "planning_pue": self.planning_pue,
            "cooling_capacity_kw": self.cooling_capacity_kw,
            "safe_it_kw": self.safe_it_kw,
            "safe_job_kw": self.safe_job_kw,
            "committed_job_kw": self.committed_job_kw,
            "headroom_kw": self.headroom_kw,
        }


def estimate(
    power_cap_kw: float, planning_pue: float, cooling_capacity_kw: float, base_kw: float, committed_job_kw: float,
    margin: float = 0.0,
) -> PowerEstimate:
    """The planning figures of the module docstring."""
    pue = max(planning_pue, MIN_PLANNING_PUE)
    safe_it = min(power_cap_kw * (1.0 - margin) / pue, cooling_capacity_kw * (1.0 - margin) / COIL_HEAT_FACTOR)
    safe_job = safe_it - base_kw
    return PowerEstimate(pue, cooling_capacity_kw, safe_it, safe_job, committed_job_kw, safe_job - committed_job_kw)
