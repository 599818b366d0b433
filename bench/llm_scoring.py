"""What a compact LLM decision costs on this machine, and whether a change to the scoring moved any score.

The ``sft`` and ``sft_grpo`` schedulers decide each pending request by the log-likelihood of the answer words
after its compact prompt (:class:`dcops.agents.llm.backends.CompactLoglikBackend`). This command collects
distinct compact prompts from two seeded episodes (``family:classic`` seed 0 and ``family:adversarial`` seed 1,
decided by priority_threshold, which ``llm:sft`` plays exactly), scores each once (the window header's cache
reused by the prompts of its window that follow, as every tree's backend does; the first of each window also
runs its header), and prints the seconds a prompt and the scores::

    python -m dcops.bench.llm_scoring                          # this tree (Gemma 3 270M and the sft_grpo adapter)
    python -m dcops.bench.llm_scoring --against HEAD~1         # and a revision's, one after the other
    python -m dcops.bench.llm_scoring --baseline DIR           # a folder holding another checkout's dcops package

Where the tree's backend caches request contexts (:func:`dcops.agents.llm.compact.prompt_context`), it also times
the same prompts with their contexts, first run (each context computed and kept) and again with the remembered
scores forgotten (each context from the cache): what an honest twin's replayed window costs. Against another tree
it prints both trees' seconds a prompt, the largest score difference, how many prompts choose the same answer,
and the smallest margin between a prompt's two best answers (a difference far below it cannot change a
decision). The other tree runs this file's source in a fresh interpreter with that tree first on ``PYTHONPATH``
(``dcops.bench.compare.probe_environment``), which it checks, so a revision without this module can be measured
too. One torch thread (as each ``dcops eval`` worker); timings are of this machine now, so compare trees only
within one run. ``--model tiny`` (a tiny random model, no adapter) is for the tests.
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SEEDS = (("classic", 0), ("adversarial", 1))
"""The episodes whose prompts are scored: (scenario family, evaluation seed) under the families' seed key."""
SEED_KEY = "27a933088f8f730102397058a73162b4"
"""The seed key of README's scenario-family evaluation."""


def collect_prompts(n: int) -> list[tuple[str, str, tuple[str, ...]]]:
    """``n`` distinct (header, prompt, allowed words), taken evenly from the prompts of :data:`SEEDS`."""
    from dcops.agents.llm.compact import CompactWindow, allowed_words, decision_order, word_of
    from dcops.agents.schedulers import BASELINES
    from dcops.evaluation.matrix import Cell
    from dcops.evaluation.play import run_episode
    from dcops.evaluation.runner import make_env

    found: dict[str, tuple[str, str, tuple[str, ...]]] = {}

    class Recorder:
        def __init__(self) -> None:
            self.inner = BASELINES["priority_threshold"]()

        def decide(self, view: dict[str, Any]) -> list[dict[str, Any]]:
            decisions = self.inner.decide(view)
            by_id = {d["request_id"]: d for d in decisions}
            window, words = CompactWindow(view), allowed_words(view)
            for request in decision_order(view):
                prompt = window.prompt(request)
                found.setdefault(prompt, (window.header, prompt, words))
                window.record(request, word_of(by_id.get(request["request_id"]), view))
            return decisions

    for family, seed in SEEDS:
        cell = Cell("priority_threshold", f"family:{family}", f"family:{family}", seed, game_version=1,
                    seed_key=SEED_KEY)
        run_episode(Recorder(), cell.env_seed, env=make_env(cell))
    every = list(found.values())
    step = max(len(every) // max(n, 1), 1)
    return every[::step][:n]


def _model(model_name: str, mode: str) -> tuple[Any, Any]:
    """The model (with the mode's adapter, for Gemma) and its tokenizer."""
    if model_name == "tiny":
        from dcops.agents.llm.model import tiny_model

        return tiny_model(seed=0)
    from dcops.agents.llm.scheduler import make_llm_scheduler

    backend = make_llm_scheduler(mode).backend
    return backend.model, backend.tokenizer


def _timed(backend: Any, prompts: list[tuple[str, str, tuple[str, ...]]], with_context: bool = False
           ) -> tuple[list[float], list[dict[str, float]]]:
    seconds, scores = [], []
    for header, prompt, words in prompts:
        extra = {}
        if with_context:
            from dcops.agents.llm.compact import prompt_context  # not in every tree

            extra = {"context": prompt_context(prompt)}
        start = time.perf_counter()
        scores.append(backend.word_scores(prompt, words, header=header, **extra))
        seconds.append(time.perf_counter() - start)
    return seconds, scores


def measure(n: int = 40, model_name: str = "gemma", mode: str = "sft_grpo") -> dict[str, Any]:
    """This tree's figures (module docstring): seconds a prompt (median and mean), the scores as hex floats.
    Each pass gets a fresh backend, so nothing is remembered from the one before."""
    import torch

    import dcops
    from dcops.agents.llm.backends import CompactLoglikBackend

    torch.set_num_threads(1)
    prompts = collect_prompts(n)
    model, tokenizer = _model(model_name, mode)
    CompactLoglikBackend(model, tokenizer).word_scores(*prompts[0][1:], header=prompts[0][0])  # warm up
    seconds, scores = _timed(CompactLoglikBackend(model, tokenizer), prompts)
    result: dict[str, Any] = {
        "dcops": dcops.__file__, "prompts": len(prompts),
        "prompts_sha256": hashlib.sha256(json.dumps(prompts).encode()).hexdigest(),
        "seconds_median": statistics.median(seconds), "seconds_mean": statistics.fmean(seconds),
        "scores": [{w: v.hex() for w, v in s.items()} for s in scores],
    }
    if "context" in inspect.signature(CompactLoglikBackend.word_scores).parameters:
        cached = CompactLoglikBackend(model, tokenizer)
        first, _ = _timed(cached, prompts, with_context=True)
        cached._remembered.clear()  # the scores forgotten, the contexts kept
        again, _ = _timed(cached, prompts, with_context=True)
        result.update(context_first_median=statistics.median(first), context_cached_median=statistics.median(again))
    return result


def _scores(result: dict[str, Any]) -> list[dict[str, float]]:
    return [{w: float.fromhex(v) for w, v in s.items()} for s in result["scores"]]


def compare_scores(ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    """The largest absolute score difference, the prompts whose best answer is the same, and the smallest margin
    between a prompt's two best answers (in ``theirs``)."""
    if ours.get("prompts_sha256", "") != theirs.get("prompts_sha256", ""):
        raise ValueError("the two trees built different prompts (their prompt text changed), so their scores "
                         "do not compare")
    a, b = _scores(ours), _scores(theirs)
    if len(a) != len(b) or any(set(x) != set(y) for x, y in zip(a, b, strict=True)):
        raise ValueError("the two trees scored different prompts or words")
    margins = [sorted(y.values())[-1] - sorted(y.values())[-2] for y in b if len(y) > 1]
    return {"max_abs_difference": max(abs(x[w] - y[w]) for x, y in zip(a, b, strict=True) for w in x),
            "same_choice": sum(max(x, key=x.__getitem__) == max(y, key=y.__getitem__) for x, y in zip(a, b,
                                                                                                 strict=True)),
            "prompts": len(a), "smallest_margin": min(margins) if margins else None}


def measure_tree(tree: str, n: int, model_name: str, mode: str) -> dict[str, Any]:
    """:func:`measure` of the ``dcops`` package in folder ``tree``, by this file's source in a fresh interpreter.

    :raises RuntimeError: the other interpreter failed, or measured a ``dcops`` from somewhere else."""
    from dcops.bench.compare import run_source_in_tree  # not at the top: this source also runs in other trees

    return run_source_in_tree(Path(__file__), tree, ["--json", "--prompts", str(n), "--model", model_name,
                                                     "--mode", mode], "measuring")


def main(argv: list[str] | None = None) -> int:
    """The command (module docstring): 0, or 2 where a tree could not be measured."""
    parser = argparse.ArgumentParser(prog="python -m dcops.bench.llm_scoring", description=__doc__.split("\n")[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--against", metavar="REV", help="also measure git revision REV of this checkout")
    group.add_argument("--baseline", metavar="DIR", help="also measure the dcops package in DIR")
    group.add_argument("--json", action="store_true", help="print this tree's figures as one JSON line only")
    parser.add_argument("--prompts", type=int, default=40, help="distinct prompts scored (default 40)")
    parser.add_argument("--model", default="gemma", choices=("gemma", "tiny"), help="gemma (default) or tiny")
    parser.add_argument("--mode", default="sft_grpo", choices=("sft", "sft_grpo"),
                        help="whose adapter scores (Gemma only; default sft_grpo)")
    args = parser.parse_args(argv)
    if args.prompts < 2:
        parser.error("--prompts: at least 2")
    ours = measure(args.prompts, args.model, args.mode)
    if args.json:
        print(json.dumps(ours))
        return 0
    theirs, label = None, ""
    try:
        if args.baseline is not None:
            theirs, label = measure_tree(args.baseline, args.prompts, args.model, args.mode), args.baseline
        elif args.against is not None:
            from dcops.bench.compare import archive_revision

            with tempfile.TemporaryDirectory(prefix="dcops-llm-scoring-") as folder:
                tree = str(archive_revision(args.against, folder))
                theirs, label = measure_tree(tree, args.prompts, args.model, args.mode), args.against
    except (OSError, ValueError, RuntimeError) as error:
        print(f"python -m dcops.bench.llm_scoring: {error}", file=sys.stderr)
        return 2
    rows = [("seconds a prompt (median)", "seconds_median"),
            ("seconds a prompt (mean)", "seconds_mean"),
            ("… with its context, computed and kept (median)", "context_first_median"),
            ("… with its context from the cache (median)", "context_cached_median")]
    print(f"{ours['prompts']} prompts" + (f"; this tree against {label}" if theirs else ""))
    print("| figure | this tree |" + (f" {label} |" if theirs else ""))
    print("|---|---|" + ("---|" if theirs else ""))
    for title, key in rows:
        if key in ours or (theirs and key in theirs):
            cells = [f"{ours[key]:.3f}" if key in ours else "—"]
            if theirs:
                cells.append(f"{theirs[key]:.3f}" if key in theirs else "—")
            print(f"| {title} | " + " | ".join(cells) + " |")
    if theirs:
        try:
            same = compare_scores(ours, theirs)
        except ValueError as error:
            print(f"python -m dcops.bench.llm_scoring: {error}", file=sys.stderr)
            return 2
        print(f"largest score difference {same['max_abs_difference']:.3g} nats; the same best answer on "
              f"{same['same_choice']} of {same['prompts']} prompts; smallest margin between two best answers "
              f"{same['smallest_margin']:.3g} nats")
    return 0


if __name__ == "__main__":
    sys.exit(main())
