"""The thin runner (``dcops.runner``): in-process policies driven over HTTP and WebSocket against a live server
give the same episodes as in process."""

from __future__ import annotations

import pytest

from dcops.client import DcopsClient, ServerError
from dcops.cluster.placement import CANONICAL, run_episode
from dcops.cluster.placement.heuristics import BestFitVram, EarliestDeadlineFirst
from dcops.runner import load_policy, run_episodes, wire_policy


@pytest.mark.parametrize("transport", ["http", "ws"])
def test_placement_heuristic_over_the_wire_matches_in_process(live_server, transport) -> None:
    scenario = CANONICAL["reserve_large_gpu"]
    local = run_episode(scenario, BestFitVram()).metrics.total_reward
    runs = run_episodes(live_server.url, "placement/reserve_large_gpu", BestFitVram(), seeds=[0], transport=transport)
    assert len(runs) == 1 and runs[0].steps > 0
    assert runs[0].total_reward == pytest.approx(local)


def test_cluster_baseline_over_http_matches_in_process(live_server) -> None:
    import dcops
    from dcops.agents.schedulers import PriorityThresholdScheduler
    from dcops.evaluation.cluster_report import run_episode as run_cluster

    options = {"n_windows": 3}
    local = run_cluster(PriorityThresholdScheduler(), seed=live_server.env_seed(5), **options)  # as the operator
    runs = run_episodes(live_server.url, "cluster/operations", PriorityThresholdScheduler(), seeds=[5], **options)
    assert runs[0].steps == 3
    assert runs[0].total_reward == pytest.approx(sum(local["window_rewards"]), abs=1e-9)
    assert dcops.parallel_env  # the in-process env and the served one are the same code


def test_queue_policy_by_rank_name_completes_an_episode(live_server) -> None:
    runs = run_episodes(live_server.url, "queue/weighted_tardiness", "atc", seeds=[3])
    assert runs[0].steps > 0 and runs[0].total_reward <= 0.0  # rewards are negative weighted tardiness


def test_policy_loading_and_errors() -> None:
    policy = load_policy("dcops.cluster.placement.heuristics:EarliestDeadlineFirst")
    assert isinstance(policy, EarliestDeadlineFirst)
    with pytest.raises(ValueError, match="package.module:name"):
        load_policy("no-colon")
    with pytest.raises(TypeError, match="decide\\(view\\)"):
        wire_policy("cluster/operations", EarliestDeadlineFirst())


def test_a_malformed_action_names_the_field_and_the_episode_goes_on(live_server) -> None:
    with DcopsClient(live_server.url) as client:
        client.reset(task="placement/deadline_crunch", seed=0)
        with pytest.raises(ServerError) as caught:
            client.step({"type": "place", "job_id": "j1"})  # no gpu_id
        assert caught.value.status == 422 and "gpu_id" in (caught.value.field or caught.value.message)
        result = client.step({"type": "defer", "rationale": "still usable"})
        assert result.reward is not None


def test_a_view_reading_cluster_policy_on_an_arrays_only_observation_says_what_to_change() -> None:
    from dcops.agents.schedulers import PriorityThresholdScheduler

    act = wire_policy("cluster/operations", PriorityThresholdScheduler())
    with pytest.raises(ValueError, match="observation: .*observation='arrays'.*act_wire"):
        act({"kind": "cluster", "window": 0, "n_windows": 8, "arrays": {}})
