"""The truth boundary (``dcops.boundary``): the public seed alone reproduces no served episode, the
operator's secret does, and what is computed from private truth reaches a client only after the episode."""

from __future__ import annotations

import re

import pytest

import dcops
from dcops.boundary import DIAGNOSTIC_INFO_KEYS, SEED_BOUND, private_seed, secret_from_text, split_info
from dcops.physics.faults import ChillerTrip

fastapi = pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from dcops.server.app import create_app  # noqa: E402
from dcops.server.config import ServerConfig  # noqa: E402


@pytest.fixture
def client():
    with TestClient(create_app(ServerConfig(db_path=None, episode_secret=secret_from_text("boundary")))) as c:
        yield c


def _stated(view: dict) -> list[tuple]:
    return [(r["request_id"], r["team"], r["job_type"], r["kw"], r["priority"], r["deadline_window"])
            for r in view["pending"]]


def test_private_seeds_depend_on_the_secret_and_stay_in_range():
    a, b = secret_from_text("one"), secret_from_text("two")
    seeds = [private_seed(a, s) for s in range(200)]
    assert all(0 <= s < SEED_BOUND for s in seeds)
    assert len(set(seeds)) == 200  # distinct public seeds, distinct episodes
    assert seeds == [private_seed(a, s) for s in range(200)]  # the operator can replay
    assert sum(x == private_seed(b, s) for s, x in enumerate(seeds)) == 0
    assert sum(x == s for s, x in enumerate(seeds)) == 0  # the public seed is not the seed
    with pytest.raises(ValueError, match="^seed: "):
        private_seed(a, -1)


def test_replaying_the_public_seed_of_a_served_cluster_episode_reproduces_nothing(client):
    # The attack of the review: read the seed from /reset (or /state), replay it with the public code, and
    # read every request's truth and all future arrivals off the replay.
    reply = client.post("/reset", json={"task": "cluster/operations", "seed": 7}).json()
    assert reply["metadata"]["seed"] == 7
    served = _stated(reply["observation"]["view"])
    _, info = dcops.make_env("cluster/operations").reset(seed=7)
    assert _stated(info["view"]) != served
    # The operator, who holds the secret, replays the served episode exactly.
    env_seed = private_seed(client.app.state.config.episode_secret, 7)
    _, info = dcops.make_env("cluster/operations").reset(seed=env_seed)
    assert _stated(info["view"]) == served


def test_two_servers_serve_different_episodes_for_the_same_public_seed():
    views = []
    for secret in (secret_from_text("one operator"), secret_from_text("another")):
        with TestClient(create_app(ServerConfig(db_path=None, episode_secret=secret))) as c:
            views.append(_stated(c.post("/reset", json={"task": "cluster/operations", "seed": 3}).json()
                                 ["observation"]["view"]))
    assert views[0] != views[1]


def test_an_operator_secret_makes_served_episodes_reproducible_across_servers(monkeypatch):
    monkeypatch.setenv("DCOPS_EPISODE_SECRET", "same operator")
    monkeypatch.setenv("DCOPS_DB", "off")
    views = []
    for _ in range(2):
        with TestClient(create_app(ServerConfig.from_env())) as c:
            views.append(_stated(c.post("/reset", json={"task": "cluster/operations", "seed": 3}).json()
                                 ["observation"]["view"]))
    assert views[0] == views[1]


def test_a_cooling_client_never_sees_faults_or_true_inlets_before_the_episode_ends(client):
    task = "cooling/cascading_chiller_failure"
    reply = client.post("/reset", json={"task": task, "seed": 4, "options": {"n_steps": 5}}).json()
    assert not DIAGNOSTIC_INFO_KEYS["cooling"] & set(reply["metadata"]["info"]), reply["metadata"]["info"]
    headers = {"X-Session-Id": reply["session_id"]}
    replies = []
    while not reply["done"]:
        action = client.get("/suggest", headers=headers).json()["action"]
        reply = client.post("/step", json={"action": action}, headers=headers).json()
        replies.append(reply)
    for r in replies:
        assert not DIAGNOSTIC_INFO_KEYS["cooling"] & set(r["metadata"]["info"])
        assert ("diagnostics" in r["metadata"]) == r["done"]
    diagnostics = replies[-1]["metadata"]["diagnostics"]
    assert "faults" in diagnostics["reset"] and len(diagnostics["steps"]) == len(replies) == 5
    assert all(len(step["inlet_c"]) == 4 for step in diagnostics["steps"])
    # The withheld values are the environment's own (the operator's replay gives the same true inlets).
    env = dcops.make_env(task, n_steps=5, diagnostics=True)
    _, info = env.reset(seed=private_seed(client.app.state.config.episode_secret, 4))
    assert diagnostics["reset"]["faults"] == info["faults"]


def test_split_info_keeps_every_key_on_exactly_one_side():
    info = {"inlet_c": [30.0], "faults": [], "pue": 1.3, "it_kw": 10.0}
    public, diagnostics = split_info("cooling", info)
    assert public == {"pue": 1.3, "it_kw": 10.0}
    assert diagnostics == {"inlet_c": [30.0], "faults": []}


def test_an_incident_names_the_limit_crossed_never_the_true_inlet():
    env = dcops.parallel_env(cooling="rule", n_windows=2, inlet_limit_c=27.0, render_mode="ansi",
                             faults=(ChillerTrip(0.0, 0), ChillerTrip(0.0, 1)))
    _, infos = env.reset(seed=1)
    accept = [{"request_id": r["request_id"], "decision": "ACCEPT"} for r in infos["scheduler"]["view"]["pending"]]
    _, _, _, _, infos = env.step({"scheduler": accept})
    last = infos["scheduler"]["view"]["last_window"]
    assert last["incident"] and last["incident_reasons"] == ["an inlet above 27 °C"]
    assert infos["scheduler"]["incident_reasons"] == ["an inlet above 27 °C"]
    assert "fraction_above_27c" not in last
    rendered = env.render()
    assert "INCIDENT: an inlet above 27 °C" in rendered and not re.search(r"inlet \d+\.\d °C above", rendered)
    # The evaluator still has the true figure, after the fact.
    detail = env.episode.window_scores[0].as_dict()["incident_detail"]
    assert len(detail) == 1 and float(re.search(r"([\d.]+) °C above", detail[0]).group(1)) > 27.0


def test_a_client_can_play_the_version_1_game_and_gets_its_name(client):
    reply = client.post("/reset", json={"task": "cluster/operations", "seed": 2,
                                        "options": {"game_version": 1, "n_windows": 2}}).json()
    headers = {"X-Session-Id": reply["session_id"]}
    assert client.app.state.sessions.get(reply["session_id"]).episode.env.unwrapped.parallel.metadata["name"] == \
        "datacenter_ops_v1"
    bad = client.post("/reset", json={"task": "cluster/operations", "options": {"game_version": 7}}, headers=headers)
    assert bad.status_code == 422 and bad.json()["field"].startswith("options.game_version")


def test_a_family_with_nothing_to_withhold_gets_no_diagnostics_block(client):
    reply = client.post("/reset", json={"task": "cluster/operations", "seed": 1, "options": {"n_windows": 1}}).json()
    final = client.post("/step", json={"action": {"decisions": []}},
                        headers={"X-Session-Id": reply["session_id"]}).json()
    assert final["done"] and "diagnostics" not in final["metadata"]
