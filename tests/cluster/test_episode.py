"""The episode simulator: jobs drive the plant, run their true runtime, fill zones, and faults bite."""

from __future__ import annotations

import numpy as np
import pytest

from dcops.cluster.config import ClusterConfig
from dcops.cluster.cooling import RuleFastPath
from dcops.cluster.decisions import resolve_structured
from dcops.cluster.episode import ClusterEpisode
from dcops.cluster.requests import Priority, Request, RequestTruth, Submission
from dcops.physics.faults import ChillerTrip


def job(rid: str, gpu_type: str = "H100", gpus: int = 32, kw: float = 50.0, stated_h: float = 2.0,
        true_h: float = 2.0, deadline: int = 7, window: int = 0, priority: Priority = Priority.MEDIUM,
        chargeback: float = 10.0) -> Submission:
    request = Request(rid, "team_0", "finetune", "a job", kw, stated_h, gpus, gpu_type, priority, deadline, False,
                      chargeback, window)
    return Submission(request, RequestTruth(priority, deadline, False, true_h))


def episode(**config) -> ClusterEpisode:
    ep = ClusterEpisode(ClusterConfig(faults=config.pop("faults", ()), **config), RuleFastPath())
    ep.reset(np.random.default_rng(0), np.random.default_rng(1), ["team_0"])
    return ep


def decide(ep: ClusterEpisode, kind: str = "ACCEPT") -> None:
    ids = ep.pending_ids()
    ep.decide(resolve_structured([{"request_id": i, "decision": kind} for i in ids], ids, ep.window,
                                 ep.config.n_windows))


def test_it_load_is_the_base_load_plus_running_jobs_until_their_true_runtime_ends():
    ep = episode()
    ep.submit([job("a", kw=80.0, stated_h=3.0, true_h=0.5)])  # stated 3 h, really 30 min = 6 steps
    decide(ep)
    ep.run_window()
    base = ep.config.base_kw
    assert ep.it_kw_total[:6] == pytest.approx(base + 80.0)
    assert ep.it_kw_total[6:18] == pytest.approx(base)


def test_a_completed_job_is_audited_with_its_realised_runtime_and_true_deadline():
    ep = episode()
    ep.submit([job("a", stated_h=3.0, true_h=1.0, deadline=5)])
    decide(ep)
    result = ep.run_window()
    assert [a.request.request_id for a in result.audits] == ["a"]
    audit = result.audits[0]
    assert audit.realised_runtime_h == pytest.approx(1.0)
    assert audit.true_deadline_window == 5 and audit.on_time
    assert result.score.outcomes["on_time"] == 1


def test_a_job_that_cannot_finish_inside_the_horizon_is_reported_unfinished_with_partial_credit():
    ep = episode(n_windows=2)
    ep.submit([job("long", true_h=6.0, stated_h=6.0, deadline=9)])
    decide(ep)
    ep.run_window()
    decide(ep)
    last = ep.run_window()
    assert last.unfinished == ["long"]
    record = ep.ledger.jobs["long"]
    assert record.outcome == "unfinished"
    assert record.score == pytest.approx(record.value * 0.5)  # 3 h of 6 h done, started without delay


def test_a_job_whose_true_deadline_passes_before_it_runs_is_scored_missed_once():
    ep = episode()
    ep.submit([job("late", deadline=0, true_h=1.0)])
    decide(ep, "DEFER")
    result = ep.run_window()
    assert result.score.outcomes["missed"] == 1
    assert ep.ledger.jobs["late"].score == pytest.approx(-0.5 * ep.ledger.jobs["late"].value)
    decide(ep, "REJECT")  # a later rejection adds nothing
    assert ep.run_window().score.outcomes["rejected"] == 0


def test_jobs_go_to_zones_with_their_gpu_model_and_wait_when_no_zone_fits():
    ep = episode()
    ep.submit([job("l40s", gpu_type="L40S", gpus=64, kw=30.0), job("huge", gpu_type="H100", gpus=128, kw=100.0),
               job("a100", gpu_type="A100", gpus=128, kw=100.0)])
    decide(ep)
    ep.run_window()
    zones = {rid: ep.ledger.jobs[rid].zone for rid in ("l40s", "a100")}
    assert ep.config.zones[zones["l40s"]].gpu_type == "L40S"
    assert ep.config.zones[zones["a100"]].gpu_type == "A100"
    assert ep.ledger.queue == ["huge"]  # 128 H100 fit no zone of 96


def test_accepting_debits_the_team_budget_and_an_overdraft_is_booked():
    ep = episode(team_budget=15.0)
    ep.submit([job("a", chargeback=10.0), job("b", chargeback=10.0)])
    decide(ep)
    assert ep.ledger.budget_left["team_0"] == pytest.approx(-5.0)
    assert ep.ledger.overdraft["team_0"] == pytest.approx(5.0)


def test_power_over_the_cap_is_a_thermal_incident():
    ep = episode(power_cap_kw=500.0)
    ep.submit([job("a", kw=150.0, gpus=96, true_h=2.0)])
    decide(ep)
    result = ep.run_window()
    assert result.score.incident and "cap" in result.score.incident_reasons[0]
    assert result.score.thermal == -1.0


def heavy_load_run(faults: tuple) -> tuple[list[bool], list[float]]:
    ep = episode(faults=faults)
    ep.submit([job("a", gpus=96, kw=150.0, true_h=20.0, stated_h=20.0, deadline=20),
               job("b", gpus=96, kw=150.0, true_h=20.0, stated_h=20.0, deadline=20),
               job("c", gpu_type="A100", gpus=100, kw=100.0, true_h=20.0, stated_h=20.0, deadline=20)])
    incidents, safe = [], []
    for _ in range(ep.config.n_windows):
        decide(ep)
        incidents.append(ep.run_window().score.incident)
        safe.append(ep.power_estimate().safe_job_kw)
    return incidents, safe


def test_a_chiller_trip_shrinks_the_safe_job_power_and_makes_the_same_load_an_incident():
    no_fault_incidents, no_fault_safe = heavy_load_run(())
    trip_incidents, trip_safe = heavy_load_run((ChillerTrip(start_s=1800.0, chiller=0),))
    assert not any(no_fault_incidents)
    assert any(trip_incidents)
    assert trip_safe[0] < no_fault_safe[0] - 50.0  # the public estimate drops by more than 50 kW
    assert trip_safe[0] < 400.0 < no_fault_safe[0]  # 400 kW of jobs: safe without the trip, not with it


def test_the_ledger_status_counts_match_a_recount_after_a_whole_episode():
    import dcops

    env = dcops.parallel_env()
    env.reset(seed=6)
    codes = np.random.default_rng(0)
    while env.agents:
        env.step({"scheduler": codes.integers(0, 3, size=env.config.max_slots)})
    ledger = env.episode.ledger
    recount = {team: [0] * 6 for team in ledger.status_counts}
    for record in ledger.jobs.values():
        recount[record.request.team][int(record.status)] += 1
    assert recount == ledger.status_counts
