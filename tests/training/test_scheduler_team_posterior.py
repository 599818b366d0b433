"""The RL scheduler trained on the team posterior (``--team-posterior``): teacher data recorded with the posterior
column, a training run whose network reads 16 team features, data of the other kind refused, and the trained
network playing in an evaluation environment from the posterior the structured view carries."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import dcops
from dcops.agents.schedulers.learned import LearnedScheduler, SlotPolicy
from dcops.cluster.observation import N_TEAM_FEATURES
from dcops.training.scheduler.teacher import build_teacher_dataset, load_split

FAMILY = "adversarial"


@pytest.fixture(scope="module")
def posterior_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("posterior_teacher")
    build_teacher_dataset(out, 2, 2, teachers=("searched",), progress=False, family=FAMILY, team_posterior=True)
    return out


def test_the_teacher_data_carry_the_posterior_column_and_the_manifest_says_so(posterior_data: Path):
    data = load_split(posterior_data, "searched", "train")
    assert data["teams"].shape[1:] == (7, N_TEAM_FEATURES + 1)
    column = data["teams"][:, :, -1]
    assert ((column >= 0.0) & (column <= 1.0)).all() and column.std() > 0.05  # probabilities that move
    assert json.loads((posterior_data / "manifest.json").read_text())["team_posterior"] is True
    with pytest.raises(ValueError, match="team_posterior: .* holds observations with"):
        build_teacher_dataset(posterior_data, 2, 2, teachers=("searched",), progress=False, family=FAMILY)


def test_a_posterior_run_reads_sixteen_team_features_and_plays_from_the_view(posterior_data: Path, tmp_path: Path):
    pytest.importorskip("sb3_contrib")
    from dcops.training.scheduler.ppo import train_scheduler_ppo
    from dcops.training.scheduler.ppo_config import SchedulerPPOConfig

    config = SchedulerPPOConfig(family=FAMILY, teacher="searched", bc_epochs=2, timesteps=32, n_envs=2, n_steps=16,
                                batch_size=32, n_epochs=1, eval_every=32, n_validation_seeds=2, hidden=8,
                                team_posterior=True)
    train_scheduler_ppo(posterior_data, tmp_path / "run", config, verbose=False)
    policy = SlotPolicy.load(tmp_path / "run" / "ppo_scheduler.npz")
    assert policy.n_team_features == N_TEAM_FEATURES + 1
    with_column = dcops.parallel_env(scenario=FAMILY, team_posterior=True)
    plain = dcops.parallel_env(scenario=FAMILY)
    assert policy.fits(with_column.observation_space("scheduler"))
    assert not policy.fits(plain.observation_space("scheduler"))
    assert policy.fits(plain.observation_space("scheduler"), posterior_from_view=True)
    # In an evaluation environment (the view, no column) the scheduler appends the view's posteriors: the
    # same actions as on the environment that carries the column.
    scheduler = LearnedScheduler(weights=str(tmp_path / "run" / "ppo_scheduler.npz"))
    obs_a, infos = with_column.reset(seed=4701)
    obs_b, infos_b = plain.reset(seed=4701)
    while plain.agents:
        action = scheduler.decide(infos_b["scheduler"]["view"], obs_b["scheduler"])
        assert np.array_equal(action, policy.act(obs_a["scheduler"]))
        obs_a, *_ = with_column.step({"scheduler": action})
        obs_b, _, _, _, infos_b = plain.step({"scheduler": action})
    with pytest.raises(ValueError, match="gaming_posterior"):
        scheduler.decide(None, dcops.parallel_env(scenario=FAMILY, structured_view=False).reset(seed=1)[0]["scheduler"])
    # Data recorded with the column are refused by a plain run, and data without it by a posterior run.
    with pytest.raises(ValueError, match="team_posterior: the teacher data .* with the team posterior column"):
        train_scheduler_ppo(posterior_data, tmp_path / "other", SchedulerPPOConfig(
            **{**config.__dict__, "team_posterior": False}), verbose=False)
    plain_data = tmp_path / "plain"
    build_teacher_dataset(plain_data, 1, 1, teachers=("searched",), progress=False, family=FAMILY)
    with pytest.raises(ValueError, match="team_posterior: the teacher data .* without the team posterior column"):
        train_scheduler_ppo(plain_data, tmp_path / "other", config, verbose=False)
    # dcops eval refuses it on game version 0 (no posterior in that view) before any cell runs.
    from dcops.cli import main

    weights = tmp_path / "run" / "ppo_scheduler.npz"
    with pytest.raises(SystemExit, match="cannot read game version 0.s observation .a network trained with the team posterior"):
        main(["eval", "--game-version", "0", "--schedulers", f"ppo@{weights}", "--seeds", "1",
              "--out", str(tmp_path / "eval")])
    assert not (tmp_path / "eval").exists()


def test_shards_a_stopped_run_left_with_the_other_width_are_refused(tmp_path: Path):
    """The manifest guard cannot see a run stopped before its manifest: the shards' own width is checked."""
    build_teacher_dataset(tmp_path, 1, 1, teachers=("searched",), progress=False, family=FAMILY, team_posterior=True)
    (tmp_path / "manifest.json").unlink()  # as a run stopped after its shards
    with pytest.raises(ValueError, match="team_posterior: shard .* has 16 team features, this run records 15"):
        build_teacher_dataset(tmp_path, 1, 1, teachers=("searched",), progress=False, family=FAMILY)


def test_the_switch_is_a_flag_of_both_commands_and_dagger_is_refused_with_it():
    from dcops.cli import build_parser
    from dcops.training.scheduler.ppo_config import SchedulerPPOConfig

    parser = build_parser()
    assert parser.parse_args(["train-scheduler-ppo", "--team-posterior"]).team_posterior is True
    assert parser.parse_args(["train-scheduler-ppo"]).team_posterior is False
    assert parser.parse_args(["train-scheduler-ppo", "--no-team-posterior"]).team_posterior is False
    assert parser.parse_args(["scheduler-teacher", "--team-posterior"]).team_posterior is True
    with pytest.raises(ValueError, match="dagger_rounds"):
        SchedulerPPOConfig(team_posterior=True, dagger_rounds=1)
    with pytest.raises(ValueError, match="team_posterior: must be True or False"):
        SchedulerPPOConfig(team_posterior="yes")
