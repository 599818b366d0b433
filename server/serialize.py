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

_ATOMS = frozenset({str, int, bool, type(None)})
_isfinite = math.isfinite


def to_jsonable(value: Any) -> Any:
    """Return ``value`` as plain JSON types (dict/list/str/int/float/bool/None); non-finite floats → ``None``.

    The exact built-in types, most of a cluster observation's couple of thousand nodes, are dispatched on first
    by their type (one set lookup, not a chain of ``isinstance``); subclasses and everything else go down the
    chain below, with the same results."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind is float:
        return value if _isfinite(value) else None
    if kind is dict:
        return {k if type(k) is str else str(k): to_jsonable(v) for k, v in value.items()}
    if kind is list:
        return [to_jsonable(v) for v in value]
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


class Reply(dict):
    """A session's reply: a plain dict to its callers, which also carries its observation's JSON text
    (``observation_json``: :func:`canonical_json` of ``self["observation"]``). Why: a cluster observation is
    about 30 kB of numbers, and writing it is most of a step's serialisation; the session writes it once, the
    episode store keeps that text and hashes it (:func:`text_digest`), and :func:`dumps` splices it into the
    reply, so it is never written three times. The text belongs to the observation object the reply was made
    with: a reply (or a copy of it) whose ``"observation"`` was replaced by another object is written whole."""

    __slots__ = ("observation_json", "_written_from")

    def __init__(self, *args: Any, observation_json: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.observation_json = observation_json
        self._written_from = self.get("observation")

    def spliceable(self) -> bool:
        """Whether :attr:`observation_json` is still the text of ``self["observation"]`` (the same object)."""
        return (self.observation_json is not None and "observation" in self
                and self["observation"] is self._written_from)


class Encoded(str):
    """JSON text already written by :func:`dumps` (a worker process encodes its replies, so that the server's
    event loop only routes bytes); :func:`dumps` and the HTTP responses pass it through unchanged."""


def dumps(value: Any) -> str:
    """Compact strict JSON of ``value``. Values that are already plain JSON (what the adapters produce) are
    written directly; anything else goes through :func:`to_jsonable` first, so NaN never leaks. An
    :class:`Encoded` value is already JSON and comes back as it is; a :class:`Reply`'s observation is its
    ``observation_json``, spliced in (the rest of the reply is written here)."""
    if isinstance(value, Encoded):
        return str(value)
    if isinstance(value, Reply) and value.spliceable():
        rest = dumps({k: v for k, v in value.items() if k != "observation"})
        return '{"observation":' + value.observation_json + ("," + rest[1:] if rest != "{}" else "}")
    try:
        return json.dumps(value, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError):
        return json.dumps(to_jsonable(value), separators=(",", ":"), allow_nan=False, ensure_ascii=False)


def canonical_json(value: Any) -> str:
    """The canonical JSON of ``value``: sorted keys, compact, ASCII, non-finite floats as ``null``. Equal values
    give equal text, whatever the key order or the language that writes it."""
    try:
        return json.dumps(value, separators=(",", ":"), sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        return json.dumps(to_jsonable(value), separators=(",", ":"), sort_keys=True, allow_nan=False)


def text_digest(text: str) -> str:
    """SHA-256 (hex) of ``text`` in UTF-8: :func:`digest` for text that :func:`canonical_json` already wrote."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def digest(value: Any) -> str:
    """SHA-256 of the canonical JSON of ``value`` (:func:`canonical_json`): equal observations give equal
    digests, whatever the key order or the language that recomputes it."""
    return text_digest(canonical_json(value))
