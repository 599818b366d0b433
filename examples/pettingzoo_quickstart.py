"""A short tour of ``datacenter_ops``: a baseline scheduler for the agent ``scheduler``, scripted teams (not
agents: they decide their own requests), then the RL form with a learner team and the int8 action mask.

Run: ``python examples/pettingzoo_quickstart.py``
"""

import dcops
from dcops import datacenter_ops_v1
from dcops.agents.schedulers import PriorityThresholdScheduler

env = dcops.parallel_env(render_mode="ansi")  # defaults: 8 windows of 90 min, 4 teams, rule-based cooling
observations, infos = env.reset(seed=42)
print(env.possible_agents)  # ['scheduler']: the four default teams are scripted
print(env.observation_space("scheduler"))

scheduler = PriorityThresholdScheduler()
while env.agents:
    view = infos["scheduler"]["view"]  # the public, structured view (for language agents and baselines)
    decisions = scheduler.decide(view)  # [{"request_id", "decision", "defer_to_window"}, ...]
    # An RL scheduler would send an array from env.action_space("scheduler") instead (below).
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

# The RL entry: PettingZoo's constructors, no structured view; a "learner" team is the agent learner_0.
rl = datacenter_ops_v1.parallel_env(team_kinds=("cooperative", "strategic", "learner"), n_windows=4)
observations, infos = rl.reset(seed=42)
print(rl.possible_agents, "learner_0 is", infos["learner_0"]["team"], "this episode")  # learners, then scheduler
while rl.agents:
    mask = observations["scheduler"]["action_mask"]  # int8, one entry per logit: 48 slots x 6 codes, slot after slot
    actions = {"scheduler": rl.action_space("scheduler").sample(mask),  # only valid decisions
               "learner_0": rl.action_space("learner_0").sample()}  # how its team states its next requests
    observations, rewards, terminations, truncations, infos = rl.step(actions)
print(f"RL episode: score {infos['scheduler']['episode']['score']:+.3f}, learner_0 last reward "
      f"{rewards['learner_0']:+.3f}, state {rl.state().shape}")
