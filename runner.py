"""Drive any policy (or language model) against a running dcops server, over HTTP or WebSocket.

The runner is the thin adapter between a policy written for the in-process API and the wire protocol: it
resets a served task, turns each observation into what the policy reads, turns the policy's answer into a wire
action, and steps until the episode ends. Policies by task family:

- ``cluster/*``: an object with ``decide(view) -> [{"request_id", "decision", "defer_to_window"?}]`` (every
  baseline scheduler in ``dcops.agents.schedulers``, the LLM scheduler), given the observation's public ``view``;
- ``placement/*``: an object with ``act(PlacementObservation) -> Place | Defer`` (the heuristics, the linear
  policy, the LLM placement policy), given the observation's ``state`` rebuilt as a
  :class:`~dcops.cluster.placement.observation.PlacementObservation`;
- ``queue/*``: an object with ``rank(waiting) -> waiting in run order`` or a policy name of
  :func:`dcops.cluster.queue.rank` (``"atc"``, ``"learned"``…): the first job of the order runs next;
- any family: an object with ``act_wire(observation) -> action dict`` is given the wire observation as is (a
  policy that speaks the protocol itself, e.g. a remote agent).

The server validates every action: a malformed one comes back as :class:`~dcops.client.ServerError` naming the
field, and the episode stays usable. Command line: ``dcops run-policy --url http://127.0.0.1:8000 --task
placement/deadline_crunch --policy dcops.cluster.placement.heuristics:EarliestDeadlineFirst --seeds 0 1 2``.
"""

from __future__ import annotations

import argparse
import importlib
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from dcops.command import Command

WireAction = dict[str, Any]


@dataclass(frozen=True)
class EpisodeRun:
    """One episode played over the wire: the task, seed, the server's episode id, steps, summed reward."""

    task: str
    seed: int | None
    episode_id: str
    steps: int
    total_reward: float


def load_policy(spec: str, **kwargs: Any) -> Any:
    """``"package.module:name"`` (``name`` may be dotted) → the policy: ``name`` itself when it already answers
    (``decide``/``act``/``rank``/``act_wire``), else ``name(**kwargs)`` (a class or factory).

    :raises ValueError: naming what is wrong with ``spec`` (its form, the module, the attribute).
    """
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise ValueError(f"policy must look like 'package.module:name', got {spec!r}")
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(f"policy {spec!r}: cannot import module {module_name!r} ({error})") from error
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ValueError(f"policy {spec!r}: module {module_name!r} has no {attribute!r}") from None
    if _is_policy(target):
        return target
    if not callable(target):
        raise ValueError(f"policy {spec!r}: {attribute!r} is neither a policy nor callable")
    return target(**kwargs)


def _is_policy(obj: Any) -> bool:
    """An instance that already answers (``decide``/``act``/``rank``/``act_wire``) is used as is."""
    return not isinstance(obj, type) and any(hasattr(obj, m) for m in ("decide", "act", "rank", "act_wire"))


def wire_policy(task: str, policy: Any) -> Callable[[dict[str, Any]], WireAction]:
    """The function observation → wire action that runs ``policy`` on ``task`` (module docstring)."""
    if hasattr(policy, "act_wire"):
        return policy.act_wire
    family = task.partition("/")[0]
    if family == "cluster" and hasattr(policy, "decide"):
        return lambda observation: {"decisions": policy.decide(_cluster_view(observation))}
    if family == "placement" and hasattr(policy, "act"):
        return lambda observation: _placement_action(policy, observation)
    if family == "queue" and (isinstance(policy, str) or hasattr(policy, "rank")):
        return lambda observation: _queue_action(policy, observation)
    raise TypeError(f"a policy for {task!r} needs "
                    + {"cluster": "decide(view)", "placement": "act(observation)",
                       "queue": "rank(waiting) or a rank() policy name"}.get(family, "act_wire(observation)")
                    + f" (or act_wire(observation)); got {type(policy).__name__}")


def _cluster_view(observation: dict[str, Any]) -> dict[str, Any]:
    """The structured view a ``decide(view)`` policy reads (an episode reset with ``observation='arrays'`` has
    none: such a policy needs the default observation, or ``act_wire`` on the arrays)."""
    if "view" not in observation:
        raise ValueError("observation: this cluster episode's replies hold the arrays alone (reset option "
                         "observation='arrays'); a decide(view) policy needs the default observation, or an "
                         "act_wire(observation) policy reads the arrays")
    return observation["view"]


def _placement_action(policy: Any, observation: dict[str, Any]) -> WireAction:
    from dcops.cluster.placement.actions import Place
    from dcops.cluster.placement.observation import PlacementObservation

    action = policy.act(PlacementObservation.from_dict(observation["state"]))
    if isinstance(action, Place):
        return {"type": "place", "job_id": action.job_id, "gpu_id": action.gpu_id, "rationale": action.rationale}
    return {"type": "defer", "rationale": action.rationale}


def _queue_action(policy: Any, observation: dict[str, Any]) -> WireAction:
    waiting = observation["waiting"]
    if not waiting:
        return {"slot": 0}
    if isinstance(policy, str):
        from dcops.cluster.queue.rank import rank

        first = rank(waiting, policy=policy, now_s=observation.get("time_s"))[0]
    else:
        first = policy.rank(waiting)[0]
    return {"slot": int(first["slot"])}


def run_episode(client: Any, task: str, policy: Any, seed: int | None = None,
                max_steps: int = 100_000, **options: Any) -> EpisodeRun:
    """Play one episode of ``task`` with ``policy`` through ``client`` (a :class:`~dcops.client.DcopsClient` or
    :class:`~dcops.client.DcopsWebSocketClient`); task ``options`` go to the reset."""
    act = wire_policy(task, policy)
    result = client.reset(task=task, seed=seed, **options)
    episode_id = str(result.metadata.get("episode_id", ""))
    steps, total = 0, 0.0
    while not result.done:
        if steps >= max_steps:
            raise RuntimeError(f"{task}: no end after {max_steps} steps")
        result = client.step(act(result.observation))
        steps += 1
        total += float(result.reward or 0.0)
    return EpisodeRun(task, seed, episode_id, steps, total)


def run_episodes(url: str, task: str, policy: Any, seeds: Sequence[int | None] = (None,),
                 transport: str = "http", **options: Any) -> list[EpisodeRun]:
    """One episode per seed against the server at ``url``; ``transport`` is ``"http"`` or ``"ws"``."""
    from dcops.client import DcopsClient, DcopsWebSocketClient

    if transport not in ("http", "ws"):
        raise ValueError(f"transport must be 'http' or 'ws', got {transport!r}")
    factory = DcopsClient if transport == "http" else DcopsWebSocketClient
    runs = []
    with factory(url) as client:
        for seed in seeds:
            runs.append(run_episode(client, task, policy, seed, **options))
    return runs


# ---------------------------------------------------------------------------------------------- command line
def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="the server (dcops serve)")
    parser.add_argument("--task", required=True, help="a served task id, e.g. placement/deadline_crunch")
    parser.add_argument("--policy", required=True,
                        help="'package.module:name' of a policy object, class or factory; for queue tasks also a "
                             "rank() policy name such as 'atc'")
    parser.add_argument("--seeds", type=int, nargs="*", default=[0], help="one episode per seed")
    parser.add_argument("--transport", choices=("http", "ws"), default="http")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=JSON",
                        help="a task option for the reset, e.g. --option climate='\"seattle\"' (repeatable)")


def _run(args: argparse.Namespace) -> int:
    policy: Any = args.policy if ":" not in args.policy else load_policy(args.policy)
    options = {}
    for item in args.option:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--option must be KEY=JSON, got {item!r}")
        options[key] = json.loads(value)
    runs = run_episodes(args.url, args.task, policy, args.seeds, args.transport, **options)
    for run in runs:
        print(json.dumps(asdict(run)))
    return 0


COMMANDS = [Command("run-policy", "Drive a policy against a running dcops server over HTTP or WebSocket",
                    _arguments, _run)]
