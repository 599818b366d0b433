"""The plant v2 PPO cooling controller: the supervisor is the rule at the rule's action, the features and actions
are what the docs say, the training environment's reward decomposes as documented, training runs and exports,
and the numpy runtime plays exactly what SB3's own checkpoint predicts."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import dcops
from dcops.agents.cooling.ppo_v2 import (
    ACTION_NAMES_V2,
    ACTION_RANGES,
    FEATURE_NAMES_V2,
    N_ACTIONS_V2,
    N_FEATURES_V2,
    FeatureBuilderV2,
    PPOControllerV2,
    SupervisorV2,
    base_rule,
    normalised_action,
    physical_action,
    rule_action,
    shipped_metadata_v2,
)
from dcops.agents.cooling.rule_v2 import controller_context_v2, run_controller_v2
from dcops.cooling_env_v1 import TASK_SPECS, CoolingEnvV1, evaluation_case_spec
from dcops.physics.v2.interface import TelemetryV2


@pytest.mark.parametrize("make", [lambda: dcops.make_env("cooling/multi_zone_sensor_drift_v1"),
                                  lambda: CoolingEnvV1(evaluation_case_spec("chicago", "january", "normal"))])
def test_at_the_rule_action_the_supervisor_is_the_family_tuned_rule(make, supervised_rule):
    env = make()
    supervised = run_controller_v2(env, supervised_rule(), seed=3)
    rule = run_controller_v2(env, base_rule(), seed=3)
    assert supervised == rule


def test_the_supervisor_keeps_the_family_rules_winter_mode_and_moves_it_with_the_policy(supervised_rule):
    """A January case runs in winter mode (the family rule's set-points there differ from summer's); at the rule
    action the supervised controller is the family rule itself, and a warmer supply action warms the winter air."""
    from dcops.agents.cooling.rule_v2 import RuleV2Controller

    family = RuleV2Controller.tuned("eval_family_v1")
    assert family.free_wet_bulb_c > -100.0 and family.free_supply_c != family.supply_c
    env = CoolingEnvV1(evaluation_case_spec("chicago", "january", "normal"))
    assert not env.unwrapped.task.plant.tank.installed  # so the tank price rule the supervisor drops never acts
    assert run_controller_v2(env, supervised_rule(), seed=3) == run_controller_v2(env, family, seed=3)

    observation, _ = env.reset(seed=3)
    supervisor = SupervisorV2()
    supervisor.reset(controller_context_v2(env))
    at_rule = supervisor.setpoints(rule_action(), observation)
    assert supervisor.rule._winter  # the January wet-bulb is below the family rule's threshold
    low, high = ACTION_RANGES["supply_c"]
    warmer = rule_action()
    warmer[ACTION_NAMES_V2.index("supply_c")] += 2.0 * 1.0 / (high - low)  # 1 K warmer supply air
    supervisor.reset(controller_context_v2(env))
    moved = supervisor.setpoints(warmer, observation)
    n_zones = supervisor.rule.context.n_zones
    supply_index = slice(n_zones, 2 * n_zones)  # fan speeds first, then the supply set-points
    assert np.asarray(at_rule)[supply_index] == pytest.approx(family.free_supply_c)
    np.testing.assert_allclose(np.asarray(moved)[supply_index] - np.asarray(at_rule)[supply_index], 1.0, atol=1e-5)


def test_actions_map_to_their_documented_ranges_and_back():
    assert len(ACTION_NAMES_V2) == N_ACTIONS_V2 == 7
    low = physical_action(-np.ones(N_ACTIONS_V2))
    high = physical_action(np.full(N_ACTIONS_V2, 3.0))  # clipped to +1
    assert low == {k: v[0] for k, v in ACTION_RANGES.items()} and high == {k: v[1] for k, v in ACTION_RANGES.items()}
    a = np.linspace(-0.9, 0.9, N_ACTIONS_V2)
    np.testing.assert_allclose(normalised_action(physical_action(a)), a, atol=1e-12)
    rule = base_rule()
    values = physical_action(rule_action())
    assert values["tank_flow"] == 0.0 and values["supply_c"] == pytest.approx(rule.supply_c)


def test_features_reduce_over_zones_and_carry_what_the_operator_knows():
    env = dcops.make_env("cooling/daily_operations_v1")
    observation, _ = env.reset(seed=0)
    context = controller_context_v2(env)
    builder = FeatureBuilderV2()
    builder.reset(context)
    previous = np.linspace(-0.5, 0.5, N_ACTIONS_V2)
    features = builder(TelemetryV2.parse(observation, 4), previous)
    assert features.shape == (N_FEATURES_V2,) == (len(FEATURE_NAMES_V2) + N_ACTIONS_V2,)
    named = dict(zip(FEATURE_NAMES_V2, features, strict=False))
    t = TelemetryV2.parse(observation, 4)
    assert named["inlet_max_c"] == pytest.approx(t.inlet_c.max()) and named["inlet_min_c"] == pytest.approx(t.inlet_c.min())
    assert (named["has_tank"], named["objective_cost"], named["objective_carbon"], named["has_load_telemetry"]) == (
        1.0, 1.0, 0.0, 1.0)
    assert named["inlet_max_change_k"] == 0.0  # the first reading has no previous one
    np.testing.assert_array_equal(features[-N_ACTIONS_V2:], previous)
    drift = dcops.make_env("cooling/multi_zone_sensor_drift_v1")
    observation, _ = drift.reset(seed=0)
    builder.reset(controller_context_v2(drift))
    named = dict(zip(FEATURE_NAMES_V2, builder(TelemetryV2.parse(observation, 3), previous), strict=False))
    assert named["has_load_telemetry"] == 0.0 and named["load_mean"] == 0.0 and named["has_tank"] == 0.0


def test_the_training_reward_is_the_documented_energy_and_thermal_terms():
    from dcops.training.cooling.train_env_v2 import CoolingTrainEnvV2

    env = CoolingTrainEnvV2(spec_source=lambda rng: TASK_SPECS["cooling/daily_operations_v1"]())
    check_env(env, skip_render_check=True)
    env.reset(seed=1)
    for _ in range(6):
        before = env.inner.totals.objective
        _, reward, _, _, info = env.step(np.zeros(N_ACTIONS_V2, dtype=np.float32))
        energy = (env.inner.totals.objective - before) / env.inner.mean_reference
        assert info["energy_cost"] == pytest.approx(energy, rel=1e-9)
        assert reward == pytest.approx(-(3.0 * info["energy_cost"] + info["thermal_cost"]), rel=1e-12)


def test_a_ci_sized_training_run_exports_a_policy_the_runtime_and_sb3_both_play(tmp_path):
    from dcops.training.cooling.ppo_v2 import CoolingPPOV2Config, train_cooling_ppo_v2
    from dcops.training.cooling.sb3_v2 import load_sb3_policy

    config = CoolingPPOV2Config(timesteps=2 * 8 * 64, n_steps=64, batch_size=128, n_epochs=1, eval_every=10**9,
                                choose_shield=False)
    record = train_cooling_ppo_v2(config, out=tmp_path, tensorboard_log=None, progress_bar=False)
    assert record["features"] == list(FEATURE_NAMES_V2) and record["actions"] == list(ACTION_NAMES_V2)
    controller = PPOControllerV2.from_file(tmp_path / "ppo_cooling_v2.npz")
    model, venv = load_sb3_policy("cooling/single_zone_recovery_v1", tmp_path)
    observation = venv.reset()
    for _ in range(12):
        sb3_action, _ = model.predict(observation, deterministic=True)
        numpy_action = controller.policy.act(venv.get_original_obs()[0])
        np.testing.assert_allclose(numpy_action, sb3_action[0], atol=2e-5)
        observation, *_ = venv.step(sb3_action)


def test_the_shipped_policy_is_one_set_of_weights_for_every_task():
    metadata = shipped_metadata_v2()
    assert metadata["features"] == list(FEATURE_NAMES_V2) and metadata["actions"] == list(ACTION_NAMES_V2)
    controller = PPOControllerV2()
    for task in TASK_SPECS:
        result = run_controller_v2(dcops.make_env(task, n_steps=12), controller, seed=0)
        assert 0.0 <= result["score"] <= 1.0


def test_the_task_wrapped_for_sb3_hands_the_policy_no_private_truth():
    from dcops.boundary import DIAGNOSTIC_INFO_KEYS
    from dcops.training.cooling.sb3_v2 import task_env

    env = task_env("cooling/cascading_chiller_failure_v1")
    _, info = env.reset(seed=0)
    _, _, _, _, stepped = env.step(np.zeros(N_ACTIONS_V2, dtype=np.float32))
    private = set(DIAGNOSTIC_INFO_KEYS["cooling"])
    assert private and not private & set(info) and not private & set(stepped)


class _FixedPolicy:
    """A stand-in policy that always answers the same normalised action."""

    def __init__(self, action):
        self.action = np.asarray(action, dtype=np.float64)

    def act(self, features):
        return self.action.copy()


def test_the_shield_hands_a_step_to_the_rule_when_a_reported_inlet_reaches_its_threshold():
    """The recovery task's hall starts at 36 °C: a shielded controller plays the rule's action there whatever its
    policy says, and the policy's own action once the reported inlets are below the threshold."""
    from dcops.agents.cooling.ppo_v2 import SHIELD_INLET_C

    env = dcops.make_env("cooling/single_zone_recovery_v1")
    observation, _ = env.reset(seed=0)
    context = controller_context_v2(env)
    assert float(TelemetryV2.parse(observation, 1).inlet_c.max()) >= SHIELD_INLET_C
    far = np.ones(N_ACTIONS_V2)  # every set-point at the top of its range

    def first_setpoints(controller):
        controller.reset(context)
        return np.asarray(controller.act(observation))

    reference = SupervisorV2()
    reference.reset(context)
    at_rule = np.asarray(reference.setpoints(rule_action(), observation))
    reference.reset(context)
    at_far = np.asarray(reference.setpoints(far, observation))
    assert not np.array_equal(at_rule, at_far)
    shielded = PPOControllerV2(_FixedPolicy(far))
    assert shielded.shield_inlet_c == SHIELD_INLET_C == 30.0
    np.testing.assert_array_equal(first_setpoints(shielded), at_rule)
    np.testing.assert_array_equal(shielded.last_action, far)  # the policy still sees its own action
    np.testing.assert_array_equal(first_setpoints(PPOControllerV2(_FixedPolicy(far), shield_inlet_c=np.inf)), at_far)
    np.testing.assert_array_equal(first_setpoints(PPOControllerV2(_FixedPolicy(far), shield_inlet_c=36.5)), at_far)


def test_the_shield_threshold_is_chosen_on_validation_by_the_checkpoint_rule(monkeypatch):
    """choose_shield ranks the candidates by selection_key_v2 (no minute above 32 °C first, then the score) and
    takes the lowest threshold among equals; the shipped record's choice is the runtime's default."""
    import dcops.training.cooling.ppo_v2 as training

    figures = {28.0: (3.0, 0.70), 29.0: (0.0, 0.60), 30.0: (0.0, 0.62), 31.0: (0.0, 0.62), np.inf: (0.0, 0.61)}

    def fake_episodes(controller):
        above32, score = figures[controller.shield_inlet_c]
        return [{"objective": 1.0, "reference": 1.0, "minutes_above_27": [0.0], "minutes_above_32": [above32],
                 "episode_minutes": 60.0, "score": score}]

    monkeypatch.setattr(training, "validation_episodes", fake_episodes)
    chosen = training.choose_shield(_FixedPolicy(np.zeros(N_ACTIONS_V2)))
    assert chosen["shield_inlet_c"] == 30.0 and len(chosen["candidates"]) == len(figures)
    from dcops.agents.cooling.ppo_v2 import SHIELD_INLET_C

    assert shipped_metadata_v2()["shield"]["shield_inlet_c"] == SHIELD_INLET_C


def test_a_controller_shielded_at_every_step_is_the_base_rule_tank_included():
    """With the shield always on, the controller plays the base rule exactly, its tank discharge while a chiller
    is lost included (the cascading failure has a tank and loses a chiller), whatever its policy says."""
    from dcops.physics.v2.interface import PLANT_SETPOINTS

    env = dcops.make_env("cooling/cascading_chiller_failure_v1")
    assert env.unwrapped.task.plant.tank.installed
    always = PPOControllerV2(_FixedPolicy(np.ones(N_ACTIONS_V2)), shield_inlet_c=-np.inf)
    rule = base_rule()
    observation, _ = env.reset(seed=2)
    context = controller_context_v2(env)
    always.reset(context)
    rule.reset(context)
    discharged, done = 0, False
    while not done:
        ours, theirs = np.asarray(always.act(observation)), np.asarray(rule.act(observation))
        np.testing.assert_array_equal(ours, theirs)
        discharged += theirs[-len(PLANT_SETPOINTS) + PLANT_SETPOINTS.index("tank_flow")] < 0
        observation, _, done, _, _ = env.step(theirs)
    assert discharged > 0  # the rule did discharge the tank, and the shielded controller with it
