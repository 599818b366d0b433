"""Sessions and their manager (``dcops.server.sessions``) driven directly, with a hand-turned clock.

Every expectation is the module docstring's: which sessions expire (HTTP ones, idle past the timeout; never a
WebSocket), what the counters and ``GET /sessions`` report, how long an evicted id is remembered, that a reset of
another task gets that task's environment, that a new reset abandons the running episode in the store, and which
HTTP status each client error carries.
"""

from __future__ import annotations

import pytest

from dcops.server.sessions import HTTP, WEBSOCKET, ApiError, Session, SessionManager
from dcops.server.store import EpisodeStore

TASK = "cooling/single_zone_recovery"
OTHER_TASK = "cooling/multi_zone_sensor_drift"  # sorts before TASK
ACTION = {"fan_speed": 0.8, "supply_setpoint_c": 19.0, "chw_setpoint_c": 9.0, "economiser_on": False}
SECRET = b"sessions-by-hand"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _manager(max_sessions: int = 8, idle_timeout_s: float = 60.0, store: EpisodeStore | None = None,
             clock: Clock | None = None) -> SessionManager:
    return SessionManager(max_sessions, idle_timeout_s, store, TASK, SECRET, clock=clock or Clock())


def _refused(call) -> ApiError:
    """The client error ``call()`` raises."""
    with pytest.raises(ApiError) as caught:
        call()
    return caught.value


def test_a_new_manager_has_counted_nothing():
    summary = _manager(max_sessions=3, idle_timeout_s=42.0).summary()
    assert summary == {"capacity": 3, "open": 0, "running": 0, "finished": 0, "websocket": 0, "evictable": 0,
                       "idle_timeout_s": 42.0,
                       "totals": {"created": 0, "expired": 0, "evicted": 0, "refused": 0}}


def test_the_summary_counts_running_finished_and_websocket_sessions():
    manager = _manager()
    running = manager.create(HTTP)
    running.reset(seed=1)
    manager.create(HTTP)  # never reset: finished (no episode running)
    manager.create(WEBSOCKET)  # a socket, never reset
    summary = manager.summary()
    assert (summary["open"], summary["running"], summary["finished"], summary["websocket"]) == (3, 1, 2, 1)
    assert summary["evictable"] == 2  # the two HTTP sessions; a socket is never evicted
    assert summary["totals"]["created"] == 3


def test_idle_http_sessions_expire_and_are_counted_once_each_while_sockets_stay():
    clock = Clock()
    manager = _manager(idle_timeout_s=60.0, clock=clock)
    idle = [manager.create(HTTP), manager.create(HTTP)]
    socket = manager.create(WEBSOCKET)
    clock.now += 60.0  # exactly the timeout: not yet idle past it
    assert manager.reap_idle() == []
    clock.now += 0.5
    assert sorted(manager.reap_idle()) == sorted(s.id for s in idle)
    assert manager.counts["expired"] == 2
    assert not socket.closed and len(manager) == 1  # idle as long, still open: its socket's timeout ends it
    assert all(s.closed for s in idle)


def test_a_session_found_expired_on_use_is_closed_counted_and_reported_as_not_found():
    clock = Clock()
    manager = _manager(idle_timeout_s=10.0, clock=clock)
    session = manager.create(HTTP)
    clock.now += 11.0
    with pytest.raises(ApiError) as caught:
        manager.get(session.id)
    assert (caught.value.status, caught.value.code) == (404, "SESSION_NOT_FOUND")
    assert "expired after being idle" in caught.value.message
    assert manager.counts["expired"] == 1 and session.closed and len(manager) == 0


def test_evicted_ids_are_remembered_up_to_the_limit_then_forgotten_oldest_first(monkeypatch):
    monkeypatch.setattr(SessionManager, "FORGET_AFTER", 2)
    manager = _manager(max_sessions=1)
    ids = [manager.create(HTTP).id for _ in range(4)]  # each new one evicts the one before: 3 evictions
    assert manager.counts["evicted"] == 3
    codes = []
    for session_id in ids[:3]:
        with pytest.raises(ApiError) as caught:
            manager.get(session_id)
        codes.append(caught.value.code)
    assert codes == ["SESSION_NOT_FOUND", "SESSION_EVICTED", "SESSION_EVICTED"]  # two remembered, not one


def test_a_reset_of_another_task_plays_that_task_not_the_previous_environment():
    manager = _manager()
    switched, fresh = manager.create(HTTP), manager.create(HTTP)
    switched.reset(task=OTHER_TASK, seed=5)
    switched_reply = switched.reset(task=TASK, seed=5)
    fresh_reply = fresh.reset(task=TASK, seed=5)
    assert switched_reply["observation"] == fresh_reply["observation"]
    assert switched.step(ACTION)["observation"] == fresh.step(ACTION)["observation"]


def test_a_new_reset_abandons_the_running_episode_in_the_store(tmp_path):
    store = EpisodeStore(tmp_path / "episodes.db")
    try:
        session = _manager(store=store).create(HTTP)
        session.reset(seed=1)
        session.step(ACTION)
        session.reset(seed=2)
        assert [e["status"] for e in store.episodes()] == ["abandoned", "running"]
    finally:
        store.close()


def test_a_reset_without_a_seed_draws_one_that_replays_the_episode():
    session = _manager().create(HTTP)
    seeds = [session.reset()["metadata"]["seed"] for _ in range(5)]
    assert all(0 <= seed < 2**31 for seed in seeds)  # a 31-bit seed, as every seeded client accepts
    replay = _manager().create(HTTP)
    assert replay.reset(seed=seeds[-1])["observation"] == session.state()["observation"]


def test_each_client_error_carries_its_status_and_code():
    session = _manager().create(HTTP)
    cases = [
        (lambda: session.step(ACTION), 409, "NOT_RESET"),
        (lambda: session.suggest(), 409, "NOT_RESET"),
        (lambda: session.reset(task="cooling/no_such_task"), 422, "VALIDATION_ERROR"),
        (lambda: session.reset(options={"no_such_option": 1}), 422, "VALIDATION_ERROR"),
    ]
    for call, status, code in cases:
        with pytest.raises(ApiError) as caught:
            call()
        assert (caught.value.status, caught.value.code) == (status, code)
    session.reset(seed=3)
    error = _refused(lambda: session.step(["not", "an", "object"]))
    assert (error.status, error.code, error.field) == (422, "VALIDATION_ERROR", "action")
    error = _refused(session.scorecard)
    assert (error.status, error.code) == (409, "EPISODE_RUNNING")


def test_a_stale_step_is_refused_even_for_an_action_json_cannot_write():
    session = _manager().create(HTTP)
    session.reset(seed=3)
    session.step(ACTION)
    circular: dict = {}
    circular["self"] = circular
    with pytest.raises(ApiError) as caught:
        session.step(circular, expected_step=0)
    assert (caught.value.status, caught.value.code) == (409, "STALE_STEP")


def test_a_session_is_a_plain_session_object_by_default():
    manager = _manager()
    session = manager.create(HTTP)
    assert isinstance(session, Session) and session.transport == HTTP and not session.closed


def test_fresh_seeds_are_drawn_from_the_whole_31_bit_range():
    session = _manager().create(HTTP)
    seeds = [session.reset()["metadata"]["seed"] for _ in range(12)]
    assert len(set(seeds)) == 12 and max(seeds) > 2**20


def test_a_switch_back_to_an_earlier_task_plays_that_task_too():
    manager = _manager()
    switched, fresh = manager.create(HTTP), manager.create(HTTP)
    switched.reset(task=TASK, seed=6)
    assert switched.reset(task=OTHER_TASK, seed=6)["observation"] == fresh.reset(task=OTHER_TASK, seed=6)["observation"]


@pytest.mark.parametrize(("method", "error"), [("make_env", ValueError), ("make_env", TypeError),
                                               ("reset", ValueError), ("reset", TypeError)])
def test_options_the_environment_refuses_are_a_validation_error_naming_options(monkeypatch, method, error):
    from dcops.server.adapters import CoolingAdapter

    def refuse(*args, **kwargs):
        raise error("no such combination")

    monkeypatch.setattr(CoolingAdapter, method, refuse)
    session = _manager().create(HTTP)
    with pytest.raises(ApiError) as caught:
        session.reset(seed=1)
    assert (caught.value.status, caught.value.code, caught.value.field) == (422, "VALIDATION_ERROR", "options")
    assert caught.value.message == "options: no such combination"


def test_a_step_after_the_end_is_refused_as_over():
    session = _manager().create(HTTP)
    session.reset(seed=1, options={"n_steps": 1})
    assert session.step(ACTION)["done"] is True
    for call in (lambda: session.step(ACTION), session.suggest):
        error = _refused(call)
        assert (error.status, error.code) == (409, "EPISODE_OVER")


def test_a_retry_is_recognised_by_its_action_whatever_the_key_order_and_only_by_it():
    session = _manager().create(HTTP)
    session.reset(seed=2)
    first = session.step(ACTION, expected_step=0)
    reordered = dict(reversed(list(ACTION.items())))
    again = session.step(reordered, expected_step=0)  # the same action, its keys in another order: a retry
    assert again["metadata"]["replayed"] is True and again["observation"] == first["observation"]
    other = {**ACTION, "fan_speed": 0.9}  # another action claiming the same step: not a retry
    with pytest.raises(ApiError) as caught:
        session.step(other, expected_step=0)
    assert (caught.value.status, caught.value.code) == (409, "STALE_STEP")
    assert session.state()["step_count"] == 1


def test_a_session_is_found_only_on_its_own_transport():
    manager = _manager()
    socket, http = manager.create(WEBSOCKET), manager.create(HTTP)
    for session_id, transport in ((socket.id, HTTP), (http.id, WEBSOCKET)):
        with pytest.raises(ApiError) as caught:
            manager.get(session_id, transport)
        assert (caught.value.status, caught.value.code) == (404, "SESSION_NOT_FOUND")
    assert manager.get(socket.id, WEBSOCKET) is socket and manager.get(http.id) is http


def test_an_action_the_environment_refuses_is_a_validation_error_naming_the_action(monkeypatch):
    from dcops.server.adapters import CoolingAdapter

    def refuse(self, episode, env_action):
        raise ValueError("fan_speed[0] is not finite")

    session = _manager().create(HTTP)
    session.reset(seed=1)
    monkeypatch.setattr(CoolingAdapter, "play", refuse)
    with pytest.raises(ApiError) as caught:
        session.step(ACTION)
    assert (caught.value.status, caught.value.code, caught.value.field) == (422, "VALIDATION_ERROR", "action")
    assert session.state()["step_count"] == 0  # nothing was played


def test_the_diagnostics_are_withheld_until_the_end_then_given_reset_first():
    """The module docstring and ``dcops.boundary``: a cooling episode's evaluator diagnostics (true inlets, the
    fault list) reach no reply while it runs; the last reply carries them, the reset's first, then each step's."""
    session = _manager().create(HTTP)
    reply = session.reset(seed=1, options={"n_steps": 2})
    assert "inlet_c" not in reply["metadata"]["info"] and "faults" not in reply["metadata"]["info"]
    first = session.step(ACTION)
    assert "inlet_c" not in first["metadata"]["info"] and "diagnostics" not in first["metadata"]
    last = session.step(ACTION)
    diagnostics = last["metadata"]["diagnostics"]
    assert "faults" in diagnostics["reset"] and "inlet_c" in diagnostics["reset"]
    assert len(diagnostics["steps"]) == 2 and all("violation_minutes_27" in s for s in diagnostics["steps"])
    assert "inlet_c" not in last["metadata"]["info"]


def test_the_state_before_any_reset_is_an_empty_episode():
    session = _manager().create(HTTP)
    assert session.state() == {"session_id": session.id, "step_count": 0, "done": False, "total_reward": 0.0}


def test_a_refusal_is_counted_once_and_closing_says_whether_there_was_a_session():
    manager = _manager(max_sessions=1)
    manager.create(WEBSOCKET)  # the only slot, and a socket is never evicted
    with pytest.raises(ApiError) as caught:
        manager.create(HTTP)
    assert (caught.value.status, caught.value.code) == (503, "CAPACITY_REACHED")
    assert manager.counts["refused"] == 1 and manager.saturated
    http = _manager().create(HTTP)
    other = _manager()
    session = other.create(HTTP)
    assert other.close(session.id) is True and other.close(session.id) is False and other.close(http.id) is False


def test_fresh_seeds_reach_the_top_half_of_the_31_bit_range():
    session = _manager().create(HTTP)
    seeds = [session.reset()["metadata"]["seed"] for _ in range(40)]
    assert max(seeds) >= 2**30 and max(seeds) < 2**31  # all below 2^30 has probability 2^-40


def test_a_reset_with_other_options_builds_the_environment_they_ask_for():
    session = _manager().create(HTTP)
    assert session.reset(seed=1, options={"n_steps": 2})["observation"]["n_steps"] == 2
    assert session.reset(seed=1, options={"n_steps": 5})["observation"]["n_steps"] == 5


def test_a_retry_is_only_of_the_last_step_and_only_with_its_action():
    session = _manager().create(HTTP)
    session.reset(seed=2)
    session.step(ACTION, expected_step=0)
    second = session.step(ACTION, expected_step=1)
    again = session.step(ACTION, expected_step=1)  # a retry of step 2 (not only of the first step)
    assert again["metadata"]["replayed"] is True and again["observation"] == second["observation"]
    for expected, action in ((0, ACTION), (1, {**ACTION, "fan_speed": 0.7}), (1, {**ACTION, "fan_speed": 0.9})):
        with pytest.raises(ApiError) as caught:  # an older step, or another action: stale, whatever sorts first
            session.step(action, expected_step=expected)
        assert caught.value.code == "STALE_STEP", (expected, action)
    assert session.state()["step_count"] == 2


def test_close_all_closes_every_session():
    manager = _manager()
    sessions = [manager.create(HTTP), manager.create(WEBSOCKET), manager.create(HTTP)]
    manager.close_all()
    assert len(manager) == 0 and all(s.closed for s in sessions)
