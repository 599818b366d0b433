"""Training of the PPO cooling controller: its training environment, the evaluation family, rule tuning."""
