"""Descriptions carry no tell (game version 1): what a request's text says is a function of its stated
fields, the same for honest and strategic teams, and injections sit on a share of the injecting team's
requests. Version 0 keeps the tell the integrity review found, reproducibly."""

from __future__ import annotations

import pytest
from scipy.stats import binomtest

from dcops.agents.teams.injecting import INJECTED_SHARE
from dcops.evaluation.integrity import description_requests, description_tell, never_critical_job_types


@pytest.fixture(scope="module")
def v1_requests():
    return description_requests(1, range(30))


def test_urgency_is_claimed_only_where_the_stated_fields_call_for_it(v1_requests):
    assert not [r["request_id"] for r in v1_requests if r["urgent"] and not r["states_no_slack_critical"]]
    assert description_tell(v1_requests)["claims_outside_stated_condition"] == 0


def test_given_the_stated_fields_urgency_says_nothing_about_misreporting(v1_requests):
    tell = description_tell(v1_requests)
    assert tell["eligible_misreported"] >= 50 and tell["eligible_honest"] >= 50  # enough to see a tell
    assert tell["fisher_p"] > 0.01
    # The review's rule ("URGENT on a job type that is never truly CRITICAL") now fires only where the stated
    # priority itself is the evidence: every request it fires on states CRITICAL for such a type.
    never = never_critical_job_types()
    assert all(r["priority"] == "CRITICAL" for r in v1_requests if r["urgent"] and r["job_type"] in never)


def test_injections_sit_on_a_share_of_the_injecting_teams_requests(v1_requests):
    injecting = [r["injected"] for r in v1_requests if r["kind"] == "injecting"]
    assert not any(r["injected"] for r in v1_requests if r["kind"] != "injecting")
    assert binomtest(sum(injecting), len(injecting), INJECTED_SHARE).pvalue > 0.001
    assert 0 < sum(injecting) < len(injecting)


def test_version_0_keeps_the_keyword_tell_of_the_review():
    rows = description_requests(0, range(10))
    tell = description_tell(rows)
    assert tell["rule_fires"] > 0 and tell["rule_precision"] == 1.0  # as measured at 1352c84
    assert tell["injected_share"] == 1.0
