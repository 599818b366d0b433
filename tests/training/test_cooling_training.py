"""PPO cooling training: the training environment, its reward, a short training run, the evaluation report."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from dcops.agents.cooling import PIDController, PPOController, RuleBasedController
from dcops.agents.cooling.ppo import N_FEATURES
from dcops.cli import build_parser
from dcops.cooling_env import CoolingEnv, CoolingTaskSpec
from dcops.physics.faults import ChillerTrip, FanFailure, SensorDrift
from dcops.physics.plant import PlantConfig
from dcops.physics.profiles import SITE_ALIASES
from dcops.training.cooling import evaluate as ev
from dcops.training.cooling.train_env import (
    CoolingTrainEnv,
    RewardWeights,
    TrainingScenarios,
    reference_cooling_kw,
)


def test_training_env_passes_the_gymnasium_env_checker():
    check_env(CoolingTrainEnv(), skip_render_check=True)


def test_training_scenarios_cover_every_site_season_load_pattern_and_fault_kind():
    rng = np.random.default_rng(0)
    specs = [TrainingScenarios(evaluation_family_probability=0.0).sample(rng) for _ in range(400)]
    assert {s.climate for s in specs} == set(SITE_ALIASES)
    assert {s.load.pattern for s in specs} == {"steady", "ramp", "diurnal", "spikes"}
    assert {s.start.month for s in specs} == set(range(1, 13))
    kinds = Counter(type(f) for s in specs for f in s.faults)
    assert set(kinds) == {ChillerTrip, FanFailure, SensorDrift}
    assert {s.plant.n_zones for s in specs} == {1, 2, 3, 4, 5, 6}
    assert all(0.0 < s.load.low <= s.load.high <= 0.95 for s in specs)


def test_half_the_training_scenarios_are_evaluation_family_cases():
    rng = np.random.default_rng(1)
    specs = [TrainingScenarios().sample(rng) for _ in range(400)]
    family = [s for s in specs if s.task_id.startswith("eval/")]
    assert 150 < len(family) < 250
    assert len({s.task_id for s in family}) == 16


def test_training_episodes_never_use_an_evaluation_tuning_or_validation_seed(monkeypatch):
    seeds = []
    original = CoolingEnv.reset

    def spy(self, *, seed=None, options=None):
        seeds.append(seed)
        return original(self, seed=seed, options=options)

    monkeypatch.setattr(CoolingEnv, "reset", spy)
    env = CoolingTrainEnv()
    env.reset(seed=0)
    for _ in range(49):
        env.reset()
    assert len(seeds) == 50 and min(seeds) >= 10_000


def test_training_env_observes_reported_values_not_the_truth():
    def drifting(rng):
        plant = PlantConfig.default()
        return CoolingTaskSpec(task_id="t", plant=plant, zone_names=("a", "b", "c", "d"), zone_weights=(1.0,) * 4,
                               n_steps=24, climate="seattle", start=datetime(2026, 1, 10),
                               faults=tuple(SensorDrift(0.0, z, rate_k_per_h=6.0) for z in range(4)))

    env = CoolingTrainEnv(spec_source=drifting)
    obs, _ = env.reset(seed=0)
    for _ in range(24):
        obs, _, done, _, info = env.step(np.zeros(3, dtype=np.float32))
    # Every inlet sensor reads 12 K high after 2 h: the policy sees the reading, the reward uses the truth.
    assert obs[0] - float(np.max(info["inlet_c"])) == pytest.approx(12.0, abs=1.0)
    assert done


def test_reward_matches_the_documented_worked_example():
    w = RewardWeights()
    reference = reference_cooling_kw(1000.0, 22.0)
    assert reference == pytest.approx(190.0)
    energy, thermal = w.cost(190.0, reference, np.full(4, 26.0), np.zeros(4), np.zeros(4), np.zeros(4))
    assert -(energy + thermal) == pytest.approx(-2.0)
    hot = np.array([27.5, 26.0, 26.0, 26.0])
    energy, thermal = w.cost(190.0, reference, hot, np.array([1.0, 0, 0, 0]), np.zeros(4), np.zeros(4))
    assert thermal == pytest.approx(3.75)
    assert -(energy + thermal) == pytest.approx(-5.75)


def test_reference_cooling_power_depends_only_on_load_and_wet_bulb_and_rises_with_wet_bulb():
    assert reference_cooling_kw(1000.0, -5.0) == pytest.approx(30.0) == reference_cooling_kw(1000.0, 11.0)
    assert reference_cooling_kw(500.0, 30.0) == pytest.approx(95.0)
    values = [reference_cooling_kw(800.0, wb) for wb in np.linspace(-10.0, 30.0, 41)]
    assert np.all(np.diff(values) >= 0.0)


def test_reward_never_lets_energy_buy_back_a_violation_above_32_c():
    w = RewardWeights()
    _, severe = w.cost(0.0, 30.0, np.array([33.0, 20.0, 20.0, 20.0]), np.array([1.0, 0, 0, 0]),
                       np.array([1.0, 0, 0, 0]), np.zeros(4))
    # Three times the free-cooling reference power for a whole step costs less than one zone in four > 32 °C.
    most_energy, _ = w.cost(90.0, 30.0, np.full(4, 20.0), np.zeros(4), np.zeros(4), np.zeros(4))
    assert severe > most_energy


def _mean_reward(policy, seeds=(0, 1, 2, 3)) -> float:
    """Mean step reward over fixed scenarios (normal and chiller trip, hot and cold) for ``policy(obs, rng)``."""
    cases = [ev.Case("phoenix", "july", "chiller_trip"), ev.Case("chicago", "january", "normal")]
    total, steps = 0.0, 0
    for case in cases:
        env = CoolingTrainEnv(spec_source=lambda rng, case=case: ev.case_spec(case))
        for seed in seeds:
            rng = np.random.default_rng(seed)
            obs, _ = env.reset(seed=seed)
            done = False
            while not done:
                obs, reward, done, _, _ = env.step(policy(obs, rng))
                total += reward
                steps += 1
    return total / steps


def test_a_short_training_run_improves_on_a_random_policy(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("stable_baselines3")
    from dcops.training.cooling.ppo import CoolingPPOConfig, train_cooling_ppo

    config = CoolingPPOConfig(seed=1, timesteps=4096, n_envs=4, n_steps=256, batch_size=256, n_epochs=4,
                              eval_every=2048, validation_seeds=(2000,), max_minutes=None)
    record = train_cooling_ppo(config, out=tmp_path, tensorboard_log=str(tmp_path / "tb"), progress_bar=False)
    assert record["timesteps_trained"] == 4096
    assert {p.name for p in tmp_path.iterdir()} >= {"ppo_cooling.npz", "ppo_cooling.json", "ppo_cooling.zip",
                                                    "learning_curve.csv", "tb"}
    assert any((tmp_path / "tb").rglob("events.out.tfevents.*"))
    assert json.loads((tmp_path / "ppo_cooling.json").read_text())["seed"] == 1
    trained = PPOController.from_file(tmp_path / "ppo_cooling.npz")
    assert trained.policy.obs_mean.shape == (N_FEATURES,)

    def ppo(obs, rng):
        return trained.policy.act(obs)

    def uniform_random(obs, rng):
        return rng.uniform(-1.0, 1.0, size=3)

    assert _mean_reward(ppo) > _mean_reward(uniform_random) + 0.5


def test_evaluation_family_spans_four_climates_two_seasons_and_a_chiller_trip():
    cases = ev.all_cases()
    assert len(cases) == 16 and {"phoenix", "seattle"} <= {c.site for c in cases}
    trip = ev.case_spec(ev.Case("seattle", "july", "chiller_trip"))
    faults = trip.faults(np.random.default_rng(0))
    assert len(faults) == 1 and isinstance(faults[0], ChillerTrip)
    assert 8 * 3600 <= faults[0].start_s <= 18 * 3600
    assert ev.case_spec(ev.Case("seattle", "july", "normal")).faults == ()
    with pytest.raises(ValueError, match="season"):
        ev.case_spec(ev.Case("seattle", "march", "normal"))


def test_evaluation_seeds_are_disjoint_from_tuning_and_validation_seeds():
    evaluation = set(range(10))
    assert not evaluation & set(ev.TUNING_SEEDS)
    assert not evaluation & set(ev.VALIDATION_SEEDS)
    assert not set(ev.TUNING_SEEDS) & set(ev.VALIDATION_SEEDS)


def test_report_has_every_metric_and_the_paired_difference_with_its_interval():
    rows = ev.evaluate([RuleBasedController(), PIDController()],
                       [ev.Case("seattle", "january", "normal"), ev.Case("phoenix", "july", "chiller_trip")], (0,))
    assert len(rows) == 4
    assert all(len(r["minutes_above_27"]) == 4 and len(r["minutes_above_32"]) == 4 for r in rows)
    report = ev.markdown_report(rows, (0,))
    for column in ("cooling kWh", "PUE", "carbon kg", "> 27 °C", "> 32 °C", "max inlet change K/h", "95 % CI"):
        assert column in report
    d = ev.paired_difference(rows, "pid", "rule")
    assert d["n_cases"] == 2 and d["ci_low_pct"] <= d["mean_pct"] <= d["ci_high_pct"]


def test_hourly_inlet_change_skips_the_first_hour_and_looks_at_every_zone():
    n = 48
    inlet = np.full((n, 2), 24.0)
    inlet[:6, 0] = 30.0  # start-up transient: ignored
    inlet[30:, 1] = 26.5  # a 2.5 K step in zone 1 at 2.5 h
    assert ev.max_hourly_change_k(inlet, 300.0) == pytest.approx(2.5)
    ramp = np.linspace(20.0, 32.0, n)[:, None]  # 12 K over 47 five-minute steps
    assert ev.max_hourly_change_k(ramp, 300.0) == pytest.approx(12 * 12.0 / (n - 1))


def test_paired_difference_is_the_mean_of_per_case_percentages():
    rows = [
        {"site": "a", "season": "s", "fault": "f", "controller": "x", "cooling_kwh": 90.0},
        {"site": "a", "season": "s", "fault": "f", "controller": "ref", "cooling_kwh": 100.0},
        {"site": "b", "season": "s", "fault": "f", "controller": "x", "cooling_kwh": 240.0},
        {"site": "b", "season": "s", "fault": "f", "controller": "ref", "cooling_kwh": 200.0},
    ]
    d = ev.paired_difference(rows, "x", "ref")
    assert d["mean_pct"] == pytest.approx(5.0)  # (−10 % + 20 %) / 2
    assert d["total_pct"] == pytest.approx(100.0 * (330 - 300) / 300)
    assert d["cases_better"] == 1


def test_family_tuned_rule_meets_the_thermal_constraints_it_was_tuned_for():
    params = ev.family_rule_parameters()
    assert params, "agents/cooling/rule_tuned_eval_family.json is missing"
    rule = RuleBasedController(**params)
    cases = [c for c in ev.all_cases() if c.fault == "normal"]
    rows = [ev.run_episode(rule, c, seed) for c in cases for seed in ev.TUNING_SEEDS]
    assert max(r["worst_zone_minutes_above_32"] for r in rows) == 0.0
    assert np.mean([r["zone_time_above_27_pct"] for r in rows]) <= 1.0


def test_cli_exposes_train_cooling_and_eval_cooling():
    parser = build_parser()
    args = parser.parse_args(["train-cooling", "--timesteps", "1000", "--seed", "3", "--n-envs", "2",
                              "--tensorboard", "runs/cooling"])
    assert (args.timesteps, args.seed, args.n_envs, args.tensorboard) == (1000, 3, 2, "runs/cooling")
    args = parser.parse_args(["eval-cooling", "--seeds", "2", "--out", "reports/cooling"])
    assert (args.seeds, args.out) == (2, "reports/cooling")
