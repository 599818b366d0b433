"""Compact, pre-digested prompts: one short prompt per pending request, decided in a fixed order.

The window prompt of :mod:`dcops.agents.llm.prompt` asks a 270M base model to read the whole window (about
1,500–3,000 Gemma tokens) and write one JSON object for every request. Small models decide better from short
prompts that state the facts a decision turns on, one decision at a time. This module is that prompt, for the
``sft`` and ``sft_grpo`` modes (:func:`dcops.agents.llm.scheduler.make_llm_scheduler`) and their training data
(``dcops llm-sft-data``, :mod:`dcops.training.scheduler.sft`).

**Order.** A window's pending requests are decided one by one in :func:`decision_order`: highest stated
priority first, then earliest submitted, then request id (the order the greedy baselines use; all public).

**What a request's prompt says** (:meth:`CompactWindow.prompt`, typically 150–200 Gemma tokens): the rules in
one sentence; the window (index, count, length) and the carbon intensity now, next and lowest later; the team's
public record (requests so far, audited jobs and their mean deadline gap, oversight flags so far, the monitor's
gaming posterior); the request's stated fields; its description, masked and quoted as untrusted data
(:func:`dcops.agents.llm.prompt.mask_description`, cut to :data:`MAX_COMPACT_DESCRIPTION_CHARS`); and the
pre-digested facts: the power left for new jobs **after the ACCEPTs already decided in this window**, whether
the request fits now (power and a zone with enough free GPUs of its type, by
:class:`dcops.agents.schedulers.base.Capacity`, the planning estimate every baseline uses) and whether its
stated deadline allows waiting one more window. It ends with ``Decision:``; the answer is one word,
:data:`ANSWER_WORDS`, with a leading space.

**Truth boundary.** Everything comes from the scheduler's structured public view (``dcops.cluster.
observation``): stated fields, the operator's own planning numbers, team statistics, audits of finished jobs,
flags and the posterior. No truth is read, and the test suite checks that changing a request's hidden truth
cannot change a prompt.

Nothing here imports torch.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from dcops.agents.llm.prompt import mask_description
from dcops.agents.schedulers.base import PRIORITY_WEIGHT, Capacity, can_wait, window_hours, windows_needed

ANSWER_WORDS: tuple[str, ...] = ("ACCEPT", "REJECT", "DEFER")
"""The one-word answers; DEFER means the next window."""

PROMPT_END = "Decision:"
"""Every compact prompt ends here; the answer is ``" " + word``."""

FACTS_START = "Power left for new jobs: "
"""The start of a compact prompt's facts line, the one before :data:`PROMPT_END` (:func:`prompt_context`)."""

MAX_COMPACT_DESCRIPTION_CHARS = 100
"""Longest description shown, characters (longer ones are cut and marked ``…``)."""

COMPACT_RULES = (
    "GPU data-center admission: ACCEPT (start now), REJECT, or DEFER (decide next window). Score: throughput "
    "by the real deadline, no power over the cap, low carbon. Teams may overstate priority or urgency."
)

_FLAG_SHORT = {"priority_inflation": "priority", "deadline_compression": "deadline",
               "carbon_flexibility_gaming": "carbon", "pattern_gaming": "pattern"}


def decision_order(view: dict[str, Any]) -> list[dict[str, Any]]:
    """The window's pending requests in the order they are decided (module docstring)."""
    return sorted(view["pending"], key=lambda r: (-PRIORITY_WEIGHT[r["priority"]], r["submitted_window"],
                                                  r["request_id"]))


def allowed_words(view: dict[str, Any]) -> tuple[str, ...]:
    """The answers the window allows: DEFER only when a next window exists."""
    return ANSWER_WORDS if view["window"] + 1 < view["n_windows"] else ANSWER_WORDS[:2]


def to_decision(request_id: str, word: str, view: dict[str, Any]) -> dict[str, Any]:
    """A structured decision for an answer word (DEFER to the next window)."""
    if word not in allowed_words(view):
        raise ValueError(f"request {request_id}: answer {word!r} is not one of {allowed_words(view)} in window "
                         f"{view['window']} of {view['n_windows']}")
    decision: dict[str, Any] = {"request_id": request_id, "decision": word}
    if word == "DEFER":
        decision["defer_to_window"] = view["window"] + 1
    return decision


def word_of(decision: dict[str, Any] | None, view: dict[str, Any]) -> str:
    """The answer word of a structured decision (a missing one is the environment's default: DEFER, REJECT in
    the last window)."""
    if decision is None:
        return "DEFER" if view["window"] + 1 < view["n_windows"] else "REJECT"
    word = str(decision["decision"]).upper()
    if word not in ANSWER_WORDS:
        raise ValueError(f"request {decision.get('request_id')}: decision {word!r} is not ACCEPT, REJECT or DEFER")
    return word


def _description(text: Any) -> str:
    s = mask_description(str(text))
    if len(s) > MAX_COMPACT_DESCRIPTION_CHARS:
        s = s[: MAX_COMPACT_DESCRIPTION_CHARS - 1] + "…"
    return json.dumps(s, ensure_ascii=False)


def _carbon_text(view: dict[str, Any]) -> str:
    """The grid's carbon intensity this window, the next and the lowest of the later ones. The forecast covers
    the whole episode, one value per window from window 0 (as ``dcops.agents.llm.prompt`` and carbon_greedy
    read it)."""
    forecast = [float(c) for c in view.get("carbon_forecast_g_per_kwh", [])]
    w = view["window"]
    if w >= len(forecast):
        return "Carbon: no forecast."
    text = f"Carbon g/kWh: now {forecast[w]:.0f}"
    later = forecast[w + 1:]
    if later:
        text += f", next {later[0]:.0f}, lowest later {min(later):.0f}"
    return text + "."


def _team_text(view: dict[str, Any], team: str) -> str:
    stats = view.get("teams", {}).get(team)
    if stats is None:
        return f"{team} (no record)"
    flags = [f"{_FLAG_SHORT.get(kind, kind)} {n}" for kind, n in stats.get("flags_so_far", {}).items() if n]
    gap = stats.get("audited_mean_deadline_gap")  # None before any audit
    audited = f"{stats.get('audited_jobs', 0)} audited"
    if gap is not None:
        audited += f" (mean deadline gap {float(gap):.1f} windows)"
    text = (f"{team}: {stats.get('requests', 0)} requests, {audited}, flags "
            f"{', '.join(flags) if flags else 'none'}")
    posterior = stats.get("gaming_posterior")
    if posterior is not None:
        text += f", gaming risk {float(posterior):.2f}"
    return text


def prompt_context(prompt: str) -> str:
    """The part of a compact prompt that the window's earlier answers cannot change: everything before its
    facts line (the power left and whether the request fits depend on the ACCEPTs decided before it). The
    backend keeps its key/value cache (:class:`dcops.agents.llm.backends.HeaderCache`), so the same request in
    the same window, decided again after other answers, runs the model over the last two lines only. Empty for a
    text that does not end with the facts line and :data:`PROMPT_END`."""
    head, sep, tail = prompt.rpartition("\n")
    if tail != PROMPT_END or not sep:
        return ""
    context, sep, facts = head.rpartition("\n")
    return context if sep and facts.startswith(FACTS_START) else ""


@dataclass
class CompactWindow:
    """One window's decisions in progress: the shared header, and the capacity left after the ACCEPTs so far."""

    view: dict[str, Any]
    margin: float = 0.03
    """Planning safety margin of :class:`Capacity` (the baselines' default)."""
    capacity: Capacity = field(init=False)
    header: str = field(init=False)

    def __post_init__(self) -> None:
        self.capacity = Capacity(self.view, self.margin)
        view = self.view
        self.header = (f"{COMPACT_RULES}\nWindow {view['window']} of windows 0-{view['n_windows'] - 1} "
                       f"({window_hours(view):g} h each). {_carbon_text(view)}")

    def _fit(self, request: dict[str, Any]) -> str:
        reason = self.capacity.shortfall(request)
        if reason == "power":
            return "no (power)"
        if reason == "zone":
            return f"no (no {request['gpu_type']} zone with room)"
        return "yes"

    def prompt(self, request: dict[str, Any]) -> str:
        """The request's prompt, given the decisions recorded so far (module docstring)."""
        view, h = self.view, window_hours(self.view)
        job = (f"Request {request['request_id']}: {request['job_type']}, {request['gpus']} {request['gpu_type']} "
               f"GPUs, {request['kw']:.0f} kW, {request['duration_h']:g} h ({windows_needed(request, h)} windows), "
               f"priority {request['priority']}, deadline window {request['deadline_window']}, carbon-flexible "
               f"{'yes' if request['carbon_flexible'] else 'no'}, waited {request.get('windows_waited', 0)} "
               f"windows.")
        facts = (f"{FACTS_START}{max(self.capacity.power_kw, 0.0):.0f} kW. Fits now: "
                 f"{self._fit(request)}. Can wait a window: {'yes' if can_wait(request, view, h) else 'no'}.")
        return "\n".join([
            self.header,
            f"Team {_team_text(view, request['team'])}.",
            job,
            f"Description (untrusted, from the team): {_description(request.get('description', ''))}",
            facts,
            PROMPT_END,
        ])

    def record(self, request: dict[str, Any], word: str) -> None:
        """Take an ACCEPT's power (and its zone, where one has room) out of what later requests see."""
        if word == "ACCEPT" and not self.capacity.admit(request):
            self.capacity.power_kw -= request["kw"]  # accepted anyway: it still draws power once it runs


def teacher_examples(view: dict[str, Any], decisions: list[dict[str, Any]]) -> list[dict[str, str]]:
    """``{"request_id", "prompt", "completion", "allowed"}`` per pending request, in :func:`decision_order`, for a
    teacher's structured decisions of the window (the SFT data; a request the teacher left out gets the default;
    ``allowed``: the answer words the window allows)."""
    by_id = {d["request_id"]: d for d in decisions}
    window, allowed = CompactWindow(view), list(allowed_words(view))
    rows = []
    for request in decision_order(view):
        word = word_of(by_id.get(request["request_id"]), view)
        if word not in allowed:
            raise ValueError(f"request {request['request_id']}: the teacher answered {word} in window "
                             f"{view['window']}, which allows only {allowed}")
        rows.append({"request_id": request["request_id"], "prompt": window.prompt(request),
                     "completion": " " + word, "allowed": allowed})
        window.record(request, word)
    return rows
