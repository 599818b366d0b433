"""Zone air and IT mass: exact exponential update, CRAH airflow, recirculation and server inlet temperature.

Each zone is one lumped node at temperature T (°C): the room air and IT hardware that the CRAH return air
leaves from. With IT heat Q (kW), CRAH air mass flow m (kg/s) supplied at T_s, envelope conductance UA (kW/K)
to the outdoor dry-bulb T_out and heat capacity C (kJ/K)::

    C·dT/dt = Q − m·cp·(T − T_s) − UA·(T − T_out)

Over a control step of length Δt with constant inputs this is solved exactly. With G = m·cp + UA,
x = G·Δt/C and the initial rate r₀ = (Q + m·cp·(T_s − T₀) + UA·(T_out − T₀)) / C::

    T(Δt) = T₀ + r₀·Δt·φ(x),      φ(x) = (1 − e^(−x)) / x
    mean T over the step = T₀ + r₀·Δt·ψ(x),   ψ(x) = (x − 1 + e^(−x)) / x²

so the heat the coil takes from the air (m·cp·(T̄ − T_s)·Δt) and the envelope loss close the energy balance
C·(T₁ − T₀) = Q·Δt − coil − envelope to rounding, at any step length and with no stability limit.

Airflow and recirculation: the servers draw m_IT = Q / (cp·ΔT_server). When the CRAH supplies less
(m < m_IT) the shortfall is drawn from the hot zone air: the recirculated fraction is r = 1 − m/m_IT, floored at
a small leakage r_min. The server inlet is the mix ``T_in = T_s + r·(T − T_s)``: more airflow (lower r, lower T)
or a colder supply never raises an inlet.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from dcops.physics.constants import CP_AIR_KJ_PER_KG_K

_SERIES_LIMIT = 1e-4  # below this x the series forms of φ and ψ are exact to double precision


def exponential_factors(x: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """φ(x) = (1 − e^−x)/x and ψ(x) = (x − 1 + e^−x)/x², both finite at x = 0 (φ → 1, ψ → 1/2)."""
    x_safe = np.maximum(x, _SERIES_LIMIT)
    em1 = -np.expm1(-x_safe)  # 1 − e^−x without cancellation
    phi = em1 / x_safe
    psi = (1.0 - phi) / x_safe
    small = x < _SERIES_LIMIT
    if np.any(small):
        phi = np.where(small, 1.0 - x / 2.0 + x * x / 6.0, phi)
        psi = np.where(small, 0.5 - x / 6.0 + x * x / 24.0, psi)
    return phi, psi


def zone_update(
    temp_c: NDArray[np.float64],
    heat_kw: NDArray[np.float64],
    airflow_kg_s: NDArray[np.float64],
    supply_c: NDArray[np.float64],
    envelope_ua_kw_per_k: NDArray[np.float64],
    outdoor_c: NDArray[np.float64],
    capacity_kj_per_k: NDArray[np.float64],
    dt_s: float,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Advance zone temperatures by ``dt_s`` seconds exactly; return (end temperature, mean temperature), °C."""
    mcp = airflow_kg_s * CP_AIR_KJ_PER_KG_K
    rate0 = (heat_kw + mcp * (supply_c - temp_c) + envelope_ua_kw_per_k * (outdoor_c - temp_c)) / capacity_kj_per_k
    x = (mcp + envelope_ua_kw_per_k) * (dt_s / capacity_kj_per_k)
    phi, psi = exponential_factors(x)
    drift = rate0 * dt_s
    return temp_c + drift * phi, temp_c + drift * psi


def server_airflow_kg_s(it_kw: NDArray[np.float64], server_delta_t_k: float) -> NDArray[np.float64]:
    """Air mass flow the servers draw, kg/s: m_IT = Q_IT / (cp · ΔT_server)."""
    return it_kw / (CP_AIR_KJ_PER_KG_K * server_delta_t_k)


def recirculation_fraction(
    supplied_kg_s: NDArray[np.float64], demanded_kg_s: NDArray[np.float64], min_recirculation: float
) -> NDArray[np.float64]:
    """Fraction of server intake drawn from hot zone air: max(r_min, 1 − m/m_IT), in [r_min, 1]."""
    shortfall = np.maximum(demanded_kg_s - supplied_kg_s, 0.0) / np.maximum(demanded_kg_s, 1e-9)
    return np.maximum(shortfall, min_recirculation)


def inlet_temperature_c(
    supply_c: NDArray[np.float64], zone_c: NDArray[np.float64], recirculation: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Server inlet temperature, °C: supply air mixed with recirculated zone air."""
    return supply_c + recirculation * (zone_c - supply_c)
