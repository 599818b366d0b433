"""The physics package's constants against independent references: psychrolib's dry-air enthalpy (ASHRAE
Fundamentals), the ideal-gas density of dry air, water's specific heat at the plant's water temperatures and the
ton of refrigeration from its definition (12,000 Btu/h)."""

from __future__ import annotations

import psychrolib
import pytest
import scipy.constants as sc

from dcops.physics.constants import (
    AIR_DENSITY_KG_PER_M3,
    CP_AIR_KJ_PER_KG_K,
    CP_WATER_KJ_PER_KG_K,
    KW_PER_TON_REFRIGERATION,
)

DRY_AIR_MOLAR_MASS_KG_PER_MOL = 0.0289647
"""ASHRAE Fundamentals (2017), ch. 1: molar mass of dry air."""


def test_the_specific_heat_of_air_is_ashraes():
    psychrolib.SetUnitSystem(psychrolib.SI)
    # h_da = 1.006 · t kJ/kg (ASHRAE Fundamentals 2017, ch. 1, eq. 28): psychrolib returns J/kg
    assert CP_AIR_KJ_PER_KG_K == pytest.approx(psychrolib.GetDryAirEnthalpy(1.0) / 1000.0, rel=1e-12)


def test_the_density_of_air_is_dry_air_at_20_c_and_sea_level():
    rho = sc.atm / (sc.R / DRY_AIR_MOLAR_MASS_KG_PER_MOL * (sc.zero_Celsius + 20.0))  # 1.204 kg/m³
    assert AIR_DENSITY_KG_PER_M3 == pytest.approx(rho, rel=0.005)


def test_the_specific_heat_of_water_is_liquid_water_near_room_temperature():
    # CRC Handbook: c_p = 4.1921 kJ/(kg·K) at 10 °C, 4.1818 at 20 °C, 4.1784 at 30 °C (chilled to condenser water)
    assert 4.178 <= CP_WATER_KJ_PER_KG_K <= 4.193


def test_a_ton_of_refrigeration_is_12000_btu_an_hour():
    assert KW_PER_TON_REFRIGERATION == pytest.approx(12_000.0 * sc.Btu / sc.hour / 1000.0, abs=5e-4)
