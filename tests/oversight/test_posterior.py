"""The team posterior (``dcops.oversight.posterior``): shipped weights, probabilities, public evidence only, and
at least as good as a stated-fields logistic regression on seeds it never saw."""

from __future__ import annotations

import numpy as np
import pytest

from dcops.agents.schedulers.base import defer, reject
from dcops.agents.teams import make_team
from dcops.cluster.requests import Priority, Request, RequestTruth
from dcops.evaluation.oversight_calibration import auroc
from dcops.evaluation.posterior_training import (
    FRESH_SEEDS,
    N_WINDOWS,
    TRAINING_SEEDS,
    fit_posterior,
    predict_all,
    simulate,
    simulate_episode,
)
from dcops.oversight.posterior import (
    FEATURE_NAMES,
    STATED_FEATURES,
    PublicRecord,
    TeamPosterior,
    audit_from_public,
    request_from_public,
)

TEST_SEEDS = range(93_000, 93_040)
"""Fresh episodes for these tests: neither training (90,000+) nor the published evaluation (92,000+)."""
BASELINE_TRAINING_EPISODES = 200
AUROC_TOLERANCE = 0.02


@pytest.fixture(scope="module")
def posterior() -> TeamPosterior:
    return TeamPosterior.load()


@pytest.fixture(scope="module")
def fresh():
    return simulate(TEST_SEEDS)


def test_the_test_seeds_are_disjoint_from_training_and_evaluation():
    assert not set(TEST_SEEDS) & (set(TRAINING_SEEDS) | set(FRESH_SEEDS))
    assert not set(TRAINING_SEEDS) & set(FRESH_SEEDS)


def test_the_shipped_weights_load_and_match_the_features(posterior):
    baseline = TeamPosterior.load(model="stated_fields")
    assert posterior.feature_names == FEATURE_NAMES
    assert baseline.feature_names == STATED_FEATURES
    for model in (posterior, baseline):
        assert len(model.models) == N_WINDOWS
        assert 0.0 < model.training_prior < 1.0
        for window_model in model.models:
            for array in (window_model.mean, window_model.scale, window_model.coef):
                assert array.shape == (len(model.feature_names),)
                assert np.isfinite(array).all()
            assert (window_model.scale > 0).all()


def test_saving_and_loading_round_trip(posterior):
    again = TeamPosterior.from_dict(posterior.as_dict())
    x = np.random.default_rng(0).normal(size=(5, len(FEATURE_NAMES)))
    for w in (0, 3, N_WINDOWS + 5):
        np.testing.assert_array_equal(again.predict(x, w), posterior.predict(x, w))


def test_probabilities_lie_in_the_unit_interval(posterior, fresh):
    p = predict_all(posterior, fresh)
    assert np.isfinite(p).all() and (p >= 0.0).all() and (p <= 1.0).all()
    extreme = np.random.default_rng(1).normal(scale=1e6, size=(50, len(FEATURE_NAMES)))
    q = posterior.predict(extreme, 2)
    assert np.isfinite(q).all() and (q >= 0.0).all() and (q <= 1.0).all()


def test_the_posterior_is_at_least_as_good_as_a_stated_fields_regression_at_every_window(posterior, fresh):
    """The baseline of the review, re-fitted here on a small training sample (fixed penalty), against the shipped
    posterior, both on fresh seeds: AUROC per window index."""
    training = simulate(TRAINING_SEEDS[:BASELINE_TRAINING_EPISODES])
    baseline, _ = fit_posterior(training, STATED_FEATURES, penalty=1.0)
    p_post, p_base = predict_all(posterior, fresh), predict_all(baseline, fresh)
    gaming = fresh.gaming.reshape(-1)
    assert 0.2 < gaming.mean() < 0.6
    post, base = [], []
    for w in range(N_WINDOWS):
        a, b = p_post[:, w].reshape(-1), p_base[:, w].reshape(-1)
        post.append(auroc(a[gaming], a[~gaming]))
        base.append(auroc(b[gaming], b[~gaming]))
    for w in range(N_WINDOWS):
        assert post[w] >= base[w] - AUROC_TOLERANCE, (w, post, base)
    # once audits arrive the posterior must gain on the stated fields, not just keep up
    assert np.mean(post[2:]) > np.mean(base[2:]) + 0.01, (post, base)
    assert base[0] > 0.75  # and the baseline is a real one, not a straw man


# ------------------------------------------------------------------------------------------ public evidence only
class _TruthSwapped:
    """A scripted team whose submissions keep every stated field but carry another hidden truth wherever
    ``swap(truth)`` says so (true priority two levels off, flexibility flipped, runtime × 1.7; the true
    deadline is kept, so every job is resolved when it would have been)."""

    def __init__(self, team, swap) -> None:
        self._team, self._swap = team, swap

    def __getattr__(self, name):
        return getattr(self._team, name)

    def reset(self, *args, **kwargs) -> None:
        self._team.reset(*args, **kwargs)

    def submit(self, *args, **kwargs):
        submissions = self._team.submit(*args, **kwargs)
        for sub in submissions:
            t = sub.truth
            if self._swap(t):
                sub.truth = RequestTruth(Priority((int(t.true_priority) + 2) % 4), t.true_deadline_window,
                                         not t.true_carbon_flexible, t.true_runtime_h * 1.7)
        return submissions


class _DeferAll:
    """Defers every request to the next window and rejects what is left in the last: no job runs, and a job is
    resolved (audited) only when its true deadline passes, or after the last window."""

    def decide(self, view):
        w, last = view["window"], view["n_windows"] - 1
        return [defer(r["request_id"], w + 1) if w < last else reject(r["request_id"]) for r in view["pending"]]


def _episode(seed, swap=None):
    factory = None if swap is None else (lambda kind: _TruthSwapped(make_team(kind), swap))
    return simulate_episode(seed, N_WINDOWS, scheduler=_DeferAll(), team_factory=factory)


@pytest.mark.parametrize("seed", [TEST_SEEDS[0], TEST_SEEDS[2], TEST_SEEDS[7]])
def test_the_truth_of_unaudited_requests_never_moves_the_features(seed, posterior):
    """A request whose true deadline lies in the last window or beyond is never audited before the last
    decision: swapping its hidden truth, stated fields unchanged, must leave every feature (hence every
    probability) exactly as it was. Swapping the truth of the requests that do get audited must move them."""
    plain = _episode(seed)
    unaudited = _episode(seed, swap=lambda t: t.true_deadline_window >= N_WINDOWS - 1)
    np.testing.assert_array_equal(unaudited["features"], plain["features"])
    audited = _episode(seed, swap=lambda t: t.true_deadline_window < N_WINDOWS - 2)
    assert not np.array_equal(audited["features"], plain["features"])
    p_plain = [posterior.predict(plain["features"][w], w) for w in range(N_WINDOWS)]
    p_unaudited = [posterior.predict(unaudited["features"][w], w) for w in range(N_WINDOWS)]
    np.testing.assert_array_equal(p_unaudited, p_plain)


def test_the_env_objects_and_the_public_view_give_the_same_record(posterior):
    """The integration call (``begin_window`` with the env's own request and audit objects) and the view path
    (``begin_window_from_view``, what a remote scheduler has) agree exactly."""
    from dcops.agents.schedulers import PriorityThresholdScheduler
    from dcops.env import parallel_env

    env = parallel_env(n_windows=N_WINDOWS, cooling="rule")
    _, infos = env.reset(seed=TEST_SEEDS[3])
    from_objects = PublicRecord(env.team_ids, env.config.window_h)
    from_view = PublicRecord(env.team_ids, env.config.window_h)
    scheduler = PriorityThresholdScheduler()
    audited = 0
    while env.agents:
        view = infos["scheduler"]["view"]
        from_objects.begin_window(env.episode.window, env._window_requests, env._audits)
        from_view.begin_window_from_view(view)
        audited += len(view["audits"])
        np.testing.assert_array_equal(from_objects.feature_matrix(), from_view.feature_matrix())
        assert posterior.probabilities(from_objects) == posterior.probabilities(from_view)
        _, _, _, _, infos = env.step({"scheduler": scheduler.decide(view)})
    assert audited > 0


@pytest.mark.parametrize("scenario", ["classic", "adversarial"])
def test_the_env_record_reads_its_monitor_and_equals_a_shadow_fed_the_same(posterior, scenario):
    """The environment's record shares its monitor (which takes each window's requests at its decision time)
    instead of keeping a shadow; its features and probabilities equal those of a record with its own shadow
    fed the view, window by window, and the monitor's flags and strengths equal a monitor fed each window whole
    at its end, as it was before."""
    from dcops.agents.schedulers import PriorityThresholdScheduler
    from dcops.env import parallel_env
    from dcops.oversight.calibrated import CalibratedMonitor
    from dcops.oversight.honest_model import honest_model_for

    env = parallel_env(n_windows=N_WINDOWS, cooling="rule", scenario=scenario)
    _, infos = env.reset(seed=TEST_SEEDS[2])
    assert env.posterior_record.monitor is env.monitor  # shared, no shadow
    from_view = PublicRecord(env.team_ids, env.config.window_h)
    assert from_view.monitor is not env.monitor
    whole = CalibratedMonitor(window_h=env.config.window_h, model=honest_model_for("classic"))
    whole.reset(env.team_ids)
    scheduler = PriorityThresholdScheduler()
    while env.agents:
        view = infos["scheduler"]["view"]
        from_view.begin_window_from_view(view)
        np.testing.assert_array_equal(env.posterior_record.feature_matrix(), from_view.feature_matrix())
        assert posterior.probabilities(env.posterior_record) == posterior.probabilities(from_view)
        assert {team: entry["gaming_posterior"] for team, entry in view["teams"].items()} == (
            posterior.probabilities(from_view))
        window, requests = env.episode.window, list(env._window_requests)
        _, _, _, _, infos = env.step({"scheduler": scheduler.decide(view)})
        assert whole.observe(window, requests, env._audits) == env._flags
    assert whole.strengths == env.monitor.strengths and whole.flags == env.monitor.flags
    # The last window's audits reached the shared monitor after its decision time; the features stay that time's.
    np.testing.assert_array_equal(env.posterior_record.feature_matrix(env.posterior_record.team_ids),
                                  from_view.feature_matrix(from_view.team_ids))


def test_a_record_refuses_a_monitor_that_judges_by_other_norms():
    from dcops.oversight.calibrated import CalibratedMonitor, CalibratedSettings
    from dcops.oversight.honest_model import honest_model_for

    same = CalibratedMonitor(window_h=1.5, model=honest_model_for("classic"))
    assert PublicRecord(["team_0"], 1.5, "classic", monitor=same).monitor is same
    for other, window_h, catalogue in [
        (CalibratedMonitor(window_h=1.5, model=honest_model_for("triage")), 1.5, "classic"),
        (CalibratedMonitor(window_h=1.0, model=honest_model_for("classic")), 1.5, "classic"),
        (CalibratedMonitor(window_h=1.5, model=honest_model_for("classic"), settings=CalibratedSettings(scope_windows=2)),
         1.5, "classic"),
    ]:
        assert not PublicRecord.can_share(other, window_h, catalogue)
        with pytest.raises(ValueError, match="monitor: "):
            PublicRecord(["team_0"], window_h, catalogue, monitor=other)


def test_an_env_whose_monitor_was_replaced_keeps_a_shadow():
    """An evaluation may put a monitor of other norms in the environment's place (``evaluation/catalogue_norms``);
    the posterior then keeps its own shadow, judged by the episode's catalogue."""
    from dcops.env import parallel_env
    from dcops.oversight.calibrated import CalibratedMonitor
    from dcops.oversight.honest_model import honest_model_for

    env = parallel_env(n_windows=N_WINDOWS, cooling="rule")
    env.monitor = CalibratedMonitor(window_h=env.config.window_h, model=honest_model_for("triage"))
    env.reset(seed=1)
    assert env.posterior_record.monitor is not env.monitor
    reference = parallel_env(n_windows=N_WINDOWS, cooling="rule")
    reference.reset(seed=1)
    windows = 0
    while env.agents:
        np.testing.assert_array_equal(env.posterior_record.feature_matrix(),
                                      reference.posterior_record.feature_matrix())
        action = {"scheduler": [0] * env.config.max_slots}
        env.step(action)
        reference.step(action)
        windows += 1
    assert windows == N_WINDOWS and env.monitor.strengths  # the replaced monitor was fed every window


def test_a_shared_monitor_must_be_fed_first_and_once():
    """The owner of a shared monitor hands it each window's requests before the record's window begins, and
    never again at the window's end: either slip is an error, not a silently wrong posterior."""
    from dcops.oversight.calibrated import CalibratedMonitor
    from dcops.oversight.honest_model import honest_model_for

    monitor = CalibratedMonitor(window_h=1.5, model=honest_model_for("classic"))
    monitor.reset(["team_0"])
    record = PublicRecord(["team_0"], 1.5, "classic", monitor=monitor)
    requests = [_request(1, "finetune", 0, 3)]
    with pytest.raises(RuntimeError, match="take_requests"):
        record.begin_window(0, requests, [])
    monitor.take_requests(0, requests)
    record.begin_window(0, requests, [])
    with pytest.raises(ValueError, match="take_requests took"):
        monitor.observe(0, requests, [])
    with pytest.raises(ValueError, match="windows must increase"):
        monitor.take_requests(0, [])
    assert monitor.observe(0, [], []) == []


def test_the_wire_forms_round_trip():
    request = _request(1, "finetune", 0, 3, Priority.HIGH)
    assert request_from_public(request.public_dict()) == request
    from dcops.cluster.ledger import AuditRecord

    audit = AuditRecord(request, 2.0, 4, True, 2, True, Priority.MEDIUM, 1.9, "on_time", 10.0)
    assert audit_from_public(audit.public_dict()) == audit


def test_windows_must_come_in_order():
    record = PublicRecord(["team_0"])
    with pytest.raises(RuntimeError):
        record.features("team_0")
    record.begin_window(0, [_request(1, "finetune", 0, 3)], [])
    with pytest.raises(ValueError):
        record.begin_window(0, [], [])


# ------------------------------------------------------------------------------------------ features
def _request(i, job_type, window, deadline, priority=Priority.MEDIUM, flexible=True, duration=1.5, team="team_0"):
    return Request(request_id=f"r{i}", team=team, job_type=job_type, description="", kw=50.0, duration_h=duration,
                   gpus=8, gpu_type="A100", priority=priority, deadline_window=deadline, carbon_flexible=flexible,
                   chargeback=9.0, submitted_window=window)


def test_a_team_stating_levels_its_job_types_never_have_is_more_suspect(posterior):
    # hparam_sweep is never truly above MEDIUM: CRITICAL is a level no honest slip reaches.
    inflated = [_request(i, "hparam_sweep", 0, 6, Priority.CRITICAL, team="team_0") for i in range(3)]
    typical = [_request(10 + i, "hparam_sweep", 0, 6, Priority.LOW, team="team_1") for i in range(3)]
    record = PublicRecord(["team_0", "team_1"])
    record.begin_window(0, inflated + typical, [])
    x = dict(zip(FEATURE_NAMES, record.features("team_0"), strict=True))
    assert x["above_type_range_share"] == 1.0 and x["share_critical"] == 1.0
    assert x["priority_surprisal_max"] == pytest.approx(-np.log(1e-3))
    p = posterior.probabilities(record)
    assert p["team_0"] > 0.5 > p["team_1"]


def test_a_team_without_audits_sits_at_the_honest_audit_values():
    record = PublicRecord(["team_0"])
    record.begin_window(0, [_request(1, "finetune", 0, 3)], [])
    x = dict(zip(FEATURE_NAMES, record.features("team_0"), strict=True))
    assert x["audits_log"] == 0.0
    assert x["audit_overstated_share"] == pytest.approx(0.05)
    assert x["audit_deadline_later_share"] == pytest.approx(0.15)
    assert x["audit_hidden_flexibility_share"] == pytest.approx(0.08)
    assert x["audit_priority_excess_mean"] == 0.0 and x["audit_runtime_log_ratio_mean"] == 0.0


def test_each_team_kind_is_recorded_from_the_truth_and_strategic_teams_are_found(posterior, fresh):
    """The per-kind table reads each team's kind from the evaluator's truth (the environment shuffles the mix
    over the team ids, so the mix's order would mislabel): every episode holds its mix's kinds, cooperative
    teams stay mostly under 0.5 and strategic ones mostly above it once audits arrive."""
    from dcops.evaluation.posterior_training import MIXES, evaluate

    assert fresh.kinds is not None
    for mix, kinds in zip(fresh.mix, fresh.kinds, strict=True):
        assert sorted(kinds) == sorted(MIXES[mix])
    assert (fresh.gaming == (fresh.kinds != "cooperative")).all()
    by_kind = evaluate(posterior, posterior, fresh)["by_kind"]
    assert by_kind["cooperative"]["posterior"][3] < 0.10
    assert by_kind["strategic"]["posterior"][3] > 0.60
    assert sum(row["teams"] for row in by_kind.values()) == fresh.kinds.size
