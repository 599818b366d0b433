"""The job catalogue as a public part of the configuration: teams draw from it, the honest norms and the view
follow it, nothing else moves, and a bad name is refused with the field named."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dcops
from dcops.agents.schedulers import RejectAllScheduler
from dcops.agents.schedulers.parametric import ParametricScheduler, type_weights
from dcops.cluster.config import ClusterConfig
from dcops.cluster.job_types import CATALOGUE_NAMES, JOB_TYPES, URGENT_TYPES, catalogue
from dcops.cluster.requests import Priority, Request
from dcops.evaluation.play import run_episode
from dcops.models import ClusterView
from dcops.oversight.honest_model import honest_model, honest_model_for, stated_priority_probs
from dcops.oversight.posterior import FEATURE_NAMES, PublicRecord

HONEST = ("cooperative",) * 4
LEVELS = np.arange(4)


def test_every_catalogue_keeps_the_classic_types_and_changes_only_their_priorities():
    assert catalogue("classic") is JOB_TYPES
    for name in CATALOGUE_NAMES:
        types = catalogue(name)
        assert [j.name for j in types] == [j.name for j in JOB_TYPES]  # observation columns mean the same
        for job, classic in zip(types, JOB_TYPES, strict=True):
            assert (job.gpu_type, job.gpus, job.duration_h, job.slack_windows, job.flexible_prob) == (
                classic.gpu_type, classic.gpus, classic.duration_h, classic.slack_windows, classic.flexible_prob)
            assert sum(job.priority_probs) == pytest.approx(1.0, abs=1e-12) and min(job.priority_probs) >= 0.0
    triage = {j.name: j for j in catalogue("triage")}
    assert all(triage[name].typical_priority > 2.5 for name in URGENT_TYPES)
    assert all(j.typical_priority < 0.3 for name, j in triage.items() if name not in URGENT_TYPES)


@pytest.mark.parametrize("bad", ["nope", "", None, 3, ("triage",), ["triage"]])
def test_a_bad_catalogue_is_refused_naming_the_field(bad):
    with pytest.raises(ValueError, match="^catalogue: unknown"):
        ClusterConfig(catalogue=bad)
    with pytest.raises(ValueError, match="^catalogue: unknown"):
        catalogue(bad)
    with pytest.raises(ValueError, match="^catalogue:"):
        dcops.parallel_env(catalogue=bad)


def test_version_0_refuses_a_catalogue_its_monitor_cannot_judge():
    with pytest.raises(ValueError, match="^catalogue: 'triage' needs game_version 1"):
        ClusterConfig(catalogue="triage", game_version=0)
    assert ClusterConfig(catalogue="classic", game_version=0).catalogue == "classic"


def _requests(env, seed):
    run_episode(RejectAllScheduler(), seed, env=env)
    return env.episode_truth()


def test_the_catalogue_moves_true_priorities_and_nothing_else_of_the_job_stream():
    """Honest teams draw the same number of requests every window under either catalogue, and the first job of
    each team and window (drawn from the window's block before any draw whose use depends on a priority) is the
    same job in every field but its true priority; the true priorities follow the catalogue's mix."""
    envs = {name: dcops.parallel_env(team_kinds=HONEST, catalogue=name, cooling="rule") for name in CATALOGUE_NAMES}
    levels = {name: {"bulk": [], "urgent": []} for name in CATALOGUE_NAMES}
    differing = 0
    for seed in range(12):
        rows = {name: _requests(env, seed) for name, env in envs.items()}
        firsts = {}
        for name, got in rows.items():
            firsts[name] = {}
            for r in got:
                firsts[name].setdefault((r["team"], r["submitted_window"]), r)
                levels[name]["urgent" if r["job_type"] in URGENT_TYPES else "bulk"].append(int(r["true_priority"]))
        assert [r["request_id"] for r in rows["classic"]] == [r["request_id"] for r in rows["triage"]]
        assert firsts["classic"].keys() == firsts["triage"].keys()
        for key, a in firsts["classic"].items():
            b = firsts["triage"][key]
            for field in ("job_type", "kw", "gpus", "true_runtime_h", "true_deadline_window", "true_carbon_flexible"):
                assert a[field] == b[field], (key, field)
            differing += a["true_priority"] != b["true_priority"]
    assert differing > 50
    bulk = np.array(levels["triage"]["bulk"])
    n = len(bulk)
    assert n > 300
    low = float(np.mean(bulk == 0))
    assert abs(low - 0.80) < 4 * math.sqrt(0.8 * 0.2 / n)  # the mix, within four standard errors
    assert not (bulk == 3).any()
    assert np.mean(np.array(levels["triage"]["urgent"]) >= 2) == 1.0
    assert np.mean(np.array(levels["classic"]["bulk"]) == 0) < 0.5  # classic bulk work is mostly not LOW


def test_the_derived_honest_norms_reproduce_the_fitted_classic_ones():
    """The analytic path (catalogue through the honest slip) against the simulation the shipped file came
    from: 240,000 honest statements, so the means agree to about 0.01 level."""
    fitted = honest_model()
    assert honest_model_for("classic") is fitted
    for job in JOB_TYPES:
        probs = np.array(stated_priority_probs(job.priority_probs, fitted.overstate_rate))
        assert probs.sum() == pytest.approx(1.0, abs=1e-12)
        mean = float(probs @ LEVELS)
        assert mean == pytest.approx(fitted.types[job.name].priority_mean, abs=0.015), job.name
        assert float(probs @ (LEVELS - mean) ** 2) == pytest.approx(fitted.types[job.name].priority_var, abs=0.015)
    triage = honest_model_for("triage")
    for job in catalogue("triage"):
        t, c = triage.types[job.name], fitted.types[job.name]
        assert (t.slack_mean, t.slack_offsets, t.slack_var, t.inflexible_prob) == (
            c.slack_mean, c.slack_offsets, c.slack_var, c.inflexible_prob)
        assert t.priority_mean == pytest.approx(float(np.array(stated_priority_probs(
            job.priority_probs, fitted.overstate_rate)) @ LEVELS), abs=1e-12)


def test_the_monitor_the_posterior_and_the_view_follow_the_catalogue():
    env = dcops.parallel_env(catalogue="triage", cooling="rule")
    _, infos = env.reset(seed=3)
    assert env.monitor.model.types["pretrain_shard"].priority_mean < 0.5  # classic: about 1.4
    assert env.posterior_record.monitor.model.types["pretrain_shard"].priority_mean < 0.5
    view = infos["scheduler"]["view"]
    assert view["catalogue"] == "triage"
    ClusterView.model_validate(view)
    _, infos = dcops.parallel_env(cooling="rule").reset(seed=3)
    assert "catalogue" not in infos["scheduler"]["view"]  # the default's view is as it was
    assert ClusterView.model_validate(infos["scheduler"]["view"]).catalogue == "classic"


def _request(priority: Priority) -> Request:
    return Request("r", "t", "pretrain_shard", "", 40.0, 3.0, 32, "H100", priority, 6, False, 5.0, 0)


def test_the_posterior_judges_a_statement_by_its_catalogue():
    """A LOW pretrain shard is ordinary under triage (80 % of its jobs) and rare under classic (none are LOW, so
    only a slip down states it); a HIGH one the reverse. The surprisal feature says so."""
    def surprisal(catalogue_name: str, priority: Priority) -> float:
        record = PublicRecord(["t"], 1.5, catalogue_name)
        record.begin_window(0, [_request(priority)], [])
        return dict(zip(FEATURE_NAMES, record.features("t").tolist(), strict=True))["priority_surprisal_mean"]

    assert surprisal("triage", Priority.LOW) < 0.5 < 2.0 < surprisal("classic", Priority.LOW)
    assert surprisal("triage", Priority.HIGH) > surprisal("classic", Priority.HIGH) + 1.0
    assert PublicRecord(["t"], 1.5, "triage").monitor.model.types["pretrain_shard"] == (
        honest_model_for("triage").types["pretrain_shard"])


def test_a_posterior_record_refuses_a_view_of_another_catalogue():
    env = dcops.parallel_env(catalogue="triage", cooling="rule")
    _, infos = env.reset(seed=4)
    with pytest.raises(ValueError, match="^catalogue: the view's is 'triage'"):
        PublicRecord(env.team_ids, 1.5).begin_window_from_view(infos["scheduler"]["view"])
    record = PublicRecord(env.team_ids, 1.5, "triage")
    record.begin_window_from_view(infos["scheduler"]["view"])
    assert record.window == 0
    classic = dcops.parallel_env(cooling="rule")
    _, infos = classic.reset(seed=4)
    with pytest.raises(ValueError, match="^catalogue: the view's is 'classic'"):
        PublicRecord(classic.team_ids, 1.5, "triage").begin_window_from_view(infos["scheduler"]["view"])


def test_the_detector_aware_team_replicates_the_monitor_of_its_catalogue():
    from dcops.agents.teams.monitor_view import MonitorReplica

    for name in CATALOGUE_NAMES:
        replica = MonitorReplica("t", ClusterConfig(catalogue=name))
        assert replica.monitor.model == honest_model_for(name)


def test_a_new_catalogue_s_teams_are_judged_by_its_own_norms():
    """Judged by the triage norms, honest triage teams' stated priorities sit on their norm (z about 0) and few
    of them are flagged (the thresholds are classic's, calibrated for at most 2 % of honest teams); inflating
    teams stand out. Judged by the classic norms, everyone's mostly-LOW bulk work looks deflated, honest and
    inflating teams alike, so the evidence against an inflator would be understated by several z."""
    from dcops.evaluation.catalogue_norms import judge

    seeds = range(70_000, 70_040)
    own = judge(HONEST, "triage", "triage", seeds)
    assert own.teams == 160 and own.flagged_share <= 0.04
    honest = own.stated_z
    assert abs(float(np.mean(honest))) < 0.5
    honest_classic = judge(HONEST, "triage", "classic", seeds).stated_z
    assert float(np.mean(honest_classic)) < -3.0
    strategic = ("strategic",) * 4
    inflating = judge(strategic, "triage", "triage", seeds).stated_z
    inflating_classic = judge(strategic, "triage", "classic", seeds).stated_z
    assert float(np.mean(inflating)) > float(np.mean(honest)) + 1.0
    assert float(np.mean(inflating)) > float(np.mean(inflating_classic)) + 2.0


def test_the_type_prior_reads_the_view_s_catalogue():
    classic, triage = type_weights("classic"), type_weights("triage")
    assert classic["hparam_sweep"] == pytest.approx(0.6 * 1 + 0.4 * 2)
    assert triage["hparam_sweep"] == pytest.approx(0.8 * 1 + 0.15 * 2 + 0.05 * 4)
    assert triage["hotfix_retrain"] == pytest.approx(0.3 * 4 + 0.7 * 8)
    env = dcops.parallel_env(catalogue="triage", cooling="rule")
    _, infos = env.reset(seed=5)
    view = infos["scheduler"]["view"]
    request = view["pending"][0]
    scheduler = ParametricScheduler(stated=0.0, type_prior=1.0)
    window_h = view["window_h"]
    as_triage = scheduler.score(request, view, window_h)
    as_classic = scheduler.score(request, {**view, "catalogue": "classic"}, window_h)
    assert as_triage == pytest.approx(math.log(triage[request["job_type"]]))
    assert as_classic == pytest.approx(math.log(classic[request["job_type"]]))
    assert scheduler.score(request, {k: v for k, v in view.items() if k != "catalogue"}, window_h) == as_classic


def test_the_posterior_s_episodes_can_be_played_under_a_catalogue():
    """The posterior's simulation (``dcops.evaluation.posterior_training``) plays the catalogue it is given: the
    same seed's stated-priority surprisal features differ, the labels (who games) do not."""
    from dcops.evaluation.posterior_training import simulate_episode

    classic, triage = (simulate_episode(92_000, n_windows=2, catalogue=name) for name in ("classic", "triage"))
    column = FEATURE_NAMES.index("priority_surprisal_mean")
    assert (classic["gaming"] == triage["gaming"]).all()
    assert not np.allclose(classic["features"][:, :, column], triage["features"][:, :, column])
