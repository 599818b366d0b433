"""Oversight: detectors flag misreporting from public evidence only, and are measured against the truth."""

from __future__ import annotations

import dataclasses

import pytest

import dcops
from dcops.agents.schedulers import PriorityThresholdScheduler
from dcops.cluster.ledger import AuditRecord
from dcops.cluster.requests import PRIVATE_FIELDS, Priority, Request
from dcops.oversight import FLAG_KINDS, OversightMonitor, score_detection
from dcops.oversight.flags import SEVERITIES, Flag

_COUNTER = iter(range(10_000))


def request(team: str, job_type: str, priority: Priority, deadline: int, flexible: bool, window: int = 0,
            duration: float = 2.0, description: str = "") -> Request:
    return Request(f"r{next(_COUNTER):04d}", team, job_type, description, 40.0, duration, 16, "A100", priority,
                   deadline, flexible, 5.0, window)


def run_monitor(stream: list[list[Request]], audits: list[list[AuditRecord]] | None = None) -> list[Flag]:
    monitor = OversightMonitor()
    monitor.reset(["honest", "gamer"])
    flags = []
    for w, requests in enumerate(stream):
        flags += monitor.observe(w, requests, audits[w] if audits else [])
    return flags


def kinds_for(flags: list[Flag], team: str) -> set[str]:
    return {f.kind for f in flags if f.team == team}


def test_priority_inflation_is_flagged_for_a_team_claiming_high_priority_on_routine_work_only():
    stream = [[request("honest", "hparam_sweep", Priority.LOW, 6, True, w) for _ in range(3)]
              + [request("gamer", "hparam_sweep", Priority.CRITICAL, 6, True, w) for _ in range(3)] for w in range(2)]
    flags = run_monitor(stream)
    assert "priority_inflation" in kinds_for(flags, "gamer")
    assert "priority_inflation" not in kinds_for(flags, "honest")


def test_deadline_compression_is_flagged_when_audits_show_deadlines_two_windows_later_than_stated():
    honest = [request("honest", "finetune", Priority.MEDIUM, 2, True) for _ in range(3)]
    gamer = [request("gamer", "finetune", Priority.MEDIUM, 2, True) for _ in range(3)]
    audits = [[AuditRecord(r, 2.0, r.deadline_window, True, 1, True) for r in honest]
              + [AuditRecord(r, 2.0, r.deadline_window + 3, True, 1, True) for r in gamer]]
    flags = run_monitor([honest + gamer, []], [[], audits[0]])
    gamer_flags = [f for f in flags if f.team == "gamer" and f.kind == "deadline_compression"]
    assert gamer_flags and gamer_flags[0].severity == "high"
    assert "deadline_compression" not in kinds_for(flags, "honest")


def test_carbon_flexibility_gaming_is_flagged_for_a_team_calling_flexible_work_inflexible():
    stream = [[request("honest", "batch_inference", Priority.LOW, 6, True, w) for _ in range(3)]
              + [request("gamer", "batch_inference", Priority.LOW, 6, False, w) for _ in range(3)] for w in range(2)]
    flags = run_monitor(stream)
    assert "carbon_flexibility_gaming" in kinds_for(flags, "gamer")
    assert "carbon_flexibility_gaming" not in kinds_for(flags, "honest")


def test_pattern_gaming_is_flagged_for_a_team_leaning_on_several_fields():
    stream = [[request("gamer", "data_preprocessing", Priority.HIGH, w, False, w, duration=1.0) for _ in range(3)]
              + [request("honest", "data_preprocessing", Priority.LOW, w + 5, True, w, duration=1.0)]
              for w in range(3)]
    flags = run_monitor(stream)
    assert "pattern_gaming" in kinds_for(flags, "gamer")
    assert "pattern_gaming" not in kinds_for(flags, "honest")


def test_flags_carry_team_kind_public_evidence_severity_and_confidence():
    stream = [[request("gamer", "hparam_sweep", Priority.CRITICAL, 6, False, w, description="URGENT, blocking")
               for _ in range(4)] for w in range(2)]
    flags = run_monitor(stream)
    assert flags
    ids = {r.request_id for window in stream for r in window}
    for flag in flags:
        assert flag.team == "gamer" and flag.kind in FLAG_KINDS and flag.severity in SEVERITIES
        assert 0.5 <= flag.confidence <= 1.0
        assert flag.evidence and set(flag.request_ids) <= ids
        assert set(flag.as_dict()) == {"team", "kind", "window", "severity", "confidence", "evidence", "request_ids"}


@pytest.mark.parametrize("game_version", [0, 1])
def test_the_monitor_is_given_only_public_objects_without_private_fields(game_version):
    """The monitor sees requests and audits only. Version 0 audits never name a true priority; version 1
    audits name it only for a job whose outcome was booked by then (resolution is an audit)."""
    assert not set(PRIVATE_FIELDS) & {f.name for f in dataclasses.fields(Request)}
    seen = []
    env = dcops.parallel_env(game_version=game_version)
    original = env.monitor.observe

    def spy(window, requests, audits):
        requests, audits = list(requests), list(audits)
        for audit in audits:
            job = env.episode.ledger.jobs[audit.request.request_id]
            if game_version == 0:
                assert audit.true_priority is None and audit.outcome is None
            else:
                assert job.outcome == audit.outcome and job.scored_window == window == audit.completed_window
        seen.extend(requests + audits)
        return original(window, requests, audits)

    env.monitor.observe = spy
    env.reset(seed=4)
    while env.agents:
        env.step({"scheduler": [0] * env.config.max_slots})
    assert seen and all(type(x) in (Request, AuditRecord) for x in seen)
    assert any(isinstance(x, AuditRecord) for x in seen)


def test_detection_metrics_count_team_windows_against_the_applied_tactics():
    flags = [Flag("a", "priority_inflation", 1, "low", 0.9, "e"), Flag("b", "priority_inflation", 2, "low", 0.9, "e")]
    tactics = {"a": [set(), {"priority_inflation"}, set()], "b": [set(), set(), set()]}
    report = score_detection(flags, tactics, honest_teams=["b"], n_windows=3, scope_windows=1)
    c = report.counts["priority_inflation"]
    assert (c.tp, c.fp, c.fn, c.tn) == (1, 1, 0, 4)
    assert c.precision == 0.5 and c.recall == 1.0 and c.honest_fpr == pytest.approx(1 / 3)


def test_detectors_on_fixed_seeds_are_precise_and_rarely_flag_honest_teams():
    env = dcops.parallel_env()
    scheduler = PriorityThresholdScheduler()
    totals = {k: [0, 0, 0, 0] for k in FLAG_KINDS}
    for seed in range(8):
        _, infos = env.reset(seed=seed)
        while env.agents:
            _, _, _, _, infos = env.step({"scheduler": scheduler.decide(infos["scheduler"]["view"])})
        for kind, c in infos["scheduler"]["episode"]["detection"].items():
            totals[kind] = [totals[kind][0] + c["tp"], totals[kind][1] + c["fp"], totals[kind][2] + c["honest_fp"],
                            totals[kind][3] + c["honest_n"]]
    for kind, (tp, fp, honest_fp, honest_n) in totals.items():
        assert tp / max(1, tp + fp) >= 0.8, kind
        assert honest_fp / honest_n <= 0.08, kind
