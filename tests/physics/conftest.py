"""Shared builders for physics tests (fixtures, since tests import no sibling modules)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from dcops.physics.plant import PlantBoundary, PlantConfig, PlantControl


@pytest.fixture
def plant() -> PlantConfig:
    return PlantConfig.default()


@pytest.fixture
def make_control() -> Callable[..., PlantControl]:
    def build(config: PlantConfig, fan: float = 0.7, supply: float = 22.0, chw: float = 12.0, econ: float = 1.0):
        z = config.n_zones
        return PlantControl(np.full(z, fan), np.full(z, supply), np.asarray(chw), np.asarray(econ))

    return build


@pytest.fixture
def make_boundary() -> Callable[..., PlantBoundary]:
    def build(config: PlantConfig, load: float = 0.8, dry: float = 25.0, wet: float = 18.0):
        return PlantBoundary(
            it_kw=config.zone_design_it_kw * load,
            outdoor_dry_bulb_c=np.asarray(dry),
            outdoor_wet_bulb_c=np.asarray(wet),
            chiller_available=np.ones(config.n_chillers),
            fan_units_alive=np.ones(config.n_zones),
        )

    return build
