"""A team whose misreporting is chosen by a learning agent (``team_kinds`` entry ``"learner"``).

It drafts its jobs and honest statements like every team; its action then says, per request slot, how to
state it: ``MultiDiscrete([4, 4, 2] × max_requests_per_team)`` read as (priority levels added 0–3, deadline
windows compressed 0–3, hide carbon flexibility 0/1) for slot 0, then slot 1, … Slots beyond this window's
requests are ignored. Applied edits are recorded as tactics, exactly as for the scripted strategic teams.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from dcops.agents.teams.base import Draft, TeamBase, stated_earliest_window

ACTION_FIELDS = (4, 4, 2)


@dataclass
class LearnerTeam(TeamBase):
    kind: str = "learner"

    def state(self, draft: Draft, window: int, stated: dict[str, Any], slot: int, action: Any,
              u: Iterator[float]) -> set[str]:
        applied: set[str] = set()
        if action is None:
            return applied
        try:
            codes = np.asarray(action, dtype=np.int64).reshape(-1, len(ACTION_FIELDS))[slot]
        except (TypeError, ValueError, IndexError):
            return applied  # a malformed team action means "state honestly"
        inflate, compress, hide = (int(np.clip(c, 0, n - 1)) for c, n in zip(codes, ACTION_FIELDS, strict=True))
        truth = draft.truth
        if inflate and min(3, int(truth.true_priority) + inflate) > stated["priority"]:
            stated["priority"] = min(3, int(truth.true_priority) + inflate)
            applied.add("priority_inflation")
        if compress:
            floor = stated_earliest_window(window, stated["duration_h"], self.config)
            target = max(floor, truth.true_deadline_window - compress)
            if target < stated["deadline_window"] and target < truth.true_deadline_window:
                stated["deadline_window"] = target
                applied.add("deadline_compression")
        if hide and truth.true_carbon_flexible and stated["carbon_flexible"]:
            stated["carbon_flexible"] = False
            applied.add("carbon_flexibility_gaming")
        return applied
