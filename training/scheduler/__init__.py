"""Training of the LLM scheduler: GRPO with a LoRA adapter, its window states, reward and reports."""
