"""The cooling tasks' reward and final score against the formulas of ``cooling_env.py``'s docstring (and the
README's "Cooling tasks" section), worked by hand and recomputed step by step from what ``info`` reports.

    violation_k = Σ_z w_z · (f27_z + 4·f32_z + f18_z)
    reward_k    = −(violation_k + 0.8 · cooling_kW / IT_kW)
    T = max(0, 1 − mean_k violation_k),  E = clip(1 − (cooling kWh / IT kWh) / 0.5, 0, 1),  score = T · (0.6 + 0.4·E)

with f the fraction of the step a zone's true inlet, varying linearly from the step's start to its end, spends
above 27 °C, above 32 °C or below 18 °C.
"""

from __future__ import annotations

import numpy as np
import pytest

import dcops
from dcops.cooling_env import thermal_and_energy_score


@pytest.mark.parametrize(
    ("mean_violation", "cooling_kwh", "it_kwh", "expected"),
    [
        (0.0, 0.0, 100.0, 1.0),            # T = 1, E = 1
        (0.25, 20.0, 100.0, 0.63),         # T = 0.75, overhead 0.2 → E = 1 − 0.4 = 0.6: 0.75 · (0.6 + 0.24)
        (0.0, 25.0, 100.0, 0.8),           # E = 0.5: 0.6 + 0.2
        (0.1, 60.0, 100.0, 0.54),          # overhead 0.6 past 0.5 → E = 0: 0.9 · 0.6
        (1.5, 10.0, 100.0, 0.0),           # T = max(0, 1 − 1.5) = 0: energy buys nothing back
        (0.5, 0.0, 100.0, 0.5),            # T = 0.5, E = 1
    ],
)
def test_final_score_hand_worked(mean_violation, cooling_kwh, it_kwh, expected):
    assert thermal_and_energy_score(mean_violation, cooling_kwh, it_kwh) == pytest.approx(expected, abs=1e-12)


def test_a_step_spent_between_27_and_32_c_costs_one_plus_0_8_times_the_cooling_overhead():
    """The docstring's worked example in one zone: the whole step above 27 °C and below 32 °C is a violation of
    1 (the weights sum to 1), so reward = −(1 + 0.8 · cooling/IT); e.g. 200 kW for 1000 kW gives −1.16."""
    env = dcops.make_env("cooling/single_zone_recovery", diagnostics=True, n_steps=1)
    env.reset(seed=3)
    _, reward, _, _, info = env.step(np.array([0.6, 24.0, 10.0, 0.0], dtype=np.float32))
    assert info["violation_minutes_27"].tolist() == [5.0] and info["violation_minutes_32"].tolist() == [0.0]
    assert info["inlet_c"][0] > 18.0
    assert reward == pytest.approx(-(1.0 + 0.8 * info["cooling_kw"] / info["it_kw"]), rel=1e-12)


ACTIONS = {
    # per zone (fan, supply set-point), then chilled water and economiser; supply air at 19 °C or more keeps every
    # inlet above 18 °C (f18 = 0), so the violation is the 27 °C and 32 °C minutes info reports
    "cool": lambda z: [1.0] * z + [19.0] * z + [5.0, 1.0],
    "warm": lambda z: [0.2] * z + [27.0] * z + [18.0, 0.0],
    "mid": lambda z: [0.6] * z + [21.0] * z + [10.0, 1.0],
}


@pytest.mark.parametrize(("task_id", "weights"), [
    ("cooling/single_zone_recovery", (1.0,)),
    ("cooling/multi_zone_sensor_drift", (3.0, 2.0, 1.0)),
    ("cooling/cascading_chiller_failure", (4.0, 4.0, 2.0, 1.0)),
])
def test_every_step_reward_and_the_final_score_follow_the_documented_formulas(task_id, weights):
    w = np.asarray(weights) / sum(weights)
    z = len(weights)
    plan = ["cool"] * 8 + ["warm"] * 2 + ["mid"] * 6  # an excursion above 27 and 32 °C, then back
    env = dcops.make_env(task_id, diagnostics=True, n_steps=len(plan))
    env.reset(seed=5)
    minutes = 300.0 / 60.0
    violations, cooling_kwh, it_kwh = [], 0.0, 0.0
    for name in plan:
        _, reward, terminated, _, info = env.step(np.asarray(ACTIONS[name](z), dtype=np.float32))
        assert np.all(np.asarray(info["inlet_c"]) > 18.0)
        f27 = np.asarray(info["violation_minutes_27"]) / minutes
        f32 = np.asarray(info["violation_minutes_32"]) / minutes
        violation = float(w @ (f27 + 4.0 * f32))
        assert reward == pytest.approx(-(violation + 0.8 * info["cooling_kw"] / info["it_kw"]), rel=1e-9, abs=1e-12)
        violations.append(violation)
        cooling_kwh += info["cooling_kw"] * 300.0 / 3600.0
        it_kwh += info["it_kw"] * 300.0 / 3600.0
    assert terminated
    thermal = max(0.0, 1.0 - float(np.mean(violations)))
    energy = min(max(1.0 - (cooling_kwh / it_kwh) / 0.5, 0.0), 1.0)
    assert info["score"] == pytest.approx(thermal * (0.6 + 0.4 * energy), rel=1e-9, abs=1e-12)
    assert env.unwrapped.score() == info["score"]
    assert 0.0 < energy < 1.0 and 0.0 < thermal < 1.0  # both terms took part
