"""The scheduler's Gymnasium environment played on a dcops server: :class:`RemoteSchedulerEnv`.

Why: an RL learner that trains against a served ``cluster/operations`` (a shared server, a hosted one, the same
episodes an LLM agent plays) wants the interface it trains on locally, not JSON. This environment has the
spaces of :class:`dcops.env.SchedulerEnv` built with the same options, plays its episodes on the server with
the reset option ``observation='arrays'`` (replies carry the Gymnasium arrays alone, and the server builds no
structured view), sends each action as slot codes and gives ``action_masks()`` in the layout sb3-contrib's
``MaskablePPO`` reads, so the same training code runs on either.

Seeds: ``reset(seed=s)`` plays the server's episode of public seed ``s``, which the server maps to a private
one (``dcops.boundary``), so it is the same episode on every reset with ``s`` on that server, not the local
``SchedulerEnv``'s episode of seed ``s``. ``reset()`` without a seed lets the server draw one.

A step on a session the server has lost (restart, expiry, eviction) ends the episode as truncated, with the
client's warning (``dcops.client``); the next ``reset`` opens a new session.

Example::

    from sb3_contrib import MaskablePPO
    from dcops.remote_env import RemoteSchedulerEnv

    env = RemoteSchedulerEnv("http://127.0.0.1:8000", scenario="adversarial")
    MaskablePPO("MultiInputPolicy", env, n_steps=64, batch_size=64).learn(512)
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from dcops.client import DcopsClient, StepResult

TASK = "cluster/operations"


class RemoteSchedulerEnv(gym.Env):
    """``cluster/operations``'s scheduler view, its episodes on the server at ``base_url`` (module docstring).

    :param base_url: the server's HTTP address.
    :param client: a :class:`~dcops.client.DcopsClient` to use instead of opening one (closed by :meth:`close`
        only if this environment opened it).
    :param options: the task's reset options as the server takes them (``scenario``, ``n_windows``, ``cooling``,
        ``catalogue``, ...; ``/metadata`` lists them), which also size the spaces; ``observation`` is this
        environment's to set.
    """

    metadata = {"render_modes": []}

    def __init__(self, base_url: str = "http://127.0.0.1:8000", client: DcopsClient | None = None,
                 **options: Any) -> None:
        if "observation" in options:
            raise ValueError("observation: RemoteSchedulerEnv always plays with observation='arrays'")
        from dcops.env import SchedulerEnv

        self.options = dict(options)
        local = {k: v for k, v in options.items() if k != "faults"}
        if options.get("faults") == "none":
            local["faults"] = ()
        spaces = SchedulerEnv(structured_view=False, **local)  # only for its spaces
        self.observation_space = spaces.observation_space
        self.action_space = spaces.action_space
        self._owns_client = client is None
        self.client = client if client is not None else DcopsClient(base_url)
        self._last: dict[str, np.ndarray] | None = None

    def _observation(self, result: StepResult) -> dict[str, np.ndarray]:
        arrays = result.observation["arrays"]
        self._last = {key: np.asarray(arrays[key], dtype=space.dtype).reshape(space.shape)
                      for key, space in self.observation_space.spaces.items()}
        return self._last

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        result = self.client.reset(task=TASK, seed=seed, **{**self.options, **(options or {}),
                                                             "observation": "arrays"})
        return self._observation(result), result.metadata.get("info", {})

    def step(self, action: Any):
        if self._last is None:
            raise RuntimeError("call reset() before step()")
        codes = np.asarray(action, dtype=np.int64).reshape(self.action_space.shape).tolist()
        result = self.client.step({"codes": codes})
        lost = bool(result.metadata.get("session_lost"))
        truncated = lost or bool(result.metadata.get("truncated", False))
        terminated = result.done and not truncated
        info = result.metadata.get("info", {})
        observation = self._last if lost else self._observation(result)
        return observation, float(result.reward or 0.0), terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The last observation's ``action_mask`` as bool (``SchedulerEnv.action_masks``' layout)."""
        if self._last is None:
            raise RuntimeError("call reset() first")
        return self._last["action_mask"].astype(bool)

    def close(self) -> None:
        if self._owns_client:
            self.client.close()


__all__ = ["RemoteSchedulerEnv"]
