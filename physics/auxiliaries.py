"""Fans, pumps, cooling-tower fans and UPS losses: the electrical loads around the chillers.

- CRAH fans, cube law: ``P = P_max · a · s³`` for speed s and the fraction a of fan units alive (airflow is
  ``m_max · a · s``).
- Variable-speed pumps, cube law on flow with a minimum speed: ``P = P_design · max(f, f_min)³``.
- Cooling-tower fans: ``P = P_design · min(q, 1.5)²`` for heat-rejection fraction q (fan affinity with the
  approach relaxing at part load); the design figure is 0.2 kW per ton of design heat rejection.
- UPS (double conversion) loss: ``P_loss = P_rated · (a + b·x + c·x²)``, x = P_IT / P_rated, with
  (a, b, c) = (0.01, 0.02, 0.01): 95.7 % efficient at half load, 96.1 % at 80 %. The UPS sits in its own
  electrical room, so its loss counts in facility power but not in the data-hall heat balance.
- Power distribution (transformers and PDUs): a loss of ``DISTRIBUTION_LOSS_FRACTION`` (2 %) of the IT power.
- Ancillary building loads (lighting, offices, security, controls): ``ANCILLARY_FRACTION`` (1 %) of the design IT
  power, constant. Both are outside the data hall's heat balance, like the UPS loss.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def fan_power_kw(max_kw: NDArray[np.float64], speed: NDArray[np.float64], units_alive: NDArray[np.float64]) -> NDArray[np.float64]:
    """CRAH fan electric power, kW (cube law)."""
    return max_kw * units_alive * speed * speed * speed


def pump_power_kw(design_kw: float, flow_fraction: NDArray[np.float64], min_speed: float) -> NDArray[np.float64]:
    """Variable-speed pump power, kW."""
    f = np.maximum(flow_fraction, min_speed)
    return design_kw * f * f * f


def tower_fan_power_kw(design_kw: float, rejection_fraction: NDArray[np.float64]) -> NDArray[np.float64]:
    """Cooling-tower fan power, kW."""
    q = np.minimum(rejection_fraction, 1.5)
    return design_kw * q * q


UPS_LOSS_COEFFICIENTS = (0.01, 0.02, 0.01)


def ups_loss_kw(it_kw: NDArray[np.float64], rated_kw: float) -> NDArray[np.float64]:
    """UPS conversion loss, kW."""
    a, b, c = UPS_LOSS_COEFFICIENTS
    x = it_kw / rated_kw
    return rated_kw * (a + x * (b + c * x))


DISTRIBUTION_LOSS_FRACTION = 0.02
ANCILLARY_FRACTION = 0.01


def distribution_loss_kw(it_kw: NDArray[np.float64]) -> NDArray[np.float64]:
    """Transformer and PDU losses, kW."""
    return DISTRIBUTION_LOSS_FRACTION * it_kw


def ancillary_kw(design_it_kw: float) -> float:
    """Lighting, offices and controls, kW."""
    return ANCILLARY_FRACTION * design_it_kw
