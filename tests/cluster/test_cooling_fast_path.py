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


def run(controller) -> tuple[Recorder, ClusterEpisode]:
    config = ClusterConfig(faults=(ChillerTrip(start_s=2.0 * 3600.0, chiller=0, duration_s=5 * 3600.0),))
    recorder = Recorder(controller)
    ep = ClusterEpisode(config, recorder)
    ep.reset(np.random.default_rng(7), np.random.default_rng(8), ["team_0"])
    jobs = [("a", "H100", 96, 150.0, 3.0), ("b", "H100", 64, 100.0, 7.0), ("c", "A100", 100, 100.0, 9.0),
            ("d", "L40S", 120, 60.0, 5.0)]
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
