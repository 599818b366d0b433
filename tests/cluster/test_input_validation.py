"""Bad configuration and malformed actions get a clear error naming the field, or are counted as invalid;
nothing passes silently, ``step`` never hangs, and a refused input leaves the episode usable."""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest

import dcops
from dcops.cluster.config import ClusterConfig, ZoneSpec

NAN, INF = float("nan"), float("inf")

BAD_CONFIGS = [
    ("power_cap_kw", NAN), ("power_cap_kw", 0.0), ("power_cap_kw", -5.0), ("power_cap_kw", INF),
    ("value_scale", NAN), ("value_scale", 0.0),
    ("team_budget", NAN), ("team_budget", -1.0),
    ("price_per_kwh", NAN), ("price_per_kwh", INF),
    ("inlet_limit_c", NAN), ("inlet_limit_c", INF), ("inlet_limit_c", -INF),
    ("dt_s", NAN), ("dt_s", 0.0), ("dt_s", INF),
    ("base_load_fraction", NAN), ("base_load_fraction", 1.0),
    ("initial_zone_temp_c", NAN), ("initial_chw_c", INF),
    ("n_windows", 0), ("n_windows", 2.5), ("steps_per_window", True), ("max_slots", 0),
    ("power_cap_kw", "900"),
]


@pytest.mark.parametrize(("field", "value"), BAD_CONFIGS, ids=[f"{f}={v!r}" for f, v in BAD_CONFIGS])
def test_a_bad_config_value_is_refused_with_its_field_named(field, value):
    with pytest.raises(ValueError, match=rf"^{field}: "):
        dcops.parallel_env(**{field: value})


@pytest.mark.parametrize(("zone", "field"), [
    (ZoneSpec("z", "H100", 0), "zones[0].gpus"),
    (ZoneSpec("z", "H100", 96, NAN), "zones[0].design_it_kw"),
    (ZoneSpec("z", "TPU", 96), "zones[0].gpu_type"),
])
def test_a_bad_zone_is_refused_with_its_index_and_field_named(zone, field):
    with pytest.raises(ValueError, match="^" + re.escape(field) + ": "):
        ClusterConfig(zones=(zone,))


def test_every_numeric_default_is_inside_the_checked_ranges():
    # The defaults must pass their own checks (a range that excluded them would break every episode).
    config = ClusterConfig()
    assert math.isfinite(config.throughput_scale) and config.throughput_scale > 0


@pytest.fixture(scope="module")
def env():
    return dcops.parallel_env(cooling="rule", n_windows=3)


def _fresh(env, seed=3):
    observations, infos = env.reset(seed=seed)
    return observations, infos


MALFORMED_ARRAYS = {
    "6x8": np.zeros((6, 8), dtype=np.int64),
    "48x1": np.zeros((48, 1), dtype=np.int64),
    "complex": np.zeros(48, dtype=np.complex128),
    "strings": np.array(["0"] * 48),
    "booleans": np.zeros(48, dtype=bool),
    "47 codes": np.zeros(47, dtype=np.int64),
}


@pytest.mark.parametrize("name", list(MALFORMED_ARRAYS))
def test_an_array_action_of_the_wrong_shape_or_dtype_is_invalid_not_flattened(env, name):
    _, infos = _fresh(env)
    pending = [r["request_id"] for r in infos["scheduler"]["view"]["pending"]]
    assert pending  # the window has requests to decide, so an accepted action would decide them
    _, _, _, _, infos = env.step({"scheduler": MALFORMED_ARRAYS[name]})
    invalid = infos["scheduler"]["invalid"]
    assert any("shape" in m or "dtype" in m for m in invalid["malformed"]), invalid
    assert set(invalid["undecided"]) == set(pending)  # every request got the default (DEFER), none was accepted
    assert infos["scheduler"]["decisions"]["ACCEPT"] == [] and set(infos["scheduler"]["decisions"]["DEFER"]) == set(pending)


@pytest.mark.parametrize("dtype", [np.int64, np.int8, np.float32])
def test_a_well_formed_array_still_decides_every_slot(env, dtype):
    _, infos = _fresh(env)
    pending = [r["request_id"] for r in infos["scheduler"]["view"]["pending"]]
    _, _, _, _, infos = env.step({"scheduler": np.ones(48, dtype=dtype)})  # REJECT everything
    assert infos["scheduler"]["invalid"]["count"] == 0
    assert set(infos["scheduler"]["decisions"]["REJECT"]) == set(pending)


def _endless_accepts(request_id):
    for i in itertools.count():
        if i > 1_000_000:
            raise AssertionError("step read a million entries of an endless iterable")
        yield {"request_id": request_id, "decision": "ACCEPT"}


def test_an_endless_iterable_of_decisions_does_not_hang_and_is_reported(env):
    _, infos = _fresh(env)
    first = infos["scheduler"]["view"]["pending"][0]["request_id"]
    _, _, _, _, infos = env.step({"scheduler": {"decisions": _endless_accepts(first)}})
    invalid = infos["scheduler"]["invalid"]
    assert any("were read" in m for m in invalid["malformed"]), invalid
    assert len(invalid["duplicates"]) > 0  # the entries that were read are judged as usual


def test_unknown_keys_beside_decisions_are_reported(env):
    _fresh(env)
    _, _, _, _, infos = env.step({"scheduler": {"decisions": [], "accept_everything": True}})
    assert any("accept_everything" in m for m in infos["scheduler"]["invalid"]["malformed"])


@pytest.mark.parametrize("actions", [None, [], "ACCEPT", 3])
def test_actions_that_are_not_a_dict_raise_a_clear_error_and_the_episode_goes_on(env, actions):
    _fresh(env)
    window = env.episode.window
    with pytest.raises(TypeError, match="^actions: must be a dict"):
        env.step(actions)
    assert env.episode.window == window
    _, rewards, _, _, _ = env.step({"scheduler": []})
    assert math.isfinite(rewards["scheduler"])


def test_an_unknown_agent_is_refused_before_anything_changes(env):
    _fresh(env)
    window = env.episode.window
    with pytest.raises(ValueError, match=r"^actions: unknown agent\(s\) \['cooling', 'schedular'\]"):
        env.step({"schedular": [], "cooling": np.zeros(10)})
    assert env.episode.window == window
    env.step({"scheduler": []})
    assert env.episode.window == window + 1
