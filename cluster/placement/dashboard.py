"""Text dashboard fields of an observation, for people and language-model prompts.

- ``summary``: one line (tick, queue counts, reward, cost, allocation);
- ``action_hint``: every feasible action in the syntax :func:`~dcops.cluster.placement.actions.action_from_text`
  reads, each with its completion tick, total cost and whether it meets the deadline, then ``defer()``;
- ``gpu_lines``: one line per GPU (type, VRAM, speed, price, state);
- ``queue_lines``: one line per pending job (most urgent first) then per running job;
- ``last_action``: the previous decision, its rationale, its reward, and the reason if it was invalid.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dcops.cluster.placement.observation import Dashboard

if TYPE_CHECKING:
    from dcops.cluster.placement.observation import PlacementObservation


def build_dashboard(obs: PlacementObservation) -> Dashboard:
    """Render the dashboard of ``obs`` (its own ``dashboard`` field is ignored)."""
    m = obs.metrics
    summary = (
        f"[{obs.scenario}] tick {obs.tick}/{obs.horizon} | pending {len(obs.pending)}, running {len(obs.running)}, "
        f"completed {len(obs.completed)}, missed {len(obs.missed)}, invalid {m.invalid} | reward {m.total_reward:.1f} "
        f"| cost {m.total_cost:.1f} | allocation {100 * m.allocation:.0f}%"
        + (" | DONE" if obs.done else "")
    )
    gpu_lines = []
    for g in obs.gpus:
        head = f"{g.gpu_id:<10} {g.gpu_type:<5} {g.vram_gb:>3} GB  x{g.speed}  {g.cost_per_tick:.1f}/tick  "
        if g.state == "busy":
            gpu_lines.append(head + f"BUSY with {g.job_id} until tick {g.free_at}")
        elif g.state == "reserved":
            gpu_lines.append(head + f"RESERVED (outside work) until tick {g.free_at}")
        else:
            gpu_lines.append(head + "free")
    queue_lines = []
    for j in sorted(obs.pending, key=lambda j: (j.deadline, -j.priority, j.arrival)):
        queue_lines.append(
            f"{j.job_id:<6} pending  prio {j.priority}  {j.vram_gb:>3} GB  work {j.work:>2}  "
            f"deadline tick {j.deadline} ({j.deadline - obs.tick} ticks left)  arrived tick {j.arrival}"
        )
    for j in obs.running:
        queue_lines.append(f"{j.job_id:<6} running  on {j.gpu_id} since tick {j.start}, completes tick {j.end}")
    if obs.done:
        hint = "Episode over: no action."
    else:
        options = [
            f"place({p.job_id}, {p.gpu_id}) [ends tick {p.end}, cost {p.cost:.1f}, {'on time' if p.on_time else 'LATE'}]"
            for p in obs.feasible
        ]
        hint = "Feasible actions: " + "; ".join([*options, "defer()"])
    last = ""
    if obs.history:
        h = obs.history[-1]
        played = f"place({h.job_id}, {h.gpu_id})" if h.action == "place" else f"{h.action}()"
        status = f"reward {h.reward:+.1f}" if h.valid else f"INVALID: {h.reason}; reward {h.reward:+.1f}"
        last = f"Last action (tick {h.tick}): {played}" + (f' "{h.rationale}"' if h.rationale else "") + f" -> {status}"
    return Dashboard(summary, hint, tuple(gpu_lines), tuple(queue_lines), last)
