"""Sub-command ``dcops train-scheduler``: GRPO training of the LLM scheduler (see ``dcops.cli``).

CPU. A step of Gemma 3 270M with 4 completions of a ~2,100-token prompt (generation, a forward/backward pass
over them and the reference pass) took a median 90 s with ``--bf16`` and 143 s in float32 on the 2-core AMD
EPYC this was built on (``reports/llm/grpo_training.md``), so 100 steps take about 2.5 hours::

    dcops train-scheduler --out runs/grpo_gemma --steps 100 --num-generations 4 \
        --env '{"max_requests_per_team": 1}' --max-completion-length 128 --bf16

GPU (same command; bf16 turns on by itself when CUDA is present; more groups per step)::

    dcops train-scheduler --out runs/grpo_gemma_gpu --steps 300 --num-generations 8 --prompts-per-step 8

vLLM generation (optional install, ``pip install vllm``; TRL's options passed through)::

    dcops train-scheduler ... --use-vllm                                   # colocate: shares the training GPU
    dcops train-scheduler ... --use-vllm --vllm-gpu-memory-utilization 0.4
    trl vllm-serve --port 8001 --model "$(python -c 'from dcops.agents.llm.model import gemma_model_dir; print(gemma_model_dir())')" &
    dcops train-scheduler ... --use-vllm --vllm-mode server --vllm-server-base-url http://localhost:8001

(port 8001: ``make run`` serves the environment on 8000, TRL's default).

Report from a run's logs (no training): ``dcops train-scheduler --plot-only RUN_DIR`` writes
``reports/llm/grpo_curve.png`` and ``reports/llm/grpo_training.md`` (``--report-dir`` to change).

Only argparse runs at import; torch, TRL and peft are imported inside ``run``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from dcops.command import Command


def parse_int_list(text: str) -> tuple[int, ...]:
    """``"1000-1063"``, ``"1,2,5"`` or a mix (``"0-3,9"``) to a tuple of ints."""
    values: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        lo, sep, hi = part.partition("-")
        try:
            if sep:
                start, stop = int(lo), int(hi)
                if stop < start:
                    raise ValueError
                values.extend(range(start, stop + 1))
            else:
                values.append(int(part))
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected integers like '1000-1063' or '1,2,5', got {part!r}") from None
    if not values:
        raise argparse.ArgumentTypeError("empty list")
    return tuple(values)


def _json_object(text: str) -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"--env: not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"--env: expected a JSON object, got {type(value).__name__}")
    return value


def _arguments(parser: argparse.ArgumentParser) -> None:
    p = parser.add_argument
    p("--model", default="gemma",
      help="gemma (the offline Gemma 3 270M, default), tiny (random test model), a local model folder or a Hugging "
           "Face model id already in the local cache (nothing is downloaded); recorded in config.json")
    p("--out", type=Path, default=Path("runs/grpo_scheduler"), help="run folder (logs, checkpoints, adapter/)")
    p("--steps", type=int, default=100, help="optimiser steps (default 100)")
    p("--num-generations", type=int, default=4, help="completions per window state, G (default 4)")
    p("--prompts-per-step", type=int, default=1, help="window states (groups) per step (default 1; 8+ on a GPU)")
    p("--max-completion-length", type=int, default=256, help="tokens per completion (default 256)")
    p("--temperature", type=float, default=0.7, help="sampling temperature (default 0.7)")
    p("--lr", type=float, default=1e-4, help="learning rate of the LoRA weights (default 1e-4)")
    p("--beta", type=float, default=0.04, help="KL coefficient to the reference model (default 0.04; 0 drops it)")
    p("--lora-r", type=int, default=8, help="LoRA rank (default 8, attention projections)")
    p("--seed", type=int, default=0, help="seed of torch, LoRA init, data order and sampling")
    p("--train-seeds", type=parse_int_list, default=tuple(range(1000, 1064)),
      help="environment seeds of the window states (default 1000-1063, away from the evaluation seeds 0-19)")
    p("--windows", type=parse_int_list, default=None, help="windows to train on (default all)")
    p("--env", type=_json_object, default={},
      help='keyword arguments of dcops.parallel_env as JSON, e.g. \'{"max_requests_per_team": 2}\' (default: none)')
    p("--baseline", default="priority_threshold", help="scheduler that plays the history up to each window")
    p("--horizon", type=int, default=1,
      help="windows of environment reward per completion (default 1: the window reward; more continues with "
           "the baseline)")
    p("--format-bonus", type=float, default=0.05, help="reward added when the answer parses (default 0.05)")
    p("--invalid-penalty", type=float, default=0.10, help="reward taken per invalid entry, up to 5 (default 0.10)")
    p("--stop-string", action="append", default=None,
      help="text that ends an answer (repeatable; default: the prompt module's answer terminator)")
    p("--no-few-shot", action="store_true", help="prompt without the worked examples")
    p("--max-minutes", type=float, default=None, help="stop cleanly after this much wall time")
    p("--save-steps", type=int, default=1, help="checkpoint the adapter every N steps (default 1)")
    p("--bf16", action=argparse.BooleanOptionalAction, default=None,
      help="mixed precision (default: on with CUDA; also faster on CPUs with bf16 units)")
    p("--gradient-checkpointing", action="store_true", help="trade compute for memory (large models on a GPU)")
    p("--use-vllm", action="store_true", help="generate with vLLM (TRL's use_vllm; needs `pip install vllm`)")
    p("--vllm-mode", choices=("colocate", "server"), default="colocate", help="TRL's vllm_mode (default colocate)")
    p("--vllm-server-base-url", default=None, help="vLLM server URL in server mode (e.g. http://localhost:8001)")
    p("--vllm-gpu-memory-utilization", type=float, default=0.3, help="GPU share of colocated vLLM (default 0.3)")
    p("--resume", action="store_true", help="continue from the last checkpoint-N in --out")
    p("--no-progress", action="store_true", help="no progress bar")
    p("--plot-only", type=Path, default=None, metavar="RUN_DIR",
      help="write the curve and Markdown report from RUN_DIR's logs, without training")
    p("--report-dir", type=Path, default=None,
      help="where the curve and report go (default reports/llm with --plot-only, else the run folder)")
    p("--report-last", type=int, default=10, help="steps compared at each end of the run (default 10)")
    p("--command", default=None, help="training command to quote in the report (with --plot-only)")


def _run(args: argparse.Namespace) -> int:
    from dcops.training.scheduler.report import write_report

    if args.plot_only is not None:
        png, md = write_report(args.plot_only, args.report_dir or Path("reports/llm"), n=args.report_last,
                               command=args.command or "")
        print(f"wrote {png} and {md}")
        return 0

    from dcops.training.scheduler.grpo import GRPOSchedulerConfig, default_stop_strings, train_grpo_scheduler

    config = GRPOSchedulerConfig(
        model=args.model, out=str(args.out), seed=args.seed, train_seeds=args.train_seeds, windows=args.windows,
        env_config=args.env, baseline=args.baseline, few_shot=not args.no_few_shot, max_steps=args.steps,
        num_generations=args.num_generations, prompts_per_step=args.prompts_per_step,
        max_completion_length=args.max_completion_length, temperature=args.temperature, learning_rate=args.lr,
        beta=args.beta, lora_r=args.lora_r, lora_alpha=2 * args.lora_r, format_bonus=args.format_bonus,
        invalid_penalty=args.invalid_penalty, horizon=args.horizon,
        stop_strings=tuple(args.stop_string) if args.stop_string is not None else default_stop_strings(),
        save_steps=args.save_steps, max_minutes=args.max_minutes, bf16=args.bf16,
        gradient_checkpointing=args.gradient_checkpointing, use_vllm=args.use_vllm, vllm_mode=args.vllm_mode,
        vllm_server_base_url=args.vllm_server_base_url,
        vllm_gpu_memory_utilization=args.vllm_gpu_memory_utilization, progress=not args.no_progress,
    )
    from dcops.agents.llm.model import resolve_model

    try:
        resolve_model(args.model)  # a bad --model fails here, before the window states are built
    except ValueError as exc:
        raise SystemExit(str(exc)) from None
    record = train_grpo_scheduler(config, resume=args.resume)
    command = "dcops " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:] else ""
    png, md = write_report(args.out, args.report_dir or args.out, n=args.report_last, command=command)
    print(f"{record['steps_done']} GRPO steps in {record['wall_s'] / 60:.1f} min; adapter in {args.out}/adapter; "
          f"curve {png}; report {md}")
    print(f"use it: make_llm_scheduler('grpo', adapter='{args.out}/adapter')")
    return 0


COMMANDS = [
    Command("train-scheduler", "GRPO-train the LLM scheduler (LoRA on Gemma 3 270M, environment reward)",
            _arguments, _run),
]
