"""The RL scheduler's teacher data: public observations exactly as the learner's environment gives them, codes
every mask allows, a fixed split away from the evaluation seeds, and a resumable command."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from dcops.env import SchedulerEnv
from dcops.training.scheduler.teacher import (
    OBS_KEYS,
    TEACHERS,
    build_teacher_dataset,
    decisions_to_codes,
    load_split,
    scenario_env_kwargs,
    scenario_of,
    split_seeds,
)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("teacher")
    # One training and one validation seed per teacher; the truth planner with a single short start (seconds).
    build_teacher_dataset(out, 1, 1, progress=False, planner_passes=1, planner_starts=("electrical",))
    return out


def test_the_split_is_fixed_disjoint_and_never_the_evaluation_seeds():
    splits = split_seeds(1000, 1000)
    assert splits == split_seeds(1000, 1000)
    train, validation = set(splits["train"]), set(splits["validation"])
    assert not train & validation
    assert not (train | validation) & set(range(20))
    with pytest.raises(ValueError, match="n_train"):
        split_seeds(1001, 0)


def test_consecutive_seeds_cover_every_scenario_of_the_matrix():
    from dcops.evaluation.matrix import CONDITIONS, MIXES

    seen = {scenario_of(seed) for seed in range(1000, 1000 + len(MIXES) * len(CONDITIONS))}
    assert seen == {(m, c) for m in MIXES for c in CONDITIONS}


def test_every_split_has_the_observation_shapes_and_the_codes_its_masks_allow(dataset: Path):
    space = SchedulerEnv(**scenario_env_kwargs(1000)).observation_space
    for teacher in TEACHERS:
        for split in ("train", "validation"):
            data = load_split(dataset, teacher, split)
            n = len(data["seed"])
            assert n == 8  # one episode of 8 windows
            for key in OBS_KEYS:
                assert data[key].shape == (n, *space[key].shape), (teacher, split, key)
                assert data[key].dtype == space[key].dtype, (teacher, split, key)
            assert data["action"].shape == (n, 48)
            windows, slots = np.indices(data["action"].shape)
            allowed = data["action_mask"].reshape(n, 48, 6)[windows, slots, data["action"]]
            assert allowed.all(), (teacher, split)
            assert (data["action"][data["request_mask"] == 0] == 0).all()


def test_only_the_public_observation_and_the_decision_are_stored(dataset: Path):
    with np.load(dataset / "truth_planner_train.npz", allow_pickle=False) as data:
        assert set(data.files) == {*OBS_KEYS, "action", "reward", "window", "seed"}


@pytest.mark.parametrize("teacher", TEACHERS)
def test_the_stored_observations_are_what_the_scheduler_env_gives_for_the_same_seed(dataset: Path, teacher: str):
    # Replaying the stored codes in the learner's own environment reproduces every stored array bit for bit:
    # nothing the environment does not show the scheduler (the truth the planner read) is in them.
    data = load_split(dataset, teacher, "train")
    seed = int(data["seed"][0])
    assert_replays_in_the_learners_env(data, seed, scenario_env_kwargs(seed), teacher)


def assert_replays_in_the_learners_env(data: dict[str, np.ndarray], seed: int, env_kwargs: dict, label: str) -> None:
    """Replay the stored codes of ``seed``'s windows in a ``SchedulerEnv`` built with ``env_kwargs``: every stored
    observation array equals the environment's bit for bit, every reward matches, no code is invalid, and the
    stored windows end the episode. (Also used by the family tests.)"""
    rows = np.flatnonzero(data["seed"] == seed)
    assert len(rows) > 0, f"{label}: no window of seed {seed}"
    env = SchedulerEnv(structured_view=False, **env_kwargs)
    obs, _ = env.reset(seed=seed)
    terminated = False
    for w in rows:
        for key in OBS_KEYS:
            np.testing.assert_array_equal(obs[key], data[key][w], err_msg=f"{label} row {w} {key}")
        obs, reward, terminated, _, info = env.step(data["action"][w])
        assert reward == pytest.approx(float(data["reward"][w]), abs=1e-6)
        assert info["invalid"]["count"] == 0
    assert terminated


def test_the_manifest_records_seeds_counts_and_versions_and_a_rerun_plays_nothing_again(dataset: Path):
    manifest = json.loads((dataset / "manifest.json").read_text())
    for teacher in TEACHERS:
        entry = manifest["teachers"][teacher]
        assert entry["seeds"] == {"train": "1000-1000", "validation": "2000-2000"}
        assert entry["train"]["windows"] == 8
        assert entry["train"]["decisions"] == int(load_split(dataset, teacher, "train")["request_mask"].sum())
    assert manifest["teachers"]["truth_planner"]["planner"] == {"passes": 1, "starts": ["electrical"]}
    assert "numpy" in manifest["versions"]
    # The matrix's manifest keeps the published layout: no family, no paired lead (a family's data only).
    assert "family" not in manifest
    assert not any(k.startswith("vs_") for e in manifest["teachers"].values() for split in ("train", "validation")
                   for k in e[split])
    shard = dataset / "shards" / "truth_planner" / "1000.npz"
    before = shard.stat().st_mtime_ns
    build_teacher_dataset(dataset, 1, 1, progress=False, teachers=("priority_threshold",))
    assert shard.stat().st_mtime_ns == before
    assert json.loads((dataset / "manifest.json").read_text())["teachers"]["truth_planner"]["planner"] == {
        "passes": 1, "starts": ["electrical"]}  # kept: the truth planner was not played again
    with pytest.raises(ValueError, match="made with .*'passes': 1"):  # other settings would mislabel the shards
        build_teacher_dataset(dataset, 1, 1, progress=False)
    assert shard.stat().st_mtime_ns == before


def test_decisions_become_codes_with_far_defers_clipped_and_missing_ones_defaulted():
    view = {"window": 1, "n_windows": 8, "pending": [
        {"request_id": "a", "slot": 0}, {"request_id": "b", "slot": 1}, {"request_id": "c", "slot": 2},
        {"request_id": "d", "slot": 3}, {"request_id": "e", "slot": None}]}
    decisions = [{"request_id": "a", "decision": "ACCEPT"}, {"request_id": "b", "decision": "REJECT"},
                 {"request_id": "c", "decision": "DEFER", "defer_to_window": 7}]
    codes, clipped = decisions_to_codes(decisions, view, max_slots=6, max_defer=4)
    assert codes.tolist() == [0, 1, 5, 2, 0, 0]  # c: 6 windows clipped to 4; d undecided: DEFER to the next
    assert clipped == 1
    last = {**view, "window": 7}
    codes, _ = decisions_to_codes([], last, max_slots=6, max_defer=4)
    assert codes[:4].tolist() == [1, 1, 1, 1]  # undecided in the last window: REJECT


@pytest.mark.parametrize("decision, message", [
    ({"decision": "DEFER", "defer_to_window": 2}, "not a later window"),  # the current window
    ({"decision": "DEFER"}, "not a later window"),  # no target
    ({"decision": "HOLD"}, "'HOLD' is not ACCEPT, REJECT or DEFER"),
])
def test_a_teacher_decision_the_env_would_not_take_is_refused_naming_the_request(decision, message):
    from dcops.training.scheduler.teacher import decisions_to_codes

    view = {"window": 2, "n_windows": 8, "pending": [{"request_id": "r0001", "slot": 0}]}
    with pytest.raises(ValueError, match=f"r0001.*{message}"):
        decisions_to_codes([{"request_id": "r0001", **decision}], view, max_slots=4, max_defer=4)
    codes, clipped = decisions_to_codes([{"request_id": "r0001", "decision": "DEFER", "defer_to_window": 7}], view,
                                        max_slots=4, max_defer=4)
    assert codes.tolist() == [5, 0, 0, 0] and clipped == 1  # 5 windows ahead, clipped to 4: code 1 + 4
