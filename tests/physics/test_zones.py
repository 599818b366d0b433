"""The zone model's exponential factors against an independent high-precision reference.

``dcops.physics.zones`` solves each zone's step exactly with φ(x) = (1 − e^−x)/x and ψ(x) = (x − 1 + e^−x)/x²,
switching to their Taylor series below x = 1e-4 (where the closed forms lose digits to cancellation) and taking
φ(0) = 1, ψ(0) = 1/2, their limits. The reference below evaluates the closed forms in 60-digit decimal arithmetic
(``decimal``, independent of numpy and libm), so it has no cancellation problem at any x.
"""

from __future__ import annotations

from decimal import Decimal, localcontext

import numpy as np
import pytest

from dcops.physics.zones import exponential_factors


def _reference(x: float) -> tuple[float, float]:
    if x == 0.0:
        return 1.0, 0.5
    with localcontext() as context:
        context.prec = 60
        d = Decimal(x)
        e = (-d).exp()
        return float((1 - e) / d), float((d - 1 + e) / (d * d))


XS = [0.0, 1e-12, 1e-8, 1e-6, 5e-5, 9.99e-5, 1e-4, 1.01e-4, 1e-3, 0.1, 1.0, 10.0, 50.0]


def test_exponential_factors_match_the_closed_forms_on_both_sides_of_the_series_limit():
    """Within 1e-11 relative everywhere (the closed-form ψ just above the limit loses about 2e-12 to cancellation;
    the series just below it is off by x³/24 ≈ 4e-14): a lost series term moves φ or ψ by x/6 or x²/6 relative,
    far beyond that at x = 5e-5."""
    phi, psi = exponential_factors(np.asarray(XS))
    for x, got_phi, got_psi in zip(XS, phi.tolist(), psi.tolist(), strict=True):
        want_phi, want_psi = _reference(x)
        assert got_phi == pytest.approx(want_phi, rel=1e-11, abs=0.0), x
        assert got_psi == pytest.approx(want_psi, rel=1e-11, abs=0.0), x


def test_at_zero_the_factors_are_their_limits():
    """No airflow and no envelope: x = 0, and the step is T₀ + r₀·Δt (φ = 1) with mean T₀ + r₀·Δt/2 (ψ = 1/2)."""
    phi, psi = exponential_factors(np.zeros(3))
    assert phi.tolist() == [1.0, 1.0, 1.0] and psi.tolist() == [0.5, 0.5, 0.5]
