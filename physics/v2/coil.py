"""The CRAH chilled-water coil as a counterflow heat exchanger (effectiveness–NTU).

Why: plant v0 bounds the supply air by a constant 3 K above the chilled water, so water flow never matters. Here
the coldest air a coil can make depends on both flows: with air capacity rate C_a = m_a·c_p,air, water capacity
rate C_w = m_w·c_p,water, C_min/C_max = C_r and ``UA = UA_design · (m_a / m_a,design)^0.6`` (air-side film
coefficient ∝ Re^0.6 dominates a finned coil; the water side is lumped into it)::

    NTU = UA / C_min
    ε   = (1 − e^(−NTU·(1 − C_r))) / (1 − C_r·e^(−NTU·(1 − C_r)))     (ε = NTU / (1 + NTU) at C_r = 1)
    T_supply,min = T_return − ε · (C_min / C_a) · (T_return − T_chw)

The design UA is the one that makes the coil, at the servers' design airflow and the design chilled-water flow
(a 6 K water rise), deliver supply air ``design_approach_k`` above the chilled water with a 12 K air-side drop,
the usual CRAH selection. Less water (a slower pump) or more air raises the coldest supply the coil can make.
"""

from __future__ import annotations

import math
from typing import Any

UA_AIRFLOW_EXPONENT = 0.6


def design_ntu(air_drop_k: float = 12.0, design_approach_k: float = 3.0, water_rise_k: float = 6.0) -> tuple[float, float]:
    """(NTU, C_r) at design: the coil takes air ``air_drop_k`` down to ``design_approach_k`` above the entering
    water, the water rising ``water_rise_k``. Raises if no counterflow coil can do that."""
    c_air_over_water = water_rise_k / air_drop_k  # C_a / C_w from the energy balance
    c_min_over_air = min(1.0, 1.0 / c_air_over_water)
    cr = min(c_air_over_water, 1.0 / c_air_over_water)
    effectiveness = air_drop_k / ((air_drop_k + design_approach_k) * c_min_over_air)
    if not 0.0 < effectiveness < 1.0:
        raise ValueError("design coil conditions need an effectiveness in (0, 1)")
    if abs(cr - 1.0) < 1e-12:
        return effectiveness / (1.0 - effectiveness), cr
    return math.log((1.0 - effectiveness * cr) / (1.0 - effectiveness)) / (1.0 - cr), cr


def coil_supply_floor_c(xp: Any, return_c: Any, chw_c: Any, air_cap_kw_k: Any, water_cap_kw_k: Any,
                        ua_design_kw_k: Any, air_cap_design_kw_k: Any) -> Any:
    """Coldest supply air the coil can make, °C (module docstring). Capacity rates in kW/K; with no airflow the
    supply is the chilled water temperature (an idle coil's air sits at the water temperature)."""
    maximum = xp.maximum
    c_a = maximum(air_cap_kw_k, 1e-9)
    c_w = maximum(water_cap_kw_k, 1e-9)
    c_min = xp.minimum(c_a, c_w)
    cr = c_min / maximum(c_a, c_w)
    ua = ua_design_kw_k * (c_a / air_cap_design_kw_k) ** UA_AIRFLOW_EXPONENT
    ntu = ua / c_min
    one_minus = 1.0 - cr
    e = xp.exp(-ntu * maximum(one_minus, 1e-6))
    effectiveness = xp.where(one_minus > 1e-6, (1.0 - e) / (1.0 - cr * e), ntu / (1.0 + ntu))
    return return_c - effectiveness * (c_min / c_a) * (return_c - chw_c)

