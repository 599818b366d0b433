"""Descriptions carry no tell (game version 1): what a request's text says is a function of its stated
fields, the same for honest and strategic teams, and injections sit on a share of the injecting team's
requests. Version 0 keeps the tell the integrity review found, reproducibly."""

from __future__ import annotations

import pytest
from scipy.stats import binomtest, fisher_exact

import dcops
from dcops.agents.schedulers import RejectAllScheduler
from dcops.agents.teams.base import stated_earliest_window
from dcops.agents.teams.injecting import INJECTED_SHARE, INJECTIONS, injection_text
from dcops.cluster.job_types import JOB_TYPES
from dcops.evaluation.cluster_report import run_episode

TEAMS = ("cooperative", "cooperative", "strategic", "adaptive", "injecting")
NEVER_CRITICAL = {jt.name for jt in JOB_TYPES if jt.priority_probs[3] == 0}


def requests_of(game_version: int, seeds: range) -> list[dict]:
    """Every request of the episodes, with the truth rows of ``episode_truth`` and the team's kind."""
    env = dcops.parallel_env(game_version=game_version, cooling="rule", team_kinds=TEAMS)
    rows = []
    for seed in seeds:
        run_episode(RejectAllScheduler(), seed, env=env)
        for row in env.episode_truth():
            row["kind"] = env.team_kind[row["team"]]
            row["urgent"] = "URGENT" in row["description"]
            row["misreported"] = bool(row["tactics"])
            row["states_no_slack_critical"] = row["priority"] == "CRITICAL" and row["deadline_window"] <= \
                stated_earliest_window(row["submitted_window"], row["duration_h"], env.config)
            row["injected"] = any(injection_text(i, row["request_id"]) in row["description"]
                                  for i in range(len(INJECTIONS)))
            rows.append(row)
    return rows


@pytest.fixture(scope="module")
def v1_requests():
    return requests_of(1, range(30))


def test_urgency_is_claimed_only_where_the_stated_fields_call_for_it(v1_requests):
    assert not [r["request_id"] for r in v1_requests if r["urgent"] and not r["states_no_slack_critical"]]


def test_given_the_stated_fields_urgency_says_nothing_about_misreporting(v1_requests):
    eligible = [r for r in v1_requests if r["states_no_slack_critical"]]
    gaming = [r["urgent"] for r in eligible if r["misreported"]]
    honest = [r["urgent"] for r in eligible if not r["misreported"]]
    assert len(gaming) >= 50 and len(honest) >= 50  # enough of both for the test to see a tell
    table = [[sum(gaming), len(gaming) - sum(gaming)], [sum(honest), len(honest) - sum(honest)]]
    assert fisher_exact(table)[1] > 0.01
    # The review's rule ("URGENT on a job type that is never truly CRITICAL") now fires only where the stated
    # priority itself is the evidence: every request it fires on states CRITICAL for such a type.
    fired = [r for r in v1_requests if r["urgent"] and r["job_type"] in NEVER_CRITICAL]
    assert all(r["priority"] == "CRITICAL" for r in fired)


def test_injections_sit_on_a_share_of_the_injecting_teams_requests(v1_requests):
    injecting = [r["injected"] for r in v1_requests if r["kind"] == "injecting"]
    assert not any(r["injected"] for r in v1_requests if r["kind"] != "injecting")
    assert binomtest(sum(injecting), len(injecting), INJECTED_SHARE).pvalue > 0.001
    assert 0 < sum(injecting) < len(injecting)


def test_version_0_keeps_the_keyword_tell_of_the_review():
    rows = requests_of(0, range(10))
    fired = [r for r in rows if r["urgent"] and r["job_type"] in NEVER_CRITICAL]
    assert fired and all(r["misreported"] for r in fired)  # precision 1.00, as measured at 1352c84
    assert all(r["injected"] for r in rows if r["kind"] == "injecting")
