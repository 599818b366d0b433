"""Scheduler names of the evaluation, and the policies they build.

A scheduler is named by one of:

- a baseline of ``dcops.agents.schedulers.BASELINES`` (``priority_threshold``, ``earliest_deadline``, …);
- ``oversight_aware``: ``priority_threshold`` reading the team posterior of the view
  (``dcops.agents.schedulers.OversightAwareScheduler``; a baseline of the evaluation, in the default rows);
- ``ppo``: the RL scheduler (``dcops.agents.schedulers.LEARNED``; ``dcops.agents.schedulers.learned``), a
  maskable-PPO network with shipped numpy weights that decides from the window's array observation
  (``dcops.evaluation.play.scheduler_action``); ``ppo@<weights.npz>`` plays other weights of the same network
  (``dcops train-scheduler-ppo`` writes ``ppo_scheduler.npz`` and the cloned-only ``bc_scheduler.npz``). Opt-in:
  not among the default rows;
- ``hindsight_bound``: the MILP upper bound row (``dcops.cluster.hindsight``; not a policy, see ``runner``);
- ``searched``: the parametric public-information scheduler with the parameters ``dcops search-scheduler``
  found for the cell's scenario family (``classic``'s outside the families; ``dcops.evaluation.matrix``);
- ``truth_planner``: the evaluator-only truth-knowing planner (``dcops.evaluation.truth_planner``), played by
  the runner with the episode in hand (``runner._policy``), never a policy a user can build here;
- ``llm:<mode>`` with mode ``constrained``, ``fewshot``, ``grpo``, ``sft`` or ``sft_grpo`` (the shipped
  adapters), or ``llm:grpo@<adapter dir>`` / ``llm:sft@<adapter dir>`` / ``llm:sft_grpo@<adapter dir>``: the
  language-model
  scheduler, ``dcops.agents.llm.scheduler.make_llm_scheduler(mode[, adapter=dir])`` (opt-in: slow; one model
  per worker process, so use few ``--workers``);
- ``module:callable``: a user policy; ``callable()`` returns an object with ``decide(view) -> decisions``;
- ``http://…`` or ``https://…``: a policy served over HTTP (:class:`HttpPolicy`).

A trained scheduler's cells are keyed by the digest of its weights too (:func:`policy_digest`), so retraining
``ppo`` or an LLM adapter never resumes cells the old weights played.

**HTTP protocol** (one POST per window): the body is the window's public view as JSON
(``infos["scheduler"]["view"]``, the same dict a Python policy gets); the answer is JSON, either a list of
decisions or ``{"decisions": [...]}``, each ``{"request_id": "r0007", "decision": "ACCEPT" | "REJECT" |
"DEFER", "defer_to_window": 3}`` (``defer_to_window`` only for DEFER). The env validates the decisions like
any structured action: unknown ids, duplicates and bad windows are counted as invalid, never trusted. A
transport error or a non-JSON answer raises (the cell fails loudly rather than scoring a silent default).
"""

from __future__ import annotations

import json
import urllib.request
from dataclasses import asdict, dataclass
from typing import Any

from dcops.evaluation.matrix import BOUND, TRUTH

SEARCHED = "searched"
"""The parametric scheduler searched on the cell's family (module docstring)."""

LLM_MODES = ("constrained", "fewshot", "grpo", "sft", "sft_grpo")
ADAPTER_MODES = ("grpo", "sft", "sft_grpo")
"""The LLM modes that load a LoRA adapter (``llm:<mode>@<adapter dir>``)."""


def _evaluation_baselines() -> dict[str, Any]:
    from dcops.agents.schedulers import BASELINES, OversightAwareScheduler

    return {**BASELINES, "oversight_aware": OversightAwareScheduler}


def baseline_names() -> list[str]:
    """The evaluation's public-information baselines: ``BASELINES`` and ``oversight_aware``."""
    return list(_evaluation_baselines())


def learned_names() -> list[str]:
    """The learned schedulers with shipped weights (``dcops.agents.schedulers.LEARNED``)."""
    from dcops.agents.schedulers import LEARNED

    return list(LEARNED)


def validate_scheduler(name: str) -> str:
    """Check a scheduler name's form (not that a user module imports: that happens in the worker)."""
    if name in (BOUND, TRUTH, SEARCHED) or name in baseline_names():
        return name
    learned, at, weights = name.partition("@")
    if learned in learned_names():
        if at and not weights:
            raise ValueError(f"scheduler {name!r}: '{learned}@' needs a weights file after the '@'")
        return name
    if name.startswith(("http://", "https://")):
        return name
    if name.startswith("llm:"):
        mode, at, adapter = name.split(":", 1)[1].partition("@")
        if mode not in LLM_MODES:
            raise ValueError(f"scheduler {name!r}: LLM mode must be one of {LLM_MODES}")
        if adapter and mode not in ADAPTER_MODES:
            raise ValueError(
                f"scheduler {name!r}: only {', '.join(f'llm:{m}[@<adapter dir>]' for m in ADAPTER_MODES)} take "
                "an adapter; other modes take none"
            )
        return name
    module, sep, attr = name.partition(":")
    if sep and module and attr:
        return name
    raise ValueError(
        f"scheduler {name!r}: not a baseline ({', '.join(baseline_names())}), a learned scheduler "
        f"({', '.join(learned_names())}[@<weights.npz>]), {SEARCHED!r}, {TRUTH!r}, {BOUND!r}, "
        "'llm:<mode>', 'module:callable' or an http(s) URL"
    )


def policy_digest(name: str, family: str | None = None) -> str:
    """SHA-256 (hex) of what a trained scheduler's cells depend on beyond its name: a learned scheduler's weights
    file (``ppo``: the shipped ``.npz``, on a scenario ``family``'s cells the one it plays there; ``ppo@file``:
    that file), the searched parameters of ``searched`` (``family``'s, else ``classic``'s) and an adapter mode's (``llm:grpo``,
    ``llm:sft``, ``llm:sft_grpo``) LoRA adapter directory (every file, by relative name and bytes; the adapter ``make_llm_scheduler`` would load), and, for
    every ``llm:`` mode, the base model when ``$DCOPS_LLM_MODEL`` (``dcops eval --llm-model``) names one other than
    ``gemma`` (what the name resolves to: folder, cached revision). Empty for every other scheduler: the
    baselines (their code and the package data they read, such as ``oversight_aware``'s shipped team posterior,
    change only with the package, which ``run.json``'s versions record), the Gemma base-model LLM modes (the
    model their pinned package ships), and HTTP or ``module:callable`` policies (out of our sight). So
    ``dcops eval`` recomputes a retrained scheduler's cells instead of resuming the old weights'
    (``dcops.evaluation.matrix.Cell.policy_digest``)."""
    import hashlib
    import os
    from pathlib import Path

    validate_scheduler(name)
    files: list[tuple[str, Path]] = []
    learned, at, weights = name.partition("@")
    if learned in learned_names():
        if at:
            path = Path(weights)
        else:
            from importlib import resources

            from dcops.agents.schedulers.learned import WEIGHTS_NPZ, WEIGHTS_PACKAGE, family_weights

            file = family_weights(family)[0] if family else WEIGHTS_NPZ
            path = Path(str(resources.files(WEIGHTS_PACKAGE).joinpath(file)))
        if not path.is_file():
            raise ValueError(f"scheduler {name!r}: weights {path}: no such file")
        files = [(path.name, path)]
    elif name == SEARCHED:
        from dcops.agents.schedulers.parametric import searched_path

        path = searched_path(family or "classic")
        if not path.is_file():
            raise ValueError(f"scheduler {name!r}: no searched parameters for family {family or 'classic'!r} ({path})")
        files = [(path.name, path)]
    elif name.startswith(tuple(f"llm:{mode}" for mode in ADAPTER_MODES)):
        from dcops.agents.llm.scheduler import ADAPTER_VARIABLES, SHIPPED_ADAPTERS

        mode = name.split(":", 1)[1].partition("@")[0]
        adapter = Path(name.partition("@")[2] or os.environ.get(ADAPTER_VARIABLES[mode]) or SHIPPED_ADAPTERS[mode])
        if not adapter.is_dir():
            raise ValueError(f"scheduler {name!r}: adapter {adapter}: no such directory")
        files = sorted((str(p.relative_to(adapter)), p) for p in adapter.rglob("*") if p.is_file())
    from dcops.agents.llm.model import default_model_name

    model = default_model_name() if name.startswith("llm:") else "gemma"
    if not files and model == "gemma":
        return ""
    digest = hashlib.sha256()
    if model != "gemma":  # another base model (``dcops eval --llm-model``): other cells
        from dcops.agents.llm.model import resolve_model

        digest.update(json.dumps(asdict(resolve_model(model)), sort_keys=True).encode() + b"\0")
    for relative, path in files:
        digest.update(relative.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def llm_available() -> bool:
    """Whether ``dcops.agents.llm.scheduler.make_llm_scheduler`` can be imported here."""
    try:
        from dcops.agents.llm.scheduler import make_llm_scheduler  # noqa: F401
    except ImportError:
        return False
    return True


def make_policy(name: str, family: str | None = None) -> Any:
    """Build the policy a scheduler name stands for (module docstring) for an episode of scenario ``family``
    (None: a matrix condition); an object with ``decide(view)``."""
    validate_scheduler(name)
    if name == BOUND:
        raise ValueError(f"{BOUND!r} is a bound, not a policy")
    if name == TRUTH:
        raise ValueError(f"{TRUTH!r} is evaluator-only: the evaluation's runner plays it with the episode in hand")
    baselines = _evaluation_baselines()
    if name in baselines:
        return baselines[name]()
    if name == SEARCHED:
        from dcops.agents.schedulers.parametric import searched_scheduler

        return searched_scheduler(family or "classic")
    learned, at, weights = name.partition("@")
    if learned in learned_names():
        from dcops.agents.schedulers import LEARNED

        if at:
            return LEARNED[learned](weights)
        return LEARNED[learned](family=family) if family else LEARNED[learned]()
    if name.startswith(("http://", "https://")):
        return HttpPolicy(name)
    if name.startswith("llm:"):
        try:
            from dcops.agents.llm.scheduler import make_llm_scheduler
        except ImportError as error:
            raise RuntimeError(
                f"scheduler {name!r}: the LLM scheduler is not available ({error}); install the 'llm' extra"
            ) from error
        mode, _, adapter = name.split(":", 1)[1].partition("@")
        return make_llm_scheduler(mode, adapter=adapter) if adapter else make_llm_scheduler(mode)
    from dcops.runner import load_policy

    policy = load_policy(name)
    if not callable(getattr(policy, "decide", None)):
        raise ValueError(f"scheduler {name!r}: {type(policy).__name__} has no decide(view)")
    return policy


@dataclass
class HttpPolicy:
    """A policy behind an HTTP endpoint (module docstring: POST the view, get decisions back)."""

    url: str
    timeout_s: float = 60.0

    def decide(self, view: dict[str, Any]) -> Any:
        body = json.dumps(view, default=str).encode()
        request = urllib.request.Request(
            self.url, data=body, method="POST", headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
            text = response.read().decode()
        try:
            answer = json.loads(text)
        except json.JSONDecodeError as error:
            raise ValueError(f"policy at {self.url} answered non-JSON: {text[:200]!r}") from error
        if isinstance(answer, dict) and "decisions" not in answer:
            raise ValueError(
                f"policy at {self.url}: the answer needs a 'decisions' field, got keys {sorted(answer)}"
            )
        return answer
