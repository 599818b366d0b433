"""The truth boundary: what a policy may see, defined once, for every task and every transport.

**A policy may see**: the stated fields of requests, the history of its own decisions and their public
outcomes, audits, oversight flags, the control room's *reported* readings and meters, and its own reward. An
audit is issued when a job completes (``datacenter_ops_v0``: runtime, deadline, flexibility) or, from
``datacenter_ops_v1``, when its outcome is booked, whatever the outcome (everything that outcome was scored
from, the true priority included, and the score): the scheduler's reward is then a function of that window's
audits, so it cannot be solved for the truth of a job not yet audited (``dcops.cluster.ledger``).
**A policy may not see** (private content): requests' true priority, deadline, flexibility and runtime before
their audit, the teams' kinds and tactics, future arrivals, the fault schedule, sensor errors and drifts, and
true temperatures that the sensors report with an error.

Two mechanisms enforce it at the boundary between an environment and a policy that is not in the same
process (the server's HTTP, WebSocket and MCP replies; ``dcops eval --game-version 1``, whose runs each
draw a key of their own):

- **Keyed seeds** (:func:`private_seed`). Everything private comes from the environment's random streams, and
  those are seeded by ``private_seed(secret, seed)``, not by the public ``seed`` a client is told. Replaying
  the public seed with the public code gives another episode; the operator, who holds the secret, reproduces
  the served one exactly by ``env.reset(seed=private_seed(secret, seed))``. In-process users who call
  ``env.reset(seed=...)`` themselves keep bit-for-bit reproducibility: the keyed seed is applied only where
  a secret exists.
- **Diagnostics out of ``info``** (:func:`split_info`). The ``info`` keys of :data:`DIAGNOSTIC_INFO_KEYS` are
  computed from private truth (true inlet temperatures, the fault schedule). The server withholds them during
  the episode and sends them, under ``metadata.diagnostics`` (``{"reset": {...}, "steps": [{...}, ...]}``),
  only in the reply that ends it. In process, the cooling tasks (``dcops.cooling_env``, ``dcops.vector_env``)
  leave them out of ``info`` unless made with ``diagnostics=True``, as the evaluations, the PPO training
  environment (whose reward scores the true inlets) and the server (which withholds them itself) are.

Why keyed seeds rather than hiding the seed: a served episode must stay replayable (the episode store keeps
it), and a seed a client chose must still fix the episode; a keyed hash keeps both while the public number
alone reproduces nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping
from typing import Any

SEED_BOUND = 2**31 - 1
"""Keyed seeds lie in [0, SEED_BOUND): every environment here accepts them."""

DIAGNOSTIC_INFO_KEYS: dict[str, frozenset[str]] = {
    # Cooling: the true inlet temperatures (the observation carries the sensors' readings, which drift), the
    # violation minutes computed from them, the true chilled-water temperature, and the fault schedule.
    "cooling": frozenset({"inlet_c", "violation_minutes_27", "violation_minutes_32", "chw_supply_c", "faults"}),
    # Cluster: the environment's info and view hold only public material (an incident's reasons name the
    # limit crossed, not the true temperature: ``dcops.cluster.reward.WindowScore``); nothing to withhold.
    "cluster": frozenset(),
    "placement": frozenset(),
    "queue": frozenset(),
}
"""Per task family, the ``info`` keys that are evaluator diagnostics, never sent to a policy by default."""


def new_secret() -> bytes:
    """A fresh 256-bit secret (the server draws one per process unless the operator sets one)."""
    return secrets.token_bytes(32)


def secret_from_text(text: str) -> bytes:
    """An operator's secret from text (``DCOPS_EPISODE_SECRET``): its UTF-8 bytes."""
    if not text:
        raise ValueError("the episode secret must not be empty")
    return text.encode("utf-8")


def private_seed(secret: bytes, seed: int) -> int:
    """The seed an environment is reset with for the public ``seed``: HMAC-SHA256 of the seed under
    ``secret``, reduced to [0, 2³¹ − 1). Without the secret, the public seed says nothing of it."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed: must be a non-negative integer, got {seed!r}")
    digest = hmac.new(secret, str(seed).encode("ascii"), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") % SEED_BOUND


def split_info(family: str, info: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``info`` split into what a policy may see and the evaluator diagnostics of :data:`DIAGNOSTIC_INFO_KEYS`."""
    private = DIAGNOSTIC_INFO_KEYS[family]
    public = {k: v for k, v in info.items() if k not in private}
    diagnostics = {k: v for k, v in info.items() if k in private}
    return public, diagnostics
