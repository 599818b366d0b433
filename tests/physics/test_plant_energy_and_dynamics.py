"""The plant conserves energy, matches analytic solutions and behaves monotonically."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import solve_ivp, trapezoid

from dcops.physics.chiller import capacity_fraction, eir_part_load_modifier, eir_temperature_modifier
from dcops.physics.constants import CP_AIR_KJ_PER_KG_K
from dcops.physics.faults import ChillerTrip, build_timeline
from dcops.physics.plant import (
    PlantBoundary,
    PlantConfig,
    PlantControl,
    initial_state,
    step_plant,
    step_plant_arrays,
)
from dcops.physics.zones import zone_update

CONFIG = PlantConfig.default()
Z = CONFIG.n_zones

temps = st.floats(min_value=5.0, max_value=60.0)
fractions = st.floats(min_value=0.0, max_value=1.0)


@st.composite
def plant_situations(draw, zone_temps=temps, loads=fractions, outdoor=None):
    """A random state, control and boundary (any values a controller or fault could produce)."""
    state = initial_state(CONFIG, np.array([draw(zone_temps) for _ in range(Z)]), draw(st.floats(3.0, 20.0)))
    control = PlantControl(
        fan_speed=np.array([draw(fractions) for _ in range(Z)]),
        supply_setpoint_c=np.array([draw(st.floats(10.0, 27.0)) for _ in range(Z)]),
        chw_setpoint_c=np.asarray(draw(st.floats(4.0, 20.0))),
        economiser_on=np.asarray(float(draw(st.booleans()))),
    )
    boundary = PlantBoundary(
        it_kw=CONFIG.zone_design_it_kw * np.array([draw(loads) for _ in range(Z)]),
        outdoor_dry_bulb_c=np.asarray(draw(outdoor if outdoor is not None else st.floats(-20.0, 48.0))),
        outdoor_wet_bulb_c=np.asarray(draw(st.floats(-20.0, 30.0))),
        chiller_available=np.array([draw(fractions) for _ in range(CONFIG.n_chillers)]),
        fan_units_alive=np.array([draw(fractions) for _ in range(Z)]),
    )
    return state, control, boundary, draw(st.floats(1.0, 3600.0))


@settings(max_examples=200, deadline=None)
@given(plant_situations())
def test_energy_balance_closes_every_step(situation):
    state, control, boundary, dt = situation
    _, out = step_plant(CONFIG, state, control, boundary, dt)
    residual = out.heat_in_kj - out.envelope_loss_kj - out.heat_removed_kj - out.heat_stored_kj
    scale = max(float(out.heat_in_kj), 1.0)
    assert abs(float(residual)) <= 1e-9 * scale + 1e-6


@settings(max_examples=200, deadline=None)
@given(plant_situations())
def test_every_output_is_finite(situation):
    state, control, boundary, dt = situation
    new_state, out = step_plant(CONFIG, state, control, boundary, dt)
    for name, value in out._asdict().items():
        assert np.all(np.isfinite(value)), name
    assert np.all(np.isfinite(new_state.zone_temp_c))


def test_zone_step_matches_numerical_ode_solution():
    """The exact exponential update equals an accurate numerical integration of the zone ODE."""
    c, q, m, ts, ua, tout, t0, dt = 5000.0, 200.0, 18.0, 20.0, 0.5, 35.0, 38.0, 300.0

    def rhs(_t, y):
        return [(q - m * CP_AIR_KJ_PER_KG_K * (y[0] - ts) - ua * (y[0] - tout)) / c]

    reference = solve_ivp(rhs, (0.0, dt), [t0], rtol=1e-11, atol=1e-11).y[0, -1]
    end, mean = zone_update(
        np.array([t0]), np.array([q]), np.array([m]), np.array([ts]), np.array([ua]), np.array([tout]),
        np.array([c]), dt,
    )
    assert abs(end[0] - reference) < 1e-8
    dense = solve_ivp(rhs, (0.0, dt), [t0], rtol=1e-11, atol=1e-11, dense_output=True)
    grid = np.linspace(0.0, dt, 20001)
    assert abs(mean[0] - trapezoid(dense.sol(grid)[0], grid) / dt) < 1e-6


def test_zone_reaches_analytic_steady_state(make_control, make_boundary):
    control = make_control(CONFIG, fan=0.8, supply=20.0, chw=12.0)
    boundary = make_boundary(CONFIG, load=0.7, dry=30.0)
    state = initial_state(CONFIG, 35.0, 12.0)
    for _ in range(200):
        state, out = step_plant(CONFIG, state, control, boundary, 300.0)
    mcp = out.airflow_kg_s * CP_AIR_KJ_PER_KG_K
    ua = CONFIG.zone_envelope_ua_kw_per_k
    expected = (boundary.it_kw + mcp * 20.0 + ua * 30.0) / (mcp + ua)
    np.testing.assert_allclose(state.zone_temp_c, expected, atol=1e-9)
    np.testing.assert_allclose(out.supply_air_c, 20.0)
    assert abs(float(state.chw_supply_c) - 12.0) < 1e-9


def test_zone_update_is_exact_at_any_step_length():
    """Two half steps equal one full step (the update is the exact flow of the ODE)."""
    args = dict(heat_kw=np.array([150.0]), airflow_kg_s=np.array([10.0]), supply_c=np.array([18.0]),
                envelope_ua_kw_per_k=np.array([0.4]), outdoor_c=np.array([40.0]), capacity_kj_per_k=np.array([4000.0]))
    full, _ = zone_update(np.array([30.0]), dt_s=600.0, **args)
    half, _ = zone_update(np.array([30.0]), dt_s=300.0, **args)
    twice, _ = zone_update(half, dt_s=300.0, **args)
    np.testing.assert_allclose(full, twice, rtol=0, atol=1e-12)


@settings(max_examples=150, deadline=None)
@given(
    plant_situations(zone_temps=st.floats(30.0, 60.0), loads=st.floats(0.1, 1.0), outdoor=st.floats(15.0, 48.0)),
    st.floats(0.0, 1.0),
    st.floats(0.0, 8.0),
)
def test_more_airflow_or_colder_supply_never_raises_an_inlet(situation, extra_fan, colder_by):
    """Over operating states (IT load on, zone air warmer than any supply air) and any control.

    Outside them the statement is false for a physical reason: a zone colder than its supply air (no IT load,
    freezing weather through the envelope) is *warmed* by more airflow.
    """
    state, control, boundary, dt = situation
    _, base = step_plant(CONFIG, state, control, boundary, dt)
    more_air = PlantControl(np.minimum(control.fan_speed + extra_fan, 1.0), control.supply_setpoint_c,
                            control.chw_setpoint_c, control.economiser_on)
    _, windy = step_plant(CONFIG, state, more_air, boundary, dt)
    assert np.all(windy.inlet_c <= base.inlet_c + 1e-9)
    assert np.all(windy.inlet_start_c <= base.inlet_start_c + 1e-9)
    colder = PlantControl(control.fan_speed, control.supply_setpoint_c - colder_by, control.chw_setpoint_c,
                          control.economiser_on)
    _, cool = step_plant(CONFIG, state, colder, boundary, dt)
    assert np.all(cool.inlet_c <= base.inlet_c + 1e-9)


def test_fan_power_follows_the_cube_law(make_control, make_boundary):
    boundary = make_boundary(CONFIG)
    state = initial_state(CONFIG, 30.0, 12.0)
    _, half = step_plant(CONFIG, state, make_control(CONFIG, fan=0.5), boundary, 300.0)
    _, full = step_plant(CONFIG, state, make_control(CONFIG, fan=1.0), boundary, 300.0)
    np.testing.assert_allclose(half.fan_kw * 8.0, full.fan_kw)
    np.testing.assert_allclose(full.fan_kw, CONFIG.crah_fan_max_kw)


def test_starved_airflow_recirculates_hot_air(make_control, make_boundary):
    """Below the servers' airflow the inlet rises above the supply air; with enough air it does not."""
    boundary = make_boundary(CONFIG, load=0.9)
    state = initial_state(CONFIG, 35.0, 12.0)
    _, ample = step_plant(CONFIG, state, make_control(CONFIG, fan=1.0, supply=20.0), boundary, 300.0)
    _, starved = step_plant(CONFIG, state, make_control(CONFIG, fan=0.3, supply=20.0), boundary, 300.0)
    np.testing.assert_allclose(ample.recirculation, CONFIG.min_recirculation)
    assert np.all(starved.recirculation > 0.5)
    assert np.all(starved.inlet_c > ample.inlet_c + 5.0)


def test_supply_air_cannot_be_colder_than_chilled_water_plus_approach(make_control, make_boundary):
    state = initial_state(CONFIG, 30.0, 16.0)
    _, out = step_plant(CONFIG, state, make_control(CONFIG, supply=15.0, chw=16.0), make_boundary(CONFIG), 300.0)
    np.testing.assert_allclose(out.supply_air_c, 16.0 + CONFIG.coil_approach_k)


def test_chiller_trip_at_full_load_takes_minutes_to_push_inlets_past_32c(make_control, make_boundary):
    """All chillers trip at full load with fans running: inlets climb, but over minutes, not one step."""
    dt = 30.0
    n = 120
    timeline = build_timeline(
        [ChillerTrip(start_s=0.0, chiller=i, ramp_s=180.0) for i in range(CONFIG.n_chillers)], n, dt, Z,
        CONFIG.n_chillers,
    )
    control = make_control(CONFIG, fan=1.0, supply=22.0, chw=12.0, econ=0.0)
    state = initial_state(CONFIG, 34.0, 12.0)
    hot = make_boundary(CONFIG, load=1.0, dry=35.0, wet=24.0)
    first_hot = None
    for k in range(n):
        boundary = PlantBoundary(hot.it_kw, hot.outdoor_dry_bulb_c, hot.outdoor_wet_bulb_c,
                                 timeline.chiller_available[k], hot.fan_units_alive)
        state, out = step_plant(CONFIG, state, control, boundary, dt)
        if first_hot is None and np.max(out.inlet_c) >= 32.0:
            first_hot = (k + 1) * dt
    assert first_hot is not None, "inlets never reached 32 °C without any cooling"
    assert 5 * 60.0 < first_hot < 30 * 60.0  # longer than one 5-minute control step, within half an hour


def test_batch_of_plants_matches_single_plant_steps(make_control, make_boundary):
    """Stepping a (B, Z) batch equals stepping each plant alone."""
    rng = np.random.default_rng(3)
    b = 5
    zones = rng.uniform(20, 40, size=(b, Z))
    loops = rng.uniform(8, 16, size=b)
    fans = rng.uniform(0.2, 1.0, size=(b, Z))
    supply = rng.uniform(16, 26, size=(b, Z))
    chw = rng.uniform(6, 16, size=b)
    it = CONFIG.zone_design_it_kw * rng.uniform(0.2, 1.0, size=(b, Z))
    batch_state = initial_state(CONFIG, zones, loops, batch_shape=(b,))
    batch_control = PlantControl(fans, supply, chw, np.ones(b))
    batch_boundary = PlantBoundary(it, np.full(b, 30.0), np.full(b, 20.0), np.ones((b, CONFIG.n_chillers)),
                                   np.ones((b, Z)))
    new_batch, out_batch = step_plant(CONFIG, batch_state, batch_control, batch_boundary, 300.0)
    for i in range(b):
        single_state = initial_state(CONFIG, zones[i], loops[i])
        control = PlantControl(fans[i], supply[i], np.asarray(chw[i]), np.asarray(1.0))
        boundary = PlantBoundary(it[i], np.asarray(30.0), np.asarray(20.0), np.ones(CONFIG.n_chillers), np.ones(Z))
        new_single, out_single = step_plant(CONFIG, single_state, control, boundary, 300.0)
        np.testing.assert_allclose(new_batch.zone_temp_c[i], new_single.zone_temp_c, rtol=1e-13)
        np.testing.assert_allclose(new_batch.chw_supply_c[i], new_single.chw_supply_c, rtol=1e-13)
        for name, value in out_batch._asdict().items():  # every output, each plant's own (a (B, ...) array)
            assert np.shape(value)[0] == b, name
            np.testing.assert_allclose(value[i], getattr(out_single, name), rtol=1e-13, atol=1e-9, err_msg=name)


def test_facility_power_adds_up(make_control, make_boundary):
    _, out = step_plant(CONFIG, initial_state(CONFIG, 30.0, 12.0), make_control(CONFIG), make_boundary(CONFIG), 300.0)
    cooling = out.fan_kw.sum() + out.chw_pump_kw + out.cw_pump_kw + out.tower_kw + out.chiller_kw
    assert abs(float(out.cooling_kw - cooling)) < 1e-9
    assert abs(float(out.facility_kw - (out.it_kw + out.electrical_loss_kw + out.cooling_kw))) < 1e-9
    assert 1.0 < float(out.pue) < 2.0


def test_economiser_carries_the_load_in_cold_weather(make_control, make_boundary):
    state = initial_state(CONFIG, 30.0, 14.0)
    _, cold = step_plant(CONFIG, state, make_control(CONFIG, chw=14.0, econ=1.0), make_boundary(CONFIG, wet=2.0), 300.0)
    _, off = step_plant(CONFIG, state, make_control(CONFIG, chw=14.0, econ=0.0), make_boundary(CONFIG, wet=2.0), 300.0)
    assert float(cold.economiser_fraction) == 1.0
    assert float(cold.chiller_kw) == 0.0
    assert float(off.chiller_kw) > 50.0
    assert float(cold.cooling_kw) < float(off.cooling_kw)


def _idle(chw_setpoint_c: float, chw_supply_c: float, economiser_on: float = 0.0, wet_bulb_c: float = 20.0,
          it_kw: float = 0.0):
    """One plant with its fans stopped (no coil heat) and ``it_kw`` of IT load spread over the zones."""
    state = initial_state(CONFIG, np.full(Z, 25.0), chw_supply_c)
    control = PlantControl(np.zeros(Z), np.full(Z, 20.0), np.asarray(chw_setpoint_c), np.asarray(economiser_on))
    boundary = PlantBoundary(np.full(Z, it_kw / Z), np.asarray(25.0), np.asarray(wet_bulb_c),
                             np.ones(CONFIG.n_chillers), np.ones(Z))
    return state, control, boundary


def test_an_idle_plant_rejects_its_pump_heat_and_runs_the_condenser_pump_at_its_minimum_speed():
    """Fans stopped, no IT: the loop's only heat is the chilled-water pump at its 30 % minimum speed,
    13.2 · 0.3³ = 0.3564 kW; a cycling chiller removes it and the tower rejects that plus the chiller's power
    (well under 1 kW). However little heat is rejected, the condenser pump runs, at 19.5 · 0.3³ = 0.5265 kW."""
    _, out = step_plant_arrays(CONFIG, *_idle(10.0, 10.0), 300.0)
    assert float(out.chw_pump_kw) == pytest.approx(13.2 * 0.3**3, rel=1e-12)
    assert 0.0 < float(out.heat_removed_kj) / 300.0 + float(out.chiller_kw) < 1.0
    assert float(out.cw_pump_kw) == pytest.approx(19.5 * 0.3**3, rel=1e-12)


def test_a_load_of_exactly_one_chillers_capacity_runs_one_chiller_at_full_load():
    """The loop starts warm enough that the heat to remove in 300 s is one chiller's capacity (to rounding):
    Q = 660 kW · CAPFT at the leaving water (clamped to 10 °C) and 24 °C condenser water. One chiller at PLR 1
    draws Q / 5.5 · EIRFT · EIRFPLR(1); two at PLR 0.5 would draw 2 · Q / 5.5 · EIRFT · EIRFPLR(0.5), 0.9 % less."""
    curves = CONFIG.chiller_curves
    condenser_c = 20.0 + CONFIG.tower_approach_k
    unit_kw = CONFIG.chiller_reference_capacity_kw * float(capacity_fraction(curves, 10.0, condenser_c))
    pump_kj = 13.2 * 0.3**3 * 300.0
    chw_supply_c = 5.0 + (unit_kw * 300.0 - pump_kj) / CONFIG.loop_thermal_mass_kj_per_k
    assert chw_supply_c > 10.0
    _, out = step_plant_arrays(CONFIG, *_idle(5.0, chw_supply_c), 300.0)
    assert float(out.chiller_load_kw) == pytest.approx(unit_kw, rel=1e-12)
    eirft = float(eir_temperature_modifier(curves, 10.0, condenser_c))
    one_at_full_load = unit_kw / curves.reference_cop * eirft * float(eir_part_load_modifier(curves, 1.0))
    assert float(out.chiller_kw) == pytest.approx(one_at_full_load, rel=1e-9)


@pytest.mark.parametrize("economiser_on", [0.5, 0.49])
def test_the_economiser_is_on_only_above_one_half(economiser_on):
    """``economiser_on`` is a 0–1 setting, on above 0.5: at 0.5 itself the economiser stays off, in cold weather
    (2 °C wet-bulb, full free cooling when on) as well, on either path."""
    for step in (step_plant_arrays, step_plant):
        _, out = step(CONFIG, *_idle(14.0, 14.0, economiser_on=economiser_on, wet_bulb_c=2.0, it_kw=300.0), 300.0)
        assert float(out.economiser_fraction) == 0.0
    _, on = step_plant_arrays(CONFIG, *_idle(14.0, 14.0, economiser_on=0.51, wet_bulb_c=2.0, it_kw=300.0), 300.0)
    assert float(on.economiser_fraction) == 1.0


@pytest.mark.parametrize("it_kw", [0.3, 2.0, 300.0])
def test_pue_is_facility_over_it_power_for_any_it_load(it_kw):
    """PUE = facility / IT, however small the IT load (a PUE below 1 kW of IT is large, not 0); 0 with none."""
    _, out = step_plant_arrays(CONFIG, *_idle(10.0, 10.0, it_kw=it_kw), 300.0)
    assert float(out.it_kw) == pytest.approx(it_kw, rel=1e-12)
    assert float(out.pue) == pytest.approx(float(out.facility_kw) / it_kw, rel=1e-12)
    _, none = step_plant_arrays(CONFIG, *_idle(10.0, 10.0), 300.0)
    assert float(none.pue) == 0.0
