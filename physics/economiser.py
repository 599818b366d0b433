"""Integrated waterside economiser and condenser water.

Condenser water leaves the cooling tower at the outdoor wet-bulb plus the tower approach. In economiser mode
the tower water passes a plate heat exchanger that pre-cools the chilled-water return, so the water reaching the
HX is at ``T_econ = T_wb + tower approach + HX approach``.

The HX can cool the return water (at ``T_ret``) down to ``max(T_econ, T_chw,set)``; the fraction of the plant load
it carries is::

    f_econ = clip((T_ret − T_econ) / (T_ret − T_chw,set), 0, 1)

Full free cooling (f_econ = 1) when ``T_wb ≤ T_chw,set − (tower + HX approach)``; partial (integrated) operation
up to the chilled-water ΔT above that, with the chillers carrying the rest.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def condenser_water_c(wet_bulb_c: NDArray[np.float64], tower_approach_k: float) -> NDArray[np.float64]:
    """Water leaving the tower (entering the chiller condenser), °C."""
    return wet_bulb_c + tower_approach_k


def economiser_fraction(
    wet_bulb_c: NDArray[np.float64],
    chw_setpoint_c: NDArray[np.float64],
    chw_return_c: NDArray[np.float64],
    tower_approach_k: float,
    hx_approach_k: float,
) -> NDArray[np.float64]:
    """Fraction (0–1) of the plant load the economiser carries in integrated mode."""
    econ_water_c = wet_bulb_c + tower_approach_k + hx_approach_k
    span = chw_return_c - chw_setpoint_c
    loaded = span > 1e-6
    partial = np.minimum(np.maximum((chw_return_c - econ_water_c) / np.maximum(span, 1e-6), 0.0), 1.0)
    # No return-water rise (at most 1e-6 K: no load): full iff the HX water is at or below the set-point.
    return partial * loaded + (econ_water_c <= chw_setpoint_c) * ~loaded
