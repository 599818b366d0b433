"""The plant v2 PID: its loops push the documented way on hand-worked telemetry, the integral freezes while the
output is saturated, and everything after the air side is the tuned rule's plant side."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import dcops
from dcops.agents.cooling.pid_v2 import PIDV2Controller
from dcops.agents.cooling.rule_v2 import ControllerContextV2, RuleV2Controller, controller_context_v2
from dcops.cooling_env_v1 import CoolingEnvV1, evaluation_case_spec
from dcops.physics.v2.interface import PLANT_FIELDS, ZONE_FIELDS, TelemetryV2

DT_S = 300.0  # 1/12 h per step


def context(n_zones: int = 2) -> ControllerContextV2:
    return ControllerContextV2(np.full(n_zones, 100.0), np.ones(n_zones), np.full(n_zones, 10.0), 12.0, 2, 400.0,
                               20.0, DT_S)


def telemetry(inlet_c, return_c, supply_c, **plant: float) -> np.ndarray:
    """A telemetry vector with the given zone temperatures, load 0.5, fans 0.6 and a mild plant state."""
    zones = {"inlet_c": inlet_c, "return_c": return_c, "load_fraction": [0.5] * len(inlet_c),
             "fan_speed": [0.6] * len(inlet_c), "supply_c": supply_c}
    values = {"chw_supply_c": 12.0, "chw_return_c": 18.0, "cw_supply_c": 25.0, "chillers_available": 1.0,
              "chillers_on": 1.0, "wet_bulb_c": 18.0, "price_per_kwh": 0.15, "tank_temp_c": 12.0, **plant}
    zone_part = np.column_stack([zones[f] for f in ZONE_FIELDS]).reshape(-1)
    return np.concatenate([zone_part, [values.get(f, 0.0) for f in PLANT_FIELDS]]).astype(np.float32)


def pid(**gains: float) -> PIDV2Controller:
    controller = PIDV2Controller(**{"target_inlet_c": 25.0, "supply_bias_c": 21.0, "kp": 0.5, "ki": 2.0,
                                    "target_delta_t_k": 11.0, "fan_bias": 0.6, "kp_fan": 0.02, "ki_fan": 0.1,
                                    **gains})
    controller.reset(context())
    return controller


def test_a_warmer_reported_inlet_lowers_that_zones_supply_setpoint():
    controller = pid()
    # Zone 0 at its target, zone 1 reported 2 K warm: supply = 21 − (0.5·2 + 2·2·(1/12)) = 19.6667 °C.
    setpoints = controller.act(telemetry([25.0, 27.0], [34.0, 34.0], [23.0, 23.0]))
    supply = setpoints[2:4]
    assert supply[0] == pytest.approx(21.0)
    assert supply[1] == pytest.approx(21.0 - 1.0 - 4.0 / 12.0, abs=1e-5)
    # A cold inlet warms the supply: 1 K cold in zone 0 → 21 + 0.5 + 2·(1/12).
    setpoints = controller.act(telemetry([24.0, 25.0], [34.0, 34.0], [23.0, 23.0]))
    assert setpoints[2] == pytest.approx(21.0 + 0.5 + 2.0 / 12.0, abs=1e-5)


def test_a_wider_crah_rise_opens_the_fans():
    controller = pid()
    # ΔT = 37 − 23 = 14 K, 3 K over the target: fan = 0.6 + 0.02·3 + 0.1·3·(1/12) = 0.685; zone 1 at 11 K stays 0.6.
    setpoints = controller.act(telemetry([25.0, 25.0], [37.0, 34.0], [23.0, 23.0]))
    assert setpoints[0] == pytest.approx(0.685, abs=1e-6)
    assert setpoints[1] == pytest.approx(0.6, abs=1e-6)


def test_saturation_freezes_the_integral_so_the_loop_recovers_at_once():
    controller = pid()
    hot = telemetry([45.0, 26.0], [34.0, 34.0], [23.0, 23.0])  # zone 0: 20 K over → supply pinned at 15 °C
    for _ in range(12):
        setpoints = controller.act(hot)
        assert setpoints[2] == pytest.approx(15.0)
    # Zone 0 wound nothing up while pinned; zone 1 (1 K over, unsaturated) integrated 12 steps · 1 K · 1/12 h.
    np.testing.assert_allclose(controller._supply.integral, [0.0, 1.0], atol=1e-9)
    # Back at the target, zone 0's supply returns straight to the bias (a wound-up integral would hold it at 15).
    setpoints = controller.act(telemetry([25.0, 25.0], [34.0, 34.0], [23.0, 23.0]))
    assert setpoints[2] == pytest.approx(21.0)
    assert setpoints[3] == pytest.approx(21.0 - 2.0 * 1.0, abs=1e-5)


def test_the_fan_loop_does_not_wind_up_at_full_speed():
    controller = pid()
    for _ in range(24):
        setpoints = controller.act(telemetry([25.0, 25.0], [63.0, 34.0], [23.0, 23.0]))  # 29 K over: fan at 1.0
        assert setpoints[0] == pytest.approx(1.0)
    assert controller._fans.integral[0] == 0.0


def test_chilled_water_follows_the_coldest_supply_setpoint():
    controller = pid(kp=1.0, ki=0.0)
    plant = controller.plant
    setpoints = controller.act(telemetry([25.0, 28.0], [34.0, 34.0], [23.0, 23.0]))  # zone 1 → 21 − 3 = 18 °C
    chw = setpoints[4]
    assert chw == pytest.approx(18.0 - 3.0 - plant.chw_margin_k)


@pytest.mark.parametrize("make", [lambda: dcops.make_env("cooling/daily_operations_v1"),  # a tank, the cost task
                                  lambda: dcops.make_env("cooling/multi_zone_sensor_drift_v1"),  # no load meters
                                  lambda: CoolingEnvV1(evaluation_case_spec("phoenix", "july", "chiller_trip"))])
def test_its_plant_side_is_the_rules_for_the_same_air_side(make):
    """A shadow rule given the PID's coldest supply set-point as its own ``supply_c`` writes, step by step, the
    same chilled water, tower, staging, pump and tank set-points as the PID (its winter mode off: that is air
    side)."""
    env = make()
    plant = replace(RuleV2Controller.tuned("eval_family_v1"), free_wet_bulb_c=-100.0, tank_charge_price=0.3)
    controller = PIDV2Controller(kp=0.25, ki=1.0, target_delta_t_k=13.0, plant=replace(plant))
    shadow = replace(plant)
    observation, _ = env.reset(seed=2)
    controller.reset(controller_context_v2(env))
    shadow.reset(controller_context_v2(env))
    n = controller_context_v2(env).n_zones
    done, steps, tripped, charged = False, 0, False, False
    while not done:
        setpoints = controller.act(observation)
        shadow.supply_c = float(setpoints[n:2 * n].min())
        expected = shadow.act(observation)
        np.testing.assert_array_equal(setpoints[2 * n:], expected[2 * n:])
        tripped |= TelemetryV2.parse(observation, n).chillers_available < 1.0
        charged |= bool(setpoints[-1] > 0.0)
        observation, _, done, _, _ = env.step(setpoints)
        steps += 1
    assert steps == env.unwrapped.task.n_steps
    assert charged == env.unwrapped.task.plant.tank.installed  # the storage and trip branches were exercised
    assert tripped == ("chiller_trip" in env.unwrapped.task.task_id)


def test_tuned_pid_runs_over_the_plant_side_of_the_rule_tuned_for_the_same_target():
    """The PID's gains were tuned over the plant side of the rule tuned for the same target: the rule it runs over
    now must be the one recorded beside its gains, so re-tuning the rule cannot silently change the PID."""
    import json
    from importlib import resources

    record = json.loads(resources.files("dcops.agents.cooling").joinpath("pid_v2_tuned.json").read_text())
    for target in record["targets"]:
        controller = PIDV2Controller.tuned(target)
        assert controller.plant.parameters() == record["targets"][target]["plant_rule_params"], target
        assert controller.plant.parameters() == RuleV2Controller.tuned(target).parameters()
        assert controller.gains() != PIDV2Controller().gains()
    with pytest.raises(KeyError, match="tuned"):
        PIDV2Controller.tuned("cooling/no_such_task_v1")


@pytest.mark.parametrize("command, module, shown", [("tune-rule-v2", "tune_rule_v2", "params"),
                                                    ("tune-pid-v2", "tune_pid_v2", "gains")])
def test_the_tuning_commands_write_each_target_as_soon_as_it_is_tuned(tmp_path, monkeypatch, capsys, command, module,
                                                                      shown):
    """`dcops tune-rule-v2` / `tune-pid-v2` tune the chosen targets in turn and write each one before the next."""
    import argparse
    import importlib

    from dcops.training.cooling import commands

    tuning = importlib.import_module(f"dcops.training.cooling.{module}")
    written = []
    monkeypatch.setattr(tuning, "tune", lambda target, workers, progress=None: {
        shown: {"x": len(target)}, "tuning_result": {"score": 0.5}, "workers": workers})
    monkeypatch.setattr(tuning, "write_tuned", lambda results, out: written.append((list(results), out)))
    run = commands._run_tune_v2 if module == "tune_rule_v2" else commands._run_tune_pid_v2
    out = tmp_path / "tuned.json"
    assert run(argparse.Namespace(target="cooling/daily_operations_v1", workers=1, out=str(out))) == 0
    assert written == [(["cooling/daily_operations_v1"], out)]
    assert "cooling/daily_operations_v1: {'x': 27}" in capsys.readouterr().out
    written.clear()
    assert run(argparse.Namespace(target="all", workers=1, out=str(out))) == 0
    assert [targets for targets, _ in written] == [[t] for t in tuning.targets()] and len(written) > 1
