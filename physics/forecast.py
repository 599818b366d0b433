"""Forecasts with error: what a site is told about the next hours of weather, grid carbon and IT load.

Why: a controller that pre-cools, charges storage or shifts work needs to know what is coming, and what it is
told is never exact. A forecast of a quantity ``x`` for lead ``h`` hours, issued at step ``k``, is::

    x̂_k(h) = x_{k+h} + σ(h) · e_k          (absolute: wet-bulb, K)
    x̂_k(h) = x_{k+h} · (1 + σ(h) · e_k)    (relative: carbon intensity, IT load)
    σ(h)   = σ₁ · √h

where ``e`` is a unit-variance AR(1) series over the episode, correlation time ``correlation_hours`` = 3 h (a
forecast that is wrong now is wrong in the same direction for a while: errors come from the weather system or the
grid's dispatch, not from the clock), drawn independently per quantity and lead from the episode's generator.
The √h growth is the usual random-walk picture of forecast error.

Defaults, of the order of published skill: temperature σ₁ = 0.4 K, which gives about 2 K at 24 h, the root-mean
square error of US National Weather Service day-1 temperature forecasts; grid carbon intensity σ₁ = 3 %, about
15 % at 24 h, the upper end of day-ahead carbon-intensity forecast errors (Maji et al., "CarbonCast", BuildSys
2022: mean absolute percentage errors of 4–16 % day-ahead across regions); IT load σ₁ = 2 %.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray


@dataclass(frozen=True)
class ForecastModel:
    """Forecast error parameters (module docstring). ``leads_h``: the leads forecast, hours."""

    leads_h: tuple[float, ...] = (1.0, 3.0)
    wet_bulb_sigma_k: float = 0.4
    carbon_sigma_fraction: float = 0.03
    load_sigma_fraction: float = 0.02
    correlation_hours: float = 3.0

    def __post_init__(self) -> None:
        if not self.leads_h or any(not (math.isfinite(h) and h > 0.0) for h in self.leads_h):
            raise ValueError(f"ForecastModel.leads_h must be positive hours, got {self.leads_h!r}")
        for name in ("wet_bulb_sigma_k", "carbon_sigma_fraction", "load_sigma_fraction", "correlation_hours"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0.0):
                raise ValueError(f"ForecastModel.{name} must be a finite number >= 0, got {value!r}")

    def lead_steps(self, dt_s: float) -> tuple[int, ...]:
        """Each lead in whole control steps (at least one)."""
        return tuple(max(1, round(h * 3600.0 / dt_s)) for h in self.leads_h)


PERFECT = ForecastModel(wet_bulb_sigma_k=0.0, carbon_sigma_fraction=0.0, load_sigma_fraction=0.0)
"""Forecasts without error (for tests and clairvoyant comparisons)."""


def unit_ar1(rng: np.random.Generator, n: int, dt_s: float, correlation_hours: float) -> NDArray[np.float64]:
    """A stationary AR(1) series of ``n`` values with unit variance and correlation ``exp(−Δt/τ)`` per step."""
    rho = math.exp(-dt_s / (correlation_hours * 3600.0)) if correlation_hours > 0.0 else 0.0
    shocks = rng.standard_normal(n)
    scale = math.sqrt(1.0 - rho * rho)
    # e_0 = s_0 (the stationary start), e_i = ρ·e_(i−1) + √(1 − ρ²)·s_i. A loop over Python floats: an episode's
    # few hundred values cost well under a millisecond, and scipy.signal.lfilter's import alone costs 0.5 s.
    values = shocks.tolist()
    for i in range(1, n):
        values[i] = rho * values[i - 1] + scale * values[i]
    return np.array(values)


def forecast(truth: NDArray[np.float64], n_readings: int, lead_steps: int, sigma: float,
             errors: NDArray[np.float64], relative: bool) -> NDArray[np.float64]:
    """Forecasts issued at readings 0..n_readings−1 for ``lead_steps`` ahead (module docstring).

    ``truth`` must cover reading ``n_readings − 1 + lead_steps``; ``errors`` is a unit series of length
    ``n_readings``; ``sigma`` is σ(h) for this lead."""
    if truth.shape[0] < n_readings + lead_steps:
        raise ValueError(f"truth needs {n_readings + lead_steps} values for these forecasts, got {truth.shape[0]}")
    ahead = truth[lead_steps: lead_steps + n_readings]
    if relative:
        return ahead * np.maximum(1.0 + sigma * errors, 0.0)
    return ahead + sigma * errors
