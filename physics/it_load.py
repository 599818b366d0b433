"""IT load profiles per zone, kW: steady, ramp, diurnal and spikes, with seeded noise.

A profile is generated once for a whole episode, shaped (n_steps, Z), from the zones' design loads and the
episode's generator. Fractions are of each zone's design IT load, and every value is clipped to [0.05, 1.0] of
design (a zone never exceeds its electrical design rating).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

LOAD_PATTERNS = ("steady", "ramp", "diurnal", "spikes")


@dataclass(frozen=True)
class LoadProfile:
    """Parameters of an IT load profile.

    :param pattern: ``steady`` (constant), ``ramp`` (linear from ``low`` to ``high``), ``diurnal`` (sinusoid
        with its peak at ``peak_hour`` local time), or ``spikes`` (steady at ``low`` with bursts to ``high``).
    :param low: lowest fraction of design load.
    :param high: highest fraction of design load.
    :param noise: std of the per-step multiplicative noise (fraction).
    :param zone_spread: std of a per-zone scale factor drawn at reset (zones are not identical).
    :param peak_hour: hour of day of the diurnal peak.
    :param spike_probability: chance per step that a spike (lasting 3–6 steps) starts.

    The default is a diurnal load of 50–90 % of design peaking at 15:00, with 2 % noise, a 5 % zone spread and
    a 5 % spike chance. Seed contract: :meth:`generate` draws from the episode's generator, in this order, (for
    ``spikes`` only) one uniform per step, a spike starting where it is below ``spike_probability``, and one
    integer length in 3–6 per start; then one normal per zone, its scale ``1 + N(0, zone_spread)``; then one
    normal per step and zone, the noise factor ``1 + N(0, noise)``. The fraction is base × scale × noise.
    """

    pattern: str = "diurnal"
    low: float = 0.5
    high: float = 0.9
    noise: float = 0.02
    zone_spread: float = 0.05
    peak_hour: float = 15.0
    spike_probability: float = 0.05

    def __post_init__(self) -> None:
        if self.pattern not in LOAD_PATTERNS:
            raise ValueError(f"LoadProfile.pattern must be one of {LOAD_PATTERNS}, got {self.pattern!r}")
        if not 0.0 <= self.low <= self.high <= 1.0:
            raise ValueError(f"LoadProfile needs 0 <= low <= high <= 1, got low={self.low}, high={self.high}")

    def generate(
        self,
        rng: np.random.Generator,
        design_kw: NDArray[np.float64],
        n_steps: int,
        dt_s: float,
        start_hour: float,
    ) -> NDArray[np.float64]:
        """IT load per step and zone, kW, shaped (n_steps, Z)."""
        t_h = start_hour + np.arange(n_steps) * dt_s / 3600.0
        span = self.high - self.low
        if self.pattern == "steady":
            base = np.full(n_steps, (self.low + self.high) / 2.0)
        elif self.pattern == "ramp":
            base = self.low + span * np.linspace(0.0, 1.0, n_steps)
        elif self.pattern == "diurnal":
            base = self.low + span * 0.5 * (1.0 + np.cos(2.0 * np.pi * (t_h - self.peak_hour) / 24.0))
        else:
            base = np.full(n_steps, self.low)
            starts = np.flatnonzero(rng.random(n_steps) < self.spike_probability)
            for s in starts:  # a handful of events per episode
                base[s : s + int(rng.integers(3, 7))] = self.high
        zone_scale = 1.0 + rng.normal(0.0, self.zone_spread, size=design_kw.shape)
        noise = 1.0 + rng.normal(0.0, self.noise, size=(n_steps, design_kw.size))
        fraction = np.clip(base[:, None] * zone_scale[None, :] * noise, 0.05, 1.0)
        return fraction * design_kw[None, :]
