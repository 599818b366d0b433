"""Finding 5 of the integrity review: honest teams were flagged, more the longer the episode.

The version 1 monitor (``dcops.oversight.calibrated``) models an honest team's slack habit as a team-level
random effect and is calibrated on tuning seeds; these tests measure it on seeds outside both the tuning range
and the norms simulation, and check the statistics on analytic cases.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dcops.cluster.config import ClusterConfig
from dcops.cluster.requests import Priority, Request
from dcops.evaluation.oversight_calibration import (
    FRESH_SEEDS,
    TUNING_SEEDS,
    auroc,
    honest_flag_share,
    simulate_honest_model,
)
from dcops.oversight.calibrated import CERTAIN, CalibratedMonitor, binomial_z, tail_z
from dcops.oversight.honest_model import honest_model, thresholds

TEST_SEEDS = range(70_000, 70_060)
"""Neither tuning (50,000+) nor the published evaluation (60,000+) uses these."""


def test_the_test_seeds_are_disjoint_from_tuning_and_evaluation():
    assert not set(TEST_SEEDS) & (set(TUNING_SEEDS) | set(FRESH_SEEDS))


def test_the_shipped_honest_model_matches_a_fresh_simulation():
    """The committed norms are what the published team model produces (another seed, fewer teams)."""
    shipped, fresh = honest_model(), simulate_honest_model(n_teams=1500, seed=11)
    assert fresh.early_rate == pytest.approx(shipped.early_rate, abs=0.01)
    assert fresh.flip_rate == pytest.approx(shipped.flip_rate, abs=0.01)
    assert fresh.overstate_rate == pytest.approx(shipped.overstate_rate, abs=0.01)
    for name, t in shipped.types.items():
        f = fresh.types[name]
        assert f.priority_mean == pytest.approx(t.priority_mean, abs=0.05)
        assert f.slack_mean == pytest.approx(t.slack_mean, abs=0.25)
        assert f.inflexible_prob == pytest.approx(t.inflexible_prob, abs=0.05)
        # the habit moves the mean stated slack by about one window each way
        assert t.slack_offsets[0] < -0.5 < 0.5 < t.slack_offsets[2]


def test_honest_rates_match_the_documented_team_model():
    m = honest_model()
    assert m.flip_rate == pytest.approx(0.08, abs=0.005)  # honest flexibility flips
    assert m.overstate_rate == pytest.approx(0.05, abs=0.005)  # one-level slips, half of them upward
    assert 0.10 < m.early_rate <= 0.15  # one window early 15 % of the time, less where the window clamps it
    assert m.shift_probs == pytest.approx((1 / 3, 1 / 3, 1 / 3), abs=0.02)


def _request(i, job_type, window, deadline, priority=Priority.LOW, flexible=True, duration=1.5):
    return Request(request_id=f"r{i}", team="team_0", job_type=job_type, description="", kw=50.0,
                   duration_h=duration, gpus=8, gpu_type="A100", priority=priority, deadline_window=deadline,
                   carbon_flexible=flexible, chargeback=1.0, submitted_window=window)


def test_a_slack_habit_alone_never_builds_evidence_however_long_the_episode():
    """A team whose every stated slack sits at its type's tightest honest mean (habit −1, honest) shows no
    deadline-compression evidence at 10 or 2,000 requests; one that states half a window tighter still builds
    evidence like √n (version 0's statistic grew for the honest team too)."""
    t = honest_model().types["hparam_sweep"]
    monitor = CalibratedMonitor()
    zs = {}
    for n in (10, 2000):
        base = {"n": n, "priority_excess": 0.0, "priority_var": n * t.priority_var, "slack_var": n * t.slack_var,
                "inflexible": 0.0, "inflexible_expected": 0.0, "inflexible_var": 1.0}
        honest = monitor.stated_z({**base, "slack_dev_tight": 0.0})["deadline_compression"]
        assert honest == 0.0
        zs[n] = monitor.stated_z({**base, "slack_dev_tight": -0.5 * n})["deadline_compression"]
    assert zs[2000] == pytest.approx(zs[10] * math.sqrt(200.0), rel=1e-9)
    assert zs[10] < thresholds().deadline_compression < zs[2000]


def test_impossible_audits_are_certain_and_binomial_evidence_is_a_tail_probability():
    assert tail_z(0.5) == 0.0 and tail_z(1e-30) == CERTAIN
    assert tail_z(0.05) == pytest.approx(1.6449, abs=1e-3)
    # 3 of 10 at an honest 5 %: P = 1 − P(X ≤ 2) = 0.01150
    assert binomial_z(3, 10, 0.05) == pytest.approx(tail_z(0.0115036), rel=1e-4)
    assert binomial_z(0, 10, 0.05) == 0.0


def test_the_monitor_flags_an_audited_two_level_overstatement_at_once():
    from dcops.cluster.ledger import AuditRecord

    monitor = CalibratedMonitor()
    monitor.reset(["team_0"])
    request = _request(1, "hparam_sweep", 0, 6, priority=Priority.HIGH)
    audit = AuditRecord(request, 1.5, 6, True, 0, True, Priority.LOW, 1.5, "on_time", 10.0)
    flags = monitor.observe(0, [request], [audit])
    assert any(f.kind == "priority_inflation" and f.severity == "high" for f in flags)
    monitor.reset(["team_0"])  # the same request audited as honest: nothing
    honest = AuditRecord(request, 1.5, 6, True, 0, True, Priority.HIGH, 1.5, "on_time", 10.0)
    assert monitor.observe(0, [request], [honest]) == []


def test_auroc_counts_pairs_ordered_with_ties_as_half():
    # 6 pairs: 3 beats 1 and 2 and ties 3 (2.5); 2 beats 1, ties 2 and loses to 3 (1.5): 4 / 6
    assert auroc(np.array([3.0, 2.0]), np.array([1.0, 2.0, 3.0])) == pytest.approx(4.0 / 6.0)
    assert auroc(np.array([2.0]), np.array([1.0])) == 1.0 and auroc(np.array([1.0]), np.array([1.0])) == 0.5
    assert auroc(np.array([0.0]), np.array([1.0])) == 0.0


@pytest.mark.parametrize("n_windows", [8, 48])
def test_version_1_flags_at_most_2_percent_of_honest_teams_on_untuned_seeds(n_windows):
    """All-honest episodes on 60 seeds never used for tuning (240 teams): at most 2 % flagged in expectation;
    the assertion allows the binomial spread (at most 9 of 240 teams, P ≈ 0.02 of failing at a true 2 %...
    here 3.75 %, whose failure probability at a true rate of 2 % is under 3 %)."""
    share = honest_flag_share(TEST_SEEDS, n_windows, 1)
    assert share["teams"] == 240
    assert share["any"] <= 0.0375, share


def test_version_0_monitor_flags_honest_teams_more_the_longer_the_episode():
    """The finding as it stands in version 0 (kept reproducible): the same test fails there."""
    short, long = (honest_flag_share(TEST_SEEDS[:20], n, 0)["any"] for n in (8, 48))
    assert short > 0.0375 and long > short + 0.2


def test_a_gaming_team_is_still_caught():
    """Calibration did not buy its honesty by going blind: in 16-window episodes with strategic teams, every
    per-kind detector flags, and priority inflation is caught on most teams that use it."""
    import dcops
    from dcops.agents.schedulers.threshold import PriorityThresholdScheduler

    caught = used = 0
    kinds = set()
    for seed in range(70_100, 70_110):
        env = dcops.parallel_env(game_version=1, cooling="rule", n_windows=16, team_kinds=("strategic",) * 4)
        _, infos = env.reset(seed=seed)
        scheduler = PriorityThresholdScheduler()
        while env.agents:
            _, _, _, _, infos = env.step({"scheduler": scheduler.decide(infos["scheduler"]["view"])})
        flagged = {(f.team, f.kind) for f in env.monitor.flags}
        kinds |= {k for _, k in flagged}
        for team, per_window in env.tactics.items():
            if any("priority_inflation" in s for s in per_window):
                used += 1
                caught += (team, "priority_inflation") in flagged
    assert kinds >= {"priority_inflation", "deadline_compression", "carbon_flexibility_gaming"}
    assert used >= 20 and caught >= 0.7 * used, (caught, used)
    assert math.isfinite(ClusterConfig(game_version=1).throughput_scale)
