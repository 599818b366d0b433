"""rank(tasks): the shipped policy loads and ranks, bad input is named, torch is never imported."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from dcops.cluster.queue.jobs import Job
from dcops.cluster.queue.rank import rank, shipped_policy
from dcops.cluster.queue.scoring_policy import DEFAULT_WEIGHTS, ScoringPolicy

JOBS = [
    Job("render-a", processing_s=30.0, weight=1.0, due_s=400.0, arrival_s=0.0),
    Job("render-b", processing_s=20.0, weight=8.0, due_s=25.0, arrival_s=5.0),
    Job("video-c", processing_s=600.0, weight=2.0, due_s=900.0, arrival_s=1.0),
    Job("render-d", processing_s=25.0, weight=4.0, due_s=60.0, arrival_s=2.0),
]


def test_empty_queue_ranks_to_an_empty_list():
    assert rank([]) == []
    assert rank([], policy="atc") == []


def test_shipped_policy_loads_and_ranks_every_job_exactly_once():
    assert DEFAULT_WEIGHTS.exists()
    order = rank(JOBS)
    assert sorted(j.job_id for j in order) == sorted(j.job_id for j in JOBS)
    assert all(any(o is j for j in JOBS) for o in order)  # the caller's objects come back


def test_ranking_is_deterministic_and_independent_of_input_order_without_ties():
    first = [j.job_id for j in rank(JOBS)]
    assert first == [j.job_id for j in rank(JOBS)]
    assert first == [j.job_id for j in rank(list(reversed(JOBS)))]


def test_urgent_heavy_short_job_goes_first_and_the_long_video_last():
    for policy in ("learned", "atc", "wmdd"):
        order = [j.job_id for j in rank(JOBS, policy=policy)]
        assert order[0] == "render-b" and order[-1] == "video-c", policy


def test_heuristic_rankings_match_their_definitions():
    assert [j.job_id for j in rank(JOBS, policy="fifo")] == ["render-a", "video-c", "render-d", "render-b"]
    assert [j.job_id for j in rank(JOBS, policy="spt")] == ["render-b", "render-d", "render-a", "video-c"]
    assert [j.job_id for j in rank(JOBS, policy="edd")] == ["render-b", "render-d", "render-a", "video-c"]


def test_mappings_are_accepted_and_arrival_defaults_to_zero():
    tasks = [{"processing_s": 5, "weight": 1, "due_s": 100}, {"processing_s": 1, "weight": 1, "due_s": 1}]
    assert rank(tasks, policy="atc") == [tasks[1], tasks[0]]


@pytest.mark.parametrize(
    ("task", "field"),
    [
        ({"weight": 1, "due_s": 3}, "processing_s"),
        ({"processing_s": -1, "weight": 1, "due_s": 3}, "processing_s"),
        ({"processing_s": 1, "weight": 0, "due_s": 3}, "weight"),
        ({"processing_s": 1, "weight": 1, "due_s": "soon"}, "due_s"),
        ({"processing_s": 1, "weight": 1, "due_s": float("nan")}, "due_s"),
        ({"processing_s": 1, "weight": 1, "due_s": 3, "arrival_s": 50}, "arrival_s"),
    ],
)
def test_malformed_job_raises_value_error_naming_the_field(task, field):
    with pytest.raises(ValueError, match=field):
        rank([{"processing_s": 2, "weight": 1, "due_s": 5}, task], now_s=10.0)


def test_unknown_policy_name_is_rejected():
    with pytest.raises(ValueError, match="unknown policy"):
        rank(JOBS, policy="random")


def test_several_machines_rank_all_jobs():
    assert len(rank(JOBS, n_machines=2)) == len(JOBS)


def test_shipped_weights_are_finite_and_record_their_training():
    policy = shipped_policy()
    assert all(np.all(np.isfinite(v)) for v in policy.params.values())
    assert policy.metadata["config"]["timesteps"] > 0
    assert policy.atc_k > 0


def test_save_and_load_round_trip(tmp_path):
    policy = ScoringPolicy.load()
    policy.save(tmp_path / "copy.npz")
    again = ScoringPolicy.load(tmp_path / "copy.npz")
    assert [j.job_id for j in rank(JOBS, policy=again)] == [j.job_id for j in rank(JOBS, policy=policy)]


def test_import_and_learned_rank_never_import_torch():
    code = (
        "import sys, dcops\n"
        "from dcops.cluster.queue.rank import rank\n"
        "from dcops.cluster.queue.jobs import Job\n"
        "rank([Job(1, 3.0, 1.0, 5.0), Job(2, 1.0, 2.0, 1.0)])\n"
        "import dcops.cluster.queue.env, dcops.training.queue.commands\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
        "assert 'matplotlib' not in sys.modules, 'matplotlib was imported'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_dispatch_priority_sorts_by_the_rule_index_at_one_instant():
    from dcops.cluster.queue.rank import dispatch_priority

    tasks = [
        {"id": "a", "processing_s": 10.0, "weight": 1.0, "due_s": 100.0},
        {"id": "b", "processing_s": 10.0, "weight": 4.0, "due_s": 300.0},
        {"id": "c", "processing_s": 40.0, "weight": 4.0, "due_s": 50.0},
    ]
    assert [t["id"] for t in dispatch_priority(tasks, "wspt")] == ["b", "a", "c"]  # w/p 0.4, 0.1, 0.1: tie by input
    assert [t["id"] for t in dispatch_priority(tasks, "edd")] == ["c", "a", "b"]
    assert dispatch_priority([], "atc") == []
    with pytest.raises(ValueError, match="weight"):
        dispatch_priority([{"processing_s": 1.0, "weight": 0.0, "due_s": 1.0}], "atc")
