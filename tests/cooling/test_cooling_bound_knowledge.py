"""The bound's planner with its truths withdrawn (``dcops.evaluation.cooling_bound.Knowledge``): what it is not
given it must not use, the airflow identification finds the drawn airflow, and on the observation alone it
still beats the family rule."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from dcops.agents.cooling.airflow_identification import GRID, AirflowIdentifier
from dcops.agents.cooling.imitation_v2 import sensed_boundary, sensed_state
from dcops.agents.cooling.rule_v2 import RuleV2Controller, controller_context_v2, run_controller_v2
from dcops.cooling_env_v1 import CoolingEnvV1, evaluation_case_spec
from dcops.evaluation.cooling_bound import (
    KNOWLEDGE_LADDER,
    PLANNERS,
    BoundSettings,
    Knowledge,
    cem_search,
    clairvoyant_episode,
    plan_step,
    planning_view,
)
from dcops.physics.v2.interface import TelemetryV2

OPERATOR = KNOWLEDGE_LADDER["operator MPC (observation only)"]


def test_knowledge_refuses_an_unknown_plant_naming_the_field():
    with pytest.raises(ValueError, match="Knowledge.plant"):
        Knowledge(plant="measured")


class _Tampered:
    """The env as the planner reads it, with every truth the operator is not given replaced by nonsense: the
    drawn airflow, the true state's temperatures, the load, weather and carbon to come, the chillers' and fans'
    true availability (now and to come), and the episode's mean yardstick."""

    def __init__(self, env: CoolingEnvV1) -> None:
        self._env, self.task = env, env.task
        self.unwrapped = self
        self.mean_reference = 1e6 * env.mean_reference

    def evaluator_truth(self):
        truth = self._env.evaluator_truth()
        k, rng = truth.step, np.random.default_rng(99)
        future = np.arange(truth.it_kw.shape[0]) != k
        it_kw = truth.it_kw.copy()
        it_kw[future] *= rng.uniform(0.2, 3.0, size=it_kw[future].shape)
        available = 1.0 - truth.chiller_available  # now too: the operator reads the reported fraction
        fans = np.full_like(truth.fan_units_alive, 0.3)  # no telemetry reports fan faults
        plant = truth.plant.with_(zone_bypass_fraction=np.full(truth.plant.n_zones, 0.9),
                                  zone_min_recirculation=np.full(truth.plant.n_zones, 0.5))
        state = replace(truth.state, zone_temp_c=truth.state.zone_temp_c + 7.0, chw_supply_c=truth.state.chw_supply_c
                        - 5.0, cw_supply_c=truth.state.cw_supply_c + 9.0)
        return replace(truth, plant=plant, state=state, it_kw=it_kw, dry_bulb_c=truth.dry_bulb_c + 20.0,
                       wet_bulb_c=truth.wet_bulb_c + 15.0, chiller_available=available, fan_units_alive=fans,
                       carbon_g_per_kwh=3.0 * truth.carbon_g_per_kwh)


def test_the_observation_only_planner_reads_none_of_the_truth_it_is_not_given():
    """Same observation, same identifier, same random draws: the same plan, however wrong the hidden truth.
    The clairvoyant planner, given the same tampering, plans differently (so the check can fail)."""
    env = CoolingEnvV1(evaluation_case_spec("chicago", "july", "chiller_trip"))
    observation, _ = env.reset(seed=2)
    for _ in range(40):
        observation, *_ = env.step(env.action_space.sample())
    spec, settings = env.task, BoundSettings(samples=32, iterations=2)
    identifier = AirflowIdentifier.from_survey(spec.plant, spec.airflow)
    mean = np.array([1.05, 22.0, 16.0, 0.6, 2.0, 0.6, 1.0, 0.0])

    def plan(source, knowledge):
        view = planning_view(source, settings, knowledge, observation, identifier)
        return cem_search(source, view, mean, settings, np.random.default_rng(5))

    np.testing.assert_array_equal(plan(env, OPERATOR), plan(_Tampered(env), OPERATOR))
    assert not np.array_equal(plan(env, Knowledge()), plan(_Tampered(env), Knowledge()))


def test_a_planner_without_the_state_or_conditions_needs_the_observation():
    env = CoolingEnvV1(evaluation_case_spec("seattle", "july", "normal"))
    env.reset(seed=0)
    with pytest.raises(ValueError, match="observation"):
        plan_step(env, np.zeros(8), PLANNERS[0], np.random.default_rng(0), Knowledge(state=False))


def _one_step_error(plant, records, dt_s: float) -> float:
    """Mean squared error (K²) of a plant's one-step inlet predictions against the reported inlets."""
    from dcops.physics.v2.plant import step_plant_v2

    errors = [(step_plant_v2(plant, state.copy(), control, boundary, dt_s)[1].inlet_c - reported) ** 2
              for state, control, boundary, reported in records]
    return float(np.mean(errors))


def test_the_identifier_finds_each_zones_bypass_and_predicts_the_inlets_better_than_the_nameplate():
    """Fed as the controllers feed it (the sensed state and boundary, the control played) under the family rule,
    and fitted on the first half of the day: every zone's bypass lies within one grid step of the drawn one (the
    nameplate's 0 % does not in most zones), and on the second half, which it never saw, the fitted plant
    predicts the reported inlets better than the nameplate and the ranges' middle."""
    env = CoolingEnvV1(evaluation_case_spec("phoenix", "july", "normal"))
    spec = env.task
    context = controller_context_v2(env)
    controller = RuleV2Controller.tuned("eval_family_v1")
    bypass_step = (spec.airflow.bypass_range[1] - spec.airflow.bypass_range[0]) / (GRID - 1)
    for seed in (0, 1):
        observation, _ = env.reset(seed=seed)
        controller.reset(context)
        truth = env.evaluator_truth().plant
        records, done = [], False
        while not done:
            t = TelemetryV2.parse(observation, spec.plant.n_zones)
            action = controller.act(observation)
            observation, _, done, _, _ = env.step(action)
            records.append((sensed_state(t, spec.plant.n_chillers), env.decode_action(action),
                            sensed_boundary(t, context), TelemetryV2.parse(observation, spec.plant.n_zones).inlet_c))
        half = len(records) // 2
        identifier = AirflowIdentifier.from_survey(spec.plant, spec.airflow)
        for record in records[:half]:
            identifier.update(*record[:3], spec.dt_s, record[3])
        fitted = identifier.plant()
        assert np.all(np.abs(fitted.zone_bypass_fraction - truth.zone_bypass_fraction) <= bypass_step + 1e-9)
        assert np.sum(truth.zone_bypass_fraction > bypass_step) >= 2
        middle = spec.plant.with_(zone_bypass_fraction=np.full(spec.plant.n_zones, 0.1),
                                  zone_min_recirculation=np.full(spec.plant.n_zones, 0.05))
        held_out = records[half:]
        assert _one_step_error(fitted, held_out, spec.dt_s) < _one_step_error(middle, held_out, spec.dt_s)
        assert _one_step_error(fitted, held_out, spec.dt_s) < 0.5 * _one_step_error(spec.plant, held_out, spec.dt_s)


def test_without_a_survey_the_identifier_keeps_the_nameplate():
    plant = evaluation_case_spec("seattle", "july", "normal").plant.with_(
        zone_bypass_fraction=np.array([0.05, 0.1, 0.15, 0.0]))
    identifier = AirflowIdentifier.from_survey(plant, None)
    np.testing.assert_array_equal(identifier.plant().zone_bypass_fraction, plant.zone_bypass_fraction)
    assert identifier.bypass.shape == (1, plant.n_zones)


def test_the_default_knowledge_is_the_published_bound():
    """The whole truth reproduces the bound's published episode (``reports/cooling/v2_bound.csv``, made before
    the planner took a Knowledge) to the last digit the CSV keeps."""
    import csv
    from pathlib import Path

    from dcops.cooling_env_v1 import TASK_SPECS

    path = Path(__file__).resolve().parents[2] / "reports" / "cooling" / "v2_bound.csv"
    with path.open() as handle:
        (row,) = [r for r in csv.DictReader(handle) if r["controller"] == "clairvoyant bound"
                  and r["case"] == "cooling/single_zone_recovery_v1" and r["seed"] == "0"]
    episode = clairvoyant_episode(CoolingEnvV1(TASK_SPECS["cooling/single_zone_recovery_v1"]()), seed=0)
    assert episode["score"] == pytest.approx(float(row["score"]), rel=1e-12)
    assert episode["objective"] == pytest.approx(float(row["objective"]), rel=1e-12)


def test_on_the_observation_alone_the_planner_beats_the_family_rule():
    """The observation-only planner (identified airflow, sensed state, the present held) spends less than the
    family-tuned rule and scores higher, with no minute above 32 °C; the clairvoyant bound does better still."""
    env = CoolingEnvV1(evaluation_case_spec("atlanta", "july", "normal"))
    rule = run_controller_v2(env, RuleV2Controller.tuned("eval_family_v1"), seed=0)
    settings = BoundSettings(samples=64, iterations=2)
    operator = clairvoyant_episode(env, seed=0, settings=settings, knowledge=OPERATOR)
    bound = clairvoyant_episode(env, seed=0, settings=settings)
    assert operator["objective"] <= 0.97 * rule["objective"] and operator["score"] > rule["score"]
    assert max(operator["minutes_above_32"]) == 0.0
    assert bound["objective"] < operator["objective"]
