"""The cross-entropy search: its seeds are out of the ladder's sample, it is deterministic, it keeps the best."""

from __future__ import annotations

import json

import pytest

from dcops.cluster.scenarios import SCENARIOS
from dcops.training.scheduler.search import cross_entropy_search, search_seeds


@pytest.mark.parametrize("family", sorted(SCENARIOS))
def test_search_seeds_never_meet_the_ladder_seeds(family):
    seeds = search_seeds(family, 40)
    assert len(set(seeds)) == 40
    assert not set(seeds) & set(SCENARIOS[family].seeds)
    for other in SCENARIOS.values():
        assert not set(seeds) & set(other.seeds)


def test_a_tiny_search_is_deterministic_and_never_reports_worse_than_its_start():
    first = cross_entropy_search("classic", iterations=1, population=3, elite=1, n_seeds=1)
    again = cross_entropy_search("classic", iterations=1, population=3, elite=1, n_seeds=1)
    assert json.dumps(first, sort_keys=True) == json.dumps(again, sort_keys=True)
    assert first["search_score"] >= first["start_score"]
    assert first["history"][0]["best_so_far"] == first["search_score"]
    assert set(first["parameters"]) == {"stated", "type_prior", "flag_discount", "deadline_gap_discount",
                                        "tight_bonus", "wait_bonus", "carbon_shift", "posterior_discount", "threshold",
                                        "margin"}
