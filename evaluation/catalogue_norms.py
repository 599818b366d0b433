"""How the version 1 monitor judges a catalogue's teams by a given catalogue's honest norms.

A job catalogue (``ClusterConfig.catalogue``) is public, so the monitor judges statements by its norms
(``dcops.oversight.honest_model.honest_model_for``). :func:`judge` measures what that buys: teams of given kinds
play episodes under one catalogue while the monitor judges them by the norms of another (or the same), and it
returns how many teams were flagged and each team's stated-priority statistic (the z of its stated levels over
the norms of their types, over its whole episode). Every request is rejected and the cooling is the rule: a
statement or an audit does not depend on the plant or the scheduler, so the episodes are cheap.
``reports/cluster/headroom/catalogue.py --norms`` tabulates it; ``tests/cluster/test_catalogue.py`` guards it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Judgement:
    """Teams flagged at least once (any detector) out of ``teams``, and every team's stated-priority z."""

    flagged: int
    teams: int
    stated_z: tuple[float, ...]

    @property
    def flagged_share(self) -> float:
        return self.flagged / self.teams


def judge(kinds: tuple[str, ...], catalogue: str, norms: str, seeds: Iterable[int], n_windows: int = 16) -> Judgement:
    """Episodes of ``kinds`` under ``catalogue`` on ``seeds``, judged by the honest norms of ``norms``."""
    import dcops
    from dcops.agents.schedulers import RejectAllScheduler
    from dcops.evaluation.play import run_episode
    from dcops.oversight.calibrated import CalibratedMonitor
    from dcops.oversight.honest_model import honest_model_for

    env = dcops.parallel_env(team_kinds=kinds, catalogue=catalogue, cooling="rule", n_windows=n_windows)
    env.monitor = CalibratedMonitor(window_h=env.config.window_h, model=honest_model_for(norms))
    flagged, teams, stated = 0, 0, []
    for seed in seeds:
        run_episode(RejectAllScheduler(), seed, env=env)
        flagged += len({f.team for f in env.monitor.flags})
        teams += len(env.team_ids)
        for store in env.monitor.teams.values():
            stated.append(env.monitor.stated_z(store.sums(0, n_windows - 1))["priority_inflation"])
    return Judgement(flagged, teams, tuple(stated))
