"""The RL scheduler on a scenario family: teacher data played in the family the skill ladder plays, seeds no
ladder, search or validation uses, the searched scheduler as a teacher, and a training run of the family."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from dcops.env import SchedulerEnv
from dcops.training.scheduler.teacher import (
    OBS_KEYS,
    build_teacher_dataset,
    episode_env_kwargs,
    load_split,
    paired_with_reference,
    split_seeds,
)
from tests.training.test_scheduler_teacher import assert_replays_in_the_learners_env

FAMILY = "oversubscribed"


@pytest.fixture(scope="module")
def family_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("family_teacher")
    build_teacher_dataset(out, 3, 2, teachers=("searched", "priority_threshold"), progress=False, family=FAMILY)
    return out


@pytest.mark.parametrize("family", ["classic", "oversubscribed", "chiller_fault", "adversarial"])
def test_a_familys_split_never_meets_a_ladder_or_its_search_and_ppo_episodes_never_meet_the_split(family):
    from dcops.cluster.scenarios import SCENARIOS
    from dcops.training.scheduler.ppo import EPISODE_SEED_LOW
    from dcops.training.scheduler.search import (
        MAX_FAMILY_VALIDATION_SEEDS,
        RECIPE,
        search_seeds,
        validation_seeds,
    )

    splits = split_seeds(1000, MAX_FAMILY_VALIDATION_SEEDS, family)
    train, validation = set(splits["train"]), set(splits["validation"])
    assert len(train) == 1000 and len(validation) == MAX_FAMILY_VALIDATION_SEEDS and not train & validation
    every_ladder = {s for other in SCENARIOS.values() for s in other.seeds}
    assert not (train | validation) & every_ladder  # no family's ladder, not only this one's
    search = set(search_seeds(family, RECIPE["n_seeds"]))
    assert not train & search and not validation & search
    # Validation is the search's own validation range (it selects nothing there); PPO episodes start above
    # every ladder and validation seed.
    assert splits["validation"] == list(validation_seeds(family, MAX_FAMILY_VALIDATION_SEEDS))
    assert max(every_ladder | validation) < EPISODE_SEED_LOW <= min(train)
    with pytest.raises(ValueError, match="n_validation: a family has 300 validation seeds"):
        split_seeds(1, MAX_FAMILY_VALIDATION_SEEDS + 1, family)


def test_ppo_episodes_draw_their_seeds_above_every_ladder_and_validation_seed():
    from dcops.training.scheduler.ppo import EPISODE_SEED_LOW, MixedScenarioEnv

    env = MixedScenarioEnv(FAMILY)
    env.reset(seed=0)
    drawn = [env.episode_seed]
    for _ in range(30):
        env.reset()
        drawn.append(env.episode_seed)
    assert min(drawn) >= EPISODE_SEED_LOW and len(set(drawn)) == len(drawn)
    assert env.observation_space["teams"].shape[0] == 6


def test_the_family_episodes_are_the_ladders_and_replay_in_the_learners_env(family_data: Path):
    import dcops
    from dcops.evaluation.ladder import family_env

    assert episode_env_kwargs(12000, FAMILY) == {"scenario": FAMILY}
    for teacher in ("searched", "priority_threshold"):
        data = load_split(family_data, teacher, "train")
        seed = int(data["seed"][0])
        # The ladder's environment gives the teacher's first observation for the same seed...
        ladder_obs, _ = family_env(FAMILY).reset(seed=seed)
        for key in OBS_KEYS:
            np.testing.assert_array_equal(ladder_obs["scheduler"][key], data[key][0], err_msg=key)
        assert data["teams"].shape[1] == 6  # the oversubscribed game's six teams
        # ...and the learner's environment reproduces every stored window from the stored codes.
        assert_replays_in_the_learners_env(data, seed, episode_env_kwargs(seed, FAMILY), teacher)
    assert dcops.parallel_env(scenario=FAMILY).config.team_kinds == SchedulerEnv(
        **episode_env_kwargs(0, FAMILY)).parallel.config.team_kinds


def test_every_recorded_code_is_the_searched_schedulers_decision_on_the_window(family_data: Path):
    """The recorded codes are the family's shipped searched scheduler's decisions, window by window (through the
    array action: past the 48 slots its decisions cannot be recorded, so its structured score can differ)."""
    from dcops.agents.schedulers.parametric import searched_scheduler
    from dcops.evaluation.ladder import family_env
    from dcops.training.scheduler.teacher import decisions_to_codes

    data = load_split(family_data, "searched", "train")
    env = family_env(FAMILY)
    cfg = env.config
    for seed in split_seeds(3, 2, FAMILY)["train"]:
        rows = np.flatnonzero(data["seed"] == seed)
        scheduler = searched_scheduler(FAMILY)
        observations, infos = env.reset(seed=seed)
        for row in rows:
            view = infos["scheduler"]["view"]
            codes, _ = decisions_to_codes(scheduler.decide(view), view, cfg.max_slots, cfg.max_defer)
            np.testing.assert_array_equal(codes, data["action"][row], err_msg=f"seed {seed} row {row}")
            observations, _, _, _, infos = env.step({"scheduler": codes})
        assert not env.agents


def test_the_manifest_names_the_family_and_the_paired_lead_over_the_best_baseline(family_data: Path):
    manifest = json.loads((family_data / "manifest.json").read_text())
    assert manifest["family"] == FAMILY and FAMILY in manifest["scenario_rule"]
    lead = manifest["teachers"]["searched"]["train"]["vs_priority_threshold"]
    seeds = split_seeds(3, 2, FAMILY)["train"]

    def score(teacher: str, seed: int) -> float:
        with np.load(family_data / "shards" / teacher / f"{seed}.npz", allow_pickle=False) as data:
            return float(data["score"])

    diffs = [score("searched", s) - score("priority_threshold", s) for s in seeds]
    assert lead["seeds"] == 3 and lead["mean"] == pytest.approx(float(np.mean(diffs)))
    half = 4.302652729911275 * float(np.std(diffs, ddof=1)) / np.sqrt(3)  # t(0.975, 2 d.o.f.)
    assert (lead["low"], lead["high"]) == pytest.approx((lead["mean"] - half, lead["mean"] + half))
    assert "vs_priority_threshold" not in manifest["teachers"]["priority_threshold"]["train"]
    assert paired_with_reference(family_data, "searched", seeds[:1]) is None  # one seed: no interval


def test_data_of_another_family_or_an_unknown_family_or_teacher_are_refused(family_data: Path, tmp_path: Path):
    with pytest.raises(ValueError, match="family: .* holds data of 'oversubscribed'"):
        build_teacher_dataset(family_data, 3, 2, teachers=("priority_threshold",), progress=False,
                              family="adversarial")
    with pytest.raises(ValueError, match="family: unknown 'crowded'"):
        build_teacher_dataset(tmp_path, 1, 1, progress=False, family="crowded")
    with pytest.raises(ValueError, match="teachers: unknown \\['searched'\\]"):  # the matrix has no searched file
        build_teacher_dataset(tmp_path, 1, 1, teachers=("searched",), progress=False)
    assert not any(tmp_path.iterdir())  # refused before anything is played or written


@pytest.mark.parametrize("kwargs, message", [
    ({"family": "crowded"}, "family: unknown 'crowded'"),
    ({"family": FAMILY, "teacher": "searched", "n_validation_seeds": 301}, "n_validation_seeds: a family has 300"),
    ({"teacher": "searched"}, "teacher: must be one of"),
    ({"family": FAMILY, "teacher": "oracle"}, "teacher: must be one of"),
    ({"family": FAMILY, "dagger_rounds": 1}, "dagger_rounds"),
])
def test_the_training_config_refuses_a_family_setting_that_cannot_run(kwargs, message):
    from dcops.training.scheduler.ppo_config import SchedulerPPOConfig

    with pytest.raises(ValueError, match=message):
        SchedulerPPOConfig(**kwargs)
    assert SchedulerPPOConfig(family=FAMILY, teacher="searched").family == FAMILY


def test_a_family_run_trains_and_validates_on_the_family_and_refuses_other_data(family_data: Path, tmp_path: Path):
    pytest.importorskip("sb3_contrib")
    from dcops.agents.schedulers.learned import SlotPolicy
    from dcops.training.scheduler.ppo import train_scheduler_ppo
    from dcops.training.scheduler.ppo_config import SchedulerPPOConfig

    config = SchedulerPPOConfig(family=FAMILY, teacher="searched", bc_epochs=2, timesteps=32, n_envs=2, n_steps=16,
                                batch_size=32, n_epochs=1, eval_every=32, n_validation_seeds=2, hidden=8)
    record = train_scheduler_ppo(family_data, tmp_path / "run", config, verbose=False)
    assert record["seeds"]["validation"] == "2700-2701"
    assert record["seeds"]["evaluation_never_used"].startswith("2000-2039")
    policy = SlotPolicy.load(tmp_path / "run" / "ppo_scheduler.npz")
    # Its global input is sized by the family's six teams: it reads the family's game, not the matrix's.
    assert policy.fits(SchedulerEnv(**episode_env_kwargs(0, FAMILY)).observation_space)
    assert not policy.fits(SchedulerEnv().observation_space)
    with pytest.raises(ValueError, match="family: the teacher data .* are of 'oversubscribed'"):
        train_scheduler_ppo(family_data, tmp_path / "other", SchedulerPPOConfig(
            **{**config.__dict__, "family": "adversarial"}), verbose=False)


def test_a_checkpoint_made_before_families_resumes_and_other_settings_are_named():
    from dataclasses import asdict

    from dcops.training.scheduler.ppo import config_differences
    from dcops.training.scheduler.ppo_config import SchedulerPPOConfig

    config = SchedulerPPOConfig()
    older = {k: v for k, v in asdict(config).items() if k != "family"}  # a state.json written before the field
    assert config_differences(older, config) == []
    assert config_differences({**older, "timesteps": 1}, config) == []  # only timesteps may change
    assert config_differences(older, SchedulerPPOConfig(family=FAMILY, teacher="searched")) == ["family", "teacher"]


def test_the_family_weights_are_found_by_family_and_a_misspelt_family_is_refused():
    from dcops.agents.schedulers.learned import family_policy, family_weights_name, shipped_policy

    assert family_weights_name(FAMILY) == "data/ppo_scheduler_oversubscribed.npz"
    assert family_policy(FAMILY) is not shipped_policy()
    assert family_policy(FAMILY).metadata["config"]["family"] == FAMILY  # its recipe names its family
    assert family_policy("classic") is shipped_policy()  # no classic weights ship: the matrix's play there
    with pytest.raises(ValueError, match="scenario: unknown 'oversubscribd'"):
        family_policy("oversubscribd")


def test_data_without_a_manifest_are_left_to_the_reader_and_matrix_data_refuse_a_family_run(tmp_path: Path):
    from dcops.training.scheduler.ppo import check_data_family

    check_data_family(tmp_path, FAMILY)  # nothing to check against
    (tmp_path / "manifest.json").write_text(json.dumps({"teachers": {}}))
    check_data_family(tmp_path, "")
    with pytest.raises(ValueError, match="family: the teacher data in .* are of 'the matrix', the run asks for "
                       "'oversubscribed'"):
        check_data_family(tmp_path, FAMILY)
