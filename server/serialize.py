"""One way to turn environment output (numpy arrays and scalars, dataclasses, tuples) into strict JSON.

Why one helper: observations and ``info`` dicts mix numpy types with plain ones, and Python's ``json`` would
write ``NaN``/``Infinity`` tokens that are not JSON (browsers and most clients reject them). Every non-finite
float becomes ``null`` here, so whatever the server sends or stores parses everywhere.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from datetime import date, datetime
from enum import Enum
from typing import Any

import numpy as np


def to_jsonable(value: Any) -> Any:
    """Return ``value`` as plain JSON types (dict/list/str/int/float/bool/None); non-finite floats → ``None``."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fc" and not np.isfinite(value).all():
            return [to_jsonable(v) for v in value.tolist()] if value.ndim else to_jsonable(value.item())
        return value.tolist()
    if isinstance(value, np.generic):
        return to_jsonable(value.item())
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Enum):
        return to_jsonable(value.value)
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if hasattr(value, "model_dump"):
        return to_jsonable(value.model_dump())
    return repr(value)


class Encoded(str):
    """JSON text already written by :func:`dumps` (a worker process encodes its replies, so that the server's
    event loop only routes bytes); :func:`dumps` and the HTTP responses pass it through unchanged."""


def dumps(value: Any) -> str:
    """Compact strict JSON of ``value``. Values that are already plain JSON (what the adapters produce) are
    written directly; anything else goes through :func:`to_jsonable` first, so NaN never leaks. An
    :class:`Encoded` value is already JSON and comes back as it is."""
    if isinstance(value, Encoded):
        return str(value)
    try:
        return json.dumps(value, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError):
        return json.dumps(to_jsonable(value), separators=(",", ":"), allow_nan=False, ensure_ascii=False)


def digest(value: Any) -> str:
    """SHA-256 of the canonical JSON of ``value`` (sorted keys, compact, ASCII): equal observations give equal
    digests, whatever the key order or the language that recomputes it."""
    try:
        canonical = json.dumps(value, separators=(",", ":"), sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        canonical = json.dumps(to_jsonable(value), separators=(",", ":"), sort_keys=True, allow_nan=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
