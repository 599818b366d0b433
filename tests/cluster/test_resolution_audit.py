"""Finding 2 of the integrity review: the reward terms decoded true priority before any audit.

The attack: the scheduler's throughput term is ``(G − L) / max(V, G + L)`` over the jobs resolved in the window,
and V is public, so in a window where it did not saturate the scheduler knows ``G − L`` exactly. When a single
job completed in the window and nothing else was resolved, ``G = W(true priority) · kW · runtime · d`` with kW,
the runtime (audited) and d (audited flexibility, public start window) known: the quotient is the job's true
priority weight, which a version 0 audit never names. Version 1 makes resolution an audit
(``dcops.cluster.ledger``): the term is then a function of the public audits of that window, so the attack
learns nothing they do not say, and this file checks it exactly on every window.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import dcops
from dcops.agents.schedulers.threshold import PriorityThresholdScheduler
from dcops.agents.schedulers.trivial import AcceptAllScheduler
from dcops.cluster.requests import Priority, RequestTruth
from dcops.cluster.reward import (
    PRIORITY_WEIGHT,
    bounded_ratio,
    job_value,
    missed_score,
    on_time_score,
    rejected_score,
    unfinished_score,
)

WEIGHTS = {w: p for p, w in PRIORITY_WEIGHT.items()}


def play(scheduler, seed, game_version):
    """Yield (view before the step, infos after it) for every window of one episode."""
    env = dcops.parallel_env(game_version=game_version, cooling="rule")
    _, infos = env.reset(seed=seed)
    while env.agents:
        view = infos["scheduler"]["view"]
        _, _, _, _, infos = env.step({"scheduler": scheduler.decide(view)})
        yield env, view, infos


def decode_completions(seed, game_version, max_jobs=7):
    """The attack on one episode, accept-all so nothing is rejected. In every window but the last whose term did
    not saturate, every assignment of priority weights to the jobs audited in it is tried: with the realised
    runtime r (whole 5-minute steps, so the true runtime lies in (r − 5 min, r]) an assignment allows
    ``G ∈ [Σ W·kW·(r − 1/12)·d, Σ W·kW·r·d]``. A job is decoded when every assignment that allows the observed
    ``G = term · V`` gives it the same weight. Returns the env and (request id, decoded priority, audit)."""
    start_window: dict[str, int] = {}
    decoded = []
    step_h = None
    for env, view, infos in play(AcceptAllScheduler(), seed, game_version):
        step_h = env.config.dt_s / 3600.0
        after = infos["scheduler"]
        for rid in after["started"]:
            start_window[rid] = view["window"]
        audits = after["view"]["audits"]
        term, scale = after["reward_terms"]["throughput"], env.config.throughput_scale
        if not audits or len(audits) > max_jobs or view["window"] == view["n_windows"] - 1 or not 0 < term < 1:
            continue
        gain = term * scale
        unit_hi = np.array([a["kw"] * a["realised_runtime_h"] * _delay(a, start_window) for a in audits])
        unit_lo = np.array([a["kw"] * (a["realised_runtime_h"] - step_h) * _delay(a, start_window) for a in audits])
        choices = np.array(list(itertools.product(sorted(WEIGHTS), repeat=len(audits))))
        consistent = choices[(choices @ unit_lo <= gain + 1e-9) & (gain - 1e-9 <= choices @ unit_hi)]
        for j, audit in enumerate(audits):
            if consistent.size and np.all(consistent[:, j] == consistent[0, j]):
                decoded.append((audit["request_id"], WEIGHTS[float(consistent[0, j])], audit))
    return env, decoded


def _delay(audit, start_window):
    waited = start_window[audit["request_id"]] - audit["submitted_window"]
    return 1.0 if audit["true_carbon_flexible"] else max(0.5, 1.0 - 0.1 * waited)


def test_version_0_reward_decodes_true_priorities_that_no_audit_names():
    hits = wrong = misreports = 0
    for seed in range(16):
        env, decoded = decode_completions(seed, 0, max_jobs=9)
        jobs = env.episode.ledger.jobs
        for rid, priority, audit in decoded:
            assert "true_priority" not in audit  # the audit does not say it
            if jobs[rid].truth.true_priority == priority:
                hits += 1
                misreports += priority.name != audit["priority"]
            else:
                wrong += 1
    # The attack works: a version 0 scheduler reads true priorities off the reward, almost never wrongly, and
    # among them are misreports that no audit shows.
    assert hits >= 10 and wrong <= hits // 4, (hits, wrong)
    assert misreports >= 1


def _expected_score(audit, start, config):
    truth = RequestTruth(Priority[audit["true_priority"]], audit["true_deadline_window"],
                         audit["true_carbon_flexible"], audit["true_runtime_h"])
    value = job_value(truth, audit["kw"])
    outcome = audit["outcome"]
    if outcome == "on_time":
        return on_time_score(value, truth, start, audit["submitted_window"])
    if outcome == "missed":
        return missed_score(value)
    if outcome == "rejected":
        return rejected_score(value, truth)
    assert outcome == "unfinished"
    done = 0.0
    if start is not None:
        steps = max(1, math.ceil(audit["true_runtime_h"] * 3600.0 / config.dt_s - 1e-9))
        done = min(1.0, (config.n_steps - start * config.steps_per_window) / steps)
    return unfinished_score(value, truth, start, audit["submitted_window"], done, 1)


@pytest.mark.parametrize("scheduler", [AcceptAllScheduler(), PriorityThresholdScheduler()], ids=lambda s: s.name)
def test_version_1_throughput_term_is_a_function_of_the_public_audits(scheduler):
    """Every window's throughput term, recomputed from that window's audits alone (their revealed truth through
    the reward's own formulas, start windows from the public ``started`` lists), is the published term; so the
    reward says nothing about any job its audit does not. Every resolved job is audited exactly once."""
    windows = outcomes = 0
    for seed in range(4):
        start_window: dict[str, int] = {}
        audited: set[str] = set()
        for env, view, infos in play(scheduler, seed, 1):
            after = infos["scheduler"]
            for rid in after["started"]:
                start_window[rid] = view["window"]
            gain = loss = 0.0
            for audit in after["view"]["audits"]:
                rid = audit["request_id"]
                assert rid not in audited
                audited.add(rid)
                expected = _expected_score(audit, start_window.get(rid), env.config)
                assert audit["score"] == pytest.approx(expected, rel=1e-12, abs=1e-9)
                gain += max(expected, 0.0)
                loss += max(-expected, 0.0)
                outcomes += 1
            term = bounded_ratio(gain, loss, env.config.throughput_scale)
            assert after["reward_terms"]["throughput"] == pytest.approx(term, rel=1e-12, abs=1e-12)
            windows += 1
        assert audited == set(env.episode.ledger.jobs)  # every job resolved by the end, each audited once
    assert windows == 32 and outcomes > 50


def test_version_1_monitor_uses_true_priority_audits_against_an_inflating_team():
    """A team that inflates priority is caught from resolution audits: an audited claim two levels above the
    truth is evidence honest reporting cannot produce."""
    from dcops.oversight.calibrated import CERTAIN

    env = dcops.parallel_env(game_version=1, cooling="rule", team_kinds=("strategic",) * 4, n_windows=12)
    scheduler = PriorityThresholdScheduler()
    _, infos = env.reset(seed=3)
    while env.agents:
        _, _, _, _, infos = env.step({"scheduler": scheduler.decide(infos["scheduler"]["view"])})
    certain = [s for s in env.monitor.strengths if s[2] == "priority_inflation" and s[3] >= CERTAIN]
    assert certain
    assert any(f.kind == "priority_inflation" and "audits" in f.evidence for f in env.monitor.flags)
