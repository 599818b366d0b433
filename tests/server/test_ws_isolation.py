"""Sessions are isolated: 32 concurrent WebSocket clients of a real server, on different tasks and seeds, get
exactly the trajectories (observations, rewards, ends) that the same actions give in-process."""

from __future__ import annotations

import asyncio
import json

import numpy as np
from websockets.asyncio.client import connect

import dcops

N_CLIENTS = 32
TASKS = [
    ("cooling/multi_zone_sensor_drift", {"n_steps": 24}),
    ("cooling/cascading_chiller_failure", {"n_steps": 24}),
    ("placement/deadline_crunch", {}),
    ("placement/reserve_large_gpu", {}),
    ("queue/weighted_tardiness", {"n_jobs": 30}),
]
if "cluster/operations" in dcops.tasks():  # served as soon as the cluster task is registered
    TASKS.append(("cluster/operations", {"n_windows": 4}))


def _action(task: str, client: int, k: int, n_actions: int) -> dict:
    """A deterministic, varied action (placement indices are often invalid on purpose)."""
    family = task.split("/")[0]
    if family == "cooling":
        zones = 3 if "sensor_drift" in task else 4
        fans = [0.3 + 0.05 * ((client + k + z) % 12) for z in range(zones)]
        supply = [18.0 + ((k + z) % 7) for z in range(zones)]
        return {"setpoints": fans + supply + [7.0 + (client + k) % 8, float(k % 2)]}
    if family == "placement":
        return {"type": "index", "index": (7 * k + client) % n_actions}
    if family == "cluster":
        return {"codes": [(client + k + i) % 6 for i in range(48)]}
    return {"slot": (k + client) % 3}


def _env_action(task: str, action: dict):
    family = task.split("/")[0]
    if family == "cooling":
        return np.asarray(action["setpoints"], dtype=np.float64)
    if family == "cluster":
        return np.asarray(action["codes"], dtype=np.int64)
    return action["index"] if family == "placement" else action["slot"]


def _comparable(task: str, observation):
    if task.startswith("cluster"):
        return {key: value.tolist() for key, value in observation.items()}
    return observation["jobs"].tolist() if task.startswith("queue") else observation.tolist()


def _served_comparable(task: str, observation: dict):
    if task.startswith("cluster"):
        return observation["arrays"]
    return observation["jobs"] if task.startswith("queue") else observation["vector"]


def in_process(task: str, options: dict, seed: int, client: int) -> list[tuple]:
    env = dcops.make_env(task, **{k: v for k, v in options.items()})
    observation, _ = env.reset(seed=seed)
    n_actions = int(getattr(env.action_space, "n", 0))
    trajectory = [(_comparable(task, observation), None, False)]
    done, k = False, 0
    while not done:
        action = _action(task, client, k, n_actions)
        observation, reward, terminated, truncated, _ = env.step(_env_action(task, action))
        done = terminated or truncated
        trajectory.append((_comparable(task, observation), float(reward), done))
        k += 1
    return trajectory


async def served(url: str, task: str, options: dict, seed: int, client: int, n_actions: int) -> list[tuple]:
    async with connect(url + "/ws", max_size=None) as ws:
        await ws.send(json.dumps({"type": "reset", "data": {"task": task, "seed": seed, "options": options}}))
        reply = json.loads(await ws.recv())
        assert reply["type"] == "observation", reply
        data = reply["data"]
        trajectory = [(_served_comparable(task, data["observation"]), None, False)]
        k = 0
        while not data["done"]:
            await ws.send(json.dumps({"type": "step", "data": _action(task, client, k, n_actions)}))
            reply = json.loads(await ws.recv())
            assert reply["type"] == "observation", reply
            data = reply["data"]
            trajectory.append((_served_comparable(task, data["observation"]), data["reward"], data["done"]))
            k += 1
        await ws.send(json.dumps({"type": "close"}))
    return trajectory


def test_32_concurrent_websocket_clients_get_their_in_process_trajectories(live_server):
    plans = [(*TASKS[i % len(TASKS)], 1000 + i, i) for i in range(N_CLIENTS)]
    sizes = {task: int(getattr(dcops.make_env(task).action_space, "n", 0)) for task, _ in TASKS}

    async def run_all():
        return await asyncio.gather(*(served(live_server.ws_url, task, options, seed, client, sizes[task])
                                      for task, options, seed, client in plans))

    results = asyncio.run(run_all())
    for (task, options, seed, client), trajectory in zip(plans, results, strict=True):
        expected = in_process(task, options, live_server.env_seed(seed), client)
        assert len(trajectory) == len(expected), (task, seed)
        assert trajectory == expected, (task, seed)
