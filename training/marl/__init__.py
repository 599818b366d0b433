"""Multi-agent learning on datacenter_ops: RLlib PPO per role, SuperSuit parameter sharing, configs."""
