"""Plant v2's default sizing (``PlantV2Config.default``) worked by hand from its docstring, the per-zone airflow
checks and the airflow uncertainty's ranges."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dcops.physics.constants import (
    AIR_DENSITY_KG_PER_M3,
    CP_AIR_KJ_PER_KG_K,
    CP_WATER_KJ_PER_KG_K,
    KW_PER_TON_REFRIGERATION,
)
from dcops.physics.v2.coil import design_ntu
from dcops.physics.v2.types import AirflowUncertainty, PlantV2Config, PlantV2Control, initial_state_v2


def test_the_default_plant_is_sized_as_its_docstring_says():
    """Four 250 kW zones: design cooling 1.1 × 1000 kW; two chillers of 0.6 of it at COP 5.5 (each rejects its
    capacity plus its power, Q·(1 + 1/COP)); chilled water for a 6 K rise, its pump 1.2 % of design cooling;
    condenser water 5.56 K range per chiller, pumps 1.5 % of rejection; tower fans 0.2 kW/ton of rejection;
    airflow 1.3 × the 12 K design flow, fans at 0.5 kPa and 60 % efficiency; the coil's UA from its design NTU
    (3 K approach, 12 K air drop, 6 K water rise) on the smaller capacity rate; the UPS at 1.25 × IT; zone mass
    20 kJ/K and envelope 0.002 kW/K per kW, the loop 35 kJ/K per kW."""
    c = PlantV2Config.default()
    design_cooling = 1100.0
    unit = 0.6 * design_cooling
    rejection = 2 * unit * (1 + 1 / 5.5)
    chw_flow = design_cooling / (CP_WATER_KJ_PER_KG_K * 6.0)
    airflow = 250.0 / (CP_AIR_KJ_PER_KG_K * 12.0)
    assert (c.chiller.reference_capacity_kw, c.chiller.rated_cop, c.n_chillers) == (pytest.approx(unit), 5.5, 2)
    assert c.chw_design_flow_kg_s == pytest.approx(chw_flow) and c.chw_pump_design_kw == pytest.approx(0.012 * 1100)
    assert c.cw_flow_per_chiller_kg_s == pytest.approx(unit * (1 + 1 / 5.5) / (CP_WATER_KJ_PER_KG_K * 5.56))
    assert c.cw_pump_per_chiller_kw == pytest.approx(0.015 * unit * (1 + 1 / 5.5))
    assert c.tower.design_rejection_kw == pytest.approx(rejection)
    assert c.tower.design_fan_kw == pytest.approx(0.2 * rejection / KW_PER_TON_REFRIGERATION)
    np.testing.assert_allclose(c.crah_max_airflow_kg_s, 1.3 * airflow)
    np.testing.assert_allclose(c.crah_fan_max_kw, 1.3 * airflow / AIR_DENSITY_KG_PER_M3 * 0.5 / 0.6)
    ntu, _ = design_ntu(12.0, 3.0, 6.0)
    water_cap = chw_flow * CP_WATER_KJ_PER_KG_K / 4
    np.testing.assert_allclose(c.coil_water_capacity_design_kw_per_k, water_cap)
    np.testing.assert_allclose(c.coil_ua_design_kw_per_k, ntu * min(airflow * CP_AIR_KJ_PER_KG_K, water_cap))
    assert c.ups_rated_kw == pytest.approx(1250.0) and c.loop_thermal_mass_kj_per_k == pytest.approx(35_000.0)
    np.testing.assert_allclose(c.zone_thermal_mass_kj_per_k, 5000.0)
    np.testing.assert_allclose(c.zone_envelope_ua_kw_per_k, 0.5)
    assert not c.tank.installed


def test_sizing_follows_its_arguments():
    """Unequal zones, other ratios: each figure moves as the docstring's rule says."""
    c = PlantV2Config.default(zone_design_it_kw=[100.0, 300.0], n_zones=2, rated_cop=6.5, coil_design_approach_k=2.0,
                              chw_design_delta_t_k=7.0, storage_minutes=30.0)
    design_cooling = 1.1 * 400.0
    chw_flow = design_cooling / (CP_WATER_KJ_PER_KG_K * 7.0)
    assert c.chiller.rated_cop == 6.5 and c.chw_design_flow_kg_s == pytest.approx(chw_flow)
    water_cap = chw_flow * CP_WATER_KJ_PER_KG_K * np.array([100.0, 300.0]) / 400.0
    np.testing.assert_allclose(c.coil_water_capacity_design_kw_per_k, water_cap)
    ntu, _ = design_ntu(12.0, 2.0, 7.0)
    air_cap = np.array([100.0, 300.0]) / 12.0
    np.testing.assert_allclose(c.coil_ua_design_kw_per_k, ntu * np.minimum(air_cap, water_cap))
    assert c.tank.installed and c.tank.design_capacity_kwh == pytest.approx(design_cooling * 0.5, rel=1e-9)
    single = PlantV2Config.default(zone_design_it_kw=[180.0], n_zones=3)
    np.testing.assert_allclose(single.zone_design_it_kw, [180.0, 180.0, 180.0])  # one value serves every zone


@pytest.mark.parametrize("storage_minutes", [0.0, -1.0])
def test_no_storage_minutes_no_tank(storage_minutes):
    assert not PlantV2Config.default(storage_minutes=storage_minutes).tank.installed


@pytest.mark.parametrize(("field", "values"), [
    ("zone_bypass_fraction", [0.0, 0.1, 1.0, 0.0]), ("zone_bypass_fraction", [0.0, -0.1, 0.0, 0.0]),
    ("zone_bypass_fraction", [0.0, 1.5, 0.0, 0.0]),
    ("zone_min_recirculation", [0.1, 0.1, 0.1]), ("zone_min_recirculation", [0.1, 0.1, 0.1, 0.1, 0.1]),
])
def test_per_zone_airflow_fractions_must_be_one_per_zone_in_zero_to_one(field, values):
    with pytest.raises(ValueError, match=field):
        PlantV2Config.default(**{field: values})
    PlantV2Config.default(**{field: [0.0, 0.5, 0.99, 0.0]})


@pytest.mark.parametrize("ranges", [
    {"bypass_range": (0.2, 0.1)}, {"bypass_range": (-0.1, 0.1)}, {"bypass_range": (0.1, 1.0)},
    {"bypass_range": (0.1, 1.5)},
    {"recirculation_range": (0.5, 0.4)},
])
def test_airflow_uncertainty_ranges_are_ordered_within_zero_and_one(ranges):
    with pytest.raises(ValueError, match="AirflowUncertainty"):
        AirflowUncertainty(**ranges)
    AirflowUncertainty(bypass_range=(0.0, 0.0), recirculation_range=(0.1, 0.99))


def test_an_initial_state_has_not_staged_yet_and_a_full_tank():
    state = initial_state_v2(PlantV2Config.default(storage_minutes=30.0), chw_supply_c=9.0)
    assert float(state.last_stage_direction) == 0.0 and float(state.tank_temp_c) == 9.0
    assert float(state.cw_supply_c) == 25.0 and float(state.chillers_on) == 2.0  # every chiller staged
    assert float(state.stage_timer_s) >= 1e9 and math.isfinite(float(state.stage_timer_s))


def test_a_coil_limited_by_its_water_takes_that_side_of_the_ua():
    """A 20 K chilled-water rise (10 K coil approach): each zone's water capacity rate is below its air's, so
    the design UA is NTU times the water side's share: C_w · design / total."""
    c = PlantV2Config.default(zone_design_it_kw=[100.0, 300.0], n_zones=2, chw_design_delta_t_k=20.0,
                              coil_design_approach_k=10.0)
    chw_flow = 1.1 * 400.0 / (CP_WATER_KJ_PER_KG_K * 20.0)
    water_cap = chw_flow * CP_WATER_KJ_PER_KG_K * np.array([100.0, 300.0]) / 400.0
    air_cap = np.array([100.0, 300.0]) / 12.0
    assert np.all(water_cap < air_cap)
    ntu, _ = design_ntu(12.0, 10.0, 20.0)
    np.testing.assert_allclose(c.coil_ua_design_kw_per_k, ntu * water_cap)


@pytest.mark.parametrize(("kwargs", "ok"), [
    ({"n_chillers": 0}, False), ({"n_chillers": 1}, True), ({"zone_design_it_kw": [0.0, 100.0], "n_zones": 2}, False),
    ({"zone_design_it_kw": [-0.5, 100.0], "n_zones": 2}, False), ({"zone_design_it_kw": [0.5, 100.0], "n_zones": 2}, True),
])
def test_a_plant_needs_positive_zones_and_a_chiller(kwargs, ok):
    if ok:
        PlantV2Config.default(**kwargs)
    else:
        with pytest.raises(ValueError, match="zone_design_it_kw must be positive and n_chillers at least 1"):
            PlantV2Config.default(**kwargs)


def test_the_hall_constants_are_the_documented_ones():
    c = PlantV2Config.default()
    assert (c.min_run_s, c.min_off_s) == (30 * 60.0, 15 * 60.0)  # the anti-cycling timers
    assert (c.server_delta_t_k, c.min_recirculation, c.pump_min_speed, c.hx_approach_k) == (12.0, 0.02, 0.3, 1.5)
    assert AirflowUncertainty() == AirflowUncertainty(bypass_range=(0.0, 0.2), recirculation_range=(0.02, 0.08))


def test_zones_need_at_least_one_design_load():
    with pytest.raises(ValueError, match="zone_design_it_kw must give at least one zone"):
        PlantV2Config.default(zone_design_it_kw=[])


def test_hotter_servers_need_less_air_and_a_coil_sized_for_their_air_drop():
    """A 10 K server rise: 12/10 of the air of the 12 K hall, and the coil's design NTU for a 10 K air drop."""
    c = PlantV2Config.default(server_delta_t_k=10.0)
    airflow = 250.0 / (CP_AIR_KJ_PER_KG_K * 10.0)
    np.testing.assert_allclose(c.crah_max_airflow_kg_s, 1.3 * airflow)
    ntu, _ = design_ntu(10.0, 3.0, 6.0)
    np.testing.assert_allclose(c.coil_ua_design_kw_per_k,
                               ntu * np.minimum(airflow * CP_AIR_KJ_PER_KG_K, c.coil_water_capacity_design_kw_per_k))


def test_the_storage_pump_is_priced_like_the_chilled_water_pump():
    """The docstring: the tank's pump costs what the loop's pump costs per kg/s of water moved."""
    c = PlantV2Config.default(storage_minutes=45.0)
    per_kg_s = c.chw_pump_design_kw / c.chw_design_flow_kg_s  # 0.012 × 1100 kW over the 6 K design flow
    assert c.tank.pump_kw == pytest.approx(per_kg_s * c.tank.max_flow_kg_s, rel=1e-12)
    assert per_kg_s == pytest.approx(0.012 * CP_WATER_KJ_PER_KG_K * 6.0, rel=1e-12)


def test_the_default_initial_state_is_the_documented_warm_hall():
    state = initial_state_v2(PlantV2Config.default(n_zones=3))
    np.testing.assert_array_equal(state.zone_temp_c, [30.0, 30.0, 30.0])
    assert (float(state.chw_supply_c), float(state.cw_supply_c), float(state.tank_temp_c)) == (10.0, 25.0, 10.0)


def test_a_state_copy_shares_no_array_with_its_original():
    state = initial_state_v2(PlantV2Config.default(storage_minutes=30.0), batch_shape=(2,))
    copy = state.copy()
    for name in vars(state):
        getattr(copy, name)[...] = -1.0
        assert not np.any(getattr(state, name) == -1.0), name  # the original is untouched


def test_configs_uncertainties_and_controls_are_immutable():
    """A config is shared by every environment built from it (and by a vector's copies): changing one in place
    would change them all, so only ``with_`` (a new config) may change it. A control is the record of what was
    asked for in a step, so it too stays as it was built."""
    import dataclasses

    config = PlantV2Config.default()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.n_chillers = 3  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        AirflowUncertainty().bypass_range = (0.0, 0.5)  # type: ignore[misc]
    control = PlantV2Control(*(np.float64(0.5) for _ in dataclasses.fields(PlantV2Control)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        control.fan_speed = np.float64(1.0)  # type: ignore[misc]
    assert config.with_(n_chillers=3).n_chillers == 3 and config.n_chillers == 2


def test_a_config_built_field_by_field_stages_as_many_chillers_as_the_default():
    """The class's field defaults and ``default()``'s arguments agree: a config built from every sized field but
    ``n_chillers`` has the chillers ``default()`` sizes for."""
    import dataclasses

    sized = PlantV2Config.default()
    direct = PlantV2Config(**{f.name: getattr(sized, f.name) for f in dataclasses.fields(sized)
                              if f.name != "n_chillers"})
    assert direct.n_chillers == sized.n_chillers
