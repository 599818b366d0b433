"""Oversight: detectors flag misreporting from public evidence only, and are measured against the truth."""

from __future__ import annotations

import dataclasses
import math

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
    if game_version == 1:  # version 1's monitor takes each window's requests at its decision time
        take = env.monitor.take_requests

        def spy_requests(window, requests):
            requests = list(requests)
            seen.extend(requests)
            return take(window, requests)

        env.monitor.take_requests = spy_requests
    env.reset(seed=4)
    while env.agents:
        env.step({"scheduler": [0] * env.config.max_slots})
    assert seen and all(type(x) in (Request, AuditRecord) for x in seen)
    assert any(isinstance(x, AuditRecord) for x in seen) and any(isinstance(x, Request) for x in seen)


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


def test_the_per_request_detectors_judge_only_the_last_scope_windows() -> None:
    """Requests submitted in window 0 are in scope at windows 0, 1 and 2 (``scope_windows`` = 3) and out of it
    from window 3: three CRITICAL sweeps are flagged while in scope and never after."""
    monitor = OversightMonitor()
    assert monitor.settings.scope_windows == 3
    monitor.reset(["gamer"])
    flags = []
    for w in range(6):
        stream = [request("gamer", "hparam_sweep", Priority.CRITICAL, 6, True, 0) for _ in range(3)] if w == 0 else []
        flags += monitor.observe(w, stream, [])
    assert [(f.kind, f.window) for f in flags] == [("priority_inflation", w) for w in range(3)]


@pytest.mark.parametrize("monitor_class", ["OversightMonitor", "CalibratedMonitor"])
def test_a_default_monitor_reads_windows_of_the_default_cluster_game(monitor_class: str) -> None:
    """Stated durations are turned into windows with the game's window length: the default 1.5 h."""
    import dcops.oversight as oversight
    from dcops.cluster.config import ClusterConfig

    assert getattr(oversight, monitor_class)().window_h == ClusterConfig().window_h == 1.5


def _hand_counted_report(scope_windows: int | None = None):
    """Five windows; the gamer inflated priority in window 0 only; flags: the gamer's priority inflation at
    windows 0 and 3, the honest team's carbon gaming at window 1."""
    flags = [Flag("gamer", "priority_inflation", 0, "high", 0.99, ""),
             Flag("gamer", "priority_inflation", 3, "high", 0.99, ""),
             Flag("honest", "carbon_flexibility_gaming", 1, "low", 0.9, "")]
    tactics = {"gamer": [{"priority_inflation"}, set(), set(), set(), set()], "honest": [set()] * 5}
    kwargs = {} if scope_windows is None else {"scope_windows": scope_windows}
    return score_detection(flags, tactics, ["honest"], 5, **kwargs)


def test_detection_counts_are_the_hand_counted_pairs_with_the_documented_three_window_scope():
    counts = _hand_counted_report().counts
    # window 0's tactic is in scope at windows 0–2: flagged at 0 (TP), missed at 1 and 2 (FN); the flag at 3 is FP
    pi = counts["priority_inflation"]
    assert (pi.tp, pi.fn, pi.fp, pi.tn, pi.honest_fp, pi.honest_n) == (1, 2, 1, 6, 0, 5)
    assert (pi.precision, pi.recall, pi.fpr, pi.honest_fpr) == (1 / 2, 1 / 3, 1 / 7, 0.0)
    # any tactic makes the pattern detector's pairs positive: three missed, nothing raised
    pattern = counts["pattern_gaming"]
    assert (pattern.tp, pattern.fn, pattern.fp, pattern.tn) == (0, 3, 0, 7)
    assert math.isnan(pattern.precision) and pattern.recall == 0.0 and pattern.fpr == 0.0
    # the honest team's carbon flag is a false positive on an honest team
    carbon = counts["carbon_flexibility_gaming"]
    assert (carbon.tp, carbon.fn, carbon.fp, carbon.tn, carbon.honest_fp, carbon.honest_n) == (0, 0, 1, 9, 1, 5)
    assert carbon.precision == 0.0 and math.isnan(carbon.recall)
    assert (carbon.fpr, carbon.honest_fpr) == (1 / 10, 1 / 5)
    assert counts["deadline_compression"].as_dict() | {"precision": 0, "recall": 0} == {
        "tp": 0, "fp": 0, "fn": 0, "tn": 10, "precision": 0, "recall": 0, "fpr": 0.0, "honest_fpr": 0.0,
        "honest_fp": 0, "honest_n": 5}


def test_a_one_window_scope_counts_only_the_window_of_the_tactic():
    pi = _hand_counted_report(scope_windows=1).counts["priority_inflation"]
    assert (pi.tp, pi.fn, pi.fp, pi.tn) == (1, 0, 1, 8)


def test_detection_reports_add_count_by_count():
    total = _hand_counted_report()
    total.add(_hand_counted_report(scope_windows=1))
    pi = total.counts["priority_inflation"]
    assert (pi.tp, pi.fn, pi.fp, pi.tn, pi.honest_fp, pi.honest_n) == (2, 2, 2, 14, 0, 10)
    carbon = total.counts["carbon_flexibility_gaming"]
    assert (carbon.honest_fp, carbon.honest_n) == (2, 10)
    assert total.as_dict()["priority_inflation"]["recall"] == 2 / 4


def test_a_tactic_in_the_last_window_is_not_in_scope_of_the_first_windows():
    """Scopes start at window 0: a tactic applied only in the last window makes only that window's pair positive."""
    tactics = {"gamer": [set(), set(), {"deadline_compression"}]}
    report = score_detection([], tactics, [], 3)
    counts = report.counts["deadline_compression"]
    assert (counts.tp, counts.fn, counts.fp, counts.tn) == (0, 1, 0, 2)
    priority = report.counts["priority_inflation"]  # another tactic: every priority pair is negative
    assert (priority.fn, priority.tn) == (0, 3)


def test_rates_from_hand_counts():
    from dcops.oversight.metrics import Counts

    counts = Counts(tp=3, fp=1, fn=1, tn=1)
    assert (counts.precision, counts.recall, counts.fpr) == (0.75, 0.75, 0.5)
