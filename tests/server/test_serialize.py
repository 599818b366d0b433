"""The server's one JSON writer (``server/serialize.py``): every environment type to strict JSON, non-finite
floats to null, UTF-8 text as it is, and a digest of the canonical form that any language can recompute."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from datetime import date, datetime
from enum import Enum

import numpy as np
import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dcops.server.serialize import Encoded, Reply, canonical_json, digest, dumps, text_digest, to_jsonable


class Level(Enum):
    LOW = 0
    HIGH = 3


@dataclasses.dataclass
class Point:
    x: float
    tags: tuple[str, ...]


class Model(pydantic.BaseModel):
    name: str
    value: float


def test_plain_values_pass_through():
    for value in (None, "text", True, False, 0, -7, 2.5):
        assert to_jsonable(value) == value and type(to_jsonable(value)) is type(value)


def test_non_finite_floats_become_null_everywhere():
    assert to_jsonable(math.nan) is None and to_jsonable(math.inf) is None
    assert to_jsonable(np.float64("nan")) is None and to_jsonable(np.float32(1.5)) == 1.5
    assert to_jsonable(np.array([1.0, np.nan, -np.inf])) == [1.0, None, None]
    assert to_jsonable(np.array([[np.nan, 2.0]])) == [[None, 2.0]]
    assert to_jsonable(np.array(np.inf)) is None and to_jsonable(np.array(3.0)) == 3.0  # 0-d arrays
    assert to_jsonable(np.array([1.0, 2.0])) == [1.0, 2.0] and to_jsonable(np.array([1, 2])) == [1, 2]
    assert to_jsonable(np.array([True, False])) == [True, False]


def test_containers_dataclasses_enums_dates_and_models():
    assert to_jsonable({1: (np.int64(2), {3})}) == {"1": [2, [3]]}
    assert to_jsonable(frozenset({"a"})) == ["a"]
    assert to_jsonable(Point(np.nan, ("a", "b"))) == {"x": None, "tags": ["a", "b"]}
    assert to_jsonable(Point) == repr(Point)  # a dataclass *type* is not a record
    assert to_jsonable(Level.HIGH) == 3
    assert to_jsonable(datetime(2026, 12, 5, 18, 30)) == "2026-12-05T18:30:00"
    assert to_jsonable(date(2026, 12, 5)) == "2026-12-05"
    assert to_jsonable(Model(name="m", value=math.inf)) == {"name": "m", "value": None}
    assert to_jsonable(object) == repr(object)


def test_dumps_is_compact_strict_utf8_json():
    assert dumps({"a": [1, 2], "b": "é"}) == '{"a":[1,2],"b":"é"}'
    assert dumps({"x": math.nan}) == '{"x":null}'  # never the NaN token
    assert dumps({"p": Point(1.0, ())}) == '{"p":{"x":1.0,"tags":[]}}'
    assert dumps({"t": "€", "v": Level.HIGH}) == '{"t":"€","v":3}'  # the slow path keeps UTF-8 too
    assert dumps(Encoded('{"done":true}')) == '{"done":true}'
    json.loads(dumps({"deep": [{"x": np.array([np.inf])}]}))


def test_digest_is_the_sha256_of_the_canonical_ascii_json():
    value = {"b": 1, "a": ["é", 2.5]}
    canonical = '{"a":["\\u00e9",2.5],"b":1}'
    assert digest(value) == hashlib.sha256(canonical.encode()).hexdigest()
    assert digest({"a": ["é", 2.5], "b": 1}) == digest(value)  # key order does not matter
    assert digest({"a": np.array([np.nan, 1.0])}) == hashlib.sha256(b'{"a":[null,1.0]}').hexdigest()
    assert digest({"b": Level.LOW, "a": 1}) == hashlib.sha256(b'{"a":1,"b":0}').hexdigest()
    with pytest.raises(ValueError):
        json.dumps(math.nan, allow_nan=False)  # what the strict writer refuses, the fallback writes as null
    assert digest(math.nan) == hashlib.sha256(b"null").hexdigest()


def test_canonical_json_is_what_the_digest_hashes():
    value = {"b": [1.5, np.float32(0.25)], "a": {"é": np.nan}}
    text = canonical_json(value)
    assert text == '{"a":{"\\u00e9":null},"b":[1.5,0.25]}'
    assert digest(value) == text_digest(text) == hashlib.sha256(text.encode()).hexdigest()


def _reply(observation, **rest):
    return Reply({"observation": observation, **rest}, observation_json=canonical_json(observation))


def test_a_reply_splices_its_observation_text_instead_of_writing_it_again():
    observation = {"view": {"z": 1, "a": "é"}, "arrays": [0.5, 1.0]}
    reply = _reply(observation, reward=0.25, done=False, metadata={"step": 3, "note": "€"})
    text = dumps(reply)
    assert text.startswith('{"observation":' + reply.observation_json + ",")
    assert json.loads(text) == json.loads(dumps(dict(reply)))  # the same JSON as the dict written whole
    assert '"note":"€"' in text  # the rest is written as dumps writes it (UTF-8)
    assert dumps(Reply({"observation": observation}, observation_json=reply.observation_json)) == (
        '{"observation":' + reply.observation_json + "}")
    # Without its text (or its observation) a reply is written as the dict it is.
    assert dumps(Reply({"observation": observation, "done": True})) == dumps({"observation": observation, "done": True})
    assert dumps(Reply({"done": True}, observation_json="[1]")) == '{"done":true}'


def test_a_reply_whose_observation_was_replaced_is_written_whole():
    import copy

    reply = _reply({"a": 1}, reward=0.5)
    for changed in (reply, copy.copy(reply)):
        changed["observation"] = {"b": 2}
        assert json.loads(dumps(changed)) == {"observation": {"b": 2}, "reward": 0.5}
    assert json.loads(dumps(_reply({"a": 1}, reward=0.5))) == {"observation": {"a": 1}, "reward": 0.5}


def test_a_reply_is_a_dict_to_its_callers():
    reply = _reply({"a": 1}, reward=None)
    assert reply == {"observation": {"a": 1}, "reward": None} and isinstance(reply, dict)
    assert json.loads(json.dumps(reply)) == {"observation": {"a": 1}, "reward": None}


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(observation=st.dictionaries(st.text(max_size=4), _json_values, max_size=5), rest=_json_values,
       reward=st.none() | st.floats(-1.0, 1.0))
def test_spliced_and_whole_replies_read_back_alike(observation, rest, reward):
    plain = to_jsonable(observation)  # what an adapter's observe gives
    reply = _reply(plain, reward=reward, metadata={"info": rest})
    spliced, whole = json.loads(dumps(reply)), json.loads(dumps(dict(reply)))
    assert spliced == whole
    assert canonical_json(spliced["observation"]) == reply.observation_json  # a client can recompute the digest


def _reference(value):
    """The isinstance chain alone (what to_jsonable did before its exact-type dispatch)."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, np.ndarray):
        return _reference(value.tolist())
    if isinstance(value, np.generic):
        return _reference(value.item())
    if isinstance(value, dict):
        return {str(k): _reference(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_reference(v) for v in value]
    if isinstance(value, Enum):
        return _reference(value.value)
    return repr(value)


_leaves = (st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats() | st.text(max_size=4)
           | st.floats().map(np.float64) | st.integers(-5, 5).map(np.int64) | st.sampled_from([Level.LOW, Level.HIGH])
           | st.lists(st.floats(width=32), max_size=3).map(lambda xs: np.array(xs, dtype=np.float32)))
_values = st.recursive(_leaves, lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner)
                       | st.dictionaries(st.text(max_size=3) | st.integers(-3, 3), inner, max_size=3), max_leaves=16)


@settings(max_examples=300, deadline=None)
@given(value=_values)
def test_the_exact_type_dispatch_gives_what_the_isinstance_chain_gives(value):
    expected = _reference(value)
    assert to_jsonable(value) == expected
    assert json.loads(dumps(value)) == json.loads(json.dumps(expected))  # both strict JSON, read back alike
