"""Shared fixtures of the evaluation tests: a tiny matrix (short episodes) and row comparison."""

from __future__ import annotations

from typing import Any

import pytest

from dcops.evaluation.matrix import build_matrix


@pytest.fixture
def tiny_cells():
    """2 schedulers × 1 mix × 1 condition × 2 seeds, 2 windows per episode."""
    return build_matrix(
        ["priority_threshold", "accept_all"], ["one_strategic"], ["normal"], [0, 1], n_windows=2
    )


@pytest.fixture
def comparable():
    """Rows without their wall time (the only field that may differ between equal runs)."""

    def strip(rows: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        return {k: {f: v for f, v in row.items() if f != "wall_s"} for k, row in rows.items()}

    return strip
