"""Psychrometrics: saturation pressure, humidity ratio and wet-bulb temperature (vectorised).

Equations (ASHRAE Handbook of Fundamentals, ch. 1):

- Saturation vapour pressure over water, Magnus form (Alduchov and Eskridge 1996):
  ``p_ws = 610.94 · exp(17.625·T / (T + 243.04))`` Pa, T in °C, valid about −40 to 50 °C.
- Humidity ratio: ``W = 0.621945 · p_w / (p − p_w)`` kg/kg.
- Psychrometer (adiabatic-saturation) equation for the wet-bulb T*:
  ``W = ((2501 − 2.326·T*)·W*_s − 1.006·(T − T*)) / (2501 + 1.86·T − 4.186·T*)``,
  solved for T* by Newton iteration on arrays.
- Stull (2011) closed-form approximation of the wet-bulb from T and RH at 101.325 kPa (valid RH 5–99 %,
  T −20 to 50 °C), kept as a fast alternative and a cross-check.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

STANDARD_PRESSURE_PA = 101_325.0


def saturation_pressure_pa(temp_c: ArrayLike) -> NDArray[np.float64]:
    """Saturation vapour pressure over liquid water, Pa (Magnus form)."""
    t = np.asarray(temp_c, dtype=np.float64)
    return 610.94 * np.exp(17.625 * t / (t + 243.04))


def humidity_ratio(vapour_pressure_pa: ArrayLike, pressure_pa: ArrayLike = STANDARD_PRESSURE_PA) -> NDArray[np.float64]:
    """Humidity ratio W in kg water per kg dry air from the partial vapour pressure."""
    pw = np.asarray(vapour_pressure_pa, dtype=np.float64)
    return 0.621945 * pw / (np.asarray(pressure_pa, dtype=np.float64) - pw)


def humidity_ratio_from_rh(
    dry_bulb_c: ArrayLike, relative_humidity_pct: ArrayLike, pressure_pa: ArrayLike = STANDARD_PRESSURE_PA
) -> NDArray[np.float64]:
    """Humidity ratio (kg/kg) from dry-bulb (°C) and relative humidity (%)."""
    pw = np.asarray(relative_humidity_pct, dtype=np.float64) / 100.0 * saturation_pressure_pa(dry_bulb_c)
    return humidity_ratio(pw, pressure_pa)


def wet_bulb_c(
    dry_bulb_c: ArrayLike,
    relative_humidity_pct: ArrayLike,
    pressure_pa: ArrayLike = STANDARD_PRESSURE_PA,
    iterations: int = 30,
) -> NDArray[np.float64]:
    """Thermodynamic wet-bulb temperature, °C, by solving the psychrometer equation (Newton, vectorised).

    Relative humidity is read within [0.1, 100] % (below 0.1 % as 0.1 %, above 100 % as 100 %). Converges to
    better than 1e-6 K in a handful of iterations, starting at the dry-bulb and stepping down (never above it).
    """
    t = np.asarray(dry_bulb_c, dtype=np.float64)
    p = np.asarray(pressure_pa, dtype=np.float64)
    w = humidity_ratio_from_rh(t, np.clip(relative_humidity_pct, 0.1, 100.0), p)
    tw = np.array(t, dtype=np.float64, copy=True)
    for _ in range(iterations):
        f, dfdt = _psychrometer_residual(tw, t, w, p)
        step = f / dfdt
        tw = tw - step
        if np.all(np.abs(step) < 1e-9):
            break
    return np.minimum(tw, t)


def _psychrometer_residual(
    tw: NDArray[np.float64], t: NDArray[np.float64], w: NDArray[np.float64], p: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Residual of the psychrometer equation in T* and its derivative (numerical, central difference)."""

    def residual(x: NDArray[np.float64]) -> NDArray[np.float64]:
        ws = humidity_ratio(saturation_pressure_pa(x), p)
        return ((2501.0 - 2.326 * x) * ws - 1.006 * (t - x)) / (2501.0 + 1.86 * t - 4.186 * x) - w

    h = 1e-4
    f = residual(tw)
    return f, (residual(tw + h) - residual(tw - h)) / (2.0 * h)


def wet_bulb_stull_c(dry_bulb_c: ArrayLike, relative_humidity_pct: ArrayLike) -> NDArray[np.float64]:
    """Stull (2011) empirical wet-bulb, °C, at standard pressure; about ±1 K accuracy in its range."""
    t = np.asarray(dry_bulb_c, dtype=np.float64)
    rh = np.asarray(relative_humidity_pct, dtype=np.float64)
    return (
        t * np.arctan(0.151977 * np.sqrt(rh + 8.313659))
        + np.arctan(t + rh)
        - np.arctan(rh - 1.676331)
        + 0.00391838 * rh**1.5 * np.arctan(0.023101 * rh)
        - 4.686035
    )


def relative_humidity_from_dew_point(dry_bulb_c: ArrayLike, dew_point_c: ArrayLike) -> NDArray[np.float64]:
    """Relative humidity (%) from dry-bulb and dew point, both °C."""
    return 100.0 * saturation_pressure_pa(dew_point_c) / saturation_pressure_pa(dry_bulb_c)
