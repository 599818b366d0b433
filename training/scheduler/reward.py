"""The GRPO reward of one completion: the environment's window reward after its decisions, plus a format term.

For a completion c of the prompt of window state s (``dcops.training.scheduler.states``)::

    reward(c) = R_env(c) + F(c)

- ``R_env`` is the scheduler's reward from ``datacenter_ops`` (``dcops.cluster.reward``, in [−1.10, 0.65]
  per window) after restoring s and stepping once with the completion's parsed decisions
  (``dcops.agents.llm.parser.parse_decisions``: one decision per pending request, the documented default for
  any the completion got wrong or left out). With ``horizon`` H > 1 the episode then continues for up to H − 1
  more windows with the baseline scheduler that built the states, and ``R_env`` is the sum of those window
  rewards: the window reward alone credits a job only in the window its lifecycle resolves, so an ACCEPT of a
  long job earns nothing in its own window (``horizon=1``, the default, is the issue's window reward).
- ``F(c) = format_bonus · [the answer parsed as the expected JSON] − invalid_penalty · min(n_invalid,
  max_invalid)`` with ``n_invalid`` the entries the parser rejected (bad JSON, unknown or missing id, duplicate,
  bad window; ``ParseResult.n_invalid``). Defaults +0.05 and −0.10 per invalid entry, at most 5 counted
  (F ∈ [−0.50, +0.05]): large enough that a base model first learns to answer in the format, small enough
  against the window reward's spread that it does not swamp the scheduling signal once it does.

The environment adds its own invalid-decision penalty only for what reaches it; the parser's defaults make
every decision valid there, so the format term is where malformed output is paid for.

Each call also reports, through TRL's ``log_metric`` hook, the batch's mean environment reward, mean format
term, format-failure rate (share of completions whose answer did not parse) and mean invalid entries per
completion, so they land in the per-step log next to TRL's reward, KL and loss.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from dcops.training.scheduler.states import StateSet


@dataclass(frozen=True)
class FormatTerms:
    """Weights of the format term ``F`` (module docstring)."""

    format_bonus: float = 0.05
    invalid_penalty: float = 0.10
    max_invalid: int = 5

    def __post_init__(self) -> None:
        if self.format_bonus < 0 or self.invalid_penalty < 0:
            raise ValueError("format_bonus and invalid_penalty must be >= 0")
        if self.max_invalid < 0:
            raise ValueError("max_invalid must be >= 0")

    def score(self, format_ok: bool, n_invalid: int) -> float:
        return self.format_bonus * float(format_ok) - self.invalid_penalty * min(n_invalid, self.max_invalid)


@dataclass(frozen=True)
class Scored:
    """The reward of one completion and its parts."""

    reward: float
    env_reward: float
    format_term: float
    format_ok: bool
    n_invalid: int


def _completion_text(completion: Any) -> str:
    """TRL passes plain strings for text prompts, a message list for conversational ones."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion and isinstance(completion[-1], dict):
        return str(completion[-1].get("content", ""))
    raise TypeError(f"completion: expected a string or a message list, got {type(completion).__name__}")


class SchedulerReward:
    """TRL reward function (``reward_funcs=[SchedulerReward(...)]``) scoring completions in the environment.

    The dataset rows carry ``state_key`` (``WindowState.key``); TRL repeats that column for each of the G
    completions of a prompt, so every completion of a group is scored from the same snapshot.
    """

    __name__ = "env_window"

    def __init__(self, states: StateSet, terms: FormatTerms | None = None, horizon: int = 1,
                 baseline: str = "priority_threshold",
                 parse: Callable[[str, dict[str, Any]], Any] | None = None,
                 completions_log: str | Path | None = None) -> None:
        if horizon < 1:
            raise ValueError(f"horizon: must be >= 1 window, got {horizon}")
        if parse is None:
            from dcops.agents.llm.parser import parse_decisions as parse
        self.states = states
        self.terms = terms or FormatTerms()
        self.horizon = horizon
        self.baseline = baseline
        self.parse = parse
        self.completions_log = Path(completions_log) if completions_log is not None else None
        """If set, every scored completion is appended there as one JSON line (step, state, reward parts, text)."""

    def score(self, text: str, state_key: str) -> Scored:
        """Restore the state, apply the completion's decisions, return the reward and its parts."""
        parsed = self.parse(text, self.states[state_key].view)
        env_reward = self.env_reward(parsed.decisions, state_key)
        n_invalid = int(parsed.n_invalid)
        format_term = self.terms.score(bool(parsed.format_ok), n_invalid)
        return Scored(env_reward + format_term, env_reward, format_term, bool(parsed.format_ok), n_invalid)

    def env_reward(self, decisions: list[dict[str, Any]], state_key: str) -> float:
        """``R_env`` of already-parsed ``decisions`` from the state ``state_key`` (module docstring): also how
        the run's report scores fixed decision rules on the states the completions saw."""
        env = self.states[state_key].restore()
        _, rewards, _, _, infos = env.step({"scheduler": decisions})
        env_reward = float(rewards["scheduler"])
        if self.horizon > 1:
            from dcops.agents.schedulers import BASELINES

            scheduler = BASELINES[self.baseline]()
            for _ in range(self.horizon - 1):
                if not env.agents:
                    break
                _, rewards, _, _, infos = env.step({"scheduler": scheduler.decide(infos["scheduler"]["view"])})
                env_reward += float(rewards["scheduler"])
        return env_reward

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], state_key: Sequence[str],
                 log_metric: Callable[[str, float], None] | None = None, trainer_state: Any = None,
                 **_: Any) -> list[float]:
        if len(state_key) != len(completions):
            raise ValueError(f"state_key: {len(state_key)} keys for {len(completions)} completions")
        texts = [_completion_text(c) for c in completions]
        scored = [self.score(text, key) for text, key in zip(texts, state_key, strict=True)]
        if self.completions_log is not None:
            step = getattr(trainer_state, "global_step", None)
            step = None if step is None else step + 1  # TRL scores before the optimiser step it feeds
            with self.completions_log.open("a") as f:
                for text, key, s in zip(texts, state_key, scored, strict=True):
                    f.write(json.dumps({"step": step, "state_key": key, **asdict(s), "text": text[:2000]}) + "\n")
        if log_metric is not None and scored:
            n = len(scored)
            log_metric("env_reward", sum(s.env_reward for s in scored) / n)
            log_metric("format_term", sum(s.format_term for s in scored) / n)
            log_metric("format_failure_rate", sum(not s.format_ok for s in scored) / n)
            log_metric("invalid_per_completion", sum(s.n_invalid for s in scored) / n)
        return [s.reward for s in scored]
