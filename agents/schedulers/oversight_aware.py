"""The oversight-aware baseline: ``priority_threshold`` that believes a team only as far as oversight trusts it.

Each team of the version 1 view carries ``gaming_posterior`` p, the calibrated probability that it misreports
on purpose (``dcops.oversight.posterior``). A request's stated priority level L (0 LOW … 3 CRITICAL) is read
as the expected level ``L − p · discount_levels`` (a strategic team inflates by 1.4 levels on average, 0.6 × 1 +
0.4 × 2, when it inflates at all; ``discount_levels`` defaults to 1), its weight as ``2^level``, and its stated
deadline as ``deadline + p · deadline_windows`` windows later when deciding whether it can wait (a compressed
deadline is 1–3 windows early). Then ``priority_threshold``: requests *stated* below the threshold are
rejected, the others taken in order of expected weight, accepted while power and a zone allow, deferred while
the expected deadline allows, rejected otherwise.

The discount orders; it does not exclude. A gaming team's jobs still have true value (most of its requests
are truly MEDIUM or above), and rejecting them costs that value and the rejection penalty, so the discount only
changes which requests are taken first and which may wait. What it is worth is the ladder's
``oversight_aware`` rung (``dcops eval-cluster --ladder all``, ``reports/cluster/ladder``).

Without ``gaming_posterior`` in the view (game version 0) p is 0 and it is ``priority_threshold``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dcops.agents.schedulers.base import PRIORITY_LEVEL, can_wait
from dcops.agents.schedulers.threshold import PriorityThresholdScheduler


@dataclass
class OversightAwareScheduler(PriorityThresholdScheduler):
    name: str = "oversight_aware"
    discount_levels: float = 1.0
    deadline_windows: float = 1.0

    @staticmethod
    def posterior(request: dict[str, Any], view: dict[str, Any]) -> float:
        return float(view.get("teams", {}).get(request["team"], {}).get("gaming_posterior", 0.0))

    def expected_level(self, request: dict[str, Any], view: dict[str, Any]) -> float:
        return PRIORITY_LEVEL[request["priority"]] - self.posterior(request, view) * self.discount_levels

    def key(self, request: dict[str, Any], view: dict[str, Any]) -> tuple[Any, ...]:
        return (-(2.0 ** self.expected_level(request, view)), request["submitted_window"], request["request_id"])

    def waitable(self, request: dict[str, Any], view: dict[str, Any], window_h: float) -> bool:
        shift = round(self.posterior(request, view) * self.deadline_windows)
        return can_wait({**request, "deadline_window": request["deadline_window"] + shift}, view, window_h)
