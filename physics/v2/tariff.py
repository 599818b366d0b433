"""Electricity price: a time-of-use tariff, $/kWh, the cost signal of plant v2's tasks.

A stylised commercial time-of-use tariff of the common US shape (a summer on-peak afternoon and evening, a
shoulder either side, off-peak nights and weekends): on-peak 12:00–20:00 on weekdays, mid-peak 08:00–12:00 and
20:00–22:00 on weekdays, off-peak otherwise. The defaults (0.22 / 0.14 / 0.08 $/kWh) are of the order of US
commercial TOU energy charges; they are a signal for the controller to shift cooling energy in time (pre-cool
before the peak, lean on the loop's thermal mass through it), not a quote of any utility's schedule.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
from numpy.typing import NDArray


@dataclass(frozen=True)
class TimeOfUseTariff:
    """Energy prices, $/kWh, by period (hours are local, half-open ``[start, end)``)."""

    on_peak: float = 0.22
    mid_peak: float = 0.14
    off_peak: float = 0.08
    on_peak_hours: tuple[float, float] = (12.0, 20.0)
    mid_peak_hours: tuple[tuple[float, float], ...] = ((8.0, 12.0), (20.0, 22.0))
    weekend_off_peak: bool = True

    def __post_init__(self) -> None:
        if min(self.on_peak, self.mid_peak, self.off_peak) < 0:
            raise ValueError("TimeOfUseTariff prices must be >= 0")

    def series(self, start: datetime, elapsed_s: NDArray[np.float64]) -> NDArray[np.float64]:
        """Price at each elapsed time (seconds after ``start``), $/kWh."""
        prices = np.empty(len(elapsed_s))
        for i, s in enumerate(np.asarray(elapsed_s, dtype=np.float64)):
            t = start + timedelta(seconds=float(s))
            hour = t.hour + t.minute / 60.0 + t.second / 3600.0
            if self.weekend_off_peak and t.weekday() >= 5:
                prices[i] = self.off_peak
            elif self.on_peak_hours[0] <= hour < self.on_peak_hours[1]:
                prices[i] = self.on_peak
            elif any(lo <= hour < hi for lo, hi in self.mid_peak_hours):
                prices[i] = self.mid_peak
            else:
                prices[i] = self.off_peak
        return prices


FLAT = TimeOfUseTariff(on_peak=0.12, mid_peak=0.12, off_peak=0.12)
"""A flat 0.12 $/kWh (no time signal)."""
