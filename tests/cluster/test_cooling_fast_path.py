"""The rule controller's fast path makes exactly the decisions of RuleBasedController fed with telemetry."""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import pytest

from dcops.agents.cooling import ControllerContext, PIDController, RuleBasedController
from dcops.cluster.config import ClusterConfig
from dcops.cluster.cooling import RuleFastPath, TelemetryController
from dcops.cluster.decisions import resolve_structured
from dcops.cluster.episode import ClusterEpisode
from dcops.cluster.requests import Priority, Request, RequestTruth, Submission
from dcops.physics.faults import ChillerTrip

WEIGHTS = [4.0, 4.0, 2.0, 1.0]  # unequal, so the fault procedure's triage of the least critical zone runs


class Recorder:
    """Wraps a plant controller and keeps every control it returns."""

    def __init__(self, inner):
        self.inner, self.name, self.controls = inner, inner.name, []

    def reset(self, episode):
        self.inner.reset(episode)

    def begin_window(self, it_kw, first_step):
        self.inner.begin_window(it_kw, first_step)

    def control(self, i, state):
        control = self.inner.control(i, state)
        self.controls.append(np.concatenate([control.fan_speed, control.supply_setpoint_c,
                                             [float(control.chw_setpoint_c), float(control.economiser_on)]]))
        return control


JOBS = [("a", "H100", 96, 150.0, 3.0), ("b", "H100", 64, 100.0, 7.0), ("c", "A100", 100, 100.0, 9.0),
        ("d", "L40S", 120, 60.0, 5.0)]


TRIP = (ChillerTrip(start_s=2.0 * 3600.0, chiller=0, duration_s=5 * 3600.0),)


def run(controller, faults=TRIP, seeds=(7, 8), jobs=JOBS) -> tuple[Recorder, ClusterEpisode]:
    """One episode of ``jobs`` (all accepted in window 0) under ``faults``, every control recorded."""
    config = ClusterConfig(faults=faults)
    recorder = Recorder(controller)
    ep = ClusterEpisode(config, recorder)
    ep.reset(np.random.default_rng(seeds[0]), np.random.default_rng(seeds[1]), ["team_0"])
    ep.submit([Submission(Request(rid, "team_0", "finetune", "", kw, h, gpus, gpu, Priority.HIGH, 9, False, 1.0, 0),
                          RequestTruth(Priority.HIGH, 9, False, h)) for rid, gpu, gpus, kw, h in jobs])
    for w in range(config.n_windows):
        ids = ep.pending_ids()
        ep.decide(resolve_structured([{"request_id": i, "decision": "ACCEPT"} for i in ids], ids, w, config.n_windows))
        ep.run_window()
    return recorder, ep


def test_fast_path_matches_the_rule_controller_bit_for_bit_through_a_chiller_trip():
    plant = ClusterConfig().plant_config()
    context = ControllerContext.from_plant(plant, WEIGHTS, 300.0)
    fast, fast_ep = run(RuleFastPath(zone_weights=np.asarray(WEIGHTS), **asdict(RuleBasedController())))
    slow, slow_ep = run(TelemetryController(RuleBasedController(), context))
    assert len(fast.controls) == len(slow.controls) == 144
    for step, (a, b) in enumerate(zip(fast.controls, slow.controls, strict=True)):
        assert np.array_equal(a, b), f"step {step}: {a} != {b}"
    assert np.array_equal(fast_ep.facility_kw, slow_ep.facility_kw)
    triaged = [c for c in slow.controls if c[3] == pytest.approx(0.2)]
    assert triaged, "the scenario should exercise the triage rule"


def test_any_telemetry_controller_can_run_the_cluster_plant():
    plant = ClusterConfig().plant_config()
    recorder, ep = run(TelemetryController(PIDController(), ControllerContext.from_plant(plant, WEIGHTS, 300.0)))
    assert len(recorder.controls) == 144
    assert np.all(np.isfinite(ep.facility_kw)) and ep.facility_kw.min() > 0.0


# ---------------------------------------------------------------------------------------------------------------
# The PPO controller's float path (``act_values``): telemetry and set-points as Python floats, same bits.

class ArrayOnly:
    """A controller seen only through ``act`` (arrays in and out), so TelemetryController takes the vector path."""

    def __init__(self, inner):
        self.inner, self.name = inner, inner.name

    def reset(self, context):
        self.inner.reset(context)

    def act(self, telemetry):
        return self.inner.act(telemetry)


def run_faulty(controller) -> tuple[Recorder, ClusterEpisode]:
    """Two days of jobs through a chiller trip, a fan failure and a drifting inlet sensor."""
    from dcops.physics.faults import FanFailure, SensorDrift

    return run(controller, faults=(ChillerTrip(start_s=2.0 * 3600.0, chiller=1, duration_s=4 * 3600.0),
                                   FanFailure(start_s=5.0 * 3600.0, zone=2, units_lost=0.5),
                                   SensorDrift(start_s=1.0 * 3600.0, zone=0, rate_k_per_h=1.5)),
               seeds=(11, 12), jobs=[*JOBS, ("e", "H100", 32, 50.0, 2.0)])


def test_the_ppo_float_path_steps_the_plant_exactly_as_the_vector_path_through_faults():
    from dcops.agents.cooling import PPOController

    plant = ClusterConfig().plant_config()
    context = ControllerContext.from_plant(plant, WEIGHTS, 300.0)
    fast, fast_ep = run_faulty(TelemetryController(PPOController(), context))
    assert fast.inner._act_values is not None  # the float path ran
    slow, slow_ep = run_faulty(TelemetryController(ArrayOnly(PPOController()), context))
    assert slow.inner._act_values is None
    assert len(fast.controls) == len(slow.controls) == 144
    for step, (a, b) in enumerate(zip(fast.controls, slow.controls, strict=True)):
        assert np.array_equal(a, b), f"step {step}: {a} != {b}"
    for name in ("facility_kw", "cooling_kw", "inlet_c"):
        assert np.array_equal(getattr(fast_ep, name), getattr(slow_ep, name)), name
    # The scenario reaches the interesting region: the policy moved its set-points and the trims acted.
    controls = np.array(fast.controls)
    assert np.ptp(controls[:, 4]) > 0.5 and np.ptp(controls[:, 0]) > 0.05


def test_the_episode_telemetry_values_are_the_float32_vector():
    from dcops.agents.cooling import PPOController

    plant = ClusterConfig().plant_config()
    _, ep = run_faulty(TelemetryController(PPOController(), ControllerContext.from_plant(plant, WEIGHTS, 300.0)))
    it_row = np.array([500.0, 0.0, 2e5, 120.0])  # one load far past its box: clipped in both
    for k in (0, 1, 60, 143):
        values = ep.telemetry_values(k, it_row)
        vector = ep.telemetry(k, it_row)
        assert vector.dtype == np.float32 and all(type(v) is float for v in values)
        assert np.array_equal(np.asarray(values, dtype=np.float32), vector)
        assert values == vector.astype(np.float64).tolist()


def test_ppo_act_values_is_act_on_python_floats_and_checks_the_size():
    from dcops.agents.cooling import PPOController

    plant = ClusterConfig().plant_config()
    context = ControllerContext.from_plant(plant, WEIGHTS, 300.0)
    a, b = PPOController(), PPOController()
    a.reset(context)
    b.reset(context)
    rng = np.random.default_rng(3)
    for _ in range(30):
        telemetry = np.concatenate([np.tile([26.0, 35.0, 0.7, 0.6, 20.0], 4) + rng.normal(0, 2, 20),
                                    [12.0, 1.0, 0.3, 25.0, 18.0, 0.4, 0.5, -0.8, 0.3, 0.2, 1.3]]).astype(np.float32)
        vector = a.act(telemetry)
        values = b.act_values(telemetry.astype(np.float64).tolist())
        assert vector.dtype == np.float32
        assert values == vector.astype(np.float64).tolist()
    with pytest.raises(ValueError, match="31 values for 4 zones, got 30"):
        b.act_values([0.0] * 30)


@pytest.mark.parametrize("values", [
    [0.5, 0.6, 0.7, 0.8, 20.0, 21.0, 22.0, 23.0, 12.0, 1.0],
    [-3.0, 0.1, 1.0, 7.0, 10.0, 15.0, 27.0, 99.0, 2.0, -1.0],  # every bound crossed, both ways
    [0.2, 0.2, 0.2, 0.2, 15.0, 15.0, 15.0, 15.0, 5.0, 0.0],  # exactly on the lower bounds
    [1e308, 1e308, 0.5, 0.5, 20.0, 20.0, 20.0, 20.0, 12.0, 1.0],  # finite, but the sum overflows
])
def test_decoding_floats_gives_the_control_the_vector_decoder_gives(values):
    from dcops.physics.interface import decode_setpoint_values, decode_setpoints

    fast, slow = decode_setpoint_values(values, 4), decode_setpoints(np.array(values), 4)
    for name in ("fan_speed", "supply_setpoint_c", "chw_setpoint_c", "economiser_on"):
        a, b = np.asarray(getattr(fast, name)), np.asarray(getattr(slow, name))
        assert a.shape == b.shape and a.dtype == b.dtype == np.float64 and np.array_equal(a, b), name


@pytest.mark.parametrize("values, message", [
    ([0.5] * 9, "must have 10 values"),
    ([0.5, float("nan"), 0.5, 0.5, 20.0, 20.0, 20.0, 20.0, 12.0, 1.0], "fan_speed\\[1\\] is not finite"),
    ([0.5, 0.5, 0.5, 0.5, 20.0, 20.0, 20.0, 20.0, float("inf"), 1.0], "chw_setpoint_c is not finite"),
])
def test_decoding_bad_floats_raises_naming_the_field(values, message):
    from dcops.physics.interface import decode_setpoint_values

    with pytest.raises(ValueError, match=message):
        decode_setpoint_values(values, 4)


class DocumentedPPO:
    """The PPO controller as ``agents/cooling/ppo.py``'s module docstring defines it, written here on numpy arrays
    (features as array reductions, the shipped ``NumpyPolicy``, the supervisory layer's formulas): an
    implementation independent of the controller's float path, which must give the same set-points to the bit."""

    name = "documented_ppo"

    def reset(self, context):
        from dcops.agents.cooling.ppo import shipped_policy

        self.c, self.policy, self.n = context, shipped_policy(), context.n_zones
        self.previous, self.last, self.trim = None, np.zeros(3), np.zeros(self.n)

    def act(self, telemetry):
        from dcops.physics.constants import CP_AIR_KJ_PER_KG_K

        c, n = self.c, self.n
        v = np.asarray(telemetry, dtype=np.float64)
        inlet, ret, load, fan, supply_air = v[: 5 * n].reshape(n, 5).T
        chw, chillers, econ, dry, wet, _, sin, cos, _, cooling, _ = v[5 * n:]
        current = (inlet.max(), chw, load.mean())
        before = self.previous or current
        self.previous = current
        features = np.array([inlet.max(), inlet.mean(), inlet.min(), ret.max(), ret.mean(), supply_air.mean(),
                             load.max(), load.mean(), fan.mean(), chw, chillers, econ, dry, wet, sin, cos, cooling,
                             current[0] - before[0], current[1] - before[1], current[2] - before[2],
                             (inlet - supply_air).max(), self.trim.max(), *self.last])
        a = self.policy.act(features)
        self.last = a

        def scale(x, low, high):
            return low + (min(max(float(x), -1.0), 1.0) + 1.0) * 0.5 * (high - low)

        supply, target, margin_k = scale(a[0], 15.0, 27.0), scale(a[1], 20.0, 28.0), scale(a[2], 0.0, 10.0)
        chw_set = min(max(supply - c.coil_approach_k - margin_k, 5.0), 18.0)
        rise = c.server_delta_t_k
        gap = max(target - max(supply, chw + c.coil_approach_k), rise / 1.5 - rise)
        margin = min(max(rise / (rise + gap), 0.3), 1.5)
        self.trim = np.minimum(np.maximum(self.trim + 0.05 * (inlet - target - 0.25), 0.0), 1.5)
        fans = margin * (1.0 + self.trim) * (load * c.zone_design_it_kw / (CP_AIR_KJ_PER_KG_K * rise)) \
            / c.crah_max_airflow_kg_s
        fans = np.minimum(np.maximum(fans, 0.2), 1.0)
        return np.concatenate([fans, np.full(n, supply), [chw_set, 1.0]]).astype(np.float32)


def test_the_ppo_float_path_is_the_documented_controller_to_the_bit_through_faults():
    from dcops.agents.cooling import PPOController

    plant = ClusterConfig().plant_config()
    context = ControllerContext.from_plant(plant, WEIGHTS, 300.0)
    fast, fast_ep = run_faulty(TelemetryController(PPOController(), context))
    documented, documented_ep = run_faulty(TelemetryController(DocumentedPPO(), context))
    assert documented.inner._act_values is None  # the vector path, with the documented controller
    for step, (a, b) in enumerate(zip(fast.controls, documented.controls, strict=True)):
        assert np.array_equal(a, b), f"step {step}: {a} != {b}"
    for name in ("facility_kw", "cooling_kw", "inlet_c"):
        assert np.array_equal(getattr(fast_ep, name), getattr(documented_ep, name)), name
