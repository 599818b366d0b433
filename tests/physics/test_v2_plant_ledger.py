"""Plant v2's outputs add up as its module docstring says: every power term, the economiser's share, the pumps
and fans by their laws, the staging timer, and batches of any shape. Each check is the documented equation
evaluated on the step's own outputs and the config's nameplate, so a term dropped, mis-signed or mis-scaled in
the plant shows here even where the energy balance (heat, not power) cannot see it."""

from __future__ import annotations

import numpy as np
import pytest

from dcops.physics.auxiliaries import ancillary_kw, distribution_loss_kw, ups_loss_kw
from dcops.physics.constants import CP_AIR_KJ_PER_KG_K, CP_WATER_KJ_PER_KG_K
from dcops.physics.plant_types import PlantBoundary
from dcops.physics.v2.backend import ARRAYS, FLOATS
from dcops.physics.v2.coil import coil_supply_floor_c
from dcops.physics.v2.plant import step_plant_v2
from dcops.physics.v2.servers import server_power_multiplier
from dcops.physics.v2.tower import approach_at_range, tower_polynomial
from dcops.physics.v2.types import PlantV2Config, PlantV2Control, initial_state_v2

CONFIG = PlantV2Config.default()
STORAGE = PlantV2Config.default(storage_minutes=60.0)
FOUR = PlantV2Config.default(n_chillers=4, chiller_capacity_fraction=0.3)
"""Four small chillers: one running gives the tower a quarter of its design water, so its L/G is low enough for
the YorkCalc correlation to go below zero at a light load (the approach is then held at 0)."""
Z = CONFIG.n_zones
DT = 300.0


def control(fan=0.8, supply=20.0, chw=10.0, econ=1.0, tower=0.7, staged=2.0, pump=0.8, tank=0.0) -> PlantV2Control:
    fan = np.broadcast_to(np.asarray(fan, dtype=np.float64), (Z,)).copy()
    return PlantV2Control(fan, np.full(Z, supply), np.float64(chw), np.float64(econ), np.float64(tower),
                          np.float64(staged), np.float64(pump), np.float64(tank))


def boundary(load=0.8, dry=25.0, wet=18.0, chillers=(1.0, 1.0), alive=1.0) -> PlantBoundary:
    return PlantBoundary(np.full(Z, load * 250.0), np.float64(dry), np.float64(wet), np.array(chillers, float),
                         np.full(Z, alive))


CASES = {
    "summer, chillers": (CONFIG, control(econ=0.0), boundary(dry=32.0, wet=24.0)),
    "mild, economiser and chillers": (CONFIG, control(chw=12.0, tower=1.0), boundary(dry=13.0, wet=9.0)),
    "winter, economiser alone": (CONFIG, control(staged=0.0, tower=0.5), boundary(dry=-5.0, wet=-7.0)),
    "half the fan units alive": (CONFIG, control(fan=[0.3, 0.6, 0.9, 1.0]), boundary(alive=0.5)),
    "tank discharging": (STORAGE, control(tank=-0.6, econ=0.0), boundary(dry=30.0, wet=22.0)),
    "tank charging": (STORAGE, control(tank=0.8, econ=0.0, chw=8.0), boundary(load=0.4, dry=20.0, wet=14.0)),
    "no IT load": (CONFIG, control(), boundary(load=0.0)),
    "plant off, tower fan set": (CONFIG, control(econ=0.0, staged=0.0, tower=0.6), boundary(load=0.1)),
    "winter, economiser off": (CONFIG, control(econ=0.0), boundary(dry=-5.0, wet=-7.0)),
    "economiser at exactly 0.5 (off)": (CONFIG, control(econ=0.5), boundary(dry=-5.0, wet=-7.0)),
    "four small units, light load": (FOUR, control(staged=1.0, econ=0.0, tower=1.0),
                                     boundary(load=0.03, dry=18.0, wet=15.0, chillers=(1.0,) * 4)),
}


def _batched(value, shape=(1,)):
    """A dataclass of plant inputs repeated over a batch of ``shape`` (every field gains those leading axes)."""
    return type(value)(*(np.broadcast_to(np.asarray(getattr(value, k)), (*shape, *np.shape(getattr(value, k)))).copy()
                         for k in value.__dataclass_fields__))


def _step(config, ctl, bnd, steps=4, **state):
    s = initial_state_v2(config, zone_temp_c=state.pop("zone_temp_c", 27.0),
                         chw_supply_c=state.pop("chw_supply_c", float(ctl.chw_setpoint_c)), **state)
    for _ in range(steps):
        s, out = step_plant_v2(config, s, ctl, bnd, DT)
        # the next state carries the step's new temperatures and staging
        assert float(s.cw_supply_c) == float(out.cw_supply_c) and float(s.chw_supply_c) == float(out.chw_supply_c)
        assert float(s.chillers_on) == float(out.chillers_on) and float(s.tank_temp_c) == float(out.tank_temp_c)
        np.testing.assert_array_equal(s.zone_temp_c, out.return_air_c)
    return s, out


@pytest.mark.parametrize("case", list(CASES))
def test_every_power_term_adds_up_as_documented(case):
    config, ctl, bnd = CASES[case]
    _, out = _step(config, ctl, bnd)
    f = {name: np.asarray(getattr(out, name), dtype=np.float64) for name in out._fields}
    # fans: m = m_max·a·s, P = P_max·a·s³ (a: the share of the zone's fan units alive)
    s, alive = np.clip(ctl.fan_speed, 0.0, 1.0), bnd.fan_units_alive
    np.testing.assert_allclose(f["airflow_kg_s"], config.crah_max_airflow_kg_s * alive * s, rtol=1e-12)
    np.testing.assert_allclose(f["fan_kw"], config.crah_fan_max_kw * alive * s ** 3, rtol=1e-12)
    # pumps by the affinity law; the condenser pumps one per chiller running, or one for the economiser alone
    pump = np.clip(float(ctl.chw_pump_speed), config.pump_min_speed, 1.0)
    assert float(f["chw_pump_kw"]) == pytest.approx(config.chw_pump_design_kw * pump ** 3, rel=1e-12)
    cw_units = max(float(f["chillers_on"]), 1.0 if float(f["economiser_kw"]) > 0.0 else 0.0)
    assert float(f["cw_pump_kw"]) == pytest.approx(config.cw_pump_per_chiller_kw * cw_units, rel=1e-12, abs=1e-12)
    tower_speed = float(np.clip(ctl.tower_fan_speed, 0.0, 1.0))
    assert float(f["tower_kw"]) == pytest.approx(config.tower.design_fan_kw * tower_speed ** 3 * (cw_units > 0),
                                                 rel=1e-12, abs=1e-12)
    # the tower rejects the economiser's heat, the chillers' load and their compressors' power
    assert float(f["rejected_kw"]) == pytest.approx(
        float(f["economiser_kw"] + f["chiller_load_kw"] + f["chiller_kw"]), rel=1e-12, abs=1e-9)
    # cooling, electrical losses, facility and PUE
    cooling = f["fan_kw"].sum() + f["chw_pump_kw"] + f["tank_pump_kw"] + f["cw_pump_kw"] + f["tower_kw"] + f["chiller_kw"]
    assert float(f["cooling_kw"]) == pytest.approx(float(cooling), rel=1e-12)
    it = float(f["it_kw"])
    electrical = ups_loss_kw(np.float64(it), config.ups_rated_kw) + distribution_loss_kw(np.float64(it)) + ancillary_kw(
        config.design_it_kw)
    assert float(f["electrical_loss_kw"]) == pytest.approx(float(electrical), rel=1e-12)
    assert float(f["facility_kw"]) == pytest.approx(it + float(electrical) + float(cooling), rel=1e-12)
    assert float(f["pue"]) == (pytest.approx(float(f["facility_kw"]) / it, rel=1e-12) if it > 0 else 0.0)
    # the tower's approach at the range the rejected heat makes in the condenser water flowing (one unit's flow
    # at least)
    flowing = max(float(f["chillers_on"]), 1.0)
    polynomial = tower_polynomial(FLOATS, config.tower.design_water_flow_ratio, float(bnd.outdoor_wet_bulb_c),
                                  flowing / config.n_chillers, tower_speed)
    range_k = float(f["rejected_kw"]) / (flowing * config.cw_flow_per_chiller_kg_s * CP_WATER_KJ_PER_KG_K)
    approach = max(approach_at_range(FLOATS, polynomial, range_k), 0.0)
    assert float(f["tower_approach_k"]) == pytest.approx(approach, rel=1e-9, abs=1e-12)
    # the next condenser water is the wet-bulb plus that approach; capacity is the units running
    assert float(f["cw_supply_c"]) == pytest.approx(float(bnd.outdoor_wet_bulb_c) + approach, rel=1e-12)
    assert float(f["chiller_capacity_kw"]) == pytest.approx(
        config.chiller.reference_capacity_kw * float(f["chillers_on"]), rel=1e-12)
    # the tank's pump (cube law in |tank_flow|), only where a tank is installed
    through = min(abs(float(ctl.tank_flow)), 1.0)
    expected_tank_pump = config.tank.pump_kw * through ** 3 if config.tank.installed else 0.0
    assert float(f["tank_pump_kw"]) == pytest.approx(expected_tank_pump, rel=1e-12, abs=1e-12)


def test_the_cases_reach_the_regimes_they_are_named_for():
    """Guards the cases above: the economiser works alone in winter, beside the chillers when mild; the tank
    moves heat both ways; half-alive fan units move half the air."""
    _, winter = _step(*CASES["winter, economiser alone"])
    assert float(winter.chillers_on) == 0.0 and float(winter.economiser_kw) > 0.0 and float(winter.cw_pump_kw) > 0.0
    _, mild = _step(*CASES["mild, economiser and chillers"])
    assert float(mild.economiser_kw) > 0.0 and float(mild.chiller_load_kw) > 0.0
    assert 0.0 < float(mild.economiser_fraction) < 1.0
    for case in ("winter, economiser off", "economiser at exactly 0.5 (off)"):
        _, off = _step(*CASES[case])
        assert float(off.economiser_kw) == 0.0 and float(off.chiller_load_kw) > 0.0
    config, ctl, bnd = CASES["four small units, light load"]
    _, light = _step(config, ctl, bnd)
    flowing = max(float(light.chillers_on), 1.0)
    polynomial = tower_polynomial(FLOATS, config.tower.design_water_flow_ratio, 15.0, flowing / 4, 1.0)
    range_k = float(light.rejected_kw) / (flowing * config.cw_flow_per_chiller_kg_s * CP_WATER_KJ_PER_KG_K)
    assert approach_at_range(FLOATS, polynomial, range_k) < 0.0 and float(light.tower_approach_k) == 0.0
    _, summer = _step(*CASES["summer, chillers"])
    assert float(summer.economiser_kw) == 0.0 and float(summer.chiller_load_kw) > 0.0
    _, discharging = _step(*CASES["tank discharging"])
    _, charging = _step(*CASES["tank charging"])
    assert float(discharging.tank_discharge_kw) > 0.0 and float(charging.tank_charge_kw) > 0.0


def test_the_economiser_fraction_is_its_share_of_the_heat_removed():
    """Mild weather, the loop served in full: the economiser's share is its heat over all the heat removed."""
    _, out = _step(*CASES["mild, economiser and chillers"], steps=12)
    share = float(out.economiser_kw) * DT / float(out.heat_removed_kj)
    assert float(out.economiser_fraction) == pytest.approx(share, rel=1e-9)


def test_the_economiser_takes_nothing_when_the_condenser_water_is_warmer_than_the_return():
    _, out = _step(CONFIG, control(econ=1.0), boundary(dry=35.0, wet=27.0))
    assert float(out.cw_step_c) + CONFIG.hx_approach_k > float(out.chw_return_c)
    assert float(out.economiser_kw) == 0.0 and float(out.economiser_fraction) == 0.0


@pytest.mark.parametrize(("wet", "fraction"), [(-10.0, 1.0), (25.0, 0.0)])
def test_with_nothing_to_remove_the_economiser_fraction_says_whether_it_could_run(wet, fraction):
    """No IT load and the loop a kelvin below its set-point (its thermal mass absorbs the pump's heat): nothing to
    remove, so the fraction reports whether the economiser is enabled and the condenser water is cold enough to
    make the set-point (winter) or not (summer)."""
    state = initial_state_v2(CONFIG, zone_temp_c=10.0, chw_supply_c=13.0)
    ctl = control(chw=14.0, fan=0.0, pump=0.3)
    _, out = step_plant_v2(CONFIG, state, ctl, boundary(load=0.0, dry=wet + 2.0, wet=wet), DT)
    assert float(out.heat_removed_kj) == 0.0
    assert float(out.economiser_fraction) == fraction
    # the return water carries the pump's heat alone (under 1 kW at its minimum speed)
    water_cap = CONFIG.chw_design_flow_kg_s * CP_WATER_KJ_PER_KG_K * 0.3
    assert 0.0 < float(out.chw_pump_kw) < 1.0
    assert float(out.chw_return_c) == pytest.approx(13.0 + float(out.chw_pump_kw) / water_cap, rel=1e-12)


def test_recirculation_is_the_unserved_share_of_the_servers_demand():
    """Demand m_d = IT / (c_p·ΔT_server), served m·(1 − b): r = max((m_d − served)/m_d, r_min)."""
    ctl = control(fan=[0.1, 0.2, 0.5, 1.0])
    _, out = _step(CONFIG, ctl, boundary(load=1.0), steps=1)
    demand = 250.0 / (CP_AIR_KJ_PER_KG_K * CONFIG.server_delta_t_k)
    served = CONFIG.crah_max_airflow_kg_s * ctl.fan_speed
    expected = np.maximum(np.maximum(demand - served, 0.0) / demand, CONFIG.min_recirculation)
    np.testing.assert_allclose(out.recirculation, expected, rtol=1e-12)
    assert expected[0] > 0.5 and expected[-1] == CONFIG.min_recirculation  # both branches are seen
    # a lightly loaded zone (5 kW: under 1 kg/s of demand) with its fan barely turning
    ctl = control(fan=0.005)
    _, out = _step(CONFIG, ctl, boundary(load=0.02), steps=1)
    demand = 5.0 / (CP_AIR_KJ_PER_KG_K * CONFIG.server_delta_t_k)
    served = CONFIG.crah_max_airflow_kg_s * 0.005
    assert demand < 1.0
    np.testing.assert_allclose(out.recirculation, (demand - served) / demand, rtol=1e-12)


def test_bypass_air_serves_no_server():
    """A zone bypassing 30 % of its air: the servers see m·(1 − 0.3), and the recirculation follows."""
    config = PlantV2Config.default(zone_bypass_fraction=[0.3, 0.0, 0.1, 0.0])
    ctl = control(fan=0.4)
    _, out = _step(config, ctl, boundary(load=1.0), steps=1)
    demand = 250.0 / (CP_AIR_KJ_PER_KG_K * config.server_delta_t_k)
    served = config.crah_max_airflow_kg_s * 0.4 * (1.0 - np.array([0.3, 0.0, 0.1, 0.0]))
    expected = np.maximum(np.maximum(demand - served, 0.0) / demand, config.min_recirculation)
    np.testing.assert_allclose(out.recirculation, expected, rtol=1e-12)
    assert expected[0] > expected[2] > expected[1]


def test_a_tank_flow_beyond_full_is_full_flow():
    state = initial_state_v2(STORAGE, zone_temp_c=27.0, chw_supply_c=10.0, tank_temp_c=6.0)
    b = boundary(dry=30.0, wet=22.0)
    _, full = step_plant_v2(STORAGE, state, control(tank=-1.0, econ=0.0), b, DT)
    _, beyond = step_plant_v2(STORAGE, state, control(tank=-1.7, econ=0.0), b, DT)
    assert float(full.tank_discharge_kw) > 0.0
    for name in ("tank_discharge_kw", "tank_pump_kw", "tank_temp_c", "chw_supply_c", "cooling_kw"):
        assert float(getattr(beyond, name)) == float(getattr(full, name)), name


def test_the_stage_timer_counts_time_since_the_last_change():
    state = initial_state_v2(CONFIG, zone_temp_c=27.0, chw_supply_c=10.0, chillers_on=2.0)
    for k in range(1, 4):
        state, _ = step_plant_v2(CONFIG, state, control(staged=2.0), boundary(), DT)
        assert float(state.stage_timer_s) == pytest.approx(float(initial_state_v2(CONFIG).stage_timer_s) + k * DT)


def test_a_stage_down_long_after_a_stage_up_is_allowed():
    """Minimum run is 30 min: 40 min after a stage-up, a stage-down goes through at once."""
    state = initial_state_v2(CONFIG, zone_temp_c=28.0, chw_supply_c=10.0, chillers_on=1.0)
    state, out = step_plant_v2(CONFIG, state, control(staged=2.0), boundary(load=0.5), DT)
    assert float(out.chillers_on) == 2.0 and float(state.last_stage_direction) > 0.0
    for _ in range(8):
        state, out = step_plant_v2(CONFIG, state, control(staged=2.0), boundary(load=0.5), DT)
    assert float(state.stage_timer_s) == pytest.approx(9 * DT)
    state, out = step_plant_v2(CONFIG, state, control(staged=1.0), boundary(load=0.5), DT)
    assert float(out.chillers_on) == 1.0


def test_a_still_zone_follows_the_exact_exponential():
    """No airflow and a nearly adiabatic envelope (x = UA·Δt/C below 1e-4, where the plant uses the series of
    φ = (1 − e^−x)/x): the zone warms by the exact ΔT = drift·φ, drift = (Q_IT + UA·(T_out − T))/C·Δt."""
    config = PlantV2Config.default(zone_envelope_ua_kw_per_k=np.full(Z, 0.001))
    x = 0.001 * DT / float(config.zone_thermal_mass_kj_per_k[0])
    assert x < 1e-4
    t0, dry = 25.0, 35.0
    state = initial_state_v2(config, zone_temp_c=t0, chw_supply_c=10.0)
    _, out = step_plant_v2(config, state, control(fan=0.0), boundary(load=0.2, dry=dry), DT)
    q_it = float(out.zone_it_kw[0])
    drift = (q_it + 0.001 * (dry - t0)) / float(config.zone_thermal_mass_kj_per_k[0]) * DT
    phi = -np.expm1(-x) / x
    assert float(out.inlet_c[0]) == pytest.approx(t0 + drift * phi, rel=1e-12)


def test_a_zones_air_side_does_not_depend_on_the_other_zones():
    """On arrays, a still zone (the series branch) beside moving air (the exact branch) changes nothing for the
    zones with moving air: each zone's outputs equal those of a plant whose zones all have moving air."""
    config = PlantV2Config.default(zone_envelope_ua_kw_per_k=np.full(Z, 0.001))
    state = initial_state_v2(config, zone_temp_c=27.0, chw_supply_c=10.0)
    _, mixed = step_plant_v2(config, _batched(state), _batched(control(fan=[0.0, 0.6, 0.8, 1.0])), _batched(boundary()), DT)
    _, moving = step_plant_v2(config, _batched(state), _batched(control(fan=[0.4, 0.6, 0.8, 1.0])), _batched(boundary()), DT)
    for name in ("inlet_c", "return_air_c", "coil_kw", "supply_air_c"):
        np.testing.assert_array_equal(np.asarray(getattr(mixed, name))[0, 1:], np.asarray(getattr(moving, name))[0, 1:])


def test_a_two_dimensional_batch_steps_each_plant_as_alone():
    """Inputs of shape (2, 3, …): six plants in a grid, each the same as when stepped alone."""
    loads = np.array([[0.2, 0.5, 0.8], [0.3, 0.6, 0.9]])
    chillers = np.array([[[1.0, 1.0], [1.0, 0.0], [0.0, 1.0]], [[1.0, 1.0], [0.0, 0.0], [1.0, 1.0]]])
    state = initial_state_v2(CONFIG, zone_temp_c=27.0, chw_supply_c=10.0)
    b = _batched(boundary(), (2, 3))
    b = PlantBoundary(loads[..., None] * np.full(Z, 250.0), b.outdoor_dry_bulb_c, b.outdoor_wet_bulb_c, chillers,
                      b.fan_units_alive)
    _, out = step_plant_v2(CONFIG, _batched(state, (2, 3)), _batched(control(), (2, 3)), b, DT)
    for i in range(2):
        for j in range(3):
            alone = boundary(load=loads[i, j], chillers=tuple(chillers[i, j]))
            _, single = step_plant_v2(CONFIG, state, control(), alone, DT)
            for name in ("chillers_on", "chiller_capacity_kw", "cooling_kw", "facility_kw", "chw_supply_c",
                         "it_nominal_kw", "it_kw", "pue", "heat_stored_kj", "envelope_loss_kj", "heat_in_kj"):
                assert float(np.asarray(getattr(out, name))[i, j]) == pytest.approx(
                    float(getattr(single, name)), rel=1e-9), (name, i, j)


def test_a_zone_step_is_the_exact_exponential_with_airflow():
    """With airflow: x = (m·c_p + UA)·Δt/C, drift = (Q_IT + m·c_p·(T_s − T) + UA·(T_out − T))/C·Δt and
    T1 = T + drift·(1 − e^−x)/x, from the step's own supply, airflow and server power."""
    t0, dry = 28.0, 30.0
    state = initial_state_v2(CONFIG, zone_temp_c=t0, chw_supply_c=10.0)
    _, out = step_plant_v2(CONFIG, state, control(fan=0.6), boundary(dry=dry), DT)
    ua, cap = float(CONFIG.zone_envelope_ua_kw_per_k[0]), float(CONFIG.zone_thermal_mass_kj_per_k[0])
    mcp = float(out.airflow_kg_s[0]) * CP_AIR_KJ_PER_KG_K
    x = (mcp + ua) * DT / cap
    drift = (float(out.zone_it_kw[0]) + mcp * (float(out.supply_air_c[0]) - t0) + ua * (dry - t0)) / cap * DT
    assert float(out.return_air_c[0]) == pytest.approx(t0 + drift * -np.expm1(-x) / x, rel=1e-12)
    # the coil's floor from the zone's air and the loop's water flow at the step's start, and the servers' inlet
    # at the start: the supply plus the recirculated share of the zone's air above it
    floor = coil_supply_floor_c(FLOATS, t0, 10.0, mcp, float(CONFIG.coil_water_capacity_design_kw_per_k[0]) * 0.8,
                                float(CONFIG.coil_ua_design_kw_per_k[0]),
                                float(CONFIG.coil_air_capacity_design_kw_per_k[0]))
    assert float(out.coil_floor_c[0]) == pytest.approx(floor, rel=1e-12)
    ts, r = float(out.supply_air_c[0]), float(out.recirculation[0])
    assert float(out.inlet_start_c[0]) == pytest.approx(ts + r * (t0 - ts), rel=1e-12)
    assert float(out.inlet_c[0]) == pytest.approx(ts + r * (float(out.return_air_c[0]) - ts), rel=1e-12)


@pytest.mark.parametrize("case", ["mild, economiser and chillers", "tank discharging"])
def test_the_plant_makes_its_set_point_and_no_colder(case):
    """With capacity to spare the chillers remove what brings the loop back to its set-point, not more: the
    economiser's share and a tank's discharge lower what they must do, they do not add to it."""
    config, ctl, bnd = CASES[case]
    _, out = _step(config, ctl, bnd, steps=8)
    assert float(out.chiller_load_kw) < float(out.chiller_capacity_kw)
    assert float(out.chw_supply_c) == pytest.approx(float(ctl.chw_setpoint_c), abs=1e-9)


def test_a_tank_warmer_than_the_return_water_discharges_nothing():
    state = initial_state_v2(STORAGE, zone_temp_c=27.0, chw_supply_c=10.0, tank_temp_c=25.0)
    _, out = step_plant_v2(STORAGE, state, control(tank=-1.0, econ=0.0), boundary(), DT)
    assert float(out.chw_return_c) < 25.0 and float(out.tank_discharge_kw) == 0.0


def test_in_a_batch_a_plant_that_keeps_its_staging_keeps_counting():
    """Plant 0 stages down while plant 1 asks for what it has: plant 1's timer runs on, its staging unchanged."""
    state = initial_state_v2(CONFIG, zone_temp_c=27.0, chw_supply_c=10.0, batch_shape=(2,))
    state = type(state)(*(np.asarray(getattr(state, k)).copy() for k in state.__dataclass_fields__))
    state.stage_timer_s[:] = 5000.0
    ctl = control(staged=2.0)
    ctl = type(ctl)(*(np.stack([np.asarray(getattr(ctl, k))] * 2) for k in ctl.__dataclass_fields__))
    ctl.chillers_staged[0] = 1.0
    b = boundary()
    b = type(b)(*(np.stack([np.asarray(getattr(b, k))] * 2) for k in b.__dataclass_fields__))
    new, out = step_plant_v2(CONFIG, state, ctl, b, DT)
    assert list(np.asarray(out.chillers_on)) == [1.0, 2.0]
    assert list(np.asarray(new.stage_timer_s)) == [DT, 5000.0 + DT]


def test_no_minimum_run_time_after_a_stage_down():
    """The minimum run time holds a stage-down right after a stage-up; right after a stage-down, the next one
    goes through (2 → 1 → 0 in consecutive steps)."""
    state = initial_state_v2(CONFIG, zone_temp_c=27.0, chw_supply_c=10.0, chillers_on=2.0)
    state, out = step_plant_v2(CONFIG, state, control(staged=1.0), boundary(), DT)
    assert float(out.chillers_on) == 1.0 and float(state.stage_timer_s) == DT < CONFIG.min_run_s
    state, out = step_plant_v2(CONFIG, state, control(staged=0.0), boundary(), DT)
    assert float(out.chillers_on) == 0.0


def test_no_minimum_off_time_after_a_stage_up():
    """The minimum off time holds a stage-up right after a stage-down; right after a stage-up, the next one
    goes through (0 → 1 → 2 in consecutive steps)."""
    state = initial_state_v2(CONFIG, zone_temp_c=27.0, chw_supply_c=10.0, chillers_on=0.0)
    state, out = step_plant_v2(CONFIG, state, control(staged=1.0, econ=0.0), boundary(), DT)
    assert float(out.chillers_on) == 1.0 and float(state.stage_timer_s) == DT < CONFIG.min_off_s
    state, out = step_plant_v2(CONFIG, state, control(staged=2.0, econ=0.0), boundary(), DT)
    assert float(out.chillers_on) == 2.0


def test_a_pump_speed_beyond_full_is_full_speed():
    state = initial_state_v2(CONFIG, zone_temp_c=27.0, chw_supply_c=10.0)
    _, full = step_plant_v2(CONFIG, state, control(pump=1.0), boundary(), DT)
    _, beyond = step_plant_v2(CONFIG, state, control(pump=1.5), boundary(), DT)
    assert float(beyond.chw_pump_kw) == float(full.chw_pump_kw) == pytest.approx(CONFIG.chw_pump_design_kw)
    assert float(beyond.chw_return_c) == float(full.chw_return_c)


def test_zone_inputs_broadcast_over_a_batch():
    """A batch of 5 plants (more plants than zones) with one control for all: every zone output has the batch's
    shape, and each plant equals the same plant stepped alone."""
    state = initial_state_v2(CONFIG, zone_temp_c=27.0, chw_supply_c=10.0, batch_shape=(5,))
    loads = np.linspace(0.2, 1.0, 5)
    b = PlantBoundary(loads[:, None] * np.full(Z, 250.0), np.full(5, 25.0), np.full(5, 18.0), np.ones((5, 2)),
                      np.ones(Z))
    _, out = step_plant_v2(CONFIG, state, control(), b, DT)
    assert np.shape(out.fan_kw) == (5, Z) and np.shape(out.inlet_c) == (5, Z) and np.shape(out.cooling_kw) == (5,)
    for i, load in enumerate(loads):
        _, alone = step_plant_v2(CONFIG, initial_state_v2(CONFIG, zone_temp_c=27.0, chw_supply_c=10.0), control(),
                                 boundary(load=load), DT)
        np.testing.assert_allclose(np.asarray(out.inlet_c)[i], alone.inlet_c, rtol=1e-9)
        assert float(np.asarray(out.facility_kw)[i]) == pytest.approx(float(alone.facility_kw), rel=1e-9)


def test_a_negative_staging_request_stages_no_chiller():
    state = initial_state_v2(CONFIG, zone_temp_c=27.0, chw_supply_c=10.0, chillers_on=0.0)
    for request in (-0.7, -2.0):
        new, out = step_plant_v2(CONFIG, state, control(staged=request), boundary(), DT)
        assert float(out.chillers_on) == 0.0 and float(new.chillers_on) == 0.0


def test_a_plant_without_an_economiser_never_uses_one():
    config = PlantV2Config.default(economiser_installed=False)
    _, out = _step(config, control(econ=1.0), boundary(dry=-5.0, wet=-7.0))
    assert float(out.economiser_kw) == 0.0 and float(out.chiller_load_kw) > 0.0


def test_one_plant_steps_on_floats_and_a_batch_on_arrays():
    """One plant's plant-level outputs are numpy scalars (the float path); a batch's are arrays."""
    _, single = step_plant_v2(CONFIG, initial_state_v2(CONFIG), control(), boundary(), DT)
    assert type(single.cooling_kw) is np.float64 and type(single.chw_supply_c) is np.float64
    _, many = step_plant_v2(CONFIG, _batched(initial_state_v2(CONFIG)), _batched(control()), _batched(boundary()), DT)
    assert isinstance(many.cooling_kw, np.ndarray) and many.cooling_kw.shape == (1,)


def test_plant_inputs_batched_over_one_hall_step_each_plant():
    """One hall's zone inputs (shape (Z,)) with three chilled-water set-points (shape (3,)): a batch of three
    plants, each the same as the plant stepped alone with its set-point."""
    state = initial_state_v2(CONFIG, zone_temp_c=27.0, chw_supply_c=10.0)
    setpoints = np.array([8.0, 10.0, 12.0])
    ctl = control()
    batched = PlantV2Control(ctl.fan_speed, ctl.supply_setpoint_c, setpoints, ctl.economiser_on, ctl.tower_fan_speed,
                             ctl.chillers_staged, ctl.chw_pump_speed, ctl.tank_flow)
    _, out = step_plant_v2(CONFIG, state, batched, boundary(), DT)
    assert np.shape(out.chw_supply_c) == (3,)
    for i, setpoint in enumerate(setpoints):
        _, alone = step_plant_v2(CONFIG, state, control(chw=setpoint), boundary(), DT)
        assert float(np.asarray(out.chiller_kw)[i]) == pytest.approx(float(alone.chiller_kw), rel=1e-9)


@pytest.mark.parametrize("dt_s", [0.0, -300.0, float("inf"), float("nan")])
def test_a_step_of_no_positive_finite_length_is_refused(dt_s):
    with pytest.raises(ValueError, match="dt_s"):
        step_plant_v2(CONFIG, initial_state_v2(CONFIG), control(), boundary(), dt_s)
    step_plant_v2(CONFIG, initial_state_v2(CONFIG), control(), boundary(), 0.5)  # any positive length steps


def test_zone_inputs_batched_over_one_plants_controls():
    """Two halls' IT loads (shape (2, Z)) under one set of plant inputs: a batch of two, each as alone."""
    state = initial_state_v2(CONFIG, zone_temp_c=27.0, chw_supply_c=10.0)
    b = boundary()
    loads = np.array([0.3, 0.9])
    batched = PlantBoundary(loads[:, None] * np.full(Z, 250.0), b.outdoor_dry_bulb_c, b.outdoor_wet_bulb_c,
                            b.chiller_available, b.fan_units_alive)
    _, out = step_plant_v2(CONFIG, state, control(), batched, DT)
    assert np.shape(out.inlet_c) == (2, Z) and np.shape(out.fan_kw) == (2, Z)
    assert np.asarray(out.fan_kw).flags.writeable  # a broadcast zone output is handed back as its own array
    for i, load in enumerate(loads):
        _, alone = step_plant_v2(CONFIG, state, control(), boundary(load=load), DT)
        np.testing.assert_allclose(np.asarray(out.inlet_c)[i], alone.inlet_c, rtol=1e-9)


def test_a_barely_moving_zone_uses_the_series_for_its_mean_temperature():
    """A whisper of air (x = (m·c_p + UA)·Δt/C below 1e-4): the coil's heat is m·c_p·(T̄ − T_s) with the step's
    mean T̄ = T + drift·ψ, ψ = (1 − φ)/x = 1/2 − x/6 + x²/24 − x³/120 …"""
    config = PlantV2Config.default(zone_envelope_ua_kw_per_k=np.full(Z, 0.001))
    t0, dry, fan = 25.0, 25.0, 2e-5
    state = initial_state_v2(config, zone_temp_c=t0, chw_supply_c=10.0)
    _, out = step_plant_v2(config, state, control(fan=fan), boundary(load=0.2, dry=dry), DT)
    mcp = float(out.airflow_kg_s[0]) * CP_AIR_KJ_PER_KG_K
    cap, ts = float(config.zone_thermal_mass_kj_per_k[0]), float(out.supply_air_c[0])
    x = (mcp + 0.001) * DT / cap
    assert 0.0 < mcp and x < 1e-4
    drift = (float(out.zone_it_kw[0]) + mcp * (ts - t0) + 0.001 * (dry - t0)) / cap * DT
    psi = 0.5 - x / 6.0 + x * x / 24.0 - x ** 3 / 120.0
    mean = t0 + drift * psi
    assert float(out.coil_kw[0]) == pytest.approx(mcp * (mean - ts) + float(out.fan_kw[0]), rel=1e-13)


def test_a_zone_colder_than_its_supply_air():
    """A zone at 12 °C under 20 °C supply: its coil gives the loop more cold than the pump's heat, and the loop's
    return is never colder than its supply (held at 10 °C); the inlet is the supply less the recirculated share."""
    state = initial_state_v2(CONFIG, zone_temp_c=12.0, chw_supply_c=10.0)
    _, out = step_plant_v2(CONFIG, state, control(fan=1.0, pump=1.0), boundary(load=0.05), DT)
    assert float(np.sum(out.coil_kw)) < -float(out.chw_pump_kw)
    assert float(out.chw_return_c) == 10.0
    ts, r, t1 = float(out.supply_air_c[0]), float(out.recirculation[0]), float(out.return_air_c[0])
    assert t1 < ts and float(out.inlet_c[0]) == pytest.approx(ts + r * (t1 - ts), rel=1e-12)


@pytest.mark.parametrize("wet", [-10.0, 5.0, 8.0, 9.0, 9.5, 10.0, 10.5, 11.0, 12.0, 25.0])
def test_the_idle_economiser_fraction_follows_its_rule(wet):
    """Nothing to remove: the fraction is 1 when the condenser water plus the HX approach makes the set-point."""
    state = initial_state_v2(CONFIG, zone_temp_c=10.0, chw_supply_c=13.0)
    _, out = step_plant_v2(CONFIG, state, control(chw=14.0, fan=0.0, pump=0.3),
                           boundary(load=0.0, dry=wet + 2.0, wet=wet), DT)
    assert float(out.heat_removed_kj) == 0.0
    expected = 1.0 if float(out.cw_step_c) + CONFIG.hx_approach_k <= 14.0 else 0.0
    assert float(out.economiser_fraction) == expected


def test_server_power_follows_the_inlet_at_the_steps_start():
    state = initial_state_v2(CONFIG, zone_temp_c=33.0, chw_supply_c=10.0)
    _, out = step_plant_v2(CONFIG, state, control(fan=0.3), boundary(load=0.8), DT)
    inlet = np.asarray(out.inlet_start_c)
    assert inlet.min() > 25.0  # past the server fans' knee
    np.testing.assert_allclose(out.zone_it_kw, 200.0 * server_power_multiplier(ARRAYS, CONFIG.servers, inlet),
                               rtol=1e-12)


def test_a_negative_fan_speed_moves_no_air_and_a_pump_beyond_full_in_a_batch_is_full():
    state = initial_state_v2(CONFIG, zone_temp_c=27.0, chw_supply_c=10.0)
    _, out = step_plant_v2(CONFIG, state, control(fan=-0.5), boundary(), DT)
    assert np.all(np.asarray(out.airflow_kg_s) == 0.0) and np.all(np.asarray(out.fan_kw) == 0.0)
    _, full = step_plant_v2(CONFIG, _batched(state), _batched(control(pump=1.0)), _batched(boundary()), DT)
    _, beyond = step_plant_v2(CONFIG, _batched(state), _batched(control(pump=1.5)), _batched(boundary()), DT)
    assert float(beyond.chw_pump_kw[0]) == float(full.chw_pump_kw[0]) == pytest.approx(CONFIG.chw_pump_design_kw)


def test_a_batch_through_chiller_availability_alone():
    """One plant's inputs with availability for three plants (shape (3, N)): three plants, each as alone."""
    state = initial_state_v2(CONFIG, zone_temp_c=27.0, chw_supply_c=10.0)
    b = boundary(load=0.9)
    available = np.array([[1.0, 1.0], [1.0, 0.0], [0.0, 0.0]])
    batched = PlantBoundary(b.it_kw, b.outdoor_dry_bulb_c, b.outdoor_wet_bulb_c, available, b.fan_units_alive)
    _, out = step_plant_v2(CONFIG, state, control(econ=0.0), batched, DT)
    assert list(np.asarray(out.chillers_on)) == [2.0, 1.0, 0.0]
    assert np.asarray(out.fan_kw).flags.writeable


def test_fan_speeds_and_tank_charging_beyond_full_are_full():
    state = initial_state_v2(STORAGE, zone_temp_c=27.0, chw_supply_c=8.0, tank_temp_c=12.0)
    b = boundary(load=0.4, dry=20.0, wet=14.0)
    _, full = step_plant_v2(STORAGE, state, control(fan=1.0, tank=1.0, econ=0.0, chw=8.0), b, DT)
    _, beyond = step_plant_v2(STORAGE, state, control(fan=1.6, tank=1.8, econ=0.0, chw=8.0), b, DT)
    assert float(full.tank_pump_kw) > 0.0
    for name in full._fields:
        np.testing.assert_array_equal(np.asarray(getattr(beyond, name)), np.asarray(getattr(full, name)), err_msg=name)


def test_the_inlet_at_the_start_of_a_zone_colder_than_its_supply():
    state = initial_state_v2(CONFIG, zone_temp_c=12.0, chw_supply_c=10.0)
    _, out = step_plant_v2(CONFIG, state, control(fan=0.5, pump=1.0), boundary(load=0.3), DT)
    ts, r = float(out.supply_air_c[0]), float(out.recirculation[0])
    assert ts > 12.0 and r > 0.0
    assert float(out.inlet_start_c[0]) == pytest.approx(ts + r * (12.0 - ts), rel=1e-12)


@pytest.mark.parametrize("case", [c for c in CASES if "chillers" in c or "tank" in c])
def test_the_part_load_ratio_is_the_load_over_the_running_capacity(case):
    config, ctl, b = CASES[case]
    _, out = step_plant_v2(config, initial_state_v2(config, zone_temp_c=27.0, chw_supply_c=10.0), ctl, b, DT)
    assert float(out.chiller_capacity_kw) > 0.0
    assert float(out.chiller_part_load) == pytest.approx(float(out.chiller_load_kw) / float(out.chiller_capacity_kw),
                                                         rel=1e-12)


def test_a_stage_up_well_after_the_minimum_off_time_is_allowed():
    """The minimum off time is a floor: 20 min after a stage-down (more than its 15) a stage-up goes through."""
    state = initial_state_v2(CONFIG, zone_temp_c=27.0, chw_supply_c=10.0, chillers_on=2.0)
    state, out = step_plant_v2(CONFIG, state, control(staged=1.0), boundary(load=0.5), DT)  # a fresh plant: allowed
    assert float(out.chillers_on) == 1.0
    for _ in range(3):
        state, out = step_plant_v2(CONFIG, state, control(staged=1.0), boundary(load=0.5), DT)
    assert float(state.stage_timer_s) == 4 * DT  # 20 min since the stage-down
    _, out = step_plant_v2(CONFIG, state, control(staged=2.0), boundary(load=0.5), DT)
    assert float(out.chillers_on) == 2.0


@pytest.mark.parametrize("chw0", [9.0, 7.0])
def test_a_charging_plant_serves_the_loop_first_and_the_tank_with_the_rest(chw0):
    """The module docstring: with spare capacity the loop makes its set-point, from above or from below, and the
    chillers' remaining cold charges the tank."""
    state = initial_state_v2(STORAGE, zone_temp_c=24.0, chw_supply_c=chw0, tank_temp_c=12.0)
    _, out = step_plant_v2(STORAGE, state, control(tank=0.8, econ=0.0, chw=8.0, staged=2.0),
                           boundary(load=0.3, dry=20.0, wet=14.0), DT)
    assert float(out.chiller_load_kw) < float(out.chiller_capacity_kw)  # capacity to spare
    assert float(out.chw_supply_c) == pytest.approx(8.0, abs=1e-9)
    assert float(out.tank_charge_kw) > 0.0
