"""A variable-speed centrifugal chiller whose efficiency follows the refrigerant lift.

Why not the DOE-2 curves of plant v0: those biquadratics are valid only over 5–10 °C leaving chilled water and
24–35 °C entering condenser water, and clamped outside, so a chiller on them gains nothing from a warmer
chilled-water set-point or colder condenser water. This model is valid wherever a vapour-compression cycle is
(the lift floor below keeps it physical at low lift), across at least 5–20 °C chilled water and 12–35 °C
condenser water.

For one running unit carrying Q (kW) of its capacity Q_ref (part-load ratio p = Q / Q_ref)::

    p_c   = max(p, p_min)                         the compressor never unloads below p_min (false loading)
    T_evap = T_chw,leaving − ΔT_evap · p_c        refrigerant temperatures: heat-exchanger approaches scale
    T_cond = T_cw,entering + R_d · p_c + ΔT_cond · p_c   with the load (fixed UA), R_d the design condenser range
    lift   = max(T_cond − T_evap, lift_min)       head-pressure control keeps a minimum lift
    P      = Q_ref · p_c · lift / (η · (T_evap + 273.15)) + f_fixed · Q_ref

η is the cycle's fraction of the Carnot COP (compressor, motor and drive), calibrated so that the full-load COP
at the AHRI 550/590 rating point (6.67 °C leaving chilled water, 29.44 °C entering condenser water, 3 gpm/ton,
i.e. a 5.56 K range) equals the rated COP; f_fixed is the per-unit fixed loss (bearings, drive, controls) that
makes a lightly loaded chiller inefficient and gives staging its trade-off (fewer units at higher load, or more
at lower approaches and lift). The rejected heat is ``Q + P``.

Validation (``tests/physics/test_v2_chiller.py``): the IPLV at the AHRI 550/590 part-load conditions lands near
the ASHRAE 90.1 Path B limit for 150–300 ton water-cooled centrifugals (0.400 kW/ton; the constant-speed Path A
limit is 0.550), full-load COP falls 2–3.5 % per K of condenser water like the DOE-2 curves do inside their range
(6.2 / 5.5 / 4.8 at 24 / 29.4 / 35 °C), and COP rises with leaving chilled water across 5–20 °C.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dcops.physics.v2.backend import FLOATS

AHRI_CHW_LEAVING_C = 6.67
"""AHRI 550/590 standard rating: leaving chilled water, °C (44 °F)."""
AHRI_CONDENSER_ENTERING_C = 29.44
"""AHRI 550/590 standard rating: entering condenser water at full load, °C (85 °F)."""
AHRI_CONDENSER_RANGE_K = 5.56
"""Condenser range at 3 gpm/ton and full load, K (10 °F)."""
IPLV_POINTS = ((1.00, 29.44, 0.01), (0.75, 23.89, 0.42), (0.50, 18.33, 0.45), (0.25, 18.33, 0.12))
"""AHRI 550/590 IPLV rating points: (part-load ratio, entering condenser water °C, weight). In efficiency form
(COP) IPLV = 0.01·A + 0.42·B + 0.45·C + 0.12·D over the COPs A–D at the four points; in kW/ton it is quoted as
3.517 / IPLV_COP."""
KELVIN = 273.15


@dataclass(frozen=True)
class LiftChiller:
    """One chiller unit (temperatures °C, differences K, powers kW).

    :param reference_capacity_kw: cooling capacity Q_ref of one unit.
    :param rated_cop: full-load COP at the AHRI rating point (5.5 ≈ 0.64 kW/ton, the DOE-2 centrifugal).
    :param evaporator_approach_k: chilled water to evaporating refrigerant at full load.
    :param condenser_approach_k: condensing refrigerant to leaving condenser water at full load.
    :param design_condenser_range_k: condenser water rise at full load (design flow per unit).
    :param fixed_loss_fraction: power of a running unit at no lift, as a fraction of Q_ref.
    :param min_lift_k: smallest refrigerant lift head-pressure control allows.
    :param min_part_load_ratio: below it the unit false-loads (runs as at this ratio, the rest bypassed).
    """

    reference_capacity_kw: float = 660.0
    rated_cop: float = 5.5
    evaporator_approach_k: float = 1.5
    condenser_approach_k: float = 1.5
    design_condenser_range_k: float = AHRI_CONDENSER_RANGE_K
    fixed_loss_fraction: float = 0.01
    min_lift_k: float = 12.0
    min_part_load_ratio: float = 0.15

    def __post_init__(self) -> None:
        if self.reference_capacity_kw <= 0 or self.rated_cop <= 1.0:
            raise ValueError("LiftChiller needs reference_capacity_kw > 0 and rated_cop > 1")
        if not 0.0 < self.min_part_load_ratio < 1.0 or self.min_lift_k <= 0:
            raise ValueError("LiftChiller needs 0 < min_part_load_ratio < 1 and min_lift_k > 0")
        if 1.0 / self.rated_cop <= self.fixed_loss_fraction:
            raise ValueError("LiftChiller.fixed_loss_fraction must be below 1 / rated_cop")

    @property
    def carnot_efficiency(self) -> float:
        """η, calibrated so that :func:`unit_power_kw` at the AHRI full-load point gives ``rated_cop``."""
        evap = AHRI_CHW_LEAVING_C - self.evaporator_approach_k
        cond = AHRI_CONDENSER_ENTERING_C + self.design_condenser_range_k + self.condenser_approach_k
        lift = max(cond - evap, self.min_lift_k)
        return lift / ((evap + KELVIN) * (1.0 / self.rated_cop - self.fixed_loss_fraction))


def unit_power_kw(xp: Any, chiller: LiftChiller, eta: float, part_load_ratio: Any, chw_leaving_c: Any,
                  condenser_entering_c: Any) -> Any:
    """Electric power of one running unit at ``part_load_ratio`` (0–1), kW (module docstring).

    ``eta`` is ``chiller.carnot_efficiency`` (passed in so that the hot path computes it once per plant)."""
    p = xp.maximum(part_load_ratio, chiller.min_part_load_ratio)
    evap = chw_leaving_c - chiller.evaporator_approach_k * p
    cond = condenser_entering_c + (chiller.design_condenser_range_k + chiller.condenser_approach_k) * p
    lift = xp.maximum(cond - evap, chiller.min_lift_k)
    q_ref = chiller.reference_capacity_kw
    return q_ref * p * lift / (eta * (evap + KELVIN)) + chiller.fixed_loss_fraction * q_ref


def unit_cop(xp: Any, chiller: LiftChiller, part_load_ratio: Any, chw_leaving_c: Any,
             condenser_entering_c: Any) -> Any:
    """COP of one unit (cooling delivered over electric power) at a part-load ratio and temperatures."""
    power = unit_power_kw(xp, chiller, chiller.carnot_efficiency, part_load_ratio, chw_leaving_c,
                          condenser_entering_c)
    return chiller.reference_capacity_kw * part_load_ratio / power


def iplv_cop(chiller: LiftChiller, chw_leaving_c: float = AHRI_CHW_LEAVING_C) -> float:
    """Integrated part-load value in COP form (AHRI 550/590: Σ weight · COP at its four rating points)."""
    return sum(w * unit_cop(FLOATS, chiller, p, chw_leaving_c, t_cw) for p, t_cw, w in IPLV_POINTS)
