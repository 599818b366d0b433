"""Plant v2's chilled-water storage tank: the EnergyPlus mixed-tank relaxation, ASHRAE's standing losses, and
what charging and discharging do to the plant."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dcops.physics.constants import CP_WATER_KJ_PER_KG_K
from dcops.physics.plant_types import PlantBoundary
from dcops.physics.v2.plant import step_plant_v2
from dcops.physics.v2.storage import ChilledWaterTank
from dcops.physics.v2.types import PlantV2Config, PlantV2Control, initial_state_v2

Z = 4


def control(tank: float, chw: float = 8.0, staged: float = 2.0, fan: float = 0.8) -> PlantV2Control:
    return PlantV2Control(np.full(Z, fan), np.full(Z, 18.0), np.float64(chw), np.float64(0.0), np.float64(1.0),
                          np.float64(staged), np.float64(1.0), np.float64(tank))


def boundary(load: float = 0.3, chillers=(1.0, 1.0), dry: float = 30.0) -> PlantBoundary:
    return PlantBoundary(np.full(Z, load * 250.0), np.float64(dry), np.float64(dry - 6.0), np.array(chillers, float),
                         np.ones(Z))


def test_a_charge_follows_the_mixed_tanks_exponential_toward_the_chilled_water():
    """EnergyPlus ThermalStorage:ChilledWater:Mixed with ample chiller capacity and no shell loss: the tank relaxes
    as T(t) = T_chw + (T0 − T_chw)·exp(−ε·m·c_p·t / C_t)."""
    tank = ChilledWaterTank(volume_m3=40.0, max_flow_kg_s=20.0, effectiveness=0.9, shell_u_w_per_m2_k=0.0)
    config = PlantV2Config.default(tank=tank)
    state = initial_state_v2(config, zone_temp_c=24.0, chw_supply_c=8.0, tank_temp_c=16.0)
    rate = 0.9 * 20.0 * 0.5 * CP_WATER_KJ_PER_KG_K / tank.capacity_kj_per_k  # half flow
    for step in range(1, 13):
        state, out = step_plant_v2(config, state, control(tank=0.5), boundary(), 300.0)
        expected = 8.0 + 8.0 * math.exp(-rate * 300.0 * step)
        assert float(state.tank_temp_c) == pytest.approx(expected, rel=1e-9)
        assert float(out.tank_charge_kw) > 0.0 and float(out.tank_discharge_kw) == 0.0


@pytest.mark.parametrize("volume_m3", [20.0, 60.0, 200.0, 600.0])
def test_standing_losses_are_within_ashraes_one_to_five_percent_a_day(volume_m3):
    """An idle tank 20 K below the air loses 1–5 % of its 8 K design charge a day (ASHRAE Handbook, HVAC
    Applications, Thermal Storage); larger tanks lose less (surface over volume)."""
    tank = ChilledWaterTank(volume_m3=volume_m3, max_flow_kg_s=10.0)
    config = PlantV2Config.default(tank=tank)
    state = initial_state_v2(config, zone_temp_c=24.0, chw_supply_c=8.0, tank_temp_c=6.0)
    for _ in range(24):
        state, _ = step_plant_v2(config, state, control(tank=0.0), boundary(dry=26.0), 3600.0)
    lost = (float(state.tank_temp_c) - 6.0) / 8.0
    assert 0.01 <= lost <= 0.05


def test_discharge_carries_the_hall_through_a_total_chiller_trip():
    """With every chiller tripped, a charged tank discharging into the return keeps the loop colder than the same
    plant without discharge, and the heat it took equals C_t·ΔT_tank (no shell loss)."""
    tank = ChilledWaterTank(volume_m3=60.0, max_flow_kg_s=33.0, shell_u_w_per_m2_k=0.0)
    config = PlantV2Config.default(tank=tank)
    results = {}
    for flow in (0.0, -1.0):
        state = initial_state_v2(config, zone_temp_c=24.0, chw_supply_c=8.0, tank_temp_c=6.0)
        taken = 0.0
        for _ in range(6):
            state, out = step_plant_v2(config, state, control(tank=flow), boundary(load=0.8, chillers=(0.0, 0.0)),
                                       300.0)
            taken += float(out.tank_discharge_kw) * 300.0
        results[flow] = (float(state.chw_supply_c), float(state.tank_temp_c), taken)
    assert results[-1.0][0] < results[0.0][0] - 3.0
    assert results[-1.0][2] == pytest.approx((results[-1.0][1] - 6.0) * tank.capacity_kj_per_k, rel=1e-9)
    assert results[0.0][1] == 6.0


def test_charging_is_work_for_the_chillers_served_after_the_loop():
    """A charge adds its heat to what the chillers remove (so it costs compressor power), and a plant short of
    capacity serves the loop first: the tank then charges with what is left."""
    config = PlantV2Config.default(storage_minutes=60.0)
    state = initial_state_v2(config, zone_temp_c=24.0, chw_supply_c=8.0, tank_temp_c=16.0)
    _, idle = step_plant_v2(config, state, control(tank=0.0), boundary(), 300.0)
    _, charging = step_plant_v2(config, state, control(tank=0.3), boundary(), 300.0)
    assert float(charging.chiller_load_kw) < float(charging.chiller_capacity_kw)
    extra = float(charging.tank_charge_kw) + float(charging.tank_pump_kw)  # the tank pump's heat is in the loop
    assert float(charging.chiller_load_kw) == pytest.approx(float(idle.chiller_load_kw) + extra, rel=1e-9)
    assert float(charging.chiller_kw) > float(idle.chiller_kw)
    # One small unit at a heavy load: the loop takes the capacity and the charge gets the rest, if any.
    _, short = step_plant_v2(config, state, control(tank=0.3, staged=1.0), boundary(load=0.95, chillers=(1.0, 0.0)),
                             300.0)
    assert float(short.chiller_load_kw) == pytest.approx(float(short.chiller_capacity_kw))
    assert float(short.tank_charge_kw) == 0.0  # the loop alone needs more than one unit makes


def test_charging_a_tank_colder_than_the_chilled_water_takes_no_heat():
    """Module docstring: a charge only cools the tank when the chilled water is colder than it. A 6 °C tank charged
    with 10 °C water gains nothing from the charge (only its shell's heat), and the plant removes the loop's own need
    alone: the loop ends the step exactly at its set-point."""
    config = PlantV2Config.default(storage_minutes=60.0)
    state = initial_state_v2(config, zone_temp_c=25.0, chw_supply_c=10.0, tank_temp_c=6.0)
    new, out = step_plant_v2(config, state, control(tank=0.5, chw=10.0), boundary(load=0.5), 300.0)
    assert float(out.tank_charge_kw) == 0.0 and float(out.chiller_load_kw) < float(out.chiller_capacity_kw)
    assert float(new.chw_supply_c) == pytest.approx(10.0, abs=1e-9)
    shell = config.tank.shell_ua_kw_per_k * (30.0 - 6.0) * 300.0 / config.tank.capacity_kj_per_k
    assert float(new.tank_temp_c) == pytest.approx(6.0 + shell, rel=1e-9)


def test_a_sized_tank_stores_its_minutes_of_design_cooling():
    tank = ChilledWaterTank.sized(1100.0, 30.0, pump_kw_per_kg_s=0.3)
    assert tank.design_capacity_kwh == pytest.approx(550.0, rel=1e-12)
    assert tank.max_flow_kg_s * CP_WATER_KJ_PER_KG_K * 8.0 == pytest.approx(1100.0, rel=1e-12)
    assert not ChilledWaterTank.sized(1100.0, 0.0, 0.3).installed


@pytest.mark.parametrize(("field", "value"), [("volume_m3", -1.0), ("max_flow_kg_s", math.nan),
                                              ("effectiveness", 0.0), ("shell_u_w_per_m2_k", math.inf)])
def test_bad_tank_parameters_name_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        ChilledWaterTank(**{"volume_m3": 10.0, "max_flow_kg_s": 5.0, field: value})


def test_a_tanks_capacity_and_shell_are_the_documented_formulas_by_hand():
    """50 m³: C_t = 1000 kg/m³ · 50 m³ · 4.186 kJ/kg·K; a cylinder with height = diameter, d = (4·50/π)^(1/3), has
    1.5·π·d² of shell, at 0.3 W/m²·K; the 8 K design charge stores C_t · 8 / 3600 kWh."""
    tank = ChilledWaterTank(volume_m3=50.0, max_flow_kg_s=10.0)
    assert tank.capacity_kj_per_k == pytest.approx(1000.0 * 50.0 * 4.186, rel=1e-12)
    d = (200.0 / math.pi) ** (1.0 / 3.0)
    assert tank.shell_ua_kw_per_k == pytest.approx(0.3 * 1.5 * math.pi * d * d / 1000.0, rel=1e-12)
    assert tank.design_capacity_kwh == pytest.approx(1000.0 * 50.0 * 4.186 * 8.0 / 3600.0, rel=1e-12)


def test_the_default_tank_is_no_tank_with_no_pump():
    none = ChilledWaterTank()
    assert not none.installed and none.shell_ua_kw_per_k == 0.0 and none.capacity_kj_per_k == 0.0
    assert (none.volume_m3, none.max_flow_kg_s, none.pump_kw) == (0.0, 0.0, 0.0)
    with pytest.raises(AttributeError):
        none.volume_m3 = 10.0  # type: ignore[misc]  # frozen: one config is shared by every episode


@pytest.mark.parametrize(("volume", "flow", "installed"), [
    (10.0, 5.0, True), (10.0, 0.5, True), (0.0, 5.0, False), (10.0, 0.0, False), (0.0, 0.0, False),
])
def test_a_tank_is_installed_only_with_water_and_flow(volume, flow, installed):
    assert ChilledWaterTank(volume_m3=volume, max_flow_kg_s=flow).installed is installed


def test_a_sized_tanks_pump_is_priced_per_kg_s_of_its_flow():
    tank = ChilledWaterTank.sized(1100.0, 30.0, pump_kw_per_kg_s=0.3)
    flow = 1100.0 / (4.186 * 8.0)
    assert tank.max_flow_kg_s == pytest.approx(flow, rel=1e-12) and tank.pump_kw == pytest.approx(0.3 * flow, rel=1e-12)
    assert tank.volume_m3 == pytest.approx(1100.0 * 30.0 * 60.0 / (1000.0 * 4.186 * 8.0), rel=1e-12)
    assert ChilledWaterTank.sized(1100.0, 0.5, 0.3).installed  # half a minute is still a tank


@pytest.mark.parametrize("minutes", [0.0, -5.0])
def test_a_tank_sized_for_no_minutes_is_no_tank(minutes):
    assert ChilledWaterTank.sized(1100.0, minutes, 0.3) == ChilledWaterTank()


@pytest.mark.parametrize("effectiveness", [-0.5, 1.5])
def test_a_tank_effectiveness_outside_zero_to_one_is_refused(effectiveness):
    with pytest.raises(ValueError, match="effectiveness"):
        ChilledWaterTank(volume_m3=10.0, max_flow_kg_s=5.0, effectiveness=effectiveness)
    ChilledWaterTank(volume_m3=10.0, max_flow_kg_s=5.0, effectiveness=1.0)


def test_a_small_tank_still_has_a_shell():
    tank = ChilledWaterTank(volume_m3=0.5, max_flow_kg_s=1.0)
    d = (2.0 / math.pi) ** (1.0 / 3.0)
    assert tank.shell_ua_kw_per_k == pytest.approx(0.3 * 1.5 * math.pi * d * d / 1000.0, rel=1e-12)
