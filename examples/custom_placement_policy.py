"""Plug a custom policy into the GPU placement benchmark (run: ``python examples/custom_placement_policy.py``).

A policy is any object with a ``name`` and ``act(observation) -> Place | Defer``; the same interface serves
the heuristics, the learned policy, the exact optimum and a language-model scheduler.
"""

from dcops.cluster.placement import CANONICAL, Defer, Place, PlacementObservation, run_episode
from dcops.cluster.placement.optimum import optimal_value


class UrgentOnCheapest:
    """Most urgent job first, on the cheapest free GPU that still meets its deadline."""

    name = "urgent_on_cheapest"

    def act(self, obs: PlacementObservation) -> Place | Defer:
        for job in sorted(obs.pending, key=lambda j: j.deadline):
            on_time = [p for p in obs.feasible if p.job_id == job.job_id and p.on_time]
            if on_time:
                best = min(on_time, key=lambda p: p.cost)
                return Place(best.job_id, best.gpu_id, f"{job.job_id} is the most urgent; cheapest on-time GPU")
        return Defer("nothing can start on time")


if __name__ == "__main__":
    for scenario in CANONICAL.values():
        m = run_episode(scenario, UrgentOnCheapest()).metrics
        print(f"{scenario.name:18} reward {m.total_reward:6.1f} (optimum {optimal_value(scenario):6.1f})  "
              f"completed {m.completed}  missed {m.missed}  invalid {m.invalid}")
