"""No open-loop constant action beats the tuned rule-based controller on the medium and hard tasks."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import dcops
from dcops.agents.cooling import RuleBasedController
from dcops.cooling_env import run_controller

SEEDS = (0, 1, 2)


class ConstantAction:
    """An open-loop controller that repeats one action."""

    name = "constant"

    def __init__(self, action: np.ndarray) -> None:
        self.action = np.asarray(action, dtype=np.float32)

    def reset(self, context) -> None:
        del context

    def act(self, telemetry) -> np.ndarray:
        del telemetry
        return self.action


def constant_sweep(n_zones: int):
    """Fan speed × supply set-point × chilled-water set-point × economiser, over the whole action box."""
    for fan, supply, chw, econ in itertools.product(
        (0.3, 0.5, 0.6, 0.7, 0.9), (16.0, 18.0, 21.0, 24.0, 27.0), (5.0, 8.0, 11.0, 14.0, 18.0), (0.0, 1.0)
    ):
        yield [fan] * n_zones + [supply] * n_zones + [chw, econ]


@pytest.mark.parametrize("task_id", ["cooling/multi_zone_sensor_drift", "cooling/cascading_chiller_failure"])
def test_no_constant_action_beats_the_tuned_rule(task_id):
    env = dcops.make_env(task_id)
    rule = np.mean([run_controller(env, RuleBasedController.for_task(task_id), s).score for s in SEEDS])
    best_constant, best_action = -np.inf, None
    for action in constant_sweep(env.unwrapped.task.plant.n_zones):
        score = np.mean([run_controller(env, ConstantAction(action), s).score for s in SEEDS])
        if score > best_constant:
            best_constant, best_action = score, action
    assert rule > best_constant, f"constant {best_action} scores {best_constant:.4f} >= rule {rule:.4f}"
