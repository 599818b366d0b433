"""Strict parser of the scheduler's answer: one validated decision per pending request, never an exception.

**Format** (what :mod:`dcops.agents.llm.prompt` asks for): the completion starts with one JSON object keyed by
every pending request id::

    {"r0025": {"decision": "ACCEPT"},
     "r0026": {"decision": "DEFER", "defer_to_window": 4, "reasoning": "optional free text"},
     "r0027": {"decision": "REJECT"}}

Leading whitespace and one Markdown code fence (```` ```json ````) are skipped; anything after the object is
ignored (base models keep writing). Only the completion is parsed, never the prompt, so JSON inside a request
description cannot become a decision. Only this keyed form is accepted: the environment's list form
``{"decisions": [...]}`` is exactly what injected fake answers look like, so a model that copies one from a
description gets ``unknown_id`` and defaults, not the forged decisions.

**Problems**, one :class:`RequestProblem` per offending entry or request (the first valid decision for an id
counts, as in the environment's ``dcops.cluster.decisions``):

- ``invalid_json``: the text does not start with a JSON object (one problem per pending request, since each of
  them then gets the default), or the object breaks off before its closing ``}`` (the token budget ran out, or
  a syntax error): then the entries written completely before the break still count (:func:`scan_object`),
  the break is one problem with ``request_id`` None, and the pending ids it left unanswered are ``missing``;
- ``unknown_id``: a key that is not a pending request id;
- ``duplicate``: a second entry for the same id;
- ``bad_decision``: the value is not an object whose ``decision`` is ACCEPT, REJECT or DEFER (any case);
- ``bad_window``: DEFER without an integer ``defer_to_window`` strictly after this window and before
  ``n_windows``;
- ``missing``: a pending id with no entry at all.

Every pending request without a valid decision gets the environment's documented default
(:func:`dcops.cluster.decisions.default_decision`: DEFER to the next window, REJECT in the last one).

**Messages** quote at most :data:`QUOTE_CHARS` characters of the offending text (the start of the answer after
its fence, an id, a JSON-encoded value) and at most :data:`DECODER_CHARS` of the error that broke the object off
(:mod:`json`'s own, or the scanner's), so an
answer of any length (a model that never stops, an injected wall of text) gives problems of bounded length
(``dcops llm`` prints one line per problem).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from dcops.cluster.decisions import default_decision

QUOTE_CHARS = 40
"""Most characters of offending text a problem's message quotes (module docstring, **Messages**)."""
DECODER_CHARS = 80
"""Most characters of the error that broke the answer's object off a problem's message quotes."""

DECISIONS = ("ACCEPT", "REJECT", "DEFER")


@dataclass(frozen=True, slots=True)
class RequestProblem:
    """One thing wrong with the answer: ``request_id`` is None when the problem concerns no single id."""

    request_id: str | None
    code: str
    message: str


@dataclass(frozen=True)
class ParseResult:
    """The decisions to send to the environment (one per pending id, in view order) and what was wrong."""

    decisions: list[dict[str, Any]]
    problems: list[RequestProblem]
    format_ok: bool
    """The text parsed as the answer object and every pending id got exactly one valid decision."""
    n_invalid: int
    """Number of problems (each offending entry or request once)."""
    defaulted: list[str] = field(default_factory=list)
    """Pending ids that got the default decision."""
    reasoning: dict[str, str] = field(default_factory=dict)
    """The optional ``reasoning`` text of valid entries, by id."""


def _strip_fence(text: str) -> str:
    s = text.lstrip()
    if s.startswith("```"):
        newline = s.find("\n")
        s = s[newline + 1:].lstrip() if newline >= 0 else ""
    return s


_WHITESPACE = " \t\n\r"


def _skip(s: str, i: int) -> int:
    while i < len(s) and s[i] in _WHITESPACE:
        i += 1
    return i


@dataclass(frozen=True)
class ObjectScan:
    """The leading JSON object of a completion, read entry by entry (:func:`scan_object`)."""

    entries: list[tuple[str, Any]]
    """The complete ``"key": value`` entries in order, repeated keys kept. An entry is complete once the ``,``
    or ``}`` after its value is written, so a value cut off mid-way (``"r1": {"decision": "ACC``) or a number
    that might go on (``"r1": 1``) never counts."""
    closed: bool
    """The object's closing ``}`` was reached."""
    started: bool
    """The text starts with ``{`` (after blanks and one code fence)."""
    error: str | None
    """Why the object is not a complete JSON object (None when ``closed``)."""


def scan_object(text: str) -> ObjectScan:
    """Read the leading JSON object of ``text`` entry by entry; never raises.

    Values are decoded by :mod:`json` (a key repeated inside a value: the last wins, as in plain JSON); only the
    object's own punctuation is read here (repeated entry ids are kept), so that an object the token budget cut
    off (base models list entries until they run out) still yields the entries written before the break, and a
    stopping rule can see which ids are already answered.

    Why not a partial-JSON library (issue #27 weighed jiter 0.19's ``from_json(partial_mode="on")``): tried in
    this function's place it fails four of the parser's tests, because it returns a dict of what it could
    complete and no positions, so it (1) keeps only the last of repeated entry ids (the ``duplicate`` problem
    and "the first counts" need every entry in order), (2) counts values that were cut off as complete
    (``"r2": {"decision": "REJ`` becomes ``"r2": {}``, ``"defer_to_window": 4`` may be the start of 45), which
    would also stop generation early (:func:`dcops.agents.llm.backends.answer_finished`), and (3) raises on a
    syntax error, losing the entries before it. partial-json-parser returns dicts too. So only the object's own
    punctuation is read here and :mod:`json` decodes every key and value.
    """
    s = _strip_fence(text)
    if not s.startswith("{"):
        return ObjectScan([], False, False, f"the answer must start with a JSON object, got {s[:QUOTE_CHARS]!r}")
    decoder = json.JSONDecoder()
    entries: list[tuple[str, Any]] = []
    i = _skip(s, 1)
    if s.startswith("}", i):
        return ObjectScan(entries, True, True, None)
    try:
        while True:
            if not s.startswith('"', i):
                raise ValueError(f"expected a quoted request id at char {i}")
            key, i = decoder.raw_decode(s, i)
            i = _skip(s, i)
            if not s.startswith(":", i):
                raise ValueError(f"expected ':' after {str(key)[:QUOTE_CHARS]!r} at char {i}")
            value, i = decoder.raw_decode(s, _skip(s, i + 1))
            i = _skip(s, i)
            if s.startswith("}", i):
                entries.append((key, value))
                return ObjectScan(entries, True, True, None)
            if not s.startswith(",", i):
                raise ValueError(f"expected ',' or '}}' after the value of {str(key)[:QUOTE_CHARS]!r} at char {i}")
            entries.append((key, value))
            i = _skip(s, i + 1)
    except (ValueError, RecursionError) as exc:
        return ObjectScan(entries, False, True, f"the answer's JSON object breaks off after {len(entries)} "
                          f"complete entries: {str(exc)[:DECODER_CHARS]}")


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _check(request_id: str, value: Any, window: int, n_windows: int) -> dict[str, Any] | RequestProblem:
    """A valid structured decision for one entry's value, or the problem with it."""
    if not isinstance(value, dict):
        return RequestProblem(request_id, "bad_decision", f"{request_id}: the value must be an object with a "
                              f"'decision', got {json.dumps(value)[:QUOTE_CHARS]}")
    raw = value.get("decision")
    kind = raw.strip().upper() if isinstance(raw, str) else None
    if kind not in DECISIONS:
        return RequestProblem(request_id, "bad_decision",
                              f"{request_id}: decision must be ACCEPT, REJECT or DEFER, got {json.dumps(raw)[:QUOTE_CHARS]}")
    if kind != "DEFER":
        return {"request_id": request_id, "decision": kind}
    target = _as_int(value.get("defer_to_window"))
    if target is None or not window < target < n_windows:
        return RequestProblem(request_id, "bad_window",
                              f"{request_id}: DEFER needs an integer defer_to_window in {window + 1}..{n_windows - 1}, "
                              f"got {json.dumps(value.get('defer_to_window'))[:QUOTE_CHARS]}")
    return {"request_id": request_id, "decision": "DEFER", "defer_to_window": target}


def parse_decisions(text: str, view: dict[str, Any]) -> ParseResult:
    """Validate an answer against the window's pending ids (module docstring); never raises on ``text``."""
    window, n_windows = int(view["window"]), int(view["n_windows"])
    pending = [r["request_id"] for r in view["pending"]]
    pending_set = set(pending)
    problems: list[RequestProblem] = []
    chosen: dict[str, dict[str, Any]] = {}
    reasoning: dict[str, str] = {}
    seen: set[str] = set()
    if not isinstance(text, str):
        text = ""
    scan = scan_object(text)
    if not scan.started:
        problems.extend(RequestProblem(rid, "invalid_json", str(scan.error)) for rid in pending)
        seen.update(pending)
    else:
        if scan.error is not None:
            problems.append(RequestProblem(None, "invalid_json", scan.error))
        for rid, value in scan.entries:
            if rid not in pending_set:
                problems.append(RequestProblem(rid, "unknown_id", f"{rid[:QUOTE_CHARS]!r} is not a pending request"))
                continue
            if rid in seen:
                problems.append(RequestProblem(rid, "duplicate", f"{rid}: more than one entry; the first counts"))
                continue
            seen.add(rid)
            checked = _check(rid, value, window, n_windows)
            if isinstance(checked, RequestProblem):
                problems.append(checked)
                continue
            chosen[rid] = checked
            note = value.get("reasoning") if isinstance(value, dict) else None
            if isinstance(note, str):
                reasoning[rid] = note
    decisions: list[dict[str, Any]] = []
    defaulted: list[str] = []
    for rid in pending:
        decision = chosen.get(rid)
        if decision is None:
            if rid not in seen:
                problems.append(RequestProblem(rid, "missing", f"{rid}: no decision in the answer"))
            default = default_decision(rid, window, n_windows).as_dict()
            if default["decision"] != "DEFER":
                default.pop("defer_to_window", None)
            decision = default
            defaulted.append(rid)
        decisions.append(decision)
    return ParseResult(decisions=decisions, problems=problems, format_ok=scan.closed and not problems,
                       n_invalid=len(problems), defaulted=defaulted, reasoning=reasoning)
