"""The LLM scheduler: prompt, strict parser, backends (OpenAI-compatible HTTP, local transformers, constrained
log-likelihood scoring) and the offline Gemma 3 270M model."""
