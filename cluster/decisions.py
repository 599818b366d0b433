"""Scheduler decisions: one ACCEPT, REJECT or DEFER(to window) per pending request, every window.

Two input forms reach :func:`resolve_structured` and :func:`resolve_array`; both return a
:class:`DecisionBatch` with exactly one decision per pending request and an :class:`InvalidReport`. Nothing
here raises on bad scheduler input, and nothing is dropped silently: every entry that is not a valid decision
about a pending request is listed in the report.

- **Structured** (language agents, the server): a list of ``{"request_id", "decision", "defer_to_window"}``
  (``decision`` is ``"ACCEPT"``, ``"REJECT"`` or ``"DEFER"``, any case, or 0/1/2), or a mapping with such a
  list under ``"decisions"``.
- **Array** (RL): an integer per request slot: 0 = ACCEPT, 1 = REJECT, 1 + k = DEFER by k windows
  (k = 1..``max_defer``). Entries of empty slots are padding and ignored. The space is
  :class:`SlotDecisions`, a ``MultiDiscrete([2 + max_defer] × max_slots)`` whose ``sample(mask)`` also takes
  the observation's flat int8 ``action_mask`` (one entry per code of every slot, slot after slot).

Invalid entries, each counted once:

- ``duplicates``: a second (third, …) decision for the same id in one window; the **first** one counts.
- ``unknown_ids``: an id that is not pending now (never existed, already decided, or deferred to a later window).
- ``bad_defer``: DEFER to the current or a past window, or at/past the horizon (``n_windows``).
- ``malformed``: an entry that is not a decision at all (missing fields, wrong types, an array of the wrong
  shape or dtype, a code outside the action space, an unknown key beside ``decisions``), and the entries of a
  structured action past the first ``16 · pending + 1024``: one malformed entry says so, and they are not read
  (but for the one that shows there are more), so an endless iterable cannot hang the step.
- ``undecided``: a pending request with no valid decision.

A pending request without a valid decision (undecided, bad DEFER or malformed slot) gets the **default**:
DEFER to the next window, or REJECT in the last window. The reward's invalid-action penalty
(``dcops.cluster.reward``) is proportional to :attr:`InvalidReport.count`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

import gymnasium as gym
import numpy as np


class DecisionKind(IntEnum):
    ACCEPT = 0
    REJECT = 1
    DEFER = 2


class SlotDecisions(gym.spaces.MultiDiscrete):
    """The array action's space: ``MultiDiscrete`` (``isinstance`` holds, it pickles and flattens as one) whose
    :meth:`sample` also accepts the flat int8 action mask of ``dcops.registry``'s convention: ``sum(nvec)``
    entries, one per logit, dimension after dimension. PettingZoo's test helpers call
    ``action_space(agent).sample(observation["action_mask"])`` with that array; Gymnasium's own
    ``MultiDiscrete.sample`` wants a tuple of per-dimension masks, which still works here too."""

    def sample(self, mask: Any = None, probability: Any = None) -> np.ndarray:
        if isinstance(mask, np.ndarray) and mask.ndim == 1 and self.nvec.ndim == 1:
            n_logits = int(self.nvec.sum())
            if mask.shape != (n_logits,):
                raise ValueError(f"mask: a flat action mask of {self} has {n_logits} entries (one per code of "
                                 f"every dimension), got shape {mask.shape}")
            if mask.dtype != np.int8 or not np.isin(mask, (0, 1)).all():
                raise ValueError(f"mask: int8 zeros and ones (dcops.registry's convention), got {mask.dtype}")
            if probability is None and (self.nvec == self.nvec[0]).all():
                return self._sample_equal_dimensions(mask)
            mask = tuple(np.split(mask, np.cumsum(self.nvec)[:-1]))
        return super().sample(mask=mask, probability=probability)

    def _sample_equal_dimensions(self, mask: np.ndarray) -> np.ndarray:
        """Every dimension has the same number of codes (the scheduler's ``[6] × 48``): draw them all at once,
        each uniformly among its allowed codes (the largest of uniform draws over the allowed entries), or the
        smallest code where none is allowed, as Gymnasium's per-dimension sampling does: for [6] × 48, 25 µs a draw
        against Gymnasium's 540 µs here."""
        allowed = mask.reshape(len(self.nvec), int(self.nvec[0])).astype(bool)
        draws = self.np_random.random(allowed.shape)
        draws[~allowed] = -1.0
        codes = draws.argmax(axis=1)
        codes[~allowed.any(axis=1)] = 0
        return (codes + self.start).astype(self.dtype)


@dataclass(frozen=True, slots=True)
class Decision:
    """One decision: ``defer_to_window`` is set only for DEFER (an absolute window index)."""

    request_id: str
    kind: DecisionKind
    defer_to_window: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"request_id": self.request_id, "decision": self.kind.name, "defer_to_window": self.defer_to_window}


@dataclass
class InvalidReport:
    """Everything wrong with one window's decisions (see the module docstring)."""

    duplicates: list[str] = field(default_factory=list)
    unknown_ids: list[str] = field(default_factory=list)
    bad_defer: list[str] = field(default_factory=list)
    malformed: list[str] = field(default_factory=list)
    undecided: list[str] = field(default_factory=list)
    overflow: list[str] = field(default_factory=list)
    """Pending requests beyond the array's slots: they get the default, are listed, and are not penalised."""

    @property
    def count(self) -> int:
        """Number of invalid entries (the penalised count; overflow is not the agent's fault)."""
        return (len(self.duplicates) + len(self.unknown_ids) + len(self.bad_defer) + len(self.malformed)
                + len(self.undecided))

    def as_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "duplicates": list(self.duplicates),
            "unknown_ids": list(self.unknown_ids),
            "bad_defer": list(self.bad_defer),
            "malformed": list(self.malformed),
            "undecided": list(self.undecided),
            "overflow": list(self.overflow),
        }


@dataclass
class DecisionBatch:
    """Exactly one decision per pending request (``decisions`` keyed by id) plus the report."""

    decisions: dict[str, Decision]
    report: InvalidReport
    defaulted: list[str] = field(default_factory=list)


def default_decision(request_id: str, window: int, n_windows: int) -> Decision:
    """DEFER to the next window, or REJECT in the last one."""
    if window + 1 < n_windows:
        return Decision(request_id, DecisionKind.DEFER, window + 1)
    return Decision(request_id, DecisionKind.REJECT)


_KIND_NAMES = {"ACCEPT": DecisionKind.ACCEPT, "REJECT": DecisionKind.REJECT, "DEFER": DecisionKind.DEFER}


def _parse_entry(entry: Any) -> tuple[str, DecisionKind, int | None] | str:
    """An entry's (id, kind, defer window), or a string saying why it is malformed."""
    if hasattr(entry, "model_dump"):  # a pydantic model (dcops.models.DecisionModel)
        entry = entry.model_dump()
    elif isinstance(entry, Decision):
        return entry.request_id, entry.kind, entry.defer_to_window
    if not isinstance(entry, Mapping):
        return f"not a mapping: {entry!r:.60}"
    request_id = entry.get("request_id")
    if not isinstance(request_id, str) or not request_id:
        return f"request_id must be a non-empty string, got {request_id!r:.40}"
    raw = entry.get("decision")
    kind: DecisionKind | None = None
    if isinstance(raw, str):
        kind = _KIND_NAMES.get(raw.strip().upper())
    elif isinstance(raw, (int, np.integer)) and not isinstance(raw, bool) and 0 <= int(raw) <= 2:
        kind = DecisionKind(int(raw))
    if kind is None:
        return f"{request_id}: decision must be ACCEPT, REJECT or DEFER, got {raw!r:.40}"
    window = entry.get("defer_to_window")
    if kind is DecisionKind.DEFER:
        if isinstance(window, bool) or not isinstance(window, (int, np.integer)):
            return f"{request_id}: DEFER needs an integer defer_to_window, got {window!r:.40}"
        return request_id, kind, int(window)
    return request_id, kind, None


def resolve_structured(
    entries: Any, pending_ids: Sequence[str], window: int, n_windows: int
) -> DecisionBatch:
    """Resolve a structured decision list (module docstring) against the pending ids of ``window``."""
    report = InvalidReport()
    if isinstance(entries, Mapping):
        strangers = sorted(str(k) for k in entries if k != "decisions")
        if strangers:
            report.malformed.append(f"unknown key(s) {strangers}: a structured action is {{'decisions': [...]}}")
        entries = entries.get("decisions", None)
    if entries is None:
        entries = []
    if isinstance(entries, (str, bytes)) or not isinstance(entries, Iterable):
        report.malformed.append(f"decisions must be a list, got {type(entries).__name__}")
        entries = []
    # An entry beyond one per pending request can only be invalid; reading at most this many keeps an endless
    # or enormous iterable from hanging the step, and what is left unread is reported, not dropped silently.
    limit = max_entries(len(pending_ids))
    entries = list(itertools.islice(iter(entries), limit + 1))
    if len(entries) > limit:
        report.malformed.append(f"decisions: more than {limit} entries for {len(pending_ids)} pending requests; "
                                f"only the first {limit} were read")
        entries = entries[:limit]
    pending = set(pending_ids)
    chosen: dict[str, Decision] = {}
    for entry in entries:
        parsed = _parse_entry(entry)
        if isinstance(parsed, str):
            report.malformed.append(parsed)
            continue
        request_id, kind, defer_to = parsed
        if request_id not in pending:
            report.unknown_ids.append(request_id)
            continue
        if request_id in chosen or request_id in report.bad_defer:
            report.duplicates.append(request_id)
            continue
        if kind is DecisionKind.DEFER and (defer_to is None or not window < defer_to < n_windows):
            report.bad_defer.append(request_id)
            continue
        chosen[request_id] = Decision(request_id, kind, defer_to)
    return _complete(chosen, pending_ids, report, window, n_windows, set(report.bad_defer))


def resolve_array(
    action: Any, slot_ids: Sequence[str], overflow_ids: Sequence[str], window: int, n_windows: int,
    max_slots: int, max_defer: int,
) -> DecisionBatch:
    """Resolve an array action (module docstring); ``slot_ids`` are the pending ids in slot order."""
    report = InvalidReport(overflow=list(overflow_ids))
    chosen: dict[str, Decision] = {}
    n_codes = 2 + max_defer
    values, problem = _codes(action, max_slots)
    if problem is not None:
        report.malformed.append(f"action must be {max_slots} integer codes in [0, {n_codes - 1}] "
                                f"(shape ({max_slots},)), got {problem}")
        report.undecided.extend(slot_ids)
        excused = set(slot_ids) | set(overflow_ids)
        return _complete(chosen, list(slot_ids) + list(overflow_ids), report, window, n_windows, excused)
    excused = set(overflow_ids)
    for slot, request_id in enumerate(slot_ids):
        code = values[slot]
        if not math.isfinite(code) or code != math.floor(code) or not 0 <= code < n_codes:
            report.malformed.append(f"slot {slot} ({request_id}): code {code!r} outside 0..{n_codes - 1}")
            excused.add(request_id)
            continue
        code = int(code)
        if code == 0:
            chosen[request_id] = Decision(request_id, DecisionKind.ACCEPT)
        elif code == 1:
            chosen[request_id] = Decision(request_id, DecisionKind.REJECT)
        else:
            target = window + code - 1
            if target >= n_windows:
                report.bad_defer.append(request_id)
                excused.add(request_id)
                continue
            chosen[request_id] = Decision(request_id, DecisionKind.DEFER, target)
    return _complete(chosen, list(slot_ids) + list(overflow_ids), report, window, n_windows, excused)


def max_entries(n_pending: int) -> int:
    """Most entries of a structured action that are read: 16 per pending request plus 1,024 (far more than
    any scheduler needs: past one per pending request, every entry is invalid anyway)."""
    return 16 * n_pending + 1024


def _codes(action: Any, max_slots: int) -> tuple[list[float], str | None]:
    """``action`` as ``max_slots`` floats, or why it is not such a vector. Only integer and real dtypes pass:
    booleans, complex numbers, strings and objects are not codes, and any other shape, (48, 1) or (6, 8) too,
    is refused rather than flattened."""
    try:
        array = np.asarray(action)
    except (TypeError, ValueError):
        return [], f"an unreadable {type(action).__name__}"
    if array.dtype.kind not in "iuf":
        return [], f"dtype {array.dtype}"
    if array.shape != (max_slots,):
        return [], f"shape {array.shape}"
    return array.astype(np.float64).tolist(), None


def _complete(
    chosen: dict[str, Decision], pending_ids: Sequence[str], report: InvalidReport, window: int, n_windows: int,
    excused: set[str],
) -> DecisionBatch:
    """Give every pending id without a valid decision the default; list as undecided those not already
    reported (``excused``: bad DEFER, malformed slot, overflow)."""
    decisions: dict[str, Decision] = {}
    defaulted: list[str] = []
    for request_id in pending_ids:
        decision = chosen.get(request_id)
        if decision is None:
            decision = default_decision(request_id, window, n_windows)
            defaulted.append(request_id)
            if request_id not in excused:
                report.undecided.append(request_id)
        decisions[request_id] = decision
    return DecisionBatch(decisions, report, defaulted)
