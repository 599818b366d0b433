"""The reward: documented formulas, each job scored once, every window inside its range whatever the decisions."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dcops
from dcops.cluster.requests import Priority, RequestTruth
from dcops.cluster.reward import (
    WINDOW_REWARD_RANGE,
    WindowScore,
    bounded_ratio,
    delay_factor,
    job_value,
    on_time_score,
    waiting_factor,
)

LOW, HIGH = WINDOW_REWARD_RANGE


def test_documented_range_is_minus_1_10_to_0_65():
    assert (LOW, HIGH) == pytest.approx((-1.10, 0.65))


def test_worked_example_of_the_docstring():
    high_job = RequestTruth(Priority.HIGH, true_deadline_window=5, true_carbon_flexible=False, true_runtime_h=3.0)
    value = job_value(high_job, 40.0)
    assert value == pytest.approx(480.0)
    gain = on_time_score(value, high_job, start_window=2, submitted_window=1)
    assert gain == pytest.approx(432.0)
    medium = RequestTruth(Priority.MEDIUM, 2, False, 2.0)
    loss = 0.5 * job_value(medium, 20.0)
    score = WindowScore(window=3, gain=gain, loss=loss, carbon_saved_g=6000.0, carbon_denominator_g=66000.0,
                        soft_fraction=2 / 72, n_invalid=1, n_pending=5)
    score.finalise(1658.0)
    assert score.throughput == pytest.approx(0.2364, abs=1e-4)
    assert score.thermal == pytest.approx(-0.0139, abs=1e-4)
    assert score.reward == pytest.approx(0.107, abs=1e-3)


def test_inflexible_work_loses_a_tenth_of_its_value_per_window_waited_down_to_half():
    truth = RequestTruth(Priority.LOW, 9, False, 1.0)
    assert [delay_factor(truth, s, 0) for s in (0, 1, 3, 5, 7)] == pytest.approx([1.0, 0.9, 0.7, 0.5, 0.5])
    assert delay_factor(RequestTruth(Priority.LOW, 9, True, 1.0), 7, 0) == 1.0
    # The same formula on a flag alone (what a planner applies to stated flexibility), from the submission window.
    assert [waiting_factor(False, s, 2) for s in (2, 3, 5, 7, 9)] == pytest.approx([1.0, 0.9, 0.7, 0.5, 0.5])
    assert waiting_factor(True, 9, 2) == 1.0


@given(st.floats(0, 1e9), st.floats(0, 1e9), st.floats(1e-6, 1e6))
def test_bounded_ratio_stays_in_minus_one_to_one(gain, loss, scale):
    assert -1.0 <= bounded_ratio(gain, loss, scale) <= 1.0


@given(st.floats(0, 1e9), st.floats(0, 1e9), st.floats(-1e9, 1e9), st.floats(0, 1e9), st.booleans(),
       st.floats(0, 1), st.integers(0, 10_000), st.integers(0, 500))
def test_any_window_sums_give_a_reward_inside_the_range(gain, loss, saved, denominator, incident, soft, invalid, pending):
    denominator = max(denominator, abs(saved))  # |B − A| ≤ max(A, B) for every job, so for the sums too
    score = WindowScore(0, gain=gain, loss=loss, carbon_saved_g=saved, carbon_denominator_g=denominator,
                        incident=incident, soft_fraction=soft, n_invalid=invalid, n_pending=pending).finalise(1658.0)
    assert LOW - 1e-12 <= score.reward <= HIGH + 1e-12


# ---------------------------------------------------------------------- adversarial decision sequences
_ENVS: dict[int, object] = {}


def shared_env(game_version: int = 0):
    if game_version not in _ENVS:
        _ENVS[game_version] = dcops.parallel_env(game_version=game_version)
    return _ENVS[game_version]


def decisions_for(policy: str, view: dict, history: list[str]) -> list[dict]:
    ids = [r["request_id"] for r in view["pending"]]
    w = view["window"]
    if policy == "accept_all":
        return [{"request_id": i, "decision": "ACCEPT"} for i in ids]
    if policy == "reject_all":
        return [{"request_id": i, "decision": "REJECT"} for i in ids]
    if policy == "defer_all":
        return [{"request_id": i, "decision": "DEFER", "defer_to_window": w + 1} for i in ids]
    if policy == "accept_many_times":
        return [{"request_id": i, "decision": "ACCEPT"} for i in ids for _ in range(10)]
    if policy == "reaccept_old_ids":
        return [{"request_id": i, "decision": "ACCEPT"} for i in history + ids]
    if policy == "undecided":
        return []
    if policy == "nonsense_ids":
        return [{"request_id": f"zz{k}", "decision": "ACCEPT"} for k in range(20)] + [{"bad": 1}, "junk", None]
    if policy == "defer_past_horizon":
        return [{"request_id": i, "decision": "DEFER", "defer_to_window": 99} for i in ids]
    raise ValueError(policy)


POLICIES = ["accept_all", "reject_all", "defer_all", "accept_many_times", "reaccept_old_ids", "undecided",
            "nonsense_ids", "defer_past_horizon"]


def play(seed: int, policies: list[str], game_version: int = 0) -> tuple[list[float], dict]:
    env = shared_env(game_version)
    _, infos = env.reset(seed=seed)
    rewards, history, w = [], [], 0
    while env.agents:
        view = infos["scheduler"]["view"]
        decisions = decisions_for(policies[w % len(policies)], view, history)
        history += [r["request_id"] for r in view["pending"]]
        _, reward, _, _, infos = env.step({"scheduler": decisions})
        rewards.append(reward["scheduler"])
        w += 1
    return rewards, infos["scheduler"]["episode"]


@pytest.mark.parametrize("policy", POLICIES)
def test_every_window_reward_and_the_episode_score_stay_in_range_under_a_fixed_adversarial_policy(policy):
    rewards, episode = play(seed=3, policies=[policy])
    assert all(LOW <= r <= HIGH for r in rewards)
    assert LOW <= episode["score"] <= HIGH
    assert episode["score"] == pytest.approx(sum(rewards) / len(rewards))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.lists(st.sampled_from(POLICIES), min_size=8, max_size=8), st.sampled_from([0, 1]))
def test_every_window_reward_stays_in_range_under_random_mixes_of_adversarial_policies(seed, policies, version):
    rewards, episode = play(seed, policies, version)
    assert len(rewards) == 8
    assert all(LOW <= r <= HIGH and math.isfinite(r) for r in rewards)
    assert LOW <= episode["score"] <= HIGH


def test_accepting_the_same_request_many_times_earns_nothing_more_than_accepting_it_once():
    once, once_summary = play(seed=5, policies=["accept_all"])
    many, many_summary = play(seed=5, policies=["accept_many_times"])
    assert many_summary["throughput_value"] == pytest.approx(once_summary["throughput_value"])
    assert all(m <= o + 1e-12 for m, o in zip(many, once, strict=True))
    assert many_summary["invalid_entries"] > 0 and once_summary["invalid_entries"] == 0


def test_every_request_is_scored_exactly_once_and_the_window_sums_add_up():
    env = shared_env()
    _, infos = env.reset(seed=11)
    while env.agents:
        view = infos["scheduler"]["view"]
        _, _, _, _, infos = env.step({"scheduler": decisions_for("accept_all", view, [])})
    windows = infos["scheduler"]["episode"]["windows"]
    gains = sum(w["value_gained"] for w in windows)
    losses = sum(w["value_lost"] for w in windows)
    truth = env.episode_truth()
    assert all(row["outcome"] in ("on_time", "missed", "rejected", "unfinished") for row in truth)
    assert sum(row["score"] for row in truth) == pytest.approx(gains - losses)
    assert infos["scheduler"]["episode"]["throughput_value"] == pytest.approx(gains - losses)
