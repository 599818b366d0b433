"""Plant v2's step: energy closes, the float and array backends agree, batches equal single plants, staging
honours its minimum times, and the new controls have the trade-offs they exist for."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dcops.physics.plant_types import PlantBoundary
from dcops.physics.v2.plant import step_plant_v2
from dcops.physics.v2.types import PlantV2Config, PlantV2Control, PlantV2State, initial_state_v2

CONFIG = PlantV2Config.default()
Z = CONFIG.n_zones
STORAGE = PlantV2Config.default(storage_minutes=60.0, zone_bypass_fraction=[0.0, 0.1, 0.2, 0.05],
                                zone_min_recirculation=[0.02, 0.05, 0.08, 0.03])
"""A plant with a 1 h tank and airflow that differs from the nameplate zone by zone."""


def control(fan=0.8, supply=20.0, chw=10.0, econ=1.0, tower=0.7, staged=2.0, pump=0.8, tank=0.0,
            z=Z) -> PlantV2Control:
    return PlantV2Control(np.full(z, fan), np.full(z, supply), np.float64(chw), np.float64(econ), np.float64(tower),
                          np.float64(staged), np.float64(pump), np.float64(tank))


def boundary(load=0.8, dry=25.0, wet=18.0, chillers=(1.0, 1.0), z=Z) -> PlantBoundary:
    return PlantBoundary(np.full(z, load * 250.0), np.float64(dry), np.float64(wet), np.array(chillers, float),
                         np.ones(z))


def settle(ctl: PlantV2Control, bnd: PlantBoundary, steps: int = 60, state: PlantV2State | None = None):
    state = state or initial_state_v2(CONFIG, zone_temp_c=30.0, chw_supply_c=float(ctl.chw_setpoint_c))
    for _ in range(steps):
        state, out = step_plant_v2(CONFIG, state, ctl, bnd, 300.0)
    return state, out


def _closure(out) -> float:
    return float(np.max(np.abs(out.heat_in_kj - out.envelope_loss_kj - out.heat_removed_kj - out.heat_stored_kj)))


zone_temps = st.floats(15.0, 45.0)
controls = st.tuples(st.floats(0.0, 1.0), st.floats(12.0, 27.0), st.floats(5.0, 20.0), st.floats(0.0, 1.0),
                     st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.floats(-1.0, 1.0))
weather = st.tuples(st.floats(-20.0, 42.0), st.floats(0.0, 1.0))


def _batch_of_one(value):
    """A dataclass of plant inputs as a batch of one (every field gains a leading axis)."""
    return type(value)(*(np.asarray(getattr(value, f))[None, ...] for f in value.__dataclass_fields__))


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([CONFIG, STORAGE]), st.lists(zone_temps, min_size=Z, max_size=Z), st.floats(4.0, 25.0),
       st.floats(5.0, 35.0), st.floats(0.0, 2.0), st.floats(0.0, 4000.0), st.sampled_from([-1.0, 0.0, 1.0]),
       st.floats(4.0, 30.0), controls, weather, st.floats(0.05, 1.0),
       st.lists(st.floats(0.0, 1.0), min_size=2, max_size=2), st.sampled_from([60.0, 300.0]))
def test_energy_closes_and_the_backends_agree(config, zones, chw, cw, staged, timer, direction, tank, ctl, wx, load,
                                              chillers, dt):
    """For any plant (with or without a tank, nameplate or imperfect airflow), state, set-points and weather:
    energy closes to rounding, nothing is NaN, and the float path (one plant) equals the array path (a batch of
    one) to rounding."""
    dry, humidity = wx
    wet = dry - humidity * (dry + 25.0) * 0.3 if dry > -25.0 else dry
    state = PlantV2State(np.array(zones), np.float64(chw), np.float64(cw), np.float64(float(round(staged))),
                         np.float64(timer), np.float64(direction), np.float64(tank))
    c = control(*ctl)
    b = boundary(load=load, dry=dry, wet=wet, chillers=chillers)
    new, out = step_plant_v2(config, state, c, b, dt)
    assert _closure(out) < 1e-6 * max(1.0, float(out.heat_in_kj))
    assert all(np.all(np.isfinite(v)) for v in out)
    new_b, out_b = step_plant_v2(config, _batch_of_one(state), _batch_of_one(c), _batch_of_one(b), dt)
    for name, single, batch in zip(out._fields, out, out_b, strict=True):
        np.testing.assert_allclose(batch[0], single, rtol=1e-10, atol=1e-9, err_msg=name)
    np.testing.assert_allclose(new_b.zone_temp_c[0], new.zone_temp_c, rtol=1e-12)
    assert float(new_b.chillers_on[0]) == float(new.chillers_on)


def test_a_batch_steps_each_plant_as_it_would_alone():
    rng = np.random.default_rng(3)
    batch = 5
    states = [initial_state_v2(CONFIG, zone_temp_c=float(t), chw_supply_c=9.0) for t in rng.uniform(22, 32, batch)]
    controls_ = [control(fan=f, chw=c, tower=t, staged=s) for f, c, t, s in zip(
        rng.uniform(0.4, 1, batch), rng.uniform(7, 16, batch), rng.uniform(0.2, 1, batch), [0, 1, 2, 1, 2], strict=True)]
    bounds = [boundary(load=lo, dry=d, wet=d - 5)
              for lo, d in zip(rng.uniform(0.3, 1, batch), rng.uniform(-5, 35, batch), strict=True)]
    stack = lambda objs, cls: cls(*(np.stack([np.asarray(getattr(o, f)) for o in objs])  # noqa: E731
                                    for f in cls.__dataclass_fields__))
    sb, cb, bb = stack(states, PlantV2State), stack(controls_, PlantV2Control), stack(bounds, PlantBoundary)
    for _ in range(12):
        sb, ob = step_plant_v2(CONFIG, sb, cb, bb, 300.0)
        outs = []
        for i in range(batch):
            states[i], o = step_plant_v2(CONFIG, states[i], controls_[i], bounds[i], 300.0)
            outs.append(o)
        for name in ob._fields:
            np.testing.assert_allclose(getattr(ob, name), np.stack([getattr(o, name) for o in outs]), rtol=1e-10,
                                       atol=1e-9, err_msg=name)


def test_staging_honours_minimum_run_and_off_times():
    b = boundary(load=0.5)
    state = initial_state_v2(CONFIG, zone_temp_c=28.0, chw_supply_c=10.0, chillers_on=1.0)
    state, out = step_plant_v2(CONFIG, state, control(staged=2.0), b, 300.0)
    assert float(out.chillers_on) == 2.0  # a fresh plant may stage up at once
    for _ in range(5):  # 25 min after a stage-up: below the 30 min minimum run, a stage-down is refused
        state, out = step_plant_v2(CONFIG, state, control(staged=1.0), b, 300.0)
        assert float(out.chillers_on) == 2.0
    state, out = step_plant_v2(CONFIG, state, control(staged=1.0), b, 300.0)  # 30 min: allowed
    assert float(out.chillers_on) == 1.0
    for _ in range(2):  # 10 min after a stage-down: a stage-up waits for the 15 min minimum off
        state, out = step_plant_v2(CONFIG, state, control(staged=2.0), b, 300.0)
        assert float(out.chillers_on) == 1.0
    state, out = step_plant_v2(CONFIG, state, control(staged=2.0), b, 300.0)
    assert float(out.chillers_on) == 2.0


def test_a_trip_takes_a_running_chiller_and_under_staging_warms_the_loop():
    _, out = settle(control(staged=2.0, econ=0.0), boundary(load=0.9, chillers=(1.0, 0.0)), steps=3)
    assert float(out.chillers_on) == 1.0 and float(out.chiller_capacity_kw) == CONFIG.chiller.reference_capacity_kw
    state, out = settle(control(staged=1.0, econ=0.0), boundary(load=1.0, dry=30.0, wet=24.0), steps=12)
    assert float(out.chiller_part_load) == pytest.approx(1.0)
    assert float(state.chw_supply_c) > 10.5  # one unit cannot carry the full hall: the loop drifts up


def test_tower_fan_trades_its_power_against_the_chillers_lift():
    """Summer: more tower air lowers the condenser water and the chiller power, at the fan's cube-law cost;
    the plant's cooling power has its minimum at an interior fan speed, not at either end."""
    cooling = []
    for speed in np.linspace(0.2, 1.0, 9):
        _, out = settle(control(tower=speed, econ=0.0, chw=10.0), boundary(load=0.8, dry=30.0, wet=22.0))
        cooling.append((float(out.cooling_kw), float(out.cw_supply_c), float(out.chiller_kw)))
    power, condenser, chiller = (np.array(c) for c in zip(*cooling, strict=True))
    assert np.all(np.diff(condenser) < 0) and np.all(np.diff(chiller) < 0)
    best = int(np.argmin(power))
    assert 0 < best < len(power) - 1


def test_inlet_temperature_has_an_interior_optimum_of_facility_power():
    """With server fans and leakage counted, warmer supply air saves cooling but costs IT power: facility power
    is lowest below the 27 °C inlet limit, unlike plant v0 where the optimum sits on the limit."""
    results = []
    for supply in np.arange(18.0, 30.5, 1.0):
        _, out = settle(control(supply=supply, chw=max(5.0, supply - 6.0), econ=0.0, fan=0.9),
                        boundary(load=0.8, dry=30.0, wet=22.0))
        results.append((float(np.max(out.inlet_c)), float(out.facility_kw), float(out.it_kw)))
    inlets, facility, it = (np.array(r) for r in zip(*results, strict=True))
    best = int(np.argmin(facility))
    assert 0 < best < len(facility) - 1 and inlets[best] < 27.0
    assert it[-1] > it[0] * 1.02


def test_chilled_water_flow_trades_pump_power_against_the_coil():
    """Less chilled-water flow saves pump power but raises the coldest supply the coils can make and the return
    temperature (a larger ΔT from the coil, not a fixed 6 K)."""
    low = settle(control(pump=0.35, supply=14.0, chw=10.0), boundary(load=0.8), steps=2)[1]
    high = settle(control(pump=1.0, supply=14.0, chw=10.0), boundary(load=0.8), steps=2)[1]
    assert float(low.chw_pump_kw) < 0.1 * float(high.chw_pump_kw)
    assert np.all(low.coil_floor_c > high.coil_floor_c + 0.5)
    assert float(low.chw_return_c - 10.0) > 2.0 * float(high.chw_return_c - 10.0)


def test_winter_free_cooling_runs_on_the_tower_fan():
    """Cold and dry: the economiser carries the whole load with no chiller staged, and the tower fan is what the
    plant spends on heat rejection (set by the operator's fan speed, not by the heat rejected)."""
    state, out = settle(control(staged=0.0, econ=1.0, chw=14.0, tower=0.5), boundary(load=0.7, dry=0.0, wet=-2.0))
    assert float(out.economiser_fraction) == 1.0 and float(out.chiller_kw) == 0.0
    assert float(state.chw_supply_c) == pytest.approx(14.0, abs=0.05)
    _, faster = settle(control(staged=0.0, econ=1.0, chw=14.0, tower=1.0), boundary(load=0.7, dry=0.0, wet=-2.0))
    assert float(faster.tower_kw) == pytest.approx(8.0 * float(out.tower_kw))


def test_bad_step_length_is_rejected():
    with pytest.raises(ValueError, match="dt_s"):
        step_plant_v2(CONFIG, initial_state_v2(CONFIG), control(), boundary(), 0.0)


def test_still_air_and_no_envelope_take_the_series_branch_and_still_close():
    """With the fans stopped and no envelope the zone update's x is 0: φ and ψ come from their series, energy
    still closes, and a zone at rest heats at exactly Q/C."""
    config = CONFIG.with_(zone_envelope_ua_kw_per_k=np.zeros(Z))
    state = initial_state_v2(config, zone_temp_c=25.0)
    new, out = step_plant_v2(config, state, control(fan=0.0), boundary(load=0.4, dry=25.0, wet=18.0), 60.0)
    expected = 25.0 + out.zone_it_kw * 60.0 / config.zone_thermal_mass_kj_per_k
    np.testing.assert_allclose(new.zone_temp_c, expected, rtol=1e-14)
    assert _closure(out) < 1e-6 * float(out.heat_in_kj)
    b = boundary(load=0.4, dry=25.0, wet=18.0)
    new_b, _ = step_plant_v2(config, _batch_of_one(state), _batch_of_one(control(fan=0.0)), _batch_of_one(b), 60.0)
    np.testing.assert_allclose(new_b.zone_temp_c[0], new.zone_temp_c, rtol=1e-14)


def test_economiser_takes_no_more_than_the_water_flow_carries_down_to_the_tower_water():
    """A set-point far below what the tower can make buys no extra free cooling: the economiser's heat is at most
    m_w·c_p·(T_return − T_tower − HX approach), whatever the loop's excursion above its set-point."""
    warm_loop = initial_state_v2(CONFIG, zone_temp_c=30.0, chw_supply_c=18.0, cw_supply_c=14.0, chillers_on=0.0)
    water_cap = CONFIG.chw_design_flow_kg_s * 4.186 * 0.8
    free = []
    for chw_set in (10.0, 5.0):
        _, out = step_plant_v2(CONFIG, warm_loop, control(chw=chw_set, staged=0.0, econ=1.0, pump=0.8),
                               boundary(load=0.8, dry=20.0, wet=12.0), 300.0)
        limit = water_cap * (float(out.chw_return_c) - (float(out.cw_step_c) + CONFIG.hx_approach_k))
        assert float(out.economiser_kw) == pytest.approx(limit, rel=1e-9)
        free.append(float(out.economiser_kw))
    assert free[0] == pytest.approx(free[1], rel=1e-12)


def test_chillers_cool_no_more_than_the_evaporator_flow_carries_to_the_set_point():
    """The chillers' load is at most m_w·c_p·(T_return − T_set) (plus a tank's charge): a slow pump limits how
    fast a warm loop is pulled down, however many units run."""
    warm_loop = initial_state_v2(CONFIG, zone_temp_c=30.0, chw_supply_c=20.0, cw_supply_c=28.0)
    _, out = step_plant_v2(CONFIG, warm_loop, control(chw=5.0, staged=2.0, econ=0.0, pump=0.3),
                           boundary(load=0.3, dry=35.0, wet=25.0), 300.0)
    water_cap = CONFIG.chw_design_flow_kg_s * 4.186 * 0.3
    assert float(out.chiller_load_kw) == pytest.approx(water_cap * (float(out.chw_return_c) - 5.0), rel=1e-9)
    assert float(out.chiller_load_kw) < float(out.chiller_capacity_kw)


@pytest.mark.parametrize(("pump", "cw", "wet"), [(1.0, 9.0, 5.0), (0.4, 12.0, 8.0)])
def test_economiser_and_chillers_together_take_the_loop_to_its_set_point_within_the_flow(pump, cw, wet):
    """Integrated operation, the loop 1 K above its 10 °C set-point: the economiser pre-cools the return and the
    chillers the rest down to the set-point, within what the evaporator flow carries. A fast pump (its flow carries
    more than the loop needs) ends the step exactly at the set-point; a slow one takes exactly the flow's heat,
    m_w·c_p·(T_return − T_set), between the two, and the loop stays above the set-point."""
    state = initial_state_v2(CONFIG, zone_temp_c=25.0, chw_supply_c=11.0, cw_supply_c=cw)
    new, out = step_plant_v2(CONFIG, state, control(chw=10.0, econ=1.0, staged=2.0, pump=pump),
                             boundary(load=0.8, dry=15.0, wet=wet), 300.0)
    economiser, chillers = float(out.economiser_kw), float(out.chiller_load_kw)
    assert economiser > 50.0 and chillers > 50.0 and chillers < float(out.chiller_capacity_kw)
    carried = CONFIG.chw_design_flow_kg_s * 4.186 * pump * (float(out.chw_return_c) - 10.0)
    if pump == 1.0:
        assert float(new.chw_supply_c) == pytest.approx(10.0, abs=1e-9) and economiser + chillers < carried
    else:
        assert economiser + chillers == pytest.approx(carried, rel=1e-9) and float(new.chw_supply_c) > 10.2


@pytest.mark.parametrize(("cw", "wet", "fraction"), [(8.0, 6.0, 1.0), (14.0, 12.0, 0.0)])
def test_with_nothing_to_remove_the_economiser_counts_full_iff_its_water_is_at_the_set_point(cw, wet, fraction):
    """As v0's economiser (``physics/economiser.py``): with no load to carry (the loop far below its 15 °C
    set-point, no chiller staged) the economiser fraction is 1 when the condenser water plus the HX approach is at
    or below the set-point and 0 otherwise, here with the water within the HX approach under it."""
    state = initial_state_v2(CONFIG, zone_temp_c=22.0, chw_supply_c=8.0, cw_supply_c=cw, chillers_on=0.0)
    _, out = step_plant_v2(CONFIG, state, control(chw=15.0, econ=1.0, staged=0.0, pump=1.0),
                           boundary(load=0.3, dry=15.0, wet=wet), 300.0)
    assert float(out.heat_removed_kj) == 0.0
    hx_water = float(out.cw_step_c) + CONFIG.hx_approach_k
    assert (hx_water <= 15.0) == (fraction == 1.0) and (fraction == 1.0 or float(out.cw_step_c) < 15.0)
    assert float(out.economiser_fraction) == fraction


@pytest.mark.parametrize("config", [CONFIG, STORAGE], ids=["no tank", "tank"])
def test_a_loop_below_its_set_point_is_left_to_warm(config):
    """The loop at 6 °C under a 12 °C set-point, with the economiser on and tower water cold enough to cool the
    return: nothing is removed (neither the economiser nor the chillers take heat), and the loop warms by the coils'
    and pumps' heat over its thermal mass."""
    state = initial_state_v2(config, zone_temp_c=22.0, chw_supply_c=6.0, cw_supply_c=4.0, tank_temp_c=8.0)
    new, out = step_plant_v2(config, state, control(chw=12.0, econ=1.0, staged=2.0, pump=1.0),
                             boundary(load=0.3, dry=0.0, wet=-5.0), 300.0)
    assert float(out.chw_return_c) > float(out.cw_step_c) + config.hx_approach_k  # the economiser could cool it
    assert (float(out.economiser_kw), float(out.chiller_load_kw), float(out.heat_removed_kj)) == (0.0, 0.0, 0.0)
    heat = (float(np.sum(out.coil_kw)) + float(out.chw_pump_kw) + float(out.tank_pump_kw)) * 300.0
    assert (float(new.chw_supply_c) - 6.0) * config.loop_thermal_mass_kj_per_k == pytest.approx(heat, rel=1e-9)


def test_bypass_air_costs_fan_power_and_cools_no_server():
    """Air that bypasses the servers is moved (fan power) but removes no heat: at the same fan speed a zone with
    bypass runs hotter inlets, and at steady state its coil still carries exactly the zone's heat."""
    nameplate = settle(control(fan=0.6, supply=18.0), boundary(load=0.8))[1]
    leaky = PlantV2Config.default(zone_bypass_fraction=[0.3] * Z)
    state = initial_state_v2(leaky, zone_temp_c=30.0, chw_supply_c=10.0)
    for _ in range(60):
        state, out = step_plant_v2(leaky, state, control(fan=0.6, supply=18.0), boundary(load=0.8), 300.0)
    np.testing.assert_allclose(out.fan_kw, nameplate.fan_kw, rtol=1e-12)
    assert np.all(out.inlet_c > nameplate.inlet_c + 1.0)
    gain = leaky.zone_envelope_ua_kw_per_k * (25.0 - out.return_air_c)  # the boundary's dry-bulb is 25 °C
    np.testing.assert_allclose(out.coil_kw - out.fan_kw, out.zone_it_kw + gain, rtol=1e-3)


def test_recirculation_floor_raises_the_inlet_over_the_supply_by_its_share_of_the_return():
    """With ample airflow a zone's inlet sits at ``T_s + r·(T_zone − T_s)`` with r its recirculation floor."""
    config = PlantV2Config.default(zone_min_recirculation=[0.02, 0.05, 0.1, 0.2])
    state = initial_state_v2(config, zone_temp_c=30.0, chw_supply_c=10.0)
    for _ in range(60):
        state, out = step_plant_v2(config, state, control(fan=1.0, supply=18.0), boundary(load=0.5), 300.0)
    r = (out.inlet_c - out.supply_air_c) / (out.return_air_c - out.supply_air_c)
    np.testing.assert_allclose(r, [0.02, 0.05, 0.1, 0.2], rtol=1e-9)


def test_an_idle_towers_cold_basin_is_not_free_capacity():
    """The tower answers the heat it is given within the step: an economiser switched on every other step (its
    tower idle in between, the basin cold) cannot hold the loop that the same economiser holds when it runs every
    step at the same tower fan; it only lets the loop warm."""
    config = PlantV2Config.default()
    winter = boundary(load=0.6, dry=-5.0, wet=-6.0)
    final = {}
    for pattern in ("every step", "every other step"):
        state = initial_state_v2(config, zone_temp_c=24.0, chw_supply_c=15.0, cw_supply_c=6.0, chillers_on=0.0)
        for k in range(48):
            econ = 1.0 if pattern == "every step" or k % 2 == 0 else 0.0
            state, _ = step_plant_v2(config, state, control(fan=0.4, supply=15.0, chw=6.0, econ=econ, tower=0.21,
                                                            staged=0.0, pump=0.4), winter, 300.0)
        final[pattern] = float(state.chw_supply_c)
    assert final["every other step"] > final["every step"] + 5.0
