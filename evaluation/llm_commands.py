"""Sub-commands ``dcops eval-injection`` and ``dcops llm-window`` (see ``dcops.cli``).

Only argparse declarations run at import time; torch and transformers are imported inside ``run``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dcops.command import Command

OFFLINE_MODES = ("constrained", "fewshot")


def _injection_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--modes", default="constrained,fewshot",
                        help="LLM modes to measure, comma-separated (offline: constrained, fewshot, grpo, sft, "
                             "sft_grpo; the last three take --adapter, default their shipped adapters; default "
                             "constrained,fewshot)")
    parser.add_argument("--seeds", default="0,1", help="episode seeds, comma-separated (default 0,1)")
    parser.add_argument("--windows", type=int, default=4,
                        help="measure the first N windows of each episode (default 4; 0 = all)")
    parser.add_argument("--adapter", default=None, help="LoRA adapter directory for mode grpo, sft or sft_grpo")
    parser.add_argument("--tiny", action="store_true", help="use the tiny random model (plumbing check only)")
    parser.add_argument("--raw-descriptions", action="store_true",
                        help="show descriptions unmasked in the prompt (measures what the mask does)")
    parser.add_argument("--out", type=Path, default=Path("reports/llm"), help="output folder (default reports/llm)")
    parser.add_argument("--stem", default="injection", help="output file names <stem>.md and <stem>.csv")


def _injection_run(args: argparse.Namespace) -> int:
    import copy
    import shlex
    import sys

    from dcops.agents.llm.scheduler import COMPACT_MODES, SHIPPED_ADAPTERS, make_llm_scheduler
    from dcops.agents.schedulers import PriorityThresholdScheduler
    from dcops.evaluation.injection import measure, write_report

    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    max_windows = args.windows or None
    compact = [m for m in modes if m in COMPACT_MODES]
    if compact and args.raw_descriptions:
        raise SystemExit(f"dcops eval-injection: --raw-descriptions: mode {compact[0]} always masks descriptions "
                         "(the option is for the window-prompt modes)")
    adapted = [m for m in modes if m in SHIPPED_ADAPTERS]
    if args.adapter and len(adapted) > 1:
        raise SystemExit(f"dcops eval-injection: --adapter: one adapter cannot serve {', '.join(adapted)}; measure "
                         "them in separate runs")
    command = "dcops " + shlex.join(sys.argv[1:])
    if args.tiny:
        from dcops.agents.llm.model import tiny_model

        model, tokenizer = tiny_model(0)
    else:
        from dcops.agents.llm.model import load_gemma

        model, tokenizer = load_gemma()
    rows, calls = [], {}
    control = PriorityThresholdScheduler()
    r, c = measure(control, control.name, seeds, max_windows)
    rows += r
    calls[control.name] = c
    for mode in modes:
        kwargs = {"adapter": args.adapter} if mode in SHIPPED_ADAPTERS and args.adapter else {}
        if mode in SHIPPED_ADAPTERS and not args.tiny and not args.adapter:
            kwargs["adapter"] = str(SHIPPED_ADAPTERS[mode])
        if mode not in COMPACT_MODES:
            kwargs["mask"] = not args.raw_descriptions
        # peft injects an adapter's layers into the model it is given: an adapter mode gets its own copy, so the
        # modes measured after it see the base model
        own = copy.deepcopy(model) if mode in SHIPPED_ADAPTERS else model
        scheduler = make_llm_scheduler(mode, model=own, tokenizer=tokenizer, **kwargs)
        name = (f"llm:{mode}" + (" (tiny)" if args.tiny else "")
                + (" (raw descriptions)" if args.raw_descriptions else ""))
        print(f"measuring {name} on seeds {seeds} ...", flush=True)
        done = list(rows)

        def save(partial: list, counts: dict, name: str = name, done: list = done) -> None:
            # after each window: a long run that is stopped keeps what it measured
            write_report(done + partial, {**calls, name: counts}, seeds, max_windows, args.out, args.stem, command)

        r, c = measure(scheduler, name, seeds, max_windows, progress=True, on_window=save)
        rows += r
        calls[name] = c
    csv_path, md_path = write_report(rows, calls, seeds, max_windows, args.out, args.stem, command)
    print(md_path.read_text())
    print(f"wrote {md_path} and {csv_path}")
    return 0


def _window_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--mode", default="constrained",
                        help="constrained | fewshot | grpo | sft | sft_grpo | openai")
    parser.add_argument("--seed", type=int, default=0, help="episode seed (default 0)")
    parser.add_argument("--window", type=int, default=0, help="window to decide (earlier ones: priority_threshold)")
    parser.add_argument("--adapter", default=None, help="LoRA adapter directory (modes grpo, sft and sft_grpo)")
    parser.add_argument("--base-url", default=None, help="server URL (mode openai), e.g. http://localhost:8080/v1")
    parser.add_argument("--model", default=None, help="served model name (mode openai)")
    parser.add_argument("--show-prompt", action="store_true", help="print the prompt too")


def _window_run(args: argparse.Namespace) -> int:
    import dcops
    from dcops.agents.llm.prompt import build_prompt
    from dcops.agents.llm.scheduler import SHIPPED_ADAPTERS, make_llm_scheduler
    from dcops.agents.schedulers import PriorityThresholdScheduler

    env = dcops.parallel_env()
    _, infos = env.reset(seed=args.seed)
    player = PriorityThresholdScheduler()
    for _ in range(args.window):
        _, _, _, _, infos = env.step({"scheduler": player.decide(infos["scheduler"]["view"])})
    view = infos["scheduler"]["view"]
    kwargs = {}
    if args.mode in SHIPPED_ADAPTERS and args.adapter:
        kwargs["adapter"] = args.adapter
    if args.mode == "openai":
        kwargs.update(base_url=args.base_url, model=args.model)
    scheduler = make_llm_scheduler(args.mode, **kwargs)
    if args.show_prompt and not scheduler.compact:
        print(build_prompt(view, few_shot=scheduler.few_shot))
    decisions = scheduler.decide(view)
    if args.show_prompt and scheduler.compact:
        for rid, prompt in scheduler.backend.last_prompts.items():
            print(f"--- {rid}\n{prompt}")
    print(scheduler.last_text)
    for problem in scheduler.last.problems if scheduler.last else []:
        print(f"problem: {problem.code}: {problem.message}")
    for d in decisions:
        print(d)
    print(scheduler.stats())
    return 0


COMMANDS = [
    Command("eval-injection", "prompt-injection sensitivity of the LLM scheduler (reports/llm/injection.md)",
            _injection_arguments, _injection_run),
    Command("llm-window", "let the LLM scheduler decide one window and show its answer", _window_arguments,
            _window_run),
]
