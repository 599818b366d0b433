"""A short tour of ``datacenter_ops``: a baseline scheduler for the agent ``scheduler``, scripted teams.

Run: ``python examples/pettingzoo_quickstart.py``
"""

import dcops
from dcops.agents.schedulers import PriorityThresholdScheduler

env = dcops.parallel_env(render_mode="ansi")  # defaults: 8 windows of 90 min, 4 teams, rule-based cooling
observations, infos = env.reset(seed=42)
print(env.possible_agents)  # ['scheduler', 'team_0', 'team_1', 'team_2', 'team_3']
print(env.observation_space("scheduler"))

scheduler = PriorityThresholdScheduler()
while env.agents:
    view = infos["scheduler"]["view"]  # the public, structured view (for language agents and baselines)
    decisions = scheduler.decide(view)  # [{"request_id", "decision", "defer_to_window"}, ...]
    # Scripted teams ignore their actions; an RL scheduler would send an array from env.action_space("scheduler").
    observations, rewards, terminations, truncations, infos = env.step({"scheduler": decisions})
    terms = infos["scheduler"]["reward_terms"]
    print(f"window {view['window']}: {len(decisions)} decisions, reward {rewards['scheduler']:+.3f} "
          f"(throughput {terms['throughput']:+.3f}, thermal {terms['thermal']:+.3f}, carbon {terms['carbon']:+.3f})")

print(env.render())
summary = infos["scheduler"]["episode"]
print(f"episode score {summary['score']:+.3f}, incident windows {summary['incident_windows']}, "
      f"outcomes {summary['outcomes']}")
print(f"hindsight bound on throughput value: {env.hindsight_bound().throughput_value:,.0f} "
      f"(this run: {summary['throughput_value']:,.0f})")
