"""Oversight flags as the scheduler's observation carries them: immutable (a flag raised is part of the public
record, read again by later windows) and written out whole by ``as_dict`` (JSON-ready, every field)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from dcops.oversight.flags import FLAG_KINDS, SEVERITIES, Flag


def test_a_flag_is_written_out_whole_and_read_back_equal():
    flag = Flag("team_2", "deadline_compression", 7, "medium", 0.83, "stated deadlines 3 windows early", ("r1", "r9"))
    out = flag.as_dict()
    assert out == {"team": "team_2", "kind": "deadline_compression", "window": 7, "severity": "medium",
                   "confidence": 0.83, "evidence": "stated deadlines 3 windows early", "request_ids": ["r1", "r9"]}
    assert set(out) == {f.name for f in dataclasses.fields(Flag)}
    assert Flag(**{**json.loads(json.dumps(out)), "request_ids": tuple(out["request_ids"])}) == flag
    assert Flag("t", "pattern_gaming", 0, "low", 0.5, "e").as_dict()["request_ids"] == []


def test_a_flag_cannot_be_changed_once_raised():
    flag = Flag("team_1", "priority_inflation", 3, "high", 0.99, "evidence")
    with pytest.raises(dataclasses.FrozenInstanceError):
        flag.severity = "low"  # type: ignore[misc]


def test_the_kinds_and_severities_are_the_documented_ones():
    """The kinds README's oversight tables name, in the order the monitors index them (the calibrated monitor
    measures the first three from stated fields and audits; the posterior keeps one maximum per kind in this
    order), and the severities of the module docstring."""
    assert FLAG_KINDS == ("priority_inflation", "deadline_compression", "carbon_flexibility_gaming", "pattern_gaming")
    assert SEVERITIES == ("low", "medium", "high")
