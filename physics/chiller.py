"""Electric chiller on the DOE-2 / EnergyPlus ``Chiller:Electric:EIR`` curves.

For leaving chilled-water temperature x (°C) and entering condenser-water temperature y (°C), both clamped to the
curve set's validity ranges::

    CAPFT(x, y)  = a + b·x + c·x² + d·y + e·y² + f·x·y        available capacity / reference capacity
    EIRFT(x, y)  = same biquadratic form                       full-load EIR / reference EIR
    EIRFPLR(p)   = a + b·p + c·p²                               part-load EIR modifier

    Q_avail = Q_ref · CAPFT
    PLR     = Q / Q_avail
    P       = Q_avail / COP_ref · EIRFT · EIRFPLR(max(PLR, PLR_unload)) · min(1, PLR / PLR_min)

Below the minimum unloading ratio the chiller false-loads (hot-gas bypass: power as at ``PLR_unload``); below
the minimum part-load ratio it cycles (power scales with ``PLR / PLR_min``), as in EnergyPlus.

Coefficients: the DOE-2.1E default curve sets "DOE-2 Centrifugal/5.50COP" and "DOE-2 Reciprocating/3.67COP"
(EnergyPlus ``Chillers.idf`` dataset; also in the Modelica Buildings library). Reference point: 6.67 °C leaving
chilled water, 29.4 °C entering condenser water; validity 5–10 °C and 24–35 °C. The centrifugal set gives a
full-load COP of 6.2 / 5.5 / 4.8 at 24 / 29.4 / 35 °C condenser water and peaks at PLR ≈ 0.69.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray


@dataclass(frozen=True)
class ChillerCurves:
    """One DOE-2 EIR curve set with its reference COP and validity ranges (temperatures in °C)."""

    name: str
    reference_cop: float
    capft: tuple[float, float, float, float, float, float]
    eirft: tuple[float, float, float, float, float, float]
    eirfplr: tuple[float, float, float]
    chw_leaving_range_c: tuple[float, float] = (5.0, 10.0)
    condenser_entering_range_c: tuple[float, float] = (24.0, 35.0)
    min_part_load_ratio: float = 0.1
    min_unloading_ratio: float = 0.2


DOE2_CENTRIFUGAL_5_50COP = ChillerCurves(
    name="DOE-2 Centrifugal/5.50COP",
    reference_cop=5.5,
    capft=(0.257896, 0.0389016, -0.000217080, 0.0468684, -0.000942840, -0.000343440),
    eirft=(0.933884, -0.0582120, 0.00450036, 0.00243000, 0.000486000, -0.00121500),
    eirfplr=(0.222903, 0.313387, 0.463710),
)

DOE2_RECIPROCATING_3_67COP = ChillerCurves(
    name="DOE-2 Reciprocating/3.67COP",
    reference_cop=3.67,
    capft=(0.507883, 0.145228, -0.00625644, -0.00111780, -0.000129600, -0.000281880),
    eirft=(1.03076, -0.103536, 0.00710208, 0.00931860, 0.000317520, -0.00104328),
    eirfplr=(0.088065, 1.137742, -0.225806),
)

CHILLER_TYPES: dict[str, ChillerCurves] = {
    "centrifugal": DOE2_CENTRIFUGAL_5_50COP,
    "reciprocating": DOE2_RECIPROCATING_3_67COP,
}


def _biquadratic(coefficients: tuple[float, ...], x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
    a, b, c, d, e, f = coefficients
    return a + x * (b + c * x + f * y) + y * (d + e * y)


def clamp_inputs(
    curves: ChillerCurves, chw_leaving_c: ArrayLike, condenser_entering_c: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Clamp curve inputs to the validity ranges (outside them the curves are extrapolations)."""
    lo, hi = curves.chw_leaving_range_c
    x = np.minimum(np.maximum(np.asarray(chw_leaving_c, dtype=np.float64), lo), hi)
    lo, hi = curves.condenser_entering_range_c
    y = np.minimum(np.maximum(np.asarray(condenser_entering_c, dtype=np.float64), lo), hi)
    return x, y


def capacity_fraction(curves: ChillerCurves, chw_leaving_c: ArrayLike, condenser_entering_c: ArrayLike) -> NDArray[np.float64]:
    """CAPFT: available capacity as a fraction of the reference capacity (dimensionless)."""
    return _biquadratic(curves.capft, *clamp_inputs(curves, chw_leaving_c, condenser_entering_c))


def eir_temperature_modifier(curves: ChillerCurves, chw_leaving_c: ArrayLike, condenser_entering_c: ArrayLike) -> NDArray[np.float64]:
    """EIRFT: full-load energy-input ratio relative to the reference (dimensionless)."""
    return _biquadratic(curves.eirft, *clamp_inputs(curves, chw_leaving_c, condenser_entering_c))


def curve_modifiers(
    curves: ChillerCurves, chw_leaving_c: ArrayLike, condenser_entering_c: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(CAPFT, EIRFT) at one operating point, clamping the inputs once (the physics step's hot path)."""
    x, y = clamp_inputs(curves, chw_leaving_c, condenser_entering_c)
    return _biquadratic(curves.capft, x, y), _biquadratic(curves.eirft, x, y)


def eir_part_load_modifier(curves: ChillerCurves, part_load_ratio: ArrayLike) -> NDArray[np.float64]:
    """EIRFPLR at the operating part-load ratio (false loading below the minimum unloading ratio)."""
    p = np.maximum(np.asarray(part_load_ratio, dtype=np.float64), curves.min_unloading_ratio)
    a, b, c = curves.eirfplr
    return a + p * (b + c * p)


def chiller_power_kw(
    curves: ChillerCurves,
    load_kw: ArrayLike,
    available_capacity_kw: ArrayLike,
    eirft: ArrayLike,
) -> NDArray[np.float64]:
    """Electric power, kW, of chillers carrying ``load_kw`` with ``available_capacity_kw`` (= Q_ref·CAPFT).

    ``eirft`` is :func:`eir_temperature_modifier` at the operating temperatures. PLR is capped at 1 (a chiller
    never delivers more than its available capacity; callers cap the load). Zero load or zero capacity gives 0.
    """
    load = np.asarray(load_kw, dtype=np.float64)
    capacity = np.asarray(available_capacity_kw, dtype=np.float64)
    safe_capacity = np.maximum(capacity, 1e-9)
    plr = np.minimum(load / safe_capacity, 1.0)
    cycling = np.minimum(plr / curves.min_part_load_ratio, 1.0)
    power = safe_capacity / curves.reference_cop * eirft * eir_part_load_modifier(curves, plr) * cycling
    return power * (capacity > 0.0)


def full_load_cop(curves: ChillerCurves, chw_leaving_c: ArrayLike, condenser_entering_c: ArrayLike) -> NDArray[np.float64]:
    """Full-load COP at the given temperatures: COP_ref / EIRFT (PLR = 1, EIRFPLR(1) ≈ 1)."""
    a, b, c = curves.eirfplr
    return curves.reference_cop / (eir_temperature_modifier(curves, chw_leaving_c, condenser_entering_c) * (a + b + c))
