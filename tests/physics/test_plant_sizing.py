"""Plant v0's default sizing (``PlantConfig.default``) worked by hand from its docstring and engineering ratios,
the legacy plant, the design rejection and the initial state."""

from __future__ import annotations

import numpy as np
import pytest

from dcops.physics.constants import AIR_DENSITY_KG_PER_M3, CP_AIR_KJ_PER_KG_K, KW_PER_TON_REFRIGERATION
from dcops.physics.plant_types import PlantConfig, initial_state


def test_the_default_plant_is_sized_from_its_zones():
    """Four 250 kW zones: design cooling 1.1 × 1000 kW; two centrifugal chillers (DOE-2 COP 5.50) of 60 % of it;
    rejection = cooling · (1 + 1/COP); tower fans 0.2 kW/ton of rejection, chilled-water pump 1.2 % of cooling,
    condenser pump 1.5 % of rejection, UPS 1.25 × IT; airflow 1.3 × the 12 K design flow at 0.5 kPa and 60 %;
    zone mass 20 kJ/K and envelope 0.002 kW/K per kW, the loop 35 kJ/K per kW."""
    c = PlantConfig.default()
    rejection = 1100.0 * (1 + 1 / 5.5)
    airflow = 250.0 / (CP_AIR_KJ_PER_KG_K * 12.0)
    assert c.design_cooling_kw == pytest.approx(1100.0) and c.chiller_curves.reference_cop == 5.5
    assert (c.n_chillers, c.chiller_reference_capacity_kw) == (2, pytest.approx(660.0))
    assert c.design_rejection_kw == pytest.approx(rejection)
    assert c.tower_fan_design_kw == pytest.approx(0.2 * rejection / KW_PER_TON_REFRIGERATION)
    assert c.chw_pump_design_kw == pytest.approx(13.2) and c.cw_pump_design_kw == pytest.approx(0.015 * rejection)
    assert c.ups_rated_kw == pytest.approx(1250.0) and c.loop_thermal_mass_kj_per_k == pytest.approx(35_000.0)
    np.testing.assert_allclose(c.crah_max_airflow_kg_s, 1.3 * airflow)
    np.testing.assert_allclose(c.crah_fan_max_kw, 1.3 * airflow / AIR_DENSITY_KG_PER_M3 * 0.5 / 0.6)
    np.testing.assert_allclose(c.zone_thermal_mass_kj_per_k, 5000.0)
    np.testing.assert_allclose(c.zone_envelope_ua_kw_per_k, 0.5)
    assert c.economiser_installed and c.coil_approach_k == 3.0


def test_the_legacy_plant_and_other_arguments():
    legacy = PlantConfig.legacy()
    assert legacy.chiller_curves.reference_cop == 3.67 and not legacy.economiser_installed
    assert legacy.design_rejection_kw == pytest.approx(1100.0 * (1 + 1 / 3.67))
    c = PlantConfig.default(zone_design_it_kw=[100.0, 300.0], thermal_mass_kj_per_k_per_kw=10.0,
                            loop_mass_kj_per_k_per_kw=20.0, chiller_capacity_fraction=0.4, n_chillers=3)
    np.testing.assert_allclose(c.zone_thermal_mass_kj_per_k, [1000.0, 3000.0])
    assert c.loop_thermal_mass_kj_per_k == pytest.approx(8000.0) and c.chiller_reference_capacity_kw == pytest.approx(176.0)
    np.testing.assert_allclose(PlantConfig.default(zone_design_it_kw=[200.0], n_zones=3).zone_design_it_kw, 200.0)


@pytest.mark.parametrize("design", [[0.0, 100.0], [-1.0, 100.0], [-0.5]])
def test_zones_need_a_positive_design_load(design):
    with pytest.raises(ValueError, match="zone_design_it_kw must be positive"):
        PlantConfig.default(zone_design_it_kw=design)
    PlantConfig.default(zone_design_it_kw=[0.5, 100.0])


def test_the_initial_state_defaults():
    state = initial_state(PlantConfig.default())
    np.testing.assert_array_equal(state.zone_temp_c, 30.0)
    assert float(state.chw_supply_c) == 10.0
