"""A variable-speed cooling tower: the YorkCalc approach correlation, fan power by the cube law.

Why: the v0 tower has a fixed 3.5 K approach and fan power that follows the heat rejected, so its fan cannot be
controlled. Here the fan speed is a control: more air lowers the condenser water (and so the chiller's lift) at a
cost of ``P = P_design · s³``; in winter, when the economiser runs, the fan is most of the cooling energy.

Approach (water leaving the tower minus the air's wet-bulb, K) is the YorkCalc correlation (York International;
EnergyPlus ``CoolingTower:VariableSpeed`` model type ``YorkCalc``; Modelica Buildings
``CoolingTowers.Correlations.yorkCalc``), a 27-term polynomial in wet-bulb T_wb (°C), range R (K) and the
liquid-to-gas ratio LG = FR_water / FR_air (flow ratios to the reference tower)::

    approach = Σ_{i,j,k ∈ 0..2} c_ijk · T_wb^i · R^j · LG^k

Inputs are held to the correlation's published validity: wet-bulb −34.4 to 26.7 °C, range 1.1 to 22.2 K,
LG at most 8, air flow ratio at least ``MIN_AIR_FLOW_RATIO`` (below it, free convection: EnergyPlus's default
free-convection capacity is about 12.5 % of design, so the fan never drops the tower's air below that in this
model). A tower is sized like EnergyPlus and Modelica do: the design water flow ratio ``FR_water,0`` is the one at
which the correlation, at full fan, meets the design approach at the design wet-bulb and range (CTI: 3.89 K
approach, 5.56 K range at 25.6 °C wet-bulb); the actual water flow ratio is ``FR_water,0 · m_w / m_w,design``.

The tower is quasi-steady: within a step it rejects exactly the heat it is given (``R = Q / (m_w · c_p)``) and
the water it returns is at ``T_wb + approach``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dcops.physics.v2.backend import FLOATS

YORKCALC_COEFFICIENTS = (
    -0.359741205, -0.055053608, 0.0023850432,
    0.173926877, -0.0248473764, 0.00048430224,
    -0.005589849456, 0.0005770079712, -0.00001342427256,
    2.84765801111111, -0.121765149, 0.0014599242,
    1.680428651, -0.0166920786, -0.0007190532,
    -0.025485194448, 0.0000487491696, 0.00002719234152,
    -0.0653766255555556, -0.002278167, 0.0002500254,
    -0.0910565458, 0.00318176316, 0.000038621772,
    -0.0034285382352, 0.00000856589904, -0.000001516821552,
)
"""YorkCalc coefficients c_ijk in the order (LG power k, range power j, wet-bulb power i), i fastest; SI units
(EnergyPlus Engineering Reference, "Variable speed cooling towers: YorkCalc model")."""

WET_BULB_RANGE_C = (-34.4, 26.6667)
RANGE_RANGE_K = (1.1111, 22.2222)
MAX_LIQUID_TO_GAS = 8.0
MIN_AIR_FLOW_RATIO = 0.2
CTI_DESIGN_WET_BULB_C = 25.56
CTI_DESIGN_RANGE_K = 5.56
CTI_DESIGN_APPROACH_K = 3.89


def yorkcalc_range_polynomial(xp: Any, wet_bulb_c: Any, liquid_to_gas: Any) -> tuple[Any, Any, Any]:
    """The YorkCalc approach as a quadratic in range, ``(q0, q1, q2)`` with ``approach = q0 + q1·R + q2·R²``, at a
    wet-bulb and LG held to the correlation's validity (Horner in wet-bulb and LG, written out: a plant step asks
    for two ranges at one wet-bulb and water flow, see :func:`approach_at_range`)."""
    w = xp.clip(wet_bulb_c, *WET_BULB_RANGE_C)
    lg = xp.minimum(liquid_to_gas, MAX_LIQUID_TO_GAS)
    (c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, c17, c18, c19, c20, c21, c22, c23,
     c24, c25, c26) = YORKCALC_COEFFICIENTS
    q0 = (c0 + w * (c1 + w * c2)) + lg * ((c9 + w * (c10 + w * c11)) + lg * (c18 + w * (c19 + w * c20)))
    q1 = (c3 + w * (c4 + w * c5)) + lg * ((c12 + w * (c13 + w * c14)) + lg * (c21 + w * (c22 + w * c23)))
    q2 = (c6 + w * (c7 + w * c8)) + lg * ((c15 + w * (c16 + w * c17)) + lg * (c24 + w * (c25 + w * c26)))
    return q0, q1, q2


def approach_at_range(xp: Any, polynomial: tuple[Any, Any, Any], range_k: Any) -> Any:
    """The approach, K, of :func:`yorkcalc_range_polynomial`'s quadratic at a range held to its validity."""
    q0, q1, q2 = polynomial
    r = xp.clip(range_k, *RANGE_RANGE_K)
    return q0 + r * (q1 + r * q2)


def yorkcalc_approach_k(xp: Any, wet_bulb_c: Any, range_k: Any, liquid_to_gas: Any) -> Any:
    """The YorkCalc approach, K, with inputs held to the correlation's validity ranges."""
    return approach_at_range(xp, yorkcalc_range_polynomial(xp, wet_bulb_c, liquid_to_gas), range_k)


@dataclass(frozen=True)
class VariableSpeedTower:
    """A tower (one cell group) sized at the CTI design point.

    :param design_rejection_kw: heat rejected at design, kW.
    :param design_fan_kw: fan power at full speed, kW (0.2 kW/ton of design rejection is typical, ASHRAE 90.1
        asks for at least 38.2 gpm/hp).
    :param design_wet_bulb_c, design_range_k, design_approach_k: the design point (CTI 25.6 / 5.56 / 3.89).
    """

    design_rejection_kw: float
    design_fan_kw: float
    design_wet_bulb_c: float = CTI_DESIGN_WET_BULB_C
    design_range_k: float = CTI_DESIGN_RANGE_K
    design_approach_k: float = CTI_DESIGN_APPROACH_K

    def __post_init__(self) -> None:
        if self.design_rejection_kw <= 0 or self.design_fan_kw < 0:
            raise ValueError("VariableSpeedTower needs design_rejection_kw > 0 and design_fan_kw >= 0")

    @property
    def design_water_flow_ratio(self) -> float:
        """FR_water,0: the water flow ratio at which YorkCalc meets the design approach at full fan (bisection)."""
        lo, hi = 0.1, MAX_LIQUID_TO_GAS
        for _ in range(60):  # approach rises monotonically with LG over the valid range
            mid = 0.5 * (lo + hi)
            if yorkcalc_approach_k(FLOATS, self.design_wet_bulb_c, self.design_range_k, mid) < self.design_approach_k:
                lo = mid
            else:
                hi = mid
        return 0.5 * (lo + hi)


def tower_polynomial(xp: Any, water_flow_ratio_0: float, wet_bulb_c: Any, water_flow_fraction: Any,
                     fan_speed: Any) -> tuple[Any, Any, Any]:
    """The approach of a sized tower as a quadratic in range (:func:`yorkcalc_range_polynomial`) at a water flow
    (fraction of design) and fan speed (0–1)."""
    air = xp.maximum(fan_speed, MIN_AIR_FLOW_RATIO)
    return yorkcalc_range_polynomial(xp, wet_bulb_c, water_flow_ratio_0 * water_flow_fraction / air)


def tower_approach_k(xp: Any, water_flow_ratio_0: float, wet_bulb_c: Any, range_k: Any,
                     water_flow_fraction: Any, fan_speed: Any) -> Any:
    """Approach of a sized tower, K (never negative), at a range, a water flow (fraction of design) and a fan speed
    (0–1)."""
    polynomial = tower_polynomial(xp, water_flow_ratio_0, wet_bulb_c, water_flow_fraction, fan_speed)
    return xp.maximum(approach_at_range(xp, polynomial, range_k), 0.0)


def tower_fan_kw(xp: Any, design_fan_kw: float, fan_speed: Any) -> Any:
    """Fan power, kW: cube law (fan affinity), 0 when the fan is off."""
    s = xp.clip(fan_speed, 0.0, 1.0)
    return design_fan_kw * s * s * s
