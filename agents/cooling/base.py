"""What every cooling controller shares: the plant facts it may know and the controller protocol."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from dcops.physics.constants import CP_AIR_KJ_PER_KG_K
from dcops.physics.plant import PlantConfig


@dataclass(frozen=True)
class ControllerContext:
    """Nameplate facts an operator knows about the plant (never the live truth).

    :param zone_design_it_kw: design IT load per zone, kW.
    :param zone_weights: priority weight per zone (higher = more critical).
    :param crah_max_airflow_kg_s: CRAH maximum airflow per zone, kg/s.
    :param server_delta_t_k: server air temperature rise at design, K.
    :param coil_approach_k: coil approach (supply air ≥ chilled water + approach), K.
    :param dt_s: control interval, s.
    """

    zone_design_it_kw: NDArray[np.float64]
    zone_weights: NDArray[np.float64]
    crah_max_airflow_kg_s: NDArray[np.float64]
    server_delta_t_k: float
    coil_approach_k: float
    dt_s: float

    @property
    def n_zones(self) -> int:
        return int(self.zone_design_it_kw.size)

    @classmethod
    def from_plant(cls, plant: PlantConfig, zone_weights: tuple[float, ...] | list[float], dt_s: float) -> ControllerContext:
        return cls(
            zone_design_it_kw=np.asarray(plant.zone_design_it_kw, dtype=np.float64),
            zone_weights=np.asarray(zone_weights, dtype=np.float64),
            crah_max_airflow_kg_s=np.asarray(plant.crah_max_airflow_kg_s, dtype=np.float64),
            server_delta_t_k=plant.server_delta_t_k,
            coil_approach_k=plant.coil_approach_k,
            dt_s=dt_s,
        )

    def matched_fan_speed(self, load_fraction: NDArray[np.float64], margin: float) -> NDArray[np.float64]:
        """Fan speed that supplies ``margin`` × the airflow the servers draw at the given load."""
        server_airflow = load_fraction * self.zone_design_it_kw / (CP_AIR_KJ_PER_KG_K * self.server_delta_t_k)
        return margin * server_airflow / self.crah_max_airflow_kg_s


class CoolingController(Protocol):
    """A controller: ``reset`` once per episode, then ``act`` on each telemetry vector."""

    name: str

    def reset(self, context: ControllerContext) -> None: ...

    def act(self, telemetry: NDArray[np.float32]) -> NDArray[np.float32]: ...
