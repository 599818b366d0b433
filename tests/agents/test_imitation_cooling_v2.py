"""The plant v2 imitation controller (``dcops.agents.cooling.imitation_v2``) and its training
(``dcops.training.cooling.imitation_v2``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dcops.agents.cooling.imitation_v2 import (
    N_FEATURES_IMITATION,
    N_PARAMETERS,
    ImitationControllerV2,
    ImitationFeatures,
    normalise_parameters,
    physical_parameters,
)
from dcops.agents.cooling.plant_parameters_v2 import parameter_ranges
from dcops.agents.cooling.rule_v2 import RuleV2Controller, controller_context_v2, run_controller_v2
from dcops.cooling_env_v1 import CoolingEnvV1, evaluation_case_spec, make_daily_operations
from dcops.physics.v2.types import PlantV2Config


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1.0, 1.0), min_size=N_PARAMETERS, max_size=N_PARAMETERS), st.sampled_from([0.0, 60.0]))
def test_scaled_parameters_map_to_their_ranges_and_back(scaled, storage_minutes):
    plant = PlantV2Config.default(n_zones=2, storage_minutes=storage_minutes)
    a = np.asarray(scaled)
    u = physical_parameters(a, plant)
    ranges = parameter_ranges(plant)
    assert np.all(u >= ranges[:, 0] - 1e-12) and np.all(u <= ranges[:, 1] + 1e-12)
    back = normalise_parameters(u, plant)
    has_range = ranges[:, 1] > ranges[:, 0]
    np.testing.assert_allclose(back[has_range], a[has_range], atol=1e-12)
    assert np.all(back[~has_range] == 0.0)


def test_the_controller_refuses_a_context_without_its_plant_model():
    env = CoolingEnvV1(evaluation_case_spec("seattle", "july", "normal"))
    env.reset(seed=0)
    with pytest.raises(ValueError, match="nameplate"):
        ImitationFeatures().reset(replace(controller_context_v2(env), nameplate=None))


def test_the_context_carries_the_nameplate_and_the_survey_never_the_drawn_airflow():
    env = make_daily_operations()
    env.reset(seed=3)
    context = controller_context_v2(env)
    assert context.nameplate is env.task.plant and context.airflow is env.task.airflow
    truth = env.evaluator_truth().plant
    assert not np.array_equal(context.nameplate.zone_bypass_fraction, truth.zone_bypass_fraction)


def test_features_have_the_documented_width_and_the_identifier_learns_from_the_controllers_steps():
    """The features are N_FEATURES_IMITATION finite numbers; after four hours of readings the fitted bypass is
    nearer the drawn one than the ranges' middle, where the fit starts."""
    env = CoolingEnvV1(evaluation_case_spec("phoenix", "july", "normal"))
    observation, _ = env.reset(seed=1)
    estimator = ImitationFeatures()
    estimator.reset(controller_context_v2(env))
    rule = RuleV2Controller.tuned("eval_family_v1")
    rule.reset(controller_context_v2(env))
    middle = estimator.identifier.plant().zone_bypass_fraction.copy()
    truth = env.evaluator_truth().plant.zone_bypass_fraction
    for _ in range(48):
        t, features = estimator.observe(observation)
        assert features.shape == (N_FEATURES_IMITATION,) and np.all(np.isfinite(features))
        action = rule.act(observation)
        estimator.record(action, t)
        observation, *_ = env.step(action)
    fitted = estimator.identifier.plant().zone_bypass_fraction
    assert np.mean(np.abs(fitted - truth)) < np.mean(np.abs(middle - truth))


def test_the_teacher_labels_every_step_and_a_fit_learns_them():
    """One training scenario under the teacher: a label in [−1, 1] per step; a network fitted on it predicts the
    labels better than their mean does."""
    from dcops.training.cooling.imitation_v2 import fit, teacher_episode

    features, labels = teacher_episode((10_003, None, 1.0))
    assert features.shape == (len(labels), N_FEATURES_IMITATION) and labels.shape[1] == N_PARAMETERS
    assert np.all(np.abs(labels) <= 1.0 + 1e-9)
    policy = fit(features, labels, seed=0, epochs=30)
    predicted = np.array([policy.act(f) for f in features])
    assert np.mean((predicted - labels) ** 2) < 0.5 * np.mean((labels - labels.mean(axis=0)) ** 2)


def test_the_shipped_controller_beats_the_family_rule_on_an_evaluation_case():
    """The shipped weights on a July family case (evaluation seed 0): less objective than the family-tuned rule,
    a higher score, no minute above 32 °C."""
    env = CoolingEnvV1(evaluation_case_spec("chicago", "july", "normal"))
    rule = run_controller_v2(env, RuleV2Controller.tuned("eval_family_v1"), seed=0)
    learned = run_controller_v2(env, ImitationControllerV2(), seed=0)
    assert learned["objective"] < 0.95 * rule["objective"] and learned["score"] > rule["score"]
    assert max(learned["minutes_above_32"]) == 0.0


def test_sb3_loads_the_shipped_policy_and_plays_the_numpy_runtimes_actions():
    """``PPO.load(...).predict`` on the task's wrapped observation gives the numpy network's parameters (float32
    against float64), and the wrapped task hands the policy no diagnostics."""
    from gymnasium.utils.env_checker import check_env

    from dcops.boundary import DIAGNOSTIC_INFO_KEYS
    from dcops.training.cooling.imitation_sb3 import load_sb3_imitation, task_env

    check_env(task_env("cooling/single_zone_recovery_v1"), skip_render_check=True)
    model, venv = load_sb3_imitation("cooling/multi_zone_sensor_drift_v1")
    controller = ImitationControllerV2()
    observation = venv.reset()
    for _ in range(12):
        sb3_action, _ = model.predict(observation, deterministic=True)
        numpy_action = controller.policy.act(venv.get_original_obs()[0])
        np.testing.assert_allclose(numpy_action, sb3_action[0], atol=2e-5)
        observation, _, _, infos = venv.step(sb3_action)
        assert not set(infos[0]) & DIAGNOSTIC_INFO_KEYS["cooling"]


def test_the_wrapped_task_plays_the_controllers_episode():
    """Stepping the wrapped task with the numpy network's actions is the controller's own episode (unshielded):
    the same set-points reach the plant, so the same score (to the float32 rounding of the wrapped observation)."""
    from dcops.training.cooling.imitation_sb3 import task_env

    env = task_env("cooling/single_zone_recovery_v1")
    observation, _ = env.reset(seed=4)
    controller = ImitationControllerV2(shield_inlet_c=float("inf"))
    done = False
    while not done:
        observation, _, done, _, _ = env.step(controller.policy.act(observation))
    wrapped = env.inner.score()
    inner = CoolingEnvV1(env.inner.task)
    seed = env.inner.np_random_seed
    assert run_controller_v2(inner, controller, seed)["score"] == pytest.approx(wrapped, abs=1e-6)


def test_ppo_continues_from_the_shipped_imitation_policy():
    """The exported zip is a working PPO: loaded on the wrapped task with a short rollout, ``learn`` collects it
    and moves the policy's parameters."""
    from stable_baselines3 import PPO

    from dcops.training.cooling.imitation_sb3 import ZIP_NAME, load_sb3_imitation, shipped_folder
    from dcops.training.sb3_logging import sb3_logger

    _, venv = load_sb3_imitation("cooling/single_zone_recovery_v1")
    model = PPO.load(shipped_folder() / ZIP_NAME, env=venv, device="cpu",
                     custom_objects={"n_steps": 32, "batch_size": 32, "n_epochs": 1})
    model.set_logger(sb3_logger(None, "imitation"))  # SB3's default logger would leave a folder in /tmp
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(32)
    assert model.num_timesteps == 32
    assert any(not np.array_equal(a.numpy(), p.detach().numpy()) for a, p in zip(before, model.policy.parameters(),
                                                                                   strict=True))
