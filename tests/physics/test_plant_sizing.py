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


def test_zones_need_at_least_one_design_load():
    with pytest.raises(ValueError, match="zone_design_it_kw must give at least one zone"):
        PlantConfig.default(zone_design_it_kw=[])


def test_the_crahs_are_sized_on_the_servers_air_temperature_rise():
    """A hall of 10 K servers needs 12/10 of the air of a hall of 12 K servers."""
    warm, hot = PlantConfig.default(), PlantConfig.default(server_delta_t_k=10.0)
    assert (warm.server_delta_t_k, hot.server_delta_t_k) == (12.0, 10.0)
    np.testing.assert_allclose(hot.crah_max_airflow_kg_s, 1.3 * 250.0 / (CP_AIR_KJ_PER_KG_K * 10.0))
    np.testing.assert_allclose(hot.crah_max_airflow_kg_s, warm.crah_max_airflow_kg_s * 1.2)


def _one_step(config: PlantConfig, fan_speed: float, it_fraction: float, zone_c: float = 27.0):
    from dcops.physics.plant import step_plant
    from dcops.physics.plant_types import PlantBoundary, PlantControl

    z = config.n_zones
    control = PlantControl(np.full(z, fan_speed), np.full(z, 18.0), np.asarray(8.0), np.asarray(0.0))
    boundary = PlantBoundary(it_fraction * config.zone_design_it_kw, np.asarray(30.0), np.asarray(22.0),
                             np.ones(config.n_chillers), np.ones(z))
    return step_plant(config, initial_state(config, zone_c, 9.0), control, boundary, 60.0)


def test_recirculation_is_the_share_of_server_air_the_crahs_do_not_supply():
    """README: servers draw m_IT = Q_IT / (cp·ΔT_server), ΔT_server = 12 K; short of it, the rest is hot air:
    r = 1 − m/m_IT, floored at the 2 % minimum."""
    config = PlantConfig.default()
    _, out = _one_step(config, fan_speed=0.4, it_fraction=1.0)
    demanded = 250.0 / (CP_AIR_KJ_PER_KG_K * 12.0)
    np.testing.assert_allclose(out.recirculation, 1.0 - out.airflow_kg_s / demanded, rtol=1e-12)
    assert np.all(out.recirculation > 0.3)  # 0.4 × 1.3 of the design flow: 48 % short
    _, ample = _one_step(config, fan_speed=1.0, it_fraction=1.0)
    np.testing.assert_allclose(ample.recirculation, 0.02)


def test_the_chilled_water_returns_six_kelvin_warmer_at_design_flow():
    """The return is the supply plus 6 K × load/flow, the flow held at or above the pumps' 30 % minimum."""
    config = PlantConfig.default()
    for it_fraction, fan_speed, zone_c in ((1.0, 1.0, 27.0), (0.1, 0.2, 19.0)):
        _, out = _one_step(config, fan_speed, it_fraction, zone_c)
        load = float(np.sum(out.coil_kw)) / config.design_cooling_kw
        flow = max(load, 0.3)
        assert float(out.chw_return_c) == pytest.approx(9.0 + 6.0 * load / flow, rel=1e-12)
    assert flow == 0.3  # the low load ran below the pumps' minimum speed


def test_the_plant_types_are_frozen():
    """A config, a control and a boundary are shared between steps and batches: none can be changed in place."""
    from dataclasses import FrozenInstanceError

    from dcops.physics.plant_types import PlantBoundary, PlantControl

    config = PlantConfig.default()
    control = PlantControl(np.ones(4), np.full(4, 20.0), np.asarray(8.0), np.asarray(0.0))
    boundary = PlantBoundary(np.ones(4), np.asarray(20.0), np.asarray(15.0), np.ones(2), np.ones(4))
    for value, name in ((config, "n_chillers"), (control, "chw_setpoint_c"), (boundary, "it_kw")):
        with pytest.raises(FrozenInstanceError):
            setattr(value, name, None)
