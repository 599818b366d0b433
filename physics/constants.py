"""Physical constants and unit conversions used across the physics package (SI: kJ, kW, kg, s, °C)."""

from __future__ import annotations

CP_AIR_KJ_PER_KG_K = 1.006
"""Specific heat of dry air at constant pressure, kJ/(kg·K)."""

CP_WATER_KJ_PER_KG_K = 4.186
"""Specific heat of liquid water, kJ/(kg·K)."""

AIR_DENSITY_KG_PER_M3 = 1.2
"""Density of air at about 20 °C and sea level, kg/m³."""

KW_PER_TON_REFRIGERATION = 3.517
"""One ton of refrigeration in kW (thermal)."""
