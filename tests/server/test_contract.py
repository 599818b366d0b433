"""The wire contract over HTTP (in-process app): endpoints, reply shapes, sessions, every task reachable."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import TypeAdapter

import dcops
from dcops.boundary import private_seed
from dcops.cooling_env import run_controller
from dcops.models import EpisodeState, Observation
from dcops.server.adapters import served_tasks

OBSERVATION = TypeAdapter(Observation)


def _sid(reply) -> dict[str, str]:
    return {"X-Session-Id": reply.json()["session_id"]}


def test_health_reports_healthy(client):
    reply = client.get("/health")
    assert reply.status_code == 200
    assert reply.json()["status"] == "healthy"


def test_app_version_is_1_x_for_openenv(client):
    assert client.get("/openapi.json").json()["info"]["version"].startswith("1.")


def test_metadata_lists_every_registered_task_with_its_family(client):
    body = client.get("/metadata").json()
    assert body["name"] == "dcops" and body["description"]
    assert [t["id"] for t in body["tasks"]] == dcops.tasks() == served_tasks()
    assert all(t["family"] == t["id"].split("/")[0] for t in body["tasks"])


def test_schema_has_action_observation_and_state(client):
    body = client.get("/schema").json()
    assert {"action", "observation", "state"} <= set(body)
    assert set(body["actions_by_family"]) >= {"cooling", "placement", "queue"}
    narrowed = client.get("/schema", params={"task": "cooling/single_zone_recovery"}).json()["action"]
    assert "fan_speed" in narrowed["properties"]


@pytest.mark.parametrize("task", dcops.tasks())
def test_every_task_resets_steps_and_reports_state_over_http(client, task):
    reset = client.post("/reset", json={"task": task, "seed": 11})
    assert reset.status_code == 200, reset.text
    body = reset.json()
    assert set(body) >= {"observation", "reward", "done", "metadata", "session_id"}
    assert body["reward"] is None and body["done"] is False
    assert reset.headers["X-Session-Id"] == body["session_id"]
    OBSERVATION.validate_python(body["observation"])
    headers = _sid(reset)
    action = client.get("/suggest", headers=headers).json()["action"]
    step = client.post("/step", json={"action": action}, headers=headers)
    assert step.status_code == 200, step.text
    assert isinstance(step.json()["reward"], float)
    OBSERVATION.validate_python(step.json()["observation"])
    state = EpisodeState.model_validate(client.get("/state", headers=headers).json())
    assert (state.task, state.seed, state.step_count) == (task, 11, 1)
    assert state.observation == step.json()["observation"]


def test_a_curl_user_plays_a_whole_episode_with_the_session_header(client):
    reset = client.post("/reset", json={"task": "cooling/single_zone_recovery", "seed": 3})
    headers = _sid(reset)
    action = {"fan_speed": 0.9, "supply_setpoint_c": 18, "chw_setpoint_c": 8, "economiser_on": True}
    n_steps = reset.json()["observation"]["n_steps"]
    replies = [client.post("/step", json={"action": action}, headers=headers).json() for _ in range(n_steps)]
    assert [r["done"] for r in replies] == [False] * (n_steps - 1) + [True]
    assert 0.0 <= replies[-1]["metadata"]["info"]["score"] <= 1.0
    over = client.post("/step", json={"action": action}, headers=headers)
    assert over.status_code == 409 and over.json()["code"] == "EPISODE_OVER"
    again = client.post("/reset", json={"seed": 4}, headers=headers)  # same session, same task
    assert again.status_code == 200 and again.json()["session_id"] == headers["X-Session-Id"]
    assert again.json()["metadata"]["task"] == "cooling/single_zone_recovery"


def test_the_session_id_is_accepted_as_a_query_parameter(client):
    sid = client.post("/reset", json={"task": "placement/cost_pressure"}).json()["session_id"]
    reply = client.post(f"/step?session_id={sid}", json={"action": {"type": "defer", "rationale": "wait"}})
    assert reply.status_code == 200
    assert client.get("/state", params={"session_id": sid}).json()["step_count"] == 1


def test_sessions_do_not_share_episodes(client):
    a = _sid(client.post("/reset", json={"task": "cooling/single_zone_recovery", "seed": 1}))
    b = _sid(client.post("/reset", json={"task": "placement/deadline_crunch", "seed": 1}))
    client.post("/step", json={"action": {"type": "defer"}}, headers=b)
    assert client.get("/state", headers=a).json()["step_count"] == 0
    assert client.get("/state", headers=b).json()["step_count"] == 1


def test_reset_options_reach_the_environment(client):
    reply = client.post("/reset", json={"task": "cooling/multi_zone_sensor_drift", "seed": 2, "n_steps": 3})
    assert reply.json()["observation"]["n_steps"] == 3
    queue = client.post("/reset", json={"task": "queue/weighted_tardiness", "options": {"n_jobs": 12}})
    assert queue.status_code == 200
    assert queue.json()["metadata"]["info"]["instance"].startswith("stream-")


def test_the_http_baseline_scores_what_the_controller_scores_in_process(client):
    from dcops.agents.cooling import RuleBasedController

    task, seed = "cooling/cascading_chiller_failure", 5
    headers = _sid(client.post("/reset", json={"task": task, "seed": seed}))
    reply = {"done": False}
    while not reply["done"]:
        action = client.get("/suggest", headers=headers).json()["action"]
        reply = client.post("/step", json={"action": action}, headers=headers).json()
    # The operator replays a served episode with the server's secret (dcops.boundary).
    env_seed = private_seed(client.app.state.config.episode_secret, seed)
    expected = run_controller(dcops.make_env(task), RuleBasedController.for_task(task), env_seed)
    assert reply["metadata"]["info"]["score"] == pytest.approx(expected.score, abs=1e-12)
    assert client.get("/state", headers=headers).json()["total_reward"] == pytest.approx(expected.total_reward)


def test_the_raw_setpoint_vector_is_the_gymnasium_action(client):
    task, seed = "cooling/multi_zone_sensor_drift", 9
    headers = _sid(client.post("/reset", json={"task": task, "seed": seed}))
    setpoints = [0.5, 0.6, 0.7, 22.0, 23.0, 24.0, 14.0, 1.0]
    served = client.post("/step", json={"action": {"setpoints": setpoints}}, headers=headers).json()
    env = dcops.make_env(task)
    env.reset(seed=private_seed(client.app.state.config.episode_secret, seed))
    obs, reward, *_ = env.step(np.asarray(setpoints))
    assert served["observation"]["vector"] == obs.tolist()
    assert served["reward"] == reward


def test_closing_a_session_forgets_it(client):
    headers = _sid(client.post("/reset", json={}))
    assert client.delete("/session", headers=headers).status_code == 200
    assert client.get("/state", headers=headers).status_code == 404


def test_root_redirects_to_the_console_which_is_served(client):
    reply = client.get("/", follow_redirects=False)
    assert reply.status_code in (302, 307) and reply.headers["location"] == "/web/"
    page = client.get("/web/")
    assert page.status_code == 200 and "dcops" in page.text
    assert client.get("/web/app.js").status_code == 200


def test_mcp_answers_json_rpc_even_to_an_empty_body(client):
    empty = client.post("/mcp", content=b"")
    assert empty.status_code == 200 and empty.json()["jsonrpc"] == "2.0" and "error" in empty.json()
    assert client.post("/mcp", json={}).json()["error"]["code"] == -32600
    init = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}).json()
    assert init["result"]["serverInfo"]["name"] == "dcops"
    tools = client.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).json()
    from openenv.core.harness.rollout import RESERVED_TOOL_NAMES

    names = {t["name"] for t in tools["result"]["tools"]}
    assert names == {"start_episode", "play_action", "episode_state", "suggest_action", "close_session"}
    assert not names & RESERVED_TOOL_NAMES  # OpenEnv's harness refuses a server listing these
    assert client.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code == 202


def test_mcp_errors_carry_the_json_rpc_2_codes(client):
    """JSON-RPC 2.0: −32700 parse error (including a body that is not UTF-8), −32600 invalid request, −32601
    method not found (a name that only starts like a known one too), −32602 invalid params."""
    def error(**request):
        return client.post("/mcp", **request).json()["error"]["code"]

    assert error(content=b"{not json") == -32700 and error(content=b"\xff\xfe") == -32700
    assert error(json=[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]) == -32600
    assert error(json={"jsonrpc": "2.0", "id": 1, "method": "tools/listing"}) == -32601
    assert error(json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1]}) == -32602
    ping = client.post("/mcp", json={"jsonrpc": "2.0", "id": "p", "method": "ping"}).json()
    assert ping == {"jsonrpc": "2.0", "id": "p", "result": {}}


def test_mcp_tools_play_an_episode(client):
    def call(name, arguments, rid):
        body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
        return client.post("/mcp", json=body).json()["result"]

    reset = call("start_episode", {"task": "queue/weighted_tardiness", "seed": 1, "options": {"n_jobs": 10}}, 1)
    assert reset["isError"] is False
    sid = reset["structuredContent"]["session_id"]
    step = call("play_action", {"session_id": sid, "action": {"slot": 0}, "expected_step": 0}, 2)
    assert step["isError"] is False and isinstance(step["structuredContent"]["reward"], float)
    again = call("play_action", {"session_id": sid, "action": {"slot": 0}, "expected_step": 0}, 3)
    assert again["structuredContent"]["metadata"]["replayed"] is True
    assert call("episode_state", {"session_id": sid}, 4)["structuredContent"]["step_count"] == 1
    bad = call("play_action", {"session_id": sid, "action": {"slot": "first"}}, 5)
    assert bad["isError"] is True and bad["structuredContent"]["field"] == "action.slot"
    missing = call("play_action", {"action": {"slot": 0}}, 6)["structuredContent"]  # the SDK validates arguments
    assert missing["code"] == "VALIDATION_ERROR" and missing["field"] == "session_id"
    assert "POST /" not in missing["message"]
    assert call("close_session", {"session_id": sid}, 7)["structuredContent"] == {"closed": sid}
    gone = call("episode_state", {"session_id": sid}, 8)
    assert gone["isError"] is True and gone["structuredContent"]["code"] == "SESSION_NOT_FOUND"
    old = client.post("/mcp", json={"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                                    "params": {"name": "step", "arguments": {}}}).json()
    assert "unknown tool" in old["error"]["message"]


def test_generated_placement_instances_follow_the_seed(client):
    def first_jobs(seed):
        reply = client.post("/reset", json={"task": "placement/generated", "seed": seed}).json()
        return reply["observation"]

    assert first_jobs(3) == first_jobs(3)
    assert first_jobs(3) != first_jobs(4)


def test_a_websocket_client_may_ask_for_the_reference_action(client):
    with client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "reset", "data": {"task": "queue/weighted_tardiness", "seed": 2}})
        assert ws.receive_json()["type"] == "observation"
        ws.send_json({"type": "suggest"})
        frame = ws.receive_json()
        assert frame["type"] == "suggestion" and set(frame["data"]["action"]) == {"slot"}


def test_the_docs_page_uses_the_assets_this_server_serves(client):
    page = client.get("/docs")
    assert page.status_code == 200 and "/docs-assets/swagger-ui-bundle.js" in page.text
    assert "cdn" not in page.text.lower()
    asset = client.get("/docs-assets/swagger-ui-bundle.js")
    assert asset.status_code == 200 and len(asset.content) > 100_000
    redoc = client.get("/redoc")
    assert redoc.status_code == 200 and "/docs-assets/redoc.standalone.js" in redoc.text
    assert "fonts.googleapis" not in redoc.text and client.get("/docs-assets/redoc.standalone.js").status_code == 200


def test_the_mcp_tools_schemas_come_from_their_signatures_and_bad_arguments_name_the_field(client):
    tools = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).json()["result"]["tools"]
    play = next(t for t in tools if t["name"] == "play_action")
    assert set(play["inputSchema"]["required"]) == {"session_id", "action"}
    assert "outputSchema" in play and play["description"].startswith("Play one action")
    body = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "start_episode", "arguments": {"task": "queue/weighted_tardiness", "seed": -1}}}
    bad = client.post("/mcp", json=body).json()["result"]
    assert bad["isError"] is True and bad["structuredContent"]["field"] == "seed"
    assert client.get("/sessions").json()["open"] == 0  # refused before it took a session
