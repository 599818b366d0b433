"""The LLM scheduler: prompt, strict parser, backends (OpenAI-compatible HTTP, local transformers, constrained
log-likelihood scoring) and the offline Gemma 3 270M model.

Importing this package never imports torch or transformers: the model code imports them when called.

- :mod:`.prompt`: :func:`build_prompt` (public view → prompt text; descriptions delimited as untrusted data);
- :mod:`.compact`: the ``sft`` mode's short per-request prompts, decided in order (:class:`.compact.CompactWindow`);
- :mod:`.parser`: :func:`parse_decisions` (strict, per-request problems, documented defaults, never raises);
- :mod:`.model`: :func:`load_gemma` (offline, cached conversion of the GGUF), :func:`tiny_model` (tests);
- :mod:`.backends`: transformers generation, constrained log-likelihood scoring, OpenAI-compatible HTTP;
- :mod:`.scheduler`: :class:`LLMScheduler`, :func:`make_llm_scheduler` (modes fewshot, constrained, grpo,
  sft, sft_grpo, openai);
- :mod:`.injection`: the prompt-injection measurement (``dcops eval-injection``).
"""

from dcops.agents.llm.parser import ParseResult, RequestProblem, parse_decisions
from dcops.agents.llm.prompt import SYSTEM_RULES, build_prompt
from dcops.agents.llm.scheduler import MODES, LLMScheduler, make_llm_scheduler

__all__ = ["MODES", "SYSTEM_RULES", "LLMScheduler", "ParseResult", "RequestProblem", "build_prompt",
           "make_llm_scheduler", "parse_decisions"]
