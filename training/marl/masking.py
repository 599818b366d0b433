"""An RLlib PPO module that masks invalid actions for ``Discrete`` and ``MultiDiscrete`` action spaces.

The observation must be ``Dict(observations=Box(F,), action_mask=Box(N,))`` where N is the number of logits of
the action distribution: ``n`` for ``Discrete(n)``, ``sum(nvec)`` for ``MultiDiscrete(nvec)`` (RLlib's
multi-categorical distribution takes the per-dimension logits concatenated in dimension order, so the flat
int8 mask of ``dcops.registry``'s convention, dimension after dimension, lines up with them; a float mask of 0
and 1 works too). The module runs RLlib's default PPO encoder, policy and
value heads on ``observations`` and adds ``log(action_mask)`` (clamped to RLlib's ``FLOAT_MIN``) to the logits,
so a masked code has probability zero in sampling, in the log-likelihoods of the PPO loss and in the entropy.

RLlib ships a similar module among its examples (``ray.rllib.examples.rl_modules.classes.action_masking_rlm``),
built on the deprecated ``PPOTorchRLModule`` and mutating its input batch; this one extends the current
``DefaultPPOTorchRLModule`` and leaves the batch as it is.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns
from ray.rllib.utils.torch_utils import FLOAT_MIN

OBS_KEY = "observations"
MASK_KEY = "action_mask"


def n_logits(action_space: gym.Space) -> int:
    """Number of logits of RLlib's distribution for a (multi-)discrete action space."""
    if isinstance(action_space, gym.spaces.Discrete):
        return int(action_space.n)
    if isinstance(action_space, gym.spaces.MultiDiscrete):
        return int(np.sum(action_space.nvec))
    raise ValueError(f"action masking needs a Discrete or MultiDiscrete action space, got {action_space}")


class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
    """Default PPO module on ``obs["observations"]`` with ``log(obs["action_mask"])`` added to the logits."""

    def __init__(self, *args: Any, observation_space: gym.Space | None = None,
                 action_space: gym.Space | None = None, **kwargs: Any) -> None:
        if not (isinstance(observation_space, gym.spaces.Dict) and set(observation_space.spaces) == {OBS_KEY, MASK_KEY}):
            raise ValueError(f"observation_space must be Dict({OBS_KEY}=Box, {MASK_KEY}=Box), got {observation_space}")
        mask_shape = observation_space[MASK_KEY].shape
        if mask_shape != (n_logits(action_space),):
            raise ValueError(f"observation_space[{MASK_KEY!r}] has shape {mask_shape}; the action space "
                             f"{action_space} has {n_logits(action_space)} logits")
        self.observation_space_with_mask = observation_space
        super().__init__(*args, observation_space=observation_space[OBS_KEY], action_space=action_space, **kwargs)

    def setup(self) -> None:
        super().setup()  # networks sized by the inner Box
        self.observation_space = self.observation_space_with_mask  # what the module really receives (checkpoints)

    @staticmethod
    def _split(batch: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        obs = batch[Columns.OBS]
        if not isinstance(obs, dict) or MASK_KEY not in obs:
            raise ValueError(f"MaskedPPOTorchRLModule expects batch[{Columns.OBS!r}] with keys {OBS_KEY!r} and "
                             f"{MASK_KEY!r}")
        return obs[MASK_KEY], {**batch, Columns.OBS: obs[OBS_KEY]}

    @staticmethod
    def _mask(output: dict[str, Any], mask: Any) -> dict[str, Any]:
        output[Columns.ACTION_DIST_INPUTS] = output[Columns.ACTION_DIST_INPUTS] + torch.clamp(
            torch.log(mask), min=FLOAT_MIN)
        return output

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, inner = self._split(batch)
        return self._mask(super()._forward(inner, **kwargs), mask)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, inner = self._split(batch)
        return self._mask(super()._forward_train(inner, **kwargs), mask)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        if embeddings is None:
            _, batch = self._split(batch)
        return super().compute_values(batch, embeddings)
