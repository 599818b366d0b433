"""TRL's environment path for the LLM scheduler: multi-turn GRPO over the dcops OpenEnv server.

:class:`ClusterSchedulingEnv` is an environment for ``trl.GRPOTrainer(environment_factory=...)`` (TRL 1.16):
each rollout plays one episode of ``cluster/operations`` on a running dcops server (``make run``, or
``dcops serve``) through :class:`dcops.client.DcopsClient`, one window per turn::

    from trl import GRPOConfig, GRPOTrainer
    from dcops.training.scheduler.trl_env import ClusterSchedulingEnv, episode_dataset, use_tool_chat_template

    use_tool_chat_template(tokenizer)                 # only for a tokenizer whose template has no tool calls
    trainer = GRPOTrainer(model=model, processing_class=tokenizer, args=GRPOConfig(...),
                          train_dataset=episode_dataset(seeds=range(1000, 1064)),
                          environment_factory=lambda: ClusterSchedulingEnv("http://127.0.0.1:8000"))
    trainer.train()

**How TRL drives it** (``trl/trainer/grpo_trainer.py``): the factory is called with no argument, first to probe
the class (that instance seeds a pool) and then only while a batch needs more concurrent rollouts than the pool
holds, so there are as many instances as concurrent rollouts, pooled and reused (:meth:`reset` starts afresh);
before generation each rollout's instance gets ``reset(**row)`` with the dataset row's columns and the string it
returns is appended to the row's last user message; every public method other than ``reset`` and ``get_reward``
is offered to the model as a tool (its type hints and docstring become the JSON schema in the prompt), here only
:meth:`answer_window`; each tool call's return value goes back to the model as a tool message and generation goes
on, up to ``max_tool_calling_iterations`` and ``max_completion_length``; once the rollout is finished TRL calls
:meth:`get_reward`, its reward source named after the class (weight 1, beside any ``reward_funcs``).

**A turn** is one admission window: the model calls ``answer_window(answer=...)`` with its ACCEPT / REJECT /
DEFER answers as the JSON object the prompt asks for (``dcops.agents.llm.prompt``), keyed by every pending
request id; :func:`dcops.agents.llm.parser.parse_decisions` turns it into one valid decision per pending request
(the documented default for any entry it rejects), the client steps the server with them, and the tool returns
the window's reward and the next window (:func:`dcops.agents.llm.prompt.window_question`) or the episode's end.

**Reward** (:meth:`get_reward`): the episode's return as the server's step replies give it (the sum of the
window rewards, ``dcops.cluster.reward``) plus the format term of each window's answer
(:class:`dcops.training.scheduler.reward.FormatTerms`, +0.05 when it parses, −0.10 per rejected entry, at most
5 counted). Windows the model did not answer (it stopped calling the tool, or ran out of tokens) are played to
the end of the episode with an empty answer, i.e. the parser's defaults and the format term of an answer that
did not parse, so every rollout of a group is scored on the same whole episode.

**Truth boundary**: the environment sees only what the server gives a policy: the observation's public view,
the step rewards, ``done``. The episode's private seed stays on the server (the dataset's ``seed`` is the public
one, which the server maps to a private seed with its operator secret; the same public seed gives every rollout
of a group the same episode).

**Chat template**: tool calls need a chat template that can render them and a response parser that can read
them back. The Gemma 3 tokenizer of ``gemma`` / ``tiny`` has neither; :func:`use_tool_chat_template` gives such a
tokenizer TRL's ChatML tool-calling template (Qwen 3's: ``<tool_call>{json}</tool_call>``, written as plain
text), which TRL knows how to parse; a model whose own template supports tools keeps it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dcops.training.scheduler.reward import FormatTerms

TASK = "cluster/operations"
DEFAULT_URL = "http://127.0.0.1:8000"
URL_VARIABLE = "DCOPS_URL"

INSTRUCTIONS = (
    "Play the admission scheduler of a GPU data center for a whole episode, one window at a time. For each "
    "window call the tool answer_window once, with answer set to one JSON object keyed by every pending request "
    "id, each value {\"decision\": \"ACCEPT\"}, {\"decision\": \"REJECT\"} or {\"decision\": \"DEFER\", "
    "\"defer_to_window\": W}. The tool replies with the window's reward and the next window; stop when it says "
    "the episode is over."
)
"""The dataset prompt's user message (:func:`episode_dataset`); :meth:`ClusterSchedulingEnv.reset` appends the
rules and the first window to it."""


@dataclass
class WindowTurn:
    """One window of an episode as the environment played it."""

    window: int
    reward: float
    """The server's reward for the window (the step reply's ``reward``)."""
    format_term: float
    format_ok: bool
    n_invalid: int
    by_model: bool
    """The model answered this window through the tool (else it was played with an empty answer)."""


@dataclass
class EpisodeRecord:
    """What an environment instance saw of its current episode (read by tests and logging)."""

    seed: int | None
    episode_id: str = ""
    turns: list[WindowTurn] = field(default_factory=list)
    done: bool = False

    @property
    def model_turns(self) -> int:
        """Windows the model answered through the tool."""
        return sum(t.by_model for t in self.turns)

    @property
    def server_return(self) -> float:
        """The sum of the server's window rewards."""
        return sum(t.reward for t in self.turns)

    @property
    def reward(self) -> float:
        """The rollout's reward: the server's return plus the format terms."""
        return sum(t.reward + t.format_term for t in self.turns)


class ClusterSchedulingEnv:
    """One ``cluster/operations`` episode on a dcops server per rollout, for TRL's ``environment_factory``.

    :param base_url: the server (default ``$DCOPS_URL``, else ``http://127.0.0.1:8000``, ``make run``'s).
    :param options: task options of the reset (``/metadata``), e.g. ``{"n_windows": 4}``; a dataset row's
        ``options`` column (a dict) overrides them per episode.
    :param few_shot: put the prompt's worked example in the first turn (``dcops.agents.llm.prompt``).
    :param terms: weights of the per-window format term (module docstring).
    :param timeout_s: bound of each server request.
    """

    def __init__(self, base_url: str | None = None, options: Mapping[str, Any] | None = None,
                 few_shot: bool = False, terms: FormatTerms | None = None, timeout_s: float = 30.0) -> None:
        from dcops.client import DcopsClient

        self.client = DcopsClient(base_url or os.environ.get(URL_VARIABLE) or DEFAULT_URL, timeout_s=timeout_s)
        """The episode's connection (an attribute, not a method: TRL offers only methods to the model)."""
        self._options = dict(options or {})
        self._few_shot = few_shot
        self._terms = terms or FormatTerms()
        self._view: dict[str, Any] | None = None
        self.episode = EpisodeRecord(seed=None)
        self.episodes_started = 0

    # TRL treats every public method except reset and get_reward as a tool: helpers stay private.
    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None, **row: Any) -> str:
        """Start the episode of the public ``seed`` (a dataset column; other columns are ignored) and return the
        rules and the first window, which TRL appends to the prompt's user message."""
        from dcops.agents.llm.prompt import prompt_head, window_question

        result = self.client.reset(task=TASK, seed=None if seed is None else int(seed),
                                    **{**self._options, **dict(options or {})})
        self.episode = EpisodeRecord(seed=None if seed is None else int(seed),
                                     episode_id=str(result.metadata.get("episode_id", "")), done=result.done)
        self.episodes_started += 1
        self._view = result.observation.get("view")
        if result.done or self._view is None:
            return "\n\nThe episode is already over."
        return "\n\n" + prompt_head(self._few_shot) + window_question(self._view)

    def answer_window(self, answer: str) -> str:
        """Answer every pending request of the current window; the episode moves on to the next window.

        Args:
            answer: One JSON object keyed by every pending request id, each value {"decision": "ACCEPT"},
                {"decision": "REJECT"} or {"decision": "DEFER", "defer_to_window": W}.

        Returns:
            The window's reward and the next window to answer, or the end of the episode.
        """
        if self.episode.done or self._view is None:
            raise ValueError("the episode is over: do not call answer_window again")
        if not isinstance(answer, str):  # a model may write the object itself instead of a JSON string
            answer = json.dumps(answer)
        reward = self._play(answer, by_model=True)
        if self.episode.done:
            return f"Window reward {reward:+.3f}. The episode is over (return {self.episode.server_return:+.3f})."
        from dcops.agents.llm.prompt import window_question

        return f"Window reward {reward:+.3f}.\n\n" + window_question(self._view)

    def get_reward(self) -> float:
        """The rollout's reward (module docstring), after playing out any window the model left unanswered."""
        while not self.episode.done and self._view is not None:
            self._play("", by_model=False)
        return self.episode.reward

    def _play(self, answer: str, by_model: bool) -> float:
        """Parse ``answer`` against the current view, step the server with the decisions, record the turn."""
        from dcops.agents.llm.parser import parse_decisions

        view = self._view
        parsed = parse_decisions(answer, view)
        result = self.client.step({"decisions": parsed.decisions})
        reward = float(result.reward or 0.0)
        self.episode.turns.append(WindowTurn(int(view["window"]), reward,
                                             self._terms.score(parsed.format_ok, parsed.n_invalid),
                                             bool(parsed.format_ok), int(parsed.n_invalid), by_model))
        self.episode.done = bool(result.done)
        self._view = None if result.done else result.observation.get("view")
        return reward


def episode_dataset(seeds: Iterable[int], options: Mapping[str, Any] | None = None) -> Any:
    """A ``datasets.Dataset`` with one row per episode: the conversational ``prompt`` (:data:`INSTRUCTIONS`),
    the public ``seed`` and, when given, the task ``options`` of every episode."""
    from datasets import Dataset

    rows = []
    for seed in seeds:
        row: dict[str, Any] = {"prompt": [{"role": "user", "content": INSTRUCTIONS}], "seed": int(seed)}
        if options:
            row["options"] = dict(options)
        rows.append(row)
    if not rows:
        raise ValueError("seeds: empty")
    return Dataset.from_list(rows)


def use_tool_chat_template(tokenizer: Any) -> bool:
    """Give ``tokenizer`` TRL's ChatML tool-calling template when its own cannot render a tool-calling exchange
    (module docstring); returns whether it did. TRL then sets the matching response parser and its
    prefix-preserving training variant itself."""
    from trl.chat_template_utils import qwen3_chat_template, supports_tool_calling

    if supports_tool_calling(tokenizer):
        return False
    tokenizer.chat_template = qwen3_chat_template
    return True
