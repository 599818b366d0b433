"""Multi-agent learning on datacenter_ops_v0: RLlib PPO per role, SuperSuit parameter sharing, configs."""
