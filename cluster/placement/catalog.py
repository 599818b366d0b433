"""Every placement scenario by name: the four canonical ones and the seeded generator's ``generated_<seed>``.

The lookup sits above both :mod:`~dcops.cluster.placement.scenarios` (the canonical scenarios and the types)
and :mod:`~dcops.cluster.placement.generator` (which builds on those types), so neither imports the other.
"""

from __future__ import annotations

from dcops.cluster.placement.generator import generate_scenario
from dcops.cluster.placement.scenarios import CANONICAL, Scenario

GENERATED_PREFIX = "generated_"


def get_scenario(name: str) -> Scenario:
    """A canonical scenario by name; ``generated_<seed>`` gives :func:`generator.generate_scenario`."""
    if name in CANONICAL:
        return CANONICAL[name]
    seed = name[len(GENERATED_PREFIX) :]
    if name.startswith(GENERATED_PREFIX) and seed.isdigit():
        return generate_scenario(int(seed))
    raise KeyError(f"unknown placement scenario {name!r}; known: {', '.join(CANONICAL)} or generated_<seed>")
