"""Online identification of a hall's airflow from its inlet readings, for the observation-only planner.

Plant v2 draws every zone's bypass fraction and recirculation floor per episode
(:class:`~dcops.physics.v2.types.AirflowUncertainty`) and no observation reports them; the nameplate says 0 %
bypass and the lowest recirculation. A planner that simulates the nameplate believes its zones cooler than they
are and, replanning from the measured state every step, never learns otherwise (on
``phoenix/july/normal`` it ran a zone 768 minutes above 27 °C). An operator would instead fit the hall's airflow
to what the sensors show, which is what this does, from nothing but public quantities:

- the hypotheses are a grid over the task's published uncertainty ranges (``spec.airflow``: the hall's survey,
  part of the task's configuration), :data:`GRID` points per axis, every zone given the same hypothesis;
- after each step, the plant is stepped once per hypothesis from the state as the sensors reported it, with the
  control played and the boundary the telemetry reported (``imitation_v2.ImitationFeatures.record``), and each
  zone's predicted inlet is compared with the inlet the next observation reports;
- each zone keeps the hypothesis with the least summed squared error so far (the airflow does not change within
  an episode, so nothing is forgotten); before any reading it takes the middle of the ranges.

Zones share only the chilled water, so each zone's inlet depends on its own airflow, and a per-zone choice over
hypotheses that gave every zone the same values is a per-zone fit. Sensor noise and bias enter the fit as they
would an operator's.
"""

from __future__ import annotations

import numpy as np

from dcops.physics.plant_types import PlantBoundary
from dcops.physics.v2.plant import step_plant_v2
from dcops.physics.v2.types import AirflowUncertainty, PlantV2Config, PlantV2Control, PlantV2State

GRID = 5
"""Hypotheses per axis (bypass, recirculation): 25 in all."""


class AirflowIdentifier:
    """Per-zone least-squares choice of (bypass, recirculation) among a grid of hypotheses (module docstring).

    ``bypass_range`` and ``recirculation_range`` are the survey's; with either None (no survey: the nameplate is
    the truth) the only hypothesis is the nameplate itself. :meth:`from_survey` takes an
    :class:`~dcops.physics.v2.types.AirflowUncertainty` or None."""

    def __init__(self, nameplate: PlantV2Config, bypass_range: tuple[float, float] | None,
                 recirculation_range: tuple[float, float] | None) -> None:
        self.nameplate = nameplate
        z = nameplate.n_zones
        if bypass_range is None or recirculation_range is None:
            self.bypass = np.asarray(nameplate.zone_bypass_fraction, dtype=np.float64)[None].copy()
            self.recirculation = np.asarray(nameplate.zone_min_recirculation, dtype=np.float64)[None].copy()
            self._middle = nameplate
        else:
            bypass, recirculation = np.meshgrid(np.linspace(*bypass_range, GRID),
                                                np.linspace(*recirculation_range, GRID))
            self.bypass = np.repeat(bypass.reshape(-1, 1), z, axis=1)
            self.recirculation = np.repeat(recirculation.reshape(-1, 1), z, axis=1)
            self._middle = nameplate.with_(zone_bypass_fraction=np.full(z, float(np.mean(bypass_range))),
                                           zone_min_recirculation=np.full(z, float(np.mean(recirculation_range))))
        self._hypotheses = [nameplate.with_(zone_bypass_fraction=b.copy(), zone_min_recirculation=r.copy())
                            for b, r in zip(self.bypass, self.recirculation, strict=True)]
        self.squared_error = np.zeros(self.bypass.shape)
        self.readings = 0

    @classmethod
    def from_survey(cls, nameplate: PlantV2Config, airflow: AirflowUncertainty | None) -> AirflowIdentifier:
        """The identifier of a hall with this airflow survey (None: the nameplate is the truth)."""
        if airflow is None:
            return cls(nameplate, None, None)
        return cls(nameplate, airflow.bypass_range, airflow.recirculation_range)

    def plant(self) -> PlantV2Config:
        """The plant to plan on: each zone's best hypothesis so far (the ranges' middle before any reading)."""
        if self.readings == 0:
            return self._middle
        best = np.argmin(self.squared_error, axis=0)
        zones = np.arange(self.nameplate.n_zones)
        return self.nameplate.with_(zone_bypass_fraction=self.bypass[best, zones].copy(),
                                    zone_min_recirculation=self.recirculation[best, zones].copy())

    def update(self, state: PlantV2State, control: PlantV2Control, boundary: PlantBoundary, dt_s: float,
               reported_inlet_c: np.ndarray) -> None:
        """Score every hypothesis on one step: from ``state`` under ``control`` and ``boundary`` (what the
        controller sensed and did), against the inlets (°C, per zone) the next observation reports."""
        for g, hypothesis in enumerate(self._hypotheses):
            _, out = step_plant_v2(hypothesis, state.copy(), control, boundary, dt_s)
            self.squared_error[g] += (np.asarray(out.inlet_c, dtype=np.float64) - reported_inlet_c) ** 2
        self.readings += 1
