"""Plant v2's components against published figures and physical trends: the lift chiller, the YorkCalc tower,
the ε-NTU coil and the server power model."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from dcops.physics.chiller import DOE2_CENTRIFUGAL_5_50COP, full_load_cop
from dcops.physics.constants import KW_PER_TON_REFRIGERATION
from dcops.physics.v2.backend import ARRAYS, FLOATS
from dcops.physics.v2.chiller import LiftChiller, iplv_cop, unit_cop, unit_power_kw
from dcops.physics.v2.coil import coil_supply_floor_c, design_ntu
from dcops.physics.v2.servers import ServerThermalModel, server_power_multiplier
from dcops.physics.v2.tower import (
    YORKCALC_COEFFICIENTS,
    VariableSpeedTower,
    tower_approach_k,
    tower_fan_kw,
    yorkcalc_approach_k,
)

CHILLER = LiftChiller()


def test_rated_cop_is_met_at_the_ahri_full_load_point():
    assert unit_cop(FLOATS, CHILLER, 1.0, 6.67, 29.44) == pytest.approx(5.5, rel=1e-12)


def test_iplv_lands_near_the_ashrae_path_b_limit():
    """ASHRAE 90.1 (2010 onward), water-cooled centrifugal chillers of 150–300 tons: Path B (variable speed) asks
    for IPLV ≤ 0.400 kW/ton at a full-load ≤ 0.635 kW/ton; Path A (constant speed) IPLV ≤ 0.550. A rated-COP-5.5
    (0.639 kW/ton) variable-speed unit should sit near the Path B figure, far better than Path A."""
    kw_per_ton = KW_PER_TON_REFRIGERATION / iplv_cop(CHILLER)
    assert 0.36 <= kw_per_ton <= 0.46
    assert kw_per_ton < 0.550 * 0.85


@pytest.mark.parametrize(("condenser_c", "doe2_cop"), [(24.0, 6.2), (29.4, 5.5), (35.0, 4.8)])
def test_full_load_cop_agrees_with_doe2_inside_its_validity(condenser_c, doe2_cop):
    cop = unit_cop(FLOATS, CHILLER, 1.0, 6.67, condenser_c)
    assert cop == pytest.approx(doe2_cop, rel=0.08)
    assert cop == pytest.approx(float(full_load_cop(DOE2_CENTRIFUGAL_5_50COP, 6.67, condenser_c)), rel=0.08)


def test_cop_falls_two_to_four_percent_per_kelvin_of_condenser_water():
    cop = unit_cop(ARRAYS, CHILLER, 1.0, 6.67, np.linspace(24.0, 35.0, 12))
    per_k = (cop[0] / cop[-1]) ** (1.0 / 11.0) - 1.0
    assert 0.02 <= per_k <= 0.04


@pytest.mark.parametrize("plr", [0.3, 0.6, 1.0])
def test_cop_rises_with_chilled_water_and_falls_with_condenser_water_over_the_whole_range(plr):
    """Across 5–20 °C chilled water and 12–35 °C condenser water (where the DOE-2 curves are clamped flat), COP
    is monotone: strictly, wherever the lift is above its head-pressure floor."""
    chw, cw = np.meshgrid(np.linspace(5.0, 20.0, 31), np.linspace(12.0, 35.0, 47), indexing="ij")
    cop = unit_cop(ARRAYS, CHILLER, plr, chw, cw)
    assert np.all(np.diff(cop, axis=0) >= -1e-12) and np.all(np.diff(cop, axis=1) <= 1e-12)
    floor_lift = (cw + (CHILLER.design_condenser_range_k + CHILLER.condenser_approach_k) * plr) - (
        chw - CHILLER.evaporator_approach_k * plr) > CHILLER.min_lift_k + 0.5
    rising = np.diff(cop, axis=0)[floor_lift[1:] & floor_lift[:-1]]
    assert rising.size > 500 and np.all(rising > 0)
    # The clamped DOE-2 set gains nothing from chilled water above 10 °C; this model does.
    assert unit_cop(FLOATS, CHILLER, plr, 16.0, 29.4) > 1.15 * unit_cop(FLOATS, CHILLER, plr, 10.0, 29.4)


def test_part_load_has_an_interior_efficiency_peak_and_false_loads_below_its_minimum():
    plr = np.linspace(0.05, 1.0, 96)
    cop = unit_cop(ARRAYS, CHILLER, plr, 7.0, 29.44)
    peak = plr[np.argmax(cop)]
    assert 0.3 <= peak <= 0.8 and cop.max() > 1.03 * cop[-1]
    low = unit_cop(ARRAYS, CHILLER, np.array([0.05, 0.10]), 7.0, 29.44)
    assert np.all(low < 0.8 * cop.max())  # below p_min the unit runs as at p_min, for less cooling


def test_chiller_parameters_are_validated():
    with pytest.raises(ValueError, match="fixed_loss_fraction"):
        LiftChiller(rated_cop=5.0, fixed_loss_fraction=0.25)
    with pytest.raises(ValueError, match="rated_cop"):
        LiftChiller(rated_cop=0.9)


def test_yorkcalc_coefficients_reproduce_the_reference_tower_design_point():
    """At the CTI design point (25.6 °C wet-bulb, 5.56 K range, L/G = 1) the reference tower's approach is 3.89 K
    (7 °F); a transcription error in any leading coefficient would move it by far more than 0.1 K."""
    assert yorkcalc_approach_k(FLOATS, 25.56, 5.56, 1.0) == pytest.approx(3.89, abs=0.1)


def test_sized_tower_meets_its_design_approach_and_behaves_like_a_tower():
    tower = VariableSpeedTower(design_rejection_kw=1500.0, design_fan_kw=85.0)
    fr0 = tower.design_water_flow_ratio
    assert tower_approach_k(FLOATS, fr0, 25.56, 5.56, 1.0, 1.0) == pytest.approx(3.89, abs=1e-6)
    speeds = np.linspace(0.2, 1.0, 17)
    approach = tower_approach_k(ARRAYS, fr0, 18.0, 4.0, 1.0, speeds)
    assert np.all(np.diff(approach) < 0)  # more air, colder water
    wet_bulbs = np.linspace(0.0, 26.0, 27)
    by_wb = tower_approach_k(ARRAYS, fr0, wet_bulbs, 4.0, 1.0, 1.0)
    assert np.all(np.diff(by_wb) < 0)  # cold air holds less heat per kelvin: approach widens in winter
    by_range = tower_approach_k(ARRAYS, fr0, 18.0, np.linspace(2.0, 10.0, 9), 1.0, 1.0)
    assert np.all(np.diff(by_range) > 0)  # more heat, warmer water
    assert tower_fan_kw(FLOATS, 85.0, 0.5) == pytest.approx(85.0 / 8.0)  # cube law: half speed, 1/8 power


def test_coil_meets_its_design_approach_and_needs_water_flow():
    ntu, cr = design_ntu(12.0, 3.0, 6.0)
    air_cap, water_cap = 10.0, 20.0  # C_a / C_w = 6 / 12 at design
    floor = coil_supply_floor_c(FLOATS, 30.0, 15.0, air_cap, water_cap, ntu * air_cap, air_cap)
    assert floor == pytest.approx(15.0 + 3.0, abs=1e-9)  # 12 K drop, 3 K above the water
    halves = [coil_supply_floor_c(FLOATS, 30.0, 15.0, air_cap, water_cap * f, ntu * air_cap, air_cap)
              for f in (1.0, 0.6, 0.3)]
    assert halves[0] < halves[1] < halves[2]  # less water, warmer coldest air
    more_air = coil_supply_floor_c(FLOATS, 30.0, 15.0, 1.3 * air_cap, water_cap, ntu * air_cap, air_cap)
    assert more_air > floor
    # Energy: the air cannot be cooled below the water, whatever the flows.
    grid = coil_supply_floor_c(ARRAYS, 30.0, 15.0, np.linspace(0.1, 40.0, 50)[:, None],
                               np.linspace(0.1, 40.0, 50)[None, :], ntu * air_cap, air_cap)
    assert np.all(grid >= 15.0 - 1e-9) and np.all(grid <= 30.0 + 1e-9)
    assert cr == pytest.approx(0.5)


def test_server_power_follows_the_ashrae_envelope():
    """ASHRAE TC 9.9 (2011): relative to a 20 °C inlet, server power rises a few per cent by 27 °C and roughly
    7–20 % by 35 °C. Monotone, and flat (exactly 1) at cool inlets."""
    model = ServerThermalModel()
    at = {t: server_power_multiplier(FLOATS, model, t) for t in (15.0, 20.0, 27.0, 35.0)}
    assert at[15.0] == 1.0 and at[20.0] == 1.0
    assert 1.01 <= at[27.0] <= 1.05
    assert 1.07 <= at[35.0] <= 1.20
    temps = np.linspace(10.0, 45.0, 71)
    m = server_power_multiplier(ARRAYS, model, temps)
    assert np.all(np.diff(m) >= 0) and math.isfinite(float(m.max()))


@pytest.mark.parametrize(("inlet_c", "fan_speed", "leak_exponent"), [
    (31.0, 0.3 + 6.0 * 0.7 / 12.0, 11.0 / 20.0),  # fans part-way up the ramp
    (40.0, 1.0, 20.0 / 20.0),  # fans at full speed above 37 °C
    (50.0, 1.0, 25.0 / 20.0),  # throttled: leakage held at its 45 °C value
])
def test_server_power_is_the_documented_fan_and_leakage_sum_worked_by_hand(inlet_c, fan_speed, leak_exponent):
    """u = 0.3 + (T − 25)·0.7/12 clipped to [0.3, 1]; P = 1 + 0.05·(e^((min(T, 45) − 20)/20) − 1) + 0.08·(u³ − 0.3³)."""
    expected = 1.0 + 0.05 * (math.exp(leak_exponent) - 1.0) + 0.08 * (fan_speed ** 3 - 0.3 ** 3)
    assert server_power_multiplier(FLOATS, ServerThermalModel(), inlet_c) == pytest.approx(expected, rel=1e-12)
    assert float(server_power_multiplier(ARRAYS, ServerThermalModel(), np.array([inlet_c]))[0]) == pytest.approx(
        expected, rel=1e-12)


def test_server_power_of_a_custom_model_uses_its_own_knee_and_full_speed():
    """Knee 20 °C, full speed at 45 °C: at 30 °C the fans run at 0.5 + 10·0.5/25 = 0.7 of full speed."""
    model = ServerThermalModel(fan_idle_speed=0.5, fan_knee_c=20.0, fan_full_speed_c=45.0, leakage_fraction=0.0)
    assert server_power_multiplier(FLOATS, model, 30.0) == pytest.approx(1.0 + 0.08 * (0.7 ** 3 - 0.5 ** 3), rel=1e-12)


def test_server_leakage_exponent_is_capped_so_a_tiny_scale_cannot_overflow():
    """(T − T_ref)/θ is clipped at 50: leakage e^50 − 1 at most, whatever θ."""
    model = ServerThermalModel(leakage_scale_k=0.1, fan_power_fraction=0.0)
    assert server_power_multiplier(FLOATS, model, 30.0) == pytest.approx(1.0 + 0.05 * math.expm1(50.0), rel=1e-12)


@pytest.mark.parametrize("fields", [
    {"fan_idle_speed": 1.0}, {"fan_idle_speed": 1.5}, {"fan_idle_speed": -0.1}, {"fan_full_speed_c": 25.0},
    {"fan_full_speed_c": 20.0}, {"leakage_scale_k": 0.0}, {"leakage_scale_k": -1.0},
    {"fan_power_fraction": -0.01}, {"leakage_fraction": -0.01},
])
def test_a_server_model_outside_its_domain_is_refused(fields):
    with pytest.raises(ValueError, match="ServerThermalModel"):
        ServerThermalModel(**fields)


def test_a_server_model_at_the_edges_of_its_domain_is_accepted():
    for fields in ({"fan_idle_speed": 0.0}, {"fan_power_fraction": 0.0}, {"leakage_fraction": 0.0},
                   {"leakage_scale_k": 0.5}, {"fan_idle_speed": 0.99}):
        ServerThermalModel(**fields)


def test_a_server_model_is_immutable():
    """One model is shared by every zone and episode that uses it, so it cannot be changed in place."""
    with pytest.raises(dataclasses.FrozenInstanceError):
        ServerThermalModel().throttle_c = 50.0  # type: ignore[misc]


def test_unit_power_is_the_documented_lift_formula_worked_by_hand():
    """Module docstring of ``physics/v2/chiller.py`` at half load, 10 °C leaving chilled water and 20 °C entering
    condenser water, with the defaults (660 kW, COP 5.5, approaches 1.5 K, range 5.56 K, fixed loss 1 %):

    η from the AHRI point: T_evap = 6.67 − 1.5 = 5.17 °C, T_cond = 29.44 + 5.56 + 1.5 = 36.5 °C, lift 31.33 K,
    η = 31.33 / (278.32 · (1/5.5 − 0.01)); at half load T_evap = 10 − 0.75 = 9.25 °C, T_cond = 20 + 7.06 · 0.5 =
    23.53 °C, lift 14.28 K, P = 660 · 0.5 · 14.28 / (η · 282.40) + 6.6 kW."""
    eta = 31.33 / (278.32 * (1.0 / 5.5 - 0.01))
    assert CHILLER.carnot_efficiency == pytest.approx(eta, rel=1e-12)
    expected_kw = 660.0 * 0.5 * 14.28 / (eta * 282.40) + 6.6
    assert unit_power_kw(FLOATS, CHILLER, CHILLER.carnot_efficiency, 0.5, 10.0, 20.0) == pytest.approx(
        expected_kw, rel=1e-12)
    assert unit_cop(FLOATS, CHILLER, 0.5, 10.0, 20.0) == pytest.approx(330.0 / expected_kw, rel=1e-12)


def test_unit_power_holds_the_minimum_lift_and_false_loads_below_the_minimum_ratio():
    """At 5 % load the unit runs as at 15 % (p_min); at 18 °C chilled water and 12 °C condenser water the lift
    (12 + 7.06·0.15 − 18 + 1.5·0.15 < 0) is held at the 12 K floor."""
    eta = CHILLER.carnot_efficiency
    expected_kw = 660.0 * 0.15 * 12.0 / (eta * (18.0 - 1.5 * 0.15 + 273.15)) + 6.6
    assert unit_power_kw(FLOATS, CHILLER, eta, 0.05, 18.0, 12.0) == pytest.approx(expected_kw, rel=1e-12)


def test_iplv_is_the_ahri_weighted_sum_of_the_four_rating_points():
    """AHRI 550/590: IPLV = 0.01·A + 0.42·B + 0.45·C + 0.12·D, the COPs at 100 % (29.44 °C entering condenser
    water), 75 % (23.89 °C), 50 % (18.33 °C) and 25 % (18.33 °C) load."""
    cop = lambda p, t: unit_cop(FLOATS, CHILLER, p, 6.67, t)  # noqa: E731
    expected = 0.01 * cop(1.0, 29.44) + 0.42 * cop(0.75, 23.89) + 0.45 * cop(0.5, 18.33) + 0.12 * cop(0.25, 18.33)
    assert iplv_cop(CHILLER) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("fields", [
    {"reference_capacity_kw": 0.0}, {"rated_cop": 1.0}, {"min_part_load_ratio": 0.0}, {"min_part_load_ratio": 1.0},
    {"min_part_load_ratio": -0.5}, {"min_part_load_ratio": 1.5}, {"min_lift_k": 0.0}, {"min_lift_k": -1.0},
    {"reference_capacity_kw": -1.0}, {"fixed_loss_fraction": 1.0 / 5.5},
])
def test_a_chiller_outside_its_domain_is_refused(fields):
    with pytest.raises(ValueError, match="LiftChiller"):
        LiftChiller(**fields)


def test_a_chiller_at_the_edges_of_its_domain_is_accepted_and_immutable():
    for fields in ({"reference_capacity_kw": 0.5}, {"rated_cop": 1.5}, {"min_lift_k": 0.5},
                   {"min_part_load_ratio": 0.01}, {"min_part_load_ratio": 0.99}, {"fixed_loss_fraction": 0.18}):
        LiftChiller(**fields)
    with pytest.raises(dataclasses.FrozenInstanceError):
        CHILLER.rated_cop = 6.0  # type: ignore[misc]


@pytest.mark.parametrize(("args", "ntu", "cr"), [
    ((12.0, 3.0, 6.0), 2.0 * math.log(3.0), 0.5),  # C_a/C_w = 0.5, ε = 12/15 = 0.8: NTU = ln((1 − 0.4)/0.2)/0.5
    ((12.0, 12.0, 18.0), 3.0 * math.log(2.0), 2.0 / 3.0),  # C_a/C_w = 1.5, C_min = C_w: ε = 12/(24·2/3) = 0.75
    ((12.0, 3.0, 12.0), 4.0, 1.0),  # balanced, ε = 0.8: NTU = ε/(1 − ε)
    ((4.0, 8.0, 4.0), 0.5, 1.0),  # balanced, ε = 1/3
    ((4.0, 8.0, 2.0), 2.0 * math.log(1.25), 0.5),  # C_a/C_w = 0.5, ε = 1/3: NTU = ln((1 − 1/6)/(2/3))/0.5
])
def test_design_ntu_inverts_the_counterflow_effectiveness_by_hand(args, ntu, cr):
    assert design_ntu(*args) == pytest.approx((ntu, cr), rel=1e-12)


def test_design_ntu_defaults_are_the_usual_crah_selection():
    assert design_ntu() == design_ntu(12.0, 3.0, 6.0)


@pytest.mark.parametrize("args", [(12.0, 0.0, 6.0), (-12.0, 3.0, 6.0), (12.0, -1.0, 6.0)])
def test_design_conditions_no_counterflow_coil_can_meet_are_refused(args):
    with pytest.raises(ValueError, match="effectiveness in \\(0, 1\\)"):
        design_ntu(*args)


def test_coil_supply_floor_at_half_airflow_is_the_documented_formula_worked_by_hand():
    """C_a = 5, C_w = 10 kW/K (C_r = 0.5), design UA 20 kW/K at C_a = 10: UA = 20·0.5^0.6, NTU = UA/5,
    ε = (1 − e^(−NTU/2)) / (1 − e^(−NTU/2)/2), supply = 30 − ε·(30 − 15)."""
    ntu = 20.0 * 0.5 ** 0.6 / 5.0
    e = math.exp(-ntu * 0.5)
    expected = 30.0 - (1.0 - e) / (1.0 - 0.5 * e) * 15.0
    for xp in (FLOATS, ARRAYS):
        assert float(coil_supply_floor_c(xp, 30.0, 15.0, 5.0, 10.0, 20.0, 10.0)) == pytest.approx(expected, rel=1e-12)


def test_coil_supply_floor_with_balanced_flows_uses_the_limit_effectiveness():
    """C_a = C_w = 10 kW/K: ε = NTU/(1 + NTU) (the C_r → 1 limit), on floats and arrays alike."""
    ntu = 20.0 / 10.0
    expected = 30.0 - ntu / (1.0 + ntu) * 15.0
    for xp in (FLOATS, ARRAYS):
        assert float(coil_supply_floor_c(xp, 30.0, 15.0, 10.0, 10.0, 20.0, 10.0)) == pytest.approx(expected, rel=1e-12)


def test_a_coil_without_water_flow_cools_nothing():
    for xp in (FLOATS, ARRAYS):
        assert float(coil_supply_floor_c(xp, 30.0, 15.0, 10.0, 0.0, 20.0, 10.0)) == pytest.approx(30.0, abs=1e-6)


def test_an_idle_coils_air_sits_at_the_chilled_water_temperature():
    for xp in (FLOATS, ARRAYS):
        assert float(coil_supply_floor_c(xp, 30.0, 15.0, 0.0, 10.0, 20.0, 10.0)) == pytest.approx(15.0, abs=1e-6)


# The YorkCalc coefficients as the EnergyPlus Engineering Reference tabulates them ("Approach Temperature
# Correlation Coefficients", YorkCalc column, Coeff(1)–Coeff(27)); Modelica Buildings' Correlations/yorkCalc.mo
# lists the same values. Typed here from that table, independently of physics/v2/tower.py.
ENERGYPLUS_YORKCALC = (
    -0.359741205, -0.055053608, 0.0023850432, 0.173926877, -0.0248473764, 0.00048430224, -0.005589849456,
    0.0005770079712, -1.342427256e-05, 2.84765801111111, -0.121765149, 0.0014599242, 1.680428651, -0.0166920786,
    -0.0007190532, -0.025485194448, 4.87491696e-05, 2.719234152e-05, -0.0653766255555556, -0.002278167,
    0.0002500254, -0.0910565458, 0.00318176316, 3.8621772e-05, -0.0034285382352, 8.56589904e-06, -1.516821552e-06,
)


def test_yorkcalc_coefficients_are_the_energyplus_table():
    assert YORKCALC_COEFFICIENTS == ENERGYPLUS_YORKCALC


@pytest.mark.parametrize(("wet_bulb", "range_k", "lg"), [
    (25.56, 5.56, 1.0), (-10.0, 2.0, 0.3), (12.0, 15.0, 2.5), (20.0, 8.0, 6.0), (0.0, 1.5, 7.9),
])
def test_yorkcalc_is_the_documented_27_term_sum(wet_bulb, range_k, lg):
    """approach = Σ c_ijk · T_wb^i · R^j · LG^k, coefficient index i + 3j + 9k (EnergyPlus's order), summed term
    by term: the module's nested form must give the same value."""
    expected = sum(ENERGYPLUS_YORKCALC[i + 3 * j + 9 * k] * wet_bulb ** i * range_k ** j * lg ** k
                   for i in range(3) for j in range(3) for k in range(3))
    assert yorkcalc_approach_k(FLOATS, wet_bulb, range_k, lg) == pytest.approx(expected, rel=1e-12, abs=1e-12)
    assert float(yorkcalc_approach_k(ARRAYS, np.array([wet_bulb]), range_k, lg)[0]) == pytest.approx(
        expected, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize(("held", "at_bound", "inside"), [
    ({"range_k": 30.0}, {"range_k": 22.2222}, {"range_k": 21.5}),  # range 1.1111–22.2222 K
    ({"range_k": 0.5}, {"range_k": 1.1111}, {"range_k": 1.5}),
    ({"wet_bulb_c": 30.0}, {"wet_bulb_c": 26.6667}, {"wet_bulb_c": 26.0}),  # wet-bulb −34.4–26.6667 °C
    ({"wet_bulb_c": -40.0}, {"wet_bulb_c": -34.4}, {"wet_bulb_c": -34.0}),
    ({"liquid_to_gas": 10.0}, {"liquid_to_gas": 8.0}, {"liquid_to_gas": 7.5}),  # LG at most 8
])
def test_yorkcalc_inputs_are_held_to_the_published_validity(held, at_bound, inside):
    point = {"wet_bulb_c": 15.0, "range_k": 6.0, "liquid_to_gas": 1.5}
    approach = lambda **kw: yorkcalc_approach_k(FLOATS, **(point | kw))  # noqa: E731
    assert approach(**held) == approach(**at_bound) != approach(**inside)


def test_a_towers_approach_is_never_negative():
    """At 15 °C wet-bulb, 1.2 K range and L/G 0.2 the correlation itself goes below zero (−0.19 K): the tower
    returns water at the wet-bulb, no colder. Where the correlation is positive but small it is kept as is."""
    assert yorkcalc_approach_k(FLOATS, 15.0, 1.2, 0.2) < 0.0
    assert tower_approach_k(FLOATS, 0.2, 15.0, 1.2, 1.0, 1.0) == 0.0
    small = yorkcalc_approach_k(FLOATS, 25.0, 1.2, 0.5)
    assert 0.0 < small < 1.0 and tower_approach_k(FLOATS, 0.5, 25.0, 1.2, 1.0, 1.0) == pytest.approx(small, rel=1e-12)


def test_tower_fan_power_is_the_cube_law_within_zero_and_full_speed():
    assert tower_fan_kw(FLOATS, 85.0, -0.5) == 0.0
    assert tower_fan_kw(FLOATS, 85.0, 1.5) == 85.0
    np.testing.assert_allclose(tower_fan_kw(ARRAYS, 85.0, np.array([-0.5, 0.3, 1.5])), [0.0, 85.0 * 0.027, 85.0])


@pytest.mark.parametrize("fields", [{"design_rejection_kw": 0.0, "design_fan_kw": 5.0},
                                    {"design_rejection_kw": -1.0, "design_fan_kw": 5.0},
                                    {"design_rejection_kw": 100.0, "design_fan_kw": -0.5},
                                    {"design_rejection_kw": 100.0, "design_fan_kw": -5.0}])
def test_a_tower_outside_its_domain_is_refused(fields):
    with pytest.raises(ValueError, match="VariableSpeedTower"):
        VariableSpeedTower(**fields)


def test_a_tower_with_a_free_fan_is_accepted():
    """A fan of no power (0 kW; or 0.5 kW, a small cell) is a valid tower."""
    VariableSpeedTower(design_rejection_kw=100.0, design_fan_kw=0.0)
    tower = VariableSpeedTower(design_rejection_kw=0.5, design_fan_kw=0.5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        tower.design_fan_kw = 1.0  # type: ignore[misc]  # its design flow ratio is derived from it
