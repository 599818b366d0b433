"""The shipped PPO cooling controller: loading, numpy/torch agreement, no torch at run time, whole episodes."""

from __future__ import annotations

import subprocess
import sys
from importlib import resources

import numpy as np
import pytest

import dcops
from dcops.agents.cooling import (
    COOLING_CONTROLLERS,
    ControllerContext,
    PIDController,
    PPOController,
    RuleBasedController,
    make_cooling_controller,
)
from dcops.agents.cooling.ppo import (
    N_ACTIONS,
    N_FEATURES,
    WEIGHTS_JSON,
    WEIGHTS_NPZ,
    NumpyPolicy,
    shipped_metadata,
    shipped_policy,
)
from dcops.cooling_env import TASKS, CoolingEnv, CoolingTaskSpec, run_controller
from dcops.physics.interface import setpoint_bounds
from dcops.physics.plant import PlantConfig

WEIGHTS = resources.files("dcops.agents.cooling").joinpath("weights")
COOLING_TASKS = list(TASKS)


def test_shipped_checkpoint_loads_with_the_documented_shapes_and_is_small():
    policy = shipped_policy()
    assert policy.obs_mean.shape == (N_FEATURES,) and policy.obs_var.shape == (N_FEATURES,)
    assert policy.weights[0].shape[0] == N_FEATURES and policy.weights[-1].shape[1] == N_ACTIONS
    assert np.all(policy.obs_var > 0)
    assert all(np.all(np.isfinite(w)) for w in policy.weights + policy.biases)
    for name in (WEIGHTS_NPZ, "weights/ppo_cooling.zip", WEIGHTS_JSON):
        path = resources.files("dcops.agents.cooling").joinpath(name)
        assert path.is_file(), name
        assert len(path.read_bytes()) < 2 * 1024 * 1024, f"{name} must stay under 2 MB"


def test_shipped_checkpoint_records_its_training_config_seed_and_timesteps():
    meta = shipped_metadata()
    assert isinstance(meta["seed"], int)
    assert meta["timesteps_trained"] >= meta["timesteps_selected"] > 0
    assert meta["config"]["seed"] == meta["seed"]
    assert meta["command"].startswith("dcops train-cooling")
    assert {"numpy", "torch", "stable_baselines3"} <= set(meta["versions"])


def test_weights_file_holds_plain_arrays_only(tmp_path):
    with WEIGHTS.joinpath("ppo_cooling.npz").open("rb") as handle, np.load(handle, allow_pickle=False) as data:
        assert all(data[k].dtype != object for k in data.files)
    policy = shipped_policy()
    policy.save(tmp_path / "copy.npz")
    again = NumpyPolicy.from_npz(tmp_path / "copy.npz")
    x = np.random.default_rng(0).normal(size=(5, N_FEATURES)) * np.sqrt(policy.obs_var) + policy.obs_mean
    np.testing.assert_array_equal(again.act(x[0]), policy.act(x[0]))


def test_numpy_policy_matches_the_torch_policy_on_random_observations():
    torch = pytest.importorskip("torch")
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    from dcops.training.cooling.ppo import load_torch_policy
    from dcops.training.cooling.train_env import CoolingTrainEnv

    meta = shipped_metadata()
    numpy_policy = shipped_policy()
    with resources.as_file(WEIGHTS.joinpath("ppo_cooling.zip")) as zip_path:
        torch_policy = load_torch_policy(zip_path, tuple(meta["config"]["hidden"]), meta["config"]["use_sde"])
    # SB3's own normaliser with the exported statistics, so the torch side shares no numpy code with ours.
    normaliser = VecNormalize(DummyVecEnv([CoolingTrainEnv]), norm_reward=False, clip_obs=numpy_policy.obs_clip,
                              epsilon=numpy_policy.obs_epsilon)
    normaliser.obs_rms.mean = numpy_policy.obs_mean.copy()
    normaliser.obs_rms.var = numpy_policy.obs_var.copy()
    rng = np.random.default_rng(42)
    raw = (numpy_policy.obs_mean + rng.normal(0.0, 3.0, size=(256, N_FEATURES)) * np.sqrt(numpy_policy.obs_var))
    raw = raw.astype(np.float32)
    with torch.no_grad():
        obs = torch.as_tensor(normaliser.normalize_obs(raw), dtype=torch.float32)
        torch_actions = np.clip(torch_policy._predict(obs, deterministic=True).numpy(), -1.0, 1.0)
    numpy_actions = np.stack([numpy_policy.act(x) for x in raw])
    assert np.max(np.abs(numpy_actions - torch_actions)) < 1e-5
    assert np.ptp(numpy_actions, axis=0).max() > 0.05  # the comparison is not between two constants


def test_importing_dcops_and_running_the_ppo_controller_never_imports_torch():
    code = (
        "import sys, dcops\n"
        "from dcops.agents.cooling import PPOController\n"
        "from dcops.cooling_env import run_controller\n"
        "r = run_controller(dcops.make_env('cooling/single_zone_recovery'), PPOController(), seed=0)\n"
        "assert r.score == r.score\n"
        "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.') or m == 'stable_baselines3'))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize("task_id", COOLING_TASKS)
def test_ppo_controller_plays_a_whole_cooling_task_episode_with_finite_setpoints(task_id):
    env = dcops.make_env(task_id)
    controller = PPOController()
    low, high = setpoint_bounds(env.unwrapped.task.plant.n_zones)
    actions = []

    class Recording:
        name = "ppo"

        def reset(self, context):
            controller.reset(context)

        def act(self, telemetry):
            a = controller.act(telemetry)
            actions.append(a)
            return a

    result = run_controller(env, Recording(), seed=3)
    actions = np.asarray(actions)
    assert len(actions) == env.unwrapped.task.n_steps
    assert np.all(np.isfinite(actions)) and np.all(actions >= low - 1e-6) and np.all(actions <= high + 1e-6)
    assert 0.0 <= result.score <= 1.0 and np.isfinite(result.summary["cooling_kwh"])


@pytest.mark.parametrize("n_zones", [1, 6])
def test_one_policy_runs_plants_of_any_zone_count(n_zones):
    plant = PlantConfig.default(n_zones=n_zones)
    spec = CoolingTaskSpec(task_id="test", plant=plant, zone_names=tuple(f"z{i}" for i in range(n_zones)),
                           zone_weights=(1.0,) * n_zones, n_steps=48, climate="dallas")
    result = run_controller(CoolingEnv(spec), PPOController(), seed=0)
    assert np.isfinite(result.summary["cooling_kwh"])
    assert max(result.summary["minutes_above_32"]) == 0.0


def test_ppo_controller_refuses_a_control_interval_it_was_not_trained_for():
    context = ControllerContext.from_plant(PlantConfig.default(), [1.0] * 4, dt_s=60.0)
    with pytest.raises(ValueError, match="300 s"):
        PPOController().reset(context)


def test_ppo_controller_restarts_its_memory_at_reset():
    env = dcops.make_env("cooling/multi_zone_sensor_drift")
    controller = PPOController()

    def first_actions():
        obs, _ = env.reset(seed=5)
        controller.reset(ControllerContext.from_plant(env.unwrapped.task.plant, env.unwrapped.task.zone_weights, 300.0))
        out = []
        for _ in range(4):
            a = controller.act(obs)
            out.append(a)
            obs, *_ = env.step(a)
        return np.asarray(out)

    np.testing.assert_array_equal(first_actions(), first_actions())


def test_factory_builds_every_named_controller_and_rejects_unknown_names():
    assert COOLING_CONTROLLERS == ("ppo", "rule", "pid")
    assert isinstance(make_cooling_controller("ppo"), PPOController)
    assert isinstance(make_cooling_controller("pid"), PIDController)
    rule = make_cooling_controller("rule", "cooling/cascading_chiller_failure")
    assert rule == RuleBasedController.for_task("cooling/cascading_chiller_failure")
    assert make_cooling_controller("rule") == RuleBasedController()
    with pytest.raises(ValueError, match="ppo, rule, pid"):
        make_cooling_controller("mpc")


def test_ppo_controller_runs_the_cluster_environments_plant_through_a_chiller_trip():
    """The cluster environment steps telemetry controllers through ``TelemetryController``; PPO plugs in there."""
    pytest.importorskip("dcops.cluster.episode")
    from dcops.cluster.config import ClusterConfig
    from dcops.cluster.cooling import TelemetryController
    from dcops.cluster.decisions import resolve_structured
    from dcops.cluster.episode import ClusterEpisode
    from dcops.cluster.requests import Priority, Request, RequestTruth, Submission
    from dcops.physics.faults import ChillerTrip

    def run(controller):
        config = ClusterConfig(faults=(ChillerTrip(start_s=2.0 * 3600.0, chiller=0, duration_s=3 * 3600.0),))
        plant = config.plant_config()
        context = ControllerContext.from_plant(plant, [1.0] * plant.n_zones, config.dt_s)
        episode = ClusterEpisode(config, TelemetryController(controller, context))
        episode.reset(np.random.default_rng(7), np.random.default_rng(8), ["team_0"])
        jobs = [("a", "H100", 96, 150.0, 3.0), ("b", "H100", 64, 100.0, 7.0), ("c", "A100", 100, 100.0, 9.0)]
        episode.submit([Submission(Request(rid, "team_0", "finetune", "", kw, h, gpus, gpu, Priority.HIGH, 9, False,
                                           1.0, 0), RequestTruth(Priority.HIGH, 9, False, h))
                        for rid, gpu, gpus, kw, h in jobs])
        results = []
        for w in range(config.n_windows):
            ids = episode.pending_ids()
            episode.decide(resolve_structured([{"request_id": i, "decision": "ACCEPT"} for i in ids], ids, w,
                                              config.n_windows))
            results.append(episode.run_window())
        return results

    ppo = run(PPOController())
    pid = run(PIDController())
    assert all(np.isfinite(r.cooling_kwh) and r.cooling_kwh > 0 for r in ppo)
    assert max(r.max_inlet_c for r in ppo) < 32.0
    assert not any(r.score.incident for r in ppo)
    assert sum(r.cooling_kwh for r in ppo) < sum(r.cooling_kwh for r in pid)


def test_features_are_the_documented_reductions_over_zones():
    """FeatureBuilder against the module docstring's definitions, computed here with numpy array reductions."""
    from dcops.agents.cooling.ppo import FEATURE_NAMES, FeatureBuilder
    from dcops.physics.interface import Telemetry

    rng = np.random.default_rng(5)
    builder = FeatureBuilder()
    builder.reset()
    previous = None
    for step in range(20):
        n = 1 + step % 6
        vector = rng.normal(20.0, 5.0, 5 * n + 11).astype(np.float32)
        t = Telemetry.parse(vector, n)
        action = rng.uniform(-1.0, 1.0, N_ACTIONS)
        got = dict(zip(FEATURE_NAMES, builder(t, action, 0.25 * step).tolist(), strict=True))
        current = (t.inlet_c.max(), t.chw_supply_c, t.load_fraction.mean())
        before = previous or current
        expected = {
            "inlet_max_c": t.inlet_c.max(), "inlet_mean_c": t.inlet_c.mean(), "inlet_min_c": t.inlet_c.min(),
            "return_max_c": t.return_c.max(), "return_mean_c": t.return_c.mean(), "supply_mean_c": t.supply_c.mean(),
            "load_max": t.load_fraction.max(), "load_mean": t.load_fraction.mean(), "fan_speed_mean": t.fan_speed.mean(),
            "chw_supply_c": t.chw_supply_c, "chillers_available": t.chillers_available,
            "economiser_fraction": t.economiser_fraction, "dry_bulb_c": t.dry_bulb_c, "wet_bulb_c": t.wet_bulb_c,
            "hour_sin": t.hour_sin, "hour_cos": t.hour_cos, "cooling_over_design_it": t.cooling_over_design_it,
            "inlet_max_change_k": current[0] - before[0], "chw_supply_change_k": current[1] - before[1],
            "load_mean_change": current[2] - before[2], "inlet_minus_supply_max_k": (t.inlet_c - t.supply_c).max(),
            "airflow_trim_max": 0.25 * step, "previous_supply_action": action[0],
            "previous_inlet_target_action": action[1], "previous_chw_margin_action": action[2],
        }
        previous = current
        for name in FEATURE_NAMES:  # to the bit: numpy sums fewer than 8 terms left to right, as zone_sum does
            assert got[name] == float(expected[name]), (step, name)


def test_zone_airflow_trims_follow_their_clipped_integrator():
    from dcops.agents.cooling.ppo import ZoneAirflowTrim

    trim = ZoneAirflowTrim(gain_per_k=0.05, deadband_k=0.25, max_trim=1.5)
    trim.reset(3)
    reference = np.zeros(3)
    rng = np.random.default_rng(9)
    top = bottom = 0
    for _ in range(200):
        inlets, target = rng.normal(28.0, 8.0, 3), float(rng.uniform(20.0, 28.0))
        reference = np.clip(reference + 0.05 * (inlets - target - 0.25), 0.0, 1.5)
        got = trim.update(inlets, target)
        assert np.array_equal(got, reference) and trim.trim_max == reference.max()
        top, bottom = top + int((reference == 1.5).sum()), bottom + int((reference == 0.0).sum())
    assert top > 0 and bottom > 0  # both clips were reached
