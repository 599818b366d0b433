"""Every built-in placement policy by name, as factories ``scenario -> policy``.

The evaluation and the CLI iterate over :func:`policy_factories`; a new policy (for instance the language-
model scheduler) plugs in by adding a factory here or by being passed to
:func:`dcops.cluster.placement.policy.run_episode` directly.
"""

from __future__ import annotations

from dcops.cluster.placement.heuristics import (
    AlwaysDefer,
    BestFitVram,
    CheapestGpu,
    EarliestDeadlineFirst,
    Fifo,
)
from dcops.cluster.placement.linear import LinearPolicy
from dcops.cluster.placement.optimum import OptimalPolicy
from dcops.cluster.placement.policy import PolicyFactory

HEURISTIC_NAMES = ("fifo", "edf", "best_fit", "cheapest")
REFERENCE_NAME = "always_defer"
"""The do-nothing policy: the zero point of the normalised score."""


def policy_factories(include_reference: bool = True) -> dict[str, PolicyFactory]:
    """Name -> factory for the heuristics, the linear policy, the optimum (and the reference)."""
    factories: dict[str, PolicyFactory] = {
        "fifo": lambda scenario: Fifo(),
        "edf": lambda scenario: EarliestDeadlineFirst(),
        "best_fit": lambda scenario: BestFitVram(),
        "cheapest": lambda scenario: CheapestGpu(),
        "linear": lambda scenario: LinearPolicy(),
        "optimum": lambda scenario: OptimalPolicy(scenario),
    }
    if include_reference:
        factories[REFERENCE_NAME] = lambda scenario: AlwaysDefer()
    return factories
