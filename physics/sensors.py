"""Temperature sensors: what the controller reads is not the truth.

``reported = true + calibration bias + fault drift + noise``, where each sensor has a seeded static calibration
bias (std ``bias_std_k``), white noise per reading (std ``noise_std_k``) and any :class:`~dcops.physics.faults.
SensorDrift`. All draws for an episode are made once at reset from the episode's generator, so a seed replays
the same readings bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray


@dataclass(frozen=True)
class SensorModel:
    """Noise and calibration parameters for a family of temperature sensors, K."""

    noise_std_k: float = 0.1
    bias_std_k: float = 0.1


@dataclass(frozen=True)
class SensorErrors:
    """Precomputed reading errors for an episode, K: (n_steps, n_sensors) each."""

    noise_k: NDArray[np.float64]
    bias_k: NDArray[np.float64]

    def report(self, step: int, true_value: NDArray[np.float64], drift_k: NDArray[np.float64] | float = 0.0) -> NDArray[np.float64]:
        """The reading at ``step`` of sensors whose true values are ``true_value``."""
        return true_value + self.bias_k + drift_k + self.noise_k[step]


def draw_errors(model: SensorModel, rng: np.random.Generator, n_steps: int, n_sensors: int) -> SensorErrors:
    """Draw the whole episode's sensor errors at once."""
    bias = rng.normal(0.0, model.bias_std_k, size=n_sensors)
    noise = rng.normal(0.0, model.noise_std_k, size=(n_steps, n_sensors))
    return SensorErrors(noise_k=noise, bias_k=bias)
