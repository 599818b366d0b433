"""Annual PUE by climate: physically ordered and in the published ranges."""

from __future__ import annotations

from dcops.evaluation.cooling_report import LEGACY_OPERATION, annual_pue
from dcops.physics.plant import PlantConfig


def test_same_controller_has_lower_annual_pue_in_seattle_and_chicago_than_in_phoenix():
    phoenix = annual_pue("phoenix")["pue"]
    assert annual_pue("seattle")["pue"] < phoenix
    assert annual_pue("chicago")["pue"] < phoenix


def test_economiser_plant_beats_legacy_plant_and_both_land_in_realistic_ranges():
    modern = annual_pue("leesburg")["pue"]
    legacy = annual_pue("leesburg", plant=PlantConfig.legacy(), rule=LEGACY_OPERATION)["pue"]
    assert 1.1 < modern < 1.35
    assert 1.38 < legacy < 1.65
    assert legacy > modern + 0.15
