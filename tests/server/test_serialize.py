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

from dcops.server.serialize import Encoded, digest, dumps, to_jsonable


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
