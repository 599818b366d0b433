"""The server's action adapters (``dcops.server.adapters``) driven directly, without HTTP.

Each expectation is the module's or the wire models' documented contract: which field an error names, how a
named cooling action becomes the set-point vector (one number for every zone, or one per zone), that clipping is
echoed and never silent, what a readable observation holds, what each reference policy suggests, and which
``info`` entries stay out of replies because the observation already carries them.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

from dcops.models import PlacementAction
from dcops.physics.interface import ZONE_FIELDS
from dcops.server.adapters import (
    FAMILIES,
    ActionError,
    ClusterAdapter,
    Episode,
    adapter_for,
    served_tasks,
    validation_error,
)

NAMED = {"fan_speed": 0.8, "supply_setpoint_c": 19.0, "chw_setpoint_c": 9.0, "economiser_on": False}
V2_NAMED = {**NAMED, "tower_fan_speed": 0.7, "chillers_staged": 2, "chw_pump_speed": 0.8, "tank_flow": 0.0}


def _episode(task: str, seed: int = 1, **options) -> Episode:
    adapter = adapter_for(task)
    parsed = adapter.parse_options(options)
    episode = Episode(task, adapter, adapter.make_env(task, parsed), parsed)
    adapter.reset(episode, seed)
    return episode


# ---- errors and lookup --------------------------------------------------------------------------------------------


def test_an_unknown_task_is_refused_naming_the_task_and_every_task_is_served():
    with pytest.raises(ActionError) as caught:
        adapter_for("cooling/no_such_task")
    assert caught.value.field == "task" and "known tasks: cluster/operations" in str(caught.value)
    assert served_tasks() and all(adapter_for(t) is FAMILIES[t.split("/")[0]] for t in served_tasks())


def test_an_action_error_reads_field_colon_message():
    error = ActionError("action.fan_speed", "too fast")
    assert (str(error), error.field, error.message) == ("action.fan_speed: too fast", "action.fan_speed", "too fast")


class _Inner(BaseModel):
    speed: float


class _Outer(BaseModel):
    inner: _Inner
    values: list[float] | float


def test_a_validation_error_names_the_field_without_pydantics_type_tags():
    with pytest.raises(ValidationError) as nested:
        _Outer.model_validate({"inner": {"speed": "fast"}, "values": 1.0})
    assert validation_error(nested.value, "action").field == "action.inner.speed"
    with pytest.raises(ValidationError) as union:
        _Outer.model_validate({"inner": {"speed": 1.0}, "values": ["x"]})
    assert validation_error(union.value, "action").field.startswith("action.values")
    assert "list[float]" not in validation_error(union.value, "action").field
    with pytest.raises(ValidationError) as tagless:
        TypeAdapter(PlacementAction).validate_python({})
    assert validation_error(tagless.value, "action").field == "action.type"
    with pytest.raises(ValidationError) as whole:
        TypeAdapter(int).validate_python("x")
    assert validation_error(whole.value, "options").field == "options"  # no location: the prefix alone


# ---- cooling ------------------------------------------------------------------------------------------------------


def test_one_number_serves_every_zone_and_a_list_gives_one_per_zone():
    episode = _episode("cooling/multi_zone_sensor_drift")
    adapter = episode.adapter
    vector, echo = adapter.parse_action(episode, NAMED)
    assert vector.tolist() == [0.8] * 3 + [19.0] * 3 + [9.0, 0.0] and echo == {"setpoints": vector.tolist()}
    per_zone = {**NAMED, "fan_speed": [0.5, 0.6, 0.7], "supply_setpoint_c": [18.0, 19.0, 20.0],
                "economiser_on": True}
    vector, _ = adapter.parse_action(episode, per_zone)
    assert vector.tolist() == pytest.approx([0.5, 0.6, 0.7, 18.0, 19.0, 20.0, 9.0, 1.0])
    for values in ([0.5, 0.6], [0.5, 0.6, 0.7, 0.8]):
        with pytest.raises(ActionError) as caught:
            adapter.parse_action(episode, {**NAMED, "fan_speed": values})
        assert caught.value.field == "action.fan_speed"
        assert caught.value.message == ("expected 3 values (one per zone: critical, production, batch) or one "
                                        f"number, got {len(values)}")


def test_the_raw_vector_must_have_the_tasks_length():
    episode = _episode("cooling/single_zone_recovery")
    vector, _ = episode.adapter.parse_action(episode, {"setpoints": [0.8, 19.0, 9.0, 1.0]})
    assert vector.tolist() == [0.8, 19.0, 9.0, 1.0]
    with pytest.raises(ActionError) as caught:
        episode.adapter.parse_action(episode, {"setpoints": [0.8, 19.0, 9.0, 1.0, 0.5]})
    assert caught.value.field == "action.setpoints" and caught.value.message.endswith("got 5")
    with pytest.raises(ActionError) as caught:
        episode.adapter.parse_action(episode, {"setpoints": [0.8, 19.0, 9.0]})
    assert caught.value.field == "action.setpoints"
    assert caught.value.message == "expected 4 values (fan_speed×1, supply_setpoint_c×1, chw_setpoint_c, economiser_on), got 3"


def test_the_raw_vector_of_three_zones_needs_eight_values():
    episode = _episode("cooling/multi_zone_sensor_drift")
    with pytest.raises(ActionError) as caught:
        episode.adapter.parse_action(episode, {"setpoints": [0.5] * 7})
    assert caught.value.message == ("expected 8 values (fan_speed×3, supply_setpoint_c×3, chw_setpoint_c, "
                                    "economiser_on), got 7")


@pytest.mark.parametrize("missing", ["fan_speed", "supply_setpoint_c", "chw_setpoint_c", "economiser_on"])
def test_a_missing_named_set_point_is_required_by_name(missing):
    episode = _episode("cooling/single_zone_recovery")
    with pytest.raises(ActionError) as caught:
        episode.adapter.parse_action(episode, {k: v for k, v in NAMED.items() if k != missing})
    assert caught.value.field == f"action.{missing}"


def test_plant_v2_set_points_belong_to_the_v1_tasks_only():
    v0 = _episode("cooling/single_zone_recovery")
    with pytest.raises(ActionError) as caught:
        v0.adapter.parse_action(v0, {**NAMED, "tower_fan_speed": 0.5})
    assert caught.value.field == "action.tower_fan_speed" and "not a control" in caught.value.message
    v1 = _episode("cooling/single_zone_recovery_v1")
    vector, _ = v1.adapter.parse_action(v1, V2_NAMED)
    assert vector.tolist() == pytest.approx([0.8, 19.0, 9.0, 0.0, 0.7, 2.0, 0.8, 0.0])
    with pytest.raises(ActionError) as caught:
        v1.adapter.parse_action(v1, {k: v for k, v in V2_NAMED.items() if k != "chw_pump_speed"})
    assert caught.value.field == "action.chw_pump_speed" and "field required" in caught.value.message


def test_clipping_is_echoed_field_by_field_and_only_where_it_happened():
    episode = _episode("cooling/single_zone_recovery")
    applied, echo = episode.adapter.parse_action(episode, {**NAMED, "fan_speed": 1.5, "chw_setpoint_c": 2.0})
    assert applied.tolist() == [1.0, 19.0, 5.0, 0.0]
    assert echo["clipped"] == [{"field": "fan_speed[hall]", "given": 1.5, "applied": 1.0},
                               {"field": "chw_setpoint_c", "given": 2.0, "applied": 5.0}]


def test_a_value_that_is_not_finite_is_refused_naming_its_place_in_the_vector():
    episode = _episode("cooling/single_zone_recovery")
    with pytest.raises(ActionError) as caught:
        episode.adapter.parse_action(episode, {"setpoints": [0.8, 19.0, float("nan"), 1.0]})
    assert caught.value.field == "action.setpoints.2"


def test_a_cooling_observation_names_each_zone_and_every_plant_reading():
    episode = _episode("cooling/multi_zone_sensor_drift")
    observation = episode.observation
    env = episode.env.unwrapped
    assert (observation["kind"], observation["task"], observation["step"]) == ("cooling",
                                                                                "cooling/multi_zone_sensor_drift", 0)
    assert (observation["n_steps"], observation["n_chillers"]) == (env.task.n_steps, env.task.plant.n_chillers)
    assert [z["id"] for z in observation["zones"]] == ["critical", "production", "batch"]
    assert [z["weight"] for z in observation["zones"]] == [3.0, 2.0, 1.0]
    vector = np.asarray(observation["vector"])
    for i, zone in enumerate(observation["zones"]):
        assert [zone[name] for name in ZONE_FIELDS] == pytest.approx(vector[5 * i: 5 * i + 5].tolist(), rel=1e-6)
    assert list(observation["plant"]) == list(type(env.telemetry.parse(vector, 3)).__dataclass_fields__)[5:]
    assert observation["plant"]["progress"] == 0.0


@pytest.mark.parametrize("task", ["cooling/single_zone_recovery", "cooling/single_zone_recovery_v1"])
def test_the_suggestion_is_a_named_action_the_adapter_takes_back(task):
    episode = _episode(task)
    suggestion = episode.adapter.suggest(episode)
    assert isinstance(suggestion["economiser_on"], bool) and len(suggestion["fan_speed"]) == 1
    assert set(suggestion) == set(NAMED) | (set(V2_NAMED) if task.endswith("_v1") else set())
    vector, _ = episode.adapter.parse_action(episode, suggestion)
    rule = episode.baseline.act(episode.raw_observation)
    np.testing.assert_allclose(vector[:3], np.asarray(rule, dtype=np.float64)[:3])  # fan, supply, chilled water
    episode.adapter.reset(episode, 2)
    assert episode.baseline is None  # a new episode gets its own reference controller


# ---- placement ----------------------------------------------------------------------------------------------------


def test_a_placement_index_past_the_action_space_is_refused_naming_the_index():
    episode = _episode("placement/deadline_crunch")
    n = int(episode.env.unwrapped.action_space.n)
    with pytest.raises(ActionError) as caught:
        episode.adapter.parse_action(episode, {"type": "index", "index": n})
    assert caught.value.field == "action.index" and caught.value.message == f"must be < {n} (the size of the action space)"
    action, echo = episode.adapter.parse_action(episode, {"type": "index", "index": n - 1})
    assert echo == {"type": "index", "index": n - 1}


def test_a_placement_reply_keeps_out_of_info_what_the_observation_carries():
    episode = _episode("placement/deadline_crunch")
    info = {"observation": {}, "dashboard": "d", "action_mask": [1], "reward_terms": {"x": 1.0}}
    assert episode.adapter.public_info(info) == {"reward_terms": {"x": 1.0}}
    observation = episode.observation
    assert observation["kind"] == "placement" and set(observation) >= {"tick", "horizon", "state", "dashboard",
                                                                          "action_mask", "vector"}


def test_the_placement_suggestion_is_the_earliest_deadline_rule_as_a_named_action():
    from dcops.cluster.placement.actions import Place
    from dcops.cluster.placement.heuristics import EarliestDeadlineFirst

    episode = _episode("placement/deadline_crunch")
    suggestion = episode.adapter.suggest(episode)
    rule = EarliestDeadlineFirst().act(episode.env.unwrapped.sim.observation())
    if isinstance(rule, Place):
        assert suggestion == {"type": "place", "job_id": rule.job_id, "gpu_id": rule.gpu_id,
                              "rationale": rule.rationale}
    else:
        assert suggestion == {"type": "defer", "rationale": rule.rationale}
    episode.adapter.parse_action(episode, suggestion)  # the adapter takes its own suggestion


# ---- queue --------------------------------------------------------------------------------------------------------


def test_a_queue_observation_lists_the_waiting_jobs_with_their_slack():
    episode = _episode("queue/weighted_tardiness", n_jobs=10)
    state, positions = episode.env.unwrapped.decision_state()
    rows = episode.observation["waiting"]
    assert [r["slot"] for r in rows] == list(range(len(positions))) and rows
    for row, pos in zip(rows, positions, strict=True):
        assert row["job_index"] == int(state.job_index[pos])
        assert row["slack_s"] == pytest.approx(float(state.due_s[pos] - state.now_s - state.processing_s[pos]))
    assert episode.adapter.to_env_action(episode, SimpleNamespace(slot=2)) == (2, {"slot": 2})


def test_the_queue_suggestion_is_the_slot_of_the_highest_atc_priority():
    from dcops.cluster.queue.heuristics import make_rule

    episode = _episode("queue/weighted_tardiness", n_jobs=10)
    state, positions = episode.env.unwrapped.decision_state()
    scores = make_rule("atc").scores(state)[positions]
    assert episode.adapter.suggest(episode) == {"slot": int(np.argmax(scores))}


# ---- cluster ------------------------------------------------------------------------------------------------------


def test_cluster_decisions_are_upper_cased_and_codes_passed_as_an_array():
    adapter = ClusterAdapter()
    model = SimpleNamespace(codes=None, decisions=[SimpleNamespace(request_id="r1", decision="accept",
                                                                   defer_to_window=None)])
    assert adapter.to_env_action(None, model) == (
        [{"request_id": "r1", "decision": "ACCEPT", "defer_to_window": None}],
        {"decisions": [{"request_id": "r1", "decision": "ACCEPT", "defer_to_window": None}]})
    codes, echo = adapter.to_env_action(None, SimpleNamespace(codes=[0, 2, 1], decisions=None))
    assert codes.dtype == np.int64 and codes.tolist() == [0, 2, 1] and echo == {"codes": [0, 2, 1]}
    assert adapter.public_info({"view": {"x": 1}, "window": 3}) == {"window": 3}


def _view(window: int, n_windows: int, headroom: float, pending: list[dict]) -> Episode:
    return SimpleNamespace(observation={"view": {"window": window, "n_windows": n_windows,
                                                 "plant": {"headroom_kw": headroom}, "pending": pending}},
                           options={})


def test_the_cluster_suggestion_accepts_what_fits_the_headroom_in_order_and_defers_or_rejects_the_rest():
    pending = [{"request_id": "a", "fits_now": True, "kw": 60.0}, {"request_id": "b", "fits_now": True, "kw": 50.0},
               {"request_id": "c", "fits_now": False, "kw": 10.0}, {"request_id": "d", "fits_now": True, "kw": 40.0}]
    decisions = ClusterAdapter().suggest(_view(2, 6, 100.0, pending))["decisions"]
    assert decisions == [{"request_id": "a", "decision": "ACCEPT"},
                         {"request_id": "b", "decision": "DEFER", "defer_to_window": 3},
                         {"request_id": "c", "decision": "DEFER", "defer_to_window": 3},
                         {"request_id": "d", "decision": "ACCEPT"}]  # 60 + 40 = 100: exactly the headroom
    second_last = ClusterAdapter().suggest(_view(4, 6, 0.0, pending))["decisions"]
    assert [d["decision"] for d in second_last] == ["DEFER"] * 4  # window 5 is still ahead
    last = ClusterAdapter().suggest(_view(5, 6, 0.0, pending))["decisions"]
    assert [d["decision"] for d in last] == ["REJECT"] * 4  # no window left to defer to
    assert ClusterAdapter().suggest(SimpleNamespace(observation=None, options={})) == {"decisions": []}


def test_a_cluster_without_faults_has_none():
    episode = _episode("cluster/operations", n_windows=2, faults="none", cooling="rule")
    assert episode.env.unwrapped.parallel.config.faults == ()
    assert _episode("cluster/operations", n_windows=2, cooling="rule").env.unwrapped.parallel.config.faults == "random"
    observation = episode.observation
    assert observation["kind"] == "cluster" and observation["n_windows"] == 2 and observation["window"] == 0


@pytest.mark.parametrize(("family", "options", "field"), [
    ("queue", {"instance_seed": 2**31}, "options.instance_seed"),
    ("queue", {"instance_seed": -1}, "options.instance_seed"),
    ("cluster", {"n_windows": 49}, "options.n_windows"),
    ("cluster", {"n_windows": 0}, "options.n_windows"),
    ("cluster", {"max_requests_per_team": 0}, "options.max_requests_per_team"),
    ("cluster", {"max_requests_per_team": 9}, "options.max_requests_per_team"),
    ("cooling", {"n_steps": 2017}, "options.n_steps"),
    ("cooling", {"no_such_option": 1}, "options.no_such_option"),
    ("queue", {"n_jobs": 1}, "options.n_jobs"), ("queue", {"max_slots": 1}, "options.max_slots"),
    ("cluster", {"power_cap_kw": 0.0}, "options.power_cap_kw"),
    ("cluster", {"power_cap_kw": 100_001.0}, "options.power_cap_kw"),
    ("queue", {"n_jobs": 2001}, "options.n_jobs"), ("queue", {"load": 0.04}, "options.load"),
    ("queue", {"load": 2.01}, "options.load"), ("queue", {"n_machines": 0}, "options.n_machines"),
    ("queue", {"n_machines": 17}, "options.n_machines"), ("queue", {"max_slots": 65}, "options.max_slots"),
    ("queue", {"atc_k": 0.0}, "options.atc_k"), ("queue", {"atc_k": 20.5}, "options.atc_k"),
    ("cooling", {"n_steps": 0, "start_jitter_days": -1}, "options.n_steps"),  # the first of two errors
    ("cooling", {"start_jitter_days": -1}, "options.start_jitter_days"),
    ("cooling", {"start_jitter_days": 366}, "options.start_jitter_days"),
])
def test_reset_options_outside_their_documented_ranges_are_refused_by_name(family, options, field):
    with pytest.raises(ActionError) as caught:
        FAMILIES[family].parse_options(options)
    assert caught.value.field == field


@pytest.mark.parametrize(("family", "options"), [
    ("queue", {"instance_seed": 2**31 - 1}), ("queue", {"instance_seed": 0}), ("cluster", {"n_windows": 48}),
    ("cluster", {"max_requests_per_team": 1}), ("cluster", {"max_requests_per_team": 8}),
    ("cooling", {"n_steps": 2016}), ("cooling", {"start_jitter_days": 365}), ("queue", {"n_jobs": 2}),
    ("queue", {"load": 2.0}), ("queue", {"n_machines": 1}), ("queue", {"max_slots": 2}),
    ("queue", {"max_slots": 64}), ("queue", {"atc_k": 20.0}), ("cluster", {"n_windows": 1}),
    ("cluster", {"power_cap_kw": 100_000.0}), ("cluster", {"power_cap_kw": 0.5}), ("cooling", {"n_steps": 1}),
    ("cooling", {"start_jitter_days": 0}), ("queue", {"n_jobs": 2000}), ("queue", {"load": 0.05}),
    ("queue", {"n_machines": 16}), ("queue", {"atc_k": 0.5}),
])
def test_reset_options_at_the_ends_of_their_ranges_are_taken(family, options):
    assert FAMILIES[family].parse_options(options) == options


def test_a_cluster_observation_without_a_window_starts_at_the_first():
    observation = ClusterAdapter().observe(SimpleNamespace(task="cluster/operations", options={}), {"x": 1}, {})
    assert (observation["window"], observation["n_windows"], observation["view"]) == (0, 0, {})


def test_the_cluster_scorecard_sets_the_episode_beside_the_baseline_and_the_bound():
    episode = _episode("cluster/operations", n_windows=2, cooling="rule", faults="none")
    adapter = episode.adapter
    done = False
    while not done:  # reject everything: a score below the baseline's
        pending = episode.observation["view"].get("pending", [])
        reject = {"decisions": [{"request_id": r["request_id"], "decision": "REJECT"} for r in pending]}
        action, _ = adapter.parse_action(episode, reject)
        obs, _, terminated, truncated, info = adapter.play(episode, action)
        episode.raw_observation, episode.info = obs, info
        episode.observation = adapter.observe(episode, obs, info)
        done = bool(terminated or truncated)
    card = adapter.scorecard(episode)
    assert card["score"] < card["baseline_score"]
    assert card["score_minus_baseline"] == pytest.approx(card["score"] - card["baseline_score"], rel=1e-12)
    assert card["fraction_of_bound"] == pytest.approx(card["throughput_value"] / card["bound_throughput_value"])
    assert card["bound_throughput_value"] > 0.0 and card["fraction_of_bound"] < 1.0


def test_a_queue_instance_seed_fixes_the_jobs_whatever_the_episode_seed():
    first = _episode("queue/weighted_tardiness", seed=1, n_jobs=10, instance_seed=7).observation["jobs"]
    second = _episode("queue/weighted_tardiness", seed=2, n_jobs=10, instance_seed=7).observation["jobs"]
    free = _episode("queue/weighted_tardiness", seed=2, n_jobs=10).observation["jobs"]
    assert first == second and free != first

