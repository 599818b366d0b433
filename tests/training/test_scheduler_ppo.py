"""The RL scheduler's training: the numpy runtime is the torch policy's deterministic masked action, cloning
learns the teacher, and the pipeline writes its recipe, curve and weights and resumes."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from dcops.agents.schedulers.learned import PARAM_NAMES, SlotPolicy, shipped_policy
from dcops.training.scheduler.ppo import (
    MixedScenarioEnv,
    SchedulerPPOConfig,
    SlotActorCritic,
    SlotScoringPolicy,
    export,
    train_scheduler_ppo,
)
from dcops.training.scheduler.teacher import OBS_KEYS, build_teacher_dataset, load_split


def _observations(n_windows: int = 24) -> dict[str, np.ndarray]:
    """Observations of a few episodes over the scenarios, played with masked random actions."""
    env = MixedScenarioEnv()
    env.reset(seed=5)
    env.action_space.seed(5)  # the random actions too: the same observations every run, none with a near-tie
    rows: dict[str, list[np.ndarray]] = {key: [] for key in OBS_KEYS}
    obs, _ = env.reset()
    while len(rows["requests"]) < n_windows:
        for key in OBS_KEYS:
            rows[key].append(obs[key])
        obs, _, done, _, _ = env.step(env.action_space.sample(obs["action_mask"]))
        if done:
            obs, _ = env.reset()
    return {key: np.stack(value) for key, value in rows.items()}


def _model(seed: int = 0):
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    model = MaskablePPO(SlotScoringPolicy, DummyVecEnv([MixedScenarioEnv]), n_steps=16, batch_size=16, seed=seed,
                        device="cpu")
    with torch.no_grad():  # sharper logits than the initial ones: no near-ties between codes
        for parameter in model.policy.mlp_extractor.parameters():
            parameter.mul_(4.0)
    return model


def test_the_numpy_runtime_takes_the_torch_policys_deterministic_masked_action():
    model = _model()
    obs = _observations()
    expected, _ = model.predict(obs, deterministic=True, action_masks=obs["action_mask"].astype(bool))
    policy = export(model)
    np.testing.assert_array_equal(policy.act(obs), expected)
    for i in range(3):  # one observation at a time, as the scheduler gets them
        np.testing.assert_array_equal(policy.act({k: v[i] for k, v in obs.items()}), expected[i])
    logits = model.policy.mlp_extractor.forward_actor(
        model.policy.extract_features(model.policy.obs_to_tensor(obs)[0])).detach().numpy()
    np.testing.assert_allclose(policy.logits(obs).reshape(len(logits), -1), logits, rtol=1e-4, atol=1e-4)


def test_the_shipped_weights_run_the_same_network_in_torch():
    # The shipped arrays loaded into the torch twin give the numpy runtime's actions on fresh observations.
    shipped = shipped_policy()
    space = MixedScenarioEnv().observation_space
    hidden = shipped.params["b1"].shape[0]
    net = SlotActorCritic(48, space["zones"].shape[0], space["teams"].shape[0], 6, hidden)
    with torch.no_grad():
        for module, (w, b) in ((net.glob, ("Wg", "bg")), (net.slot1, ("W1", "b1")), (net.slot2, ("W2", "b2")),
                               (net.head, ("W3", "b3"))):
            module.weight.copy_(torch.as_tensor(shipped.params[w].T))
            module.bias.copy_(torch.as_tensor(shipped.params[b]))
        net.ctx1.weight.copy_(torch.as_tensor(shipped.params["U1"].T))
        net.ctx2.weight.copy_(torch.as_tensor(shipped.params["U2"].T))
    assert set(net.numpy_params()) == set(PARAM_NAMES)
    obs = _observations()
    features = torch.cat([torch.as_tensor(obs[k]).double().flatten(1) for k in
                          ("requests", "request_mask", "cluster", "zones", "teams")], dim=1)
    logits = net.double().forward_actor(features).detach().numpy().reshape(len(features), 48, 6)
    mask = obs["action_mask"].reshape(logits.shape).astype(bool)
    np.testing.assert_array_equal(np.where(mask, logits, -np.inf).argmax(-1), shipped.act(obs))


def test_the_shipped_weights_are_small_ship_as_package_data_and_carry_their_recipe():
    import fnmatch
    from importlib import resources

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    import dcops

    root = resources.files("dcops.agents.schedulers") / "data"
    with resources.as_file(root / "ppo_scheduler.npz") as npz:
        assert npz.stat().st_size < 400_000
    pyproject = tomllib.loads((Path(dcops.__file__).parent / "pyproject.toml").read_text())
    globs = pyproject["tool"]["setuptools"]["package-data"]["dcops.agents.schedulers"]
    for name in ("data/ppo_scheduler.npz", "data/ppo_scheduler.json"):
        assert any(fnmatch.fnmatch(name, g) for g in globs), name
    recipe = json.loads((root / "ppo_scheduler.json").read_text())
    for key in ("config", "bc_accuracy", "selected_timesteps", "ppo_seconds", "versions", "seeds"):
        assert key in recipe, key
    assert sum(a.size for a in shipped_policy().params.values()) < 100_000


@pytest.fixture(scope="module")
def tiny_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("teacher")
    build_teacher_dataset(out, 3, 2, teachers=("priority_threshold",), progress=False)
    return out


def test_the_pipeline_clones_fine_tunes_selects_writes_and_resumes(tiny_data: Path, tmp_path: Path):
    config = SchedulerPPOConfig(bc_epochs=3, timesteps=64, n_envs=2, n_steps=16, batch_size=32, n_epochs=1,
                                eval_every=32, n_validation_seeds=2, hidden=16)
    record = train_scheduler_ppo(tiny_data, tmp_path, config, verbose=False)
    assert record["timesteps_done"] >= 64
    assert 0.0 <= record["bc_accuracy"]["validation"]["decision_accuracy"] <= 1.0
    rows = list(csv.DictReader((tmp_path / "learning_curve.csv").open()))
    assert [int(r["timesteps"]) for r in rows][0] == 0 and len(rows) >= 3
    best = max(rows, key=lambda r: float(r["validation_score"]))
    assert record["selected_validation_score"] == pytest.approx(float(best["validation_score"]), abs=1e-6)
    chosen = SlotPolicy.load(tmp_path / "ppo_scheduler.npz")
    assert chosen.metadata["config"]["hidden"] == 16
    assert (tmp_path / "bc_scheduler.npz").exists()
    # Resuming to more steps continues the same run: the curve keeps its rows and grows.
    more = SchedulerPPOConfig(**{**config.__dict__, "timesteps": 96})
    other = SchedulerPPOConfig(**{**more.__dict__, "learning_rate": 3e-4, "clip_range": 0.2})
    with pytest.raises(ValueError, match=r"other settings of \['clip_range', 'learning_rate'\]"):
        train_scheduler_ppo(tiny_data, tmp_path, other, resume=True, verbose=False)  # refused, nothing written
    again = train_scheduler_ppo(tiny_data, tmp_path, more, resume=True, verbose=False)
    assert again["timesteps_done"] >= 96
    assert again["bc_accuracy"] == record["bc_accuracy"]
    grown = list(csv.DictReader((tmp_path / "learning_curve.csv").open()))
    assert grown[: len(rows)] == rows and len(grown) > len(rows)


def test_cloning_learns_the_teachers_codes(tiny_data: Path, tmp_path: Path):
    from dcops.training.scheduler.ppo import bc_accuracy

    config = SchedulerPPOConfig(bc_epochs=0, bc_batch_size=4, timesteps=0, n_validation_seeds=1, hidden=16, n_envs=1)
    untrained = train_scheduler_ppo(tiny_data, tmp_path / "a", config, verbose=False)
    trained = train_scheduler_ppo(tiny_data, tmp_path / "b", SchedulerPPOConfig(
        **{**config.__dict__, "bc_epochs": 40}), verbose=False)
    assert (trained["bc_accuracy"]["train"]["decision_accuracy"]
            > untrained["bc_accuracy"]["train"]["decision_accuracy"] + 0.2)
    data = load_split(tiny_data, "priority_threshold", "train")
    assert bc_accuracy(SlotPolicy.load(tmp_path / "b" / "bc_scheduler.npz"), data) == trained["bc_accuracy"]["train"]


def test_dagger_labels_the_windows_the_student_visits_with_the_public_teachers_codes():
    import dcops
    from dcops.agents.schedulers import PriorityThresholdScheduler
    from dcops.training.scheduler.ppo import dagger_episodes
    from dcops.training.scheduler.teacher import decisions_to_codes, scenario_env_kwargs

    student = shipped_policy()
    visited = dagger_episodes(student, [3000])
    assert len(visited["seed"]) == 8 and set(visited) == {*OBS_KEYS, "action", "reward", "window", "seed"}
    # Replayed: the student acts, and each window's label is priority_threshold's answer to that window.
    env = dcops.parallel_env(**scenario_env_kwargs(3000))
    observations, infos = env.reset(seed=3000)
    w = 0
    while env.agents:
        obs, view = observations["scheduler"], infos["scheduler"]["view"]
        np.testing.assert_array_equal(obs["requests"], visited["requests"][w])
        codes, _ = decisions_to_codes(PriorityThresholdScheduler().decide(view), view, 48, 4)
        np.testing.assert_array_equal(codes, visited["action"][w])
        observations, rewards, _, _, infos = env.step({"scheduler": student.act(obs)})
        assert rewards["scheduler"] == pytest.approx(float(visited["reward"][w]))
        w += 1


@pytest.mark.parametrize("field, value, message", [
    ("teacher", "oracle", "teacher: must be one of"),
    ("eval_every", 0, "eval_every: must be at least 1"),
    ("n_validation_seeds", 0, "n_validation_seeds: must be at least 1"),
    ("warm_start_temperature", 0.0, "warm_start_temperature: must be a finite number above 0"),
    ("learning_rate", float("nan"), "learning_rate: must be a finite number above 0"),
    ("gamma", 1.5, "gamma and gae_lambda"),
    ("timesteps", -1, "timesteps: must be at least 0"),
])
def test_the_training_config_refuses_settings_that_would_fail_late(field, value, message):
    from dcops.training.scheduler.ppo_config import SchedulerPPOConfig

    with pytest.raises(ValueError, match=message):
        SchedulerPPOConfig(**{field: value})
    with pytest.raises(ValueError, match="dagger_rounds"):
        SchedulerPPOConfig(teacher="truth_planner", dagger_rounds=1)


def test_resume_without_a_checkpoint_is_refused(tmp_path):
    from dcops.training.scheduler.ppo import train_scheduler_ppo

    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        train_scheduler_ppo(tmp_path / "data", tmp_path / "out", resume=True, verbose=False)
