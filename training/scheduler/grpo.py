"""GRPO training of the LLM scheduler: TRL's ``GRPOTrainer`` with a LoRA adapter, rewarded by the environment.

**Data.** A training example is one *window state* (:mod:`dcops.training.scheduler.states`): an episode of
``datacenter_ops`` from a training seed, played by a baseline scheduler up to window w and snapshotted. Its
prompt is ``dcops.agents.llm.prompt.build_prompt(view)``; the dataset row carries ``state_key = "seed:w"``.
Training seeds default to 1000–1063, away from the evaluation seeds 0–19.

**Groups.** TRL's sampler repeats each prompt ``num_generations`` (G) times in a batch; the reward function
(:class:`dcops.training.scheduler.reward.SchedulerReward`) restores the *same* snapshot for each of the G
completions, applies the completion's parsed decisions for one window and returns the window reward plus a
small format term. Advantages are the rewards standardised within each group, so completions are compared
only against others answering the same state. One optimiser step uses ``prompts_per_step`` groups.

**Objective.** TRL's GRPO loss (``loss_type="dapo"``, token-level, clipped ratio ε = 0.2) with a KL penalty
``beta`` (default 0.04) to the reference model; with a LoRA adapter the reference is the same network with
the adapter switched off, so the KL term costs one extra forward pass and no memory.

**Outputs** (under ``out``): ``config.json`` (everything needed to rerun), ``log.jsonl`` and ``log.csv`` (one
row per optimiser step: reward, its environment and format parts, format-failure rate, KL, loss, completion
length, seconds), ``completions.jsonl`` (every sampled completion with its state, reward parts and text),
``adapter/`` (the latest LoRA adapter, ``peft`` ``save_pretrained`` format, rewritten at
every checkpoint so an interrupted run is still usable), ``checkpoint-N/`` (TRL checkpoints with optimiser state,
the last ``save_total_limit`` kept, for ``resume``) and ``summary.json`` at the end.

**Hardware.** The same code runs on CPU (float32, no gradient checkpointing: the 270M model fits easily) and on
a GPU (``bf16``). Generation can go through vLLM (``use_vllm``; TRL's ``colocate`` mode shares the training
GPU, ``server`` mode talks to ``trl vllm-serve``); vLLM is an optional install, not a dependency.
"""

from __future__ import annotations

import csv
import json
import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dcops.training.scheduler.callbacks import adapter_saver, wall_clock_budget
from dcops.training.scheduler.reward import FormatTerms, SchedulerReward
from dcops.training.scheduler.states import StateSet, build_window_states

LOG_COLUMNS = (
    "step", "reward", "reward_std", "env_reward", "format_term", "format_failure_rate", "invalid_per_completion",
    "kl", "loss", "entropy", "grad_norm", "learning_rate", "completion_mean_length", "clipped_ratio",
    "frac_reward_zero_std", "step_s", "wall_s",
)
"""Columns of ``log.csv`` (``log.jsonl`` keeps every key TRL logs as well)."""

_TRL_RENAMES = {"completions/mean_length": "completion_mean_length", "completions/clipped_ratio": "clipped_ratio"}

ATTENTION_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj")


@dataclass
class GRPOSchedulerConfig:
    """Everything a GRPO run depends on (written to ``config.json``)."""

    model: str = "gemma"
    """``"gemma"`` (real Gemma 3 270M, ``dcops.agents.llm.model.load_gemma``), ``"tiny"`` (random, tests), a local
    model folder or a Hugging Face model id already in the local cache (``dcops.agents.llm.model.resolve_model``;
    nothing is downloaded). What it resolved to is recorded in ``config.json`` as ``model_source``."""
    out: str = "runs/grpo_scheduler"
    seed: int = 0
    """Seed of torch, the LoRA initialisation, the data order and sampling."""
    train_seeds: tuple[int, ...] = tuple(range(1000, 1064))
    windows: tuple[int, ...] | None = None
    """Windows to train on (default every window of the episode)."""
    baseline: str = "priority_threshold"
    """Scheduler that plays the history up to each window state (and the continuation when ``horizon`` > 1)."""
    env_config: dict[str, Any] = field(default_factory=dict)
    """Keyword arguments of ``dcops.parallel_env``."""
    few_shot: bool = True
    max_steps: int = 100
    """Optimiser steps; each uses ``prompts_per_step`` groups of ``num_generations`` completions."""
    num_generations: int = 4
    prompts_per_step: int = 1
    max_completion_length: int = 256
    """Tokens per completion; one window's JSON answer for about 10 requests fits in about 200."""
    temperature: float = 0.7
    """Sampling temperature. At 1.0 the base Gemma rarely writes a valid answer (all four completions of a
    window failed the format in the first CPU run, so the group's rewards tied and nothing was learned); at
    0.7 about one in four parses and the others fail in different ways, which gives the group a spread."""
    top_p: float = 1.0
    learning_rate: float = 1e-4
    beta: float = 0.04
    """KL coefficient to the reference (adapter-off) model."""
    lora_r: int = 8
    lora_alpha: int = 16
    lora_dropout: float = 0.0
    lora_target_modules: tuple[str, ...] = ATTENTION_MODULES
    format_bonus: float = 0.05
    invalid_penalty: float = 0.10
    max_invalid: int = 5
    horizon: int = 1
    """Windows of reward per completion (1: the window reward; see ``dcops.training.scheduler.reward``)."""
    stop_strings: tuple[str, ...] = ()
    """Text that ends an answer: every vocabulary token containing one becomes an end-of-sequence token, so
    generation stops at the end of the JSON answer instead of running to ``max_completion_length``."""
    save_steps: int = 1
    save_total_limit: int = 2
    max_minutes: float | None = None
    """Wall-clock budget; training stops cleanly (adapter and logs saved) after the step that passes it."""
    bf16: bool | None = None
    """Mixed precision; default: on when a CUDA GPU is present. Also worth turning on for a CPU with bf16 units
    (avx512_bf16, AMX): a Gemma step went from 143 s to 98 s on this machine's AMD EPYC (2 cores)."""
    gradient_checkpointing: bool = False
    use_vllm: bool = False
    vllm_mode: str = "colocate"
    vllm_server_base_url: str | None = None
    vllm_gpu_memory_utilization: float = 0.3
    progress: bool = True

    def __post_init__(self) -> None:
        checks = {
            "max_steps": self.max_steps >= 1, "num_generations": self.num_generations >= 2,
            "prompts_per_step": self.prompts_per_step >= 1, "max_completion_length": self.max_completion_length >= 1,
            "learning_rate": self.learning_rate > 0, "beta": self.beta >= 0, "lora_r": self.lora_r >= 1,
            "horizon": self.horizon >= 1, "save_steps": self.save_steps >= 1, "temperature": self.temperature > 0,
            "vllm_mode": self.vllm_mode in ("colocate", "server"),
        }
        bad = [name for name, ok in checks.items() if not ok]
        if bad:
            raise ValueError(f"invalid GRPO setting(s): {', '.join(f'{b}={getattr(self, b)!r}' for b in bad)}")
        if not isinstance(self.model, str) or not self.model.strip():
            raise ValueError(f"model: expected 'gemma', 'tiny', a model folder or a Hugging Face id, got {self.model!r}")
        self.train_seeds = tuple(int(s) for s in self.train_seeds)
        if self.windows is not None:
            self.windows = tuple(int(w) for w in self.windows)
        self.lora_target_modules = tuple(self.lora_target_modules)
        self.stop_strings = tuple(self.stop_strings)

    @property
    def format_terms(self) -> FormatTerms:
        return FormatTerms(self.format_bonus, self.invalid_penalty, self.max_invalid)


def load_model(config: GRPOSchedulerConfig) -> tuple[Any, Any, Any]:
    """The base model and tokenizer the config names (offline), and its ``ModelSource`` (what the name resolved to:
    ``dcops.agents.llm.model.load_model``)."""
    from dcops.agents.llm.model import load_model as load

    return load(config.model, seed=config.seed)


def default_stop_strings() -> tuple[str, ...]:
    """What ends an answer in the prompt's format (``dcops.agents.llm.prompt``): the answer is one JSON object
    written one request per line, while the prompt's sections are separated by blank lines and ``#`` headings;
    a base model that finishes the object goes on with a blank line or a new ``# Example`` section. Stopping
    at either costs at most a token or two after the object (the parser ignores what follows it) and saves
    generating up to ``max_completion_length``."""
    return ("\n\n", "#")


def stop_token_ids(tokenizer: Any, stop_strings: tuple[str, ...]) -> list[int]:
    """Every vocabulary token whose text contains one of ``stop_strings`` (SentencePiece ``▁`` read as space)."""
    if not stop_strings:
        return []
    ids = []
    for piece, token_id in tokenizer.get_vocab().items():  # one call: per-id look-ups take minutes for 262k
        text = piece.replace("\u2581", " ")
        if any(s in text for s in stop_strings):
            ids.append(int(token_id))
    ids.sort()
    return ids


def build_dataset(states: StateSet, few_shot: bool, tokenizer: Any) -> tuple[Any, dict[str, float]]:
    """One row per window state: ``prompt``, ``state_key``, ``seed``, ``window``; plus prompt-length stats."""
    from datasets import Dataset

    from dcops.agents.llm.prompt import build_prompt

    rows = []
    lengths = []
    for key, state in states.states.items():
        prompt = build_prompt(state.view, few_shot=few_shot)
        rows.append({"prompt": prompt, "state_key": key, "seed": state.seed, "window": state.window})
        lengths.append(len(tokenizer(prompt)["input_ids"]))
    if not rows:
        raise ValueError("no window state with a pending request: check train_seeds and windows")
    stats = {"prompts": len(rows), "prompt_tokens_mean": sum(lengths) / len(lengths),
             "prompt_tokens_max": max(lengths), "prompt_tokens_min": min(lengths)}
    return Dataset.from_list(rows), stats


def _number(value: Any) -> float | None:
    if isinstance(value, (int, float)) and math.isfinite(float(value)):
        return float(value)
    return None


def _make_callbacks(config: GRPOSchedulerConfig, out: Path) -> list[Any]:
    """The step logger (JSONL + CSV), the adapter saver and the wall-clock budget, as TRL/transformers callbacks."""
    from transformers import TrainerCallback

    class StepLog(TrainerCallback):
        """Appends one row per optimiser step to ``log.jsonl`` and ``log.csv`` (flushed, so a crash keeps them)."""

        def __init__(self) -> None:
            self.start = time.monotonic()
            self.last = self.start
            self.jsonl = out / "log.jsonl"
            self.csv = out / "log.csv"
            if not self.csv.exists():
                with self.csv.open("w", newline="") as f:
                    csv.writer(f).writerow(LOG_COLUMNS)

        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any) -> None:
            if not logs or "reward" not in logs:  # the final train summary has no reward
                return
            now = time.monotonic()
            row: dict[str, Any] = {_TRL_RENAMES.get(k, k): v for k, v in logs.items()}
            row.update(step=state.global_step, step_s=now - self.last, wall_s=now - self.start)
            self.last = now
            with self.jsonl.open("a") as f:
                f.write(json.dumps(row, default=float) + "\n")
            with self.csv.open("a", newline="") as f:
                csv.writer(f).writerow(["" if row.get(c) is None else row.get(c) for c in LOG_COLUMNS])

    return [StepLog(), adapter_saver(out), wall_clock_budget(config.max_minutes)]


@contextmanager
def score_only_completion_tokens() -> Iterator[None]:
    """Make TRL's fused log-prob head score only the completion tokens on CPU, as it already does on GPUs.

    TRL 1.x computes per-token log-probabilities with a chunked LM head; on devices without Triton it scores
    *every* position, the masked prompt included, and throws the prompt's away. With a 2,000–3,000-token prompt
    and a 262k vocabulary that is most of a CPU step (a tiny-model step fell from 400 s to seconds). Its compact
    path (score only unmasked positions, scatter back) is plain torch; the fixed-shape path exists only to
    avoid recompilation on Neuron. Restored on exit; a no-op if TRL's internals differ.
    """
    try:
        import trl.trainer.utils as trl_utils
    except ImportError:  # pragma: no cover - depends on the install
        yield
        return
    original = getattr(trl_utils, "_use_triton", None)
    if original is None:
        yield
        return
    trl_utils._use_triton = lambda device: original(device) or device.type == "cpu"
    try:
        yield
    finally:
        trl_utils._use_triton = original


def _cuda_available() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def grpo_arguments(config: GRPOSchedulerConfig, out: Path, bf16: bool) -> Any:
    """TRL's ``GRPOConfig`` for this run (one group of G completions per prompt, ``prompts_per_step`` prompts)."""
    from trl import GRPOConfig

    kwargs: dict[str, Any] = {
        "output_dir": str(out), "seed": config.seed, "max_steps": config.max_steps,
        "per_device_train_batch_size": config.num_generations * config.prompts_per_step,
        "gradient_accumulation_steps": 1, "num_generations": config.num_generations,
        "max_completion_length": config.max_completion_length, "temperature": config.temperature,
        "top_p": config.top_p, "learning_rate": config.learning_rate, "beta": config.beta,
        "logging_steps": 1, "save_strategy": "steps", "save_steps": config.save_steps,
        "save_total_limit": config.save_total_limit, "report_to": "none", "bf16": bf16,
        "gradient_checkpointing": config.gradient_checkpointing, "disable_tqdm": not config.progress,
        "remove_unused_columns": False, "dataloader_num_workers": 0, "use_vllm": config.use_vllm,
        "lr_scheduler_type": "constant", "warmup_steps": 0,
    }
    if bf16 and not _cuda_available():
        kwargs["use_cpu"] = True  # transformers refuses bf16 without a GPU unless told it runs on the CPU
    if config.use_vllm:
        kwargs.update(vllm_mode=config.vllm_mode, vllm_gpu_memory_utilization=config.vllm_gpu_memory_utilization)
        if config.vllm_server_base_url:
            kwargs["vllm_server_base_url"] = config.vllm_server_base_url
    return GRPOConfig(**kwargs)


def train_grpo_scheduler(config: GRPOSchedulerConfig, model: Any = None, tokenizer: Any = None,
                         resume: bool = False, parse: Callable[[str, dict[str, Any]], Any] | None = None
                         ) -> dict[str, Any]:
    """Run GRPO; returns the summary also written to ``summary.json`` (module docstring lists the outputs).

    ``model``/``tokenizer`` default to :func:`load_model`; pass them to reuse an already loaded model (then
    ``model_source`` records that the caller passed it, under the config's name).
    ``parse`` replaces ``dcops.agents.llm.parser.parse_decisions`` (another answer format, or a test's).
    """
    import torch
    from peft import LoraConfig
    from trl import GRPOTrainer

    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    torch.manual_seed(config.seed)
    if model is None or tokenizer is None:
        model, tokenizer, source = load_model(config)
        model_source = asdict(source)
    else:
        model_source = {"name": config.model, "kind": "given", "location": "passed to train_grpo_scheduler",
                        "revision": None}
    tokenizer.padding_side = "left"
    bf16 = _cuda_available() if config.bf16 is None else config.bf16

    states = build_window_states(config.env_config, config.train_seeds, config.windows, config.baseline)
    dataset, prompt_stats = build_dataset(states, config.few_shot, tokenizer)
    extra_eos = stop_token_ids(tokenizer, config.stop_strings)
    if extra_eos:
        eos = model.generation_config.eos_token_id
        eos = [] if eos is None else [eos] if isinstance(eos, int) else list(eos)
        model.generation_config.eos_token_id = sorted(set(eos) | set(extra_eos))

    reward = SchedulerReward(states, config.format_terms, config.horizon, config.baseline, parse=parse,
                             completions_log=out / "completions.jsonl")
    lora = LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, lora_dropout=config.lora_dropout,
                      target_modules=list(config.lora_target_modules), task_type="CAUSAL_LM")
    record: dict[str, Any] = {
        "config": asdict(config), "model_source": model_source, "states": len(states), "states_skipped_empty": states.skipped_empty,
        **prompt_stats, "extra_eos_tokens": len(extra_eos), "bf16": bf16,
        "device": "cuda" if _cuda_available() else "cpu", "torch_threads": torch.get_num_threads(),
    }
    (out / "config.json").write_text(json.dumps(record, indent=2, default=str) + "\n")
    trainer = GRPOTrainer(model=model, reward_funcs=[reward], args=grpo_arguments(config, out, bf16),
                          train_dataset=dataset, processing_class=tokenizer, peft_config=lora,
                          callbacks=_make_callbacks(config, out))
    with score_only_completion_tokens():
        result = trainer.train(resume_from_checkpoint=True if resume else None)
    trainer.model.save_pretrained(str(out / "adapter"))
    (out / "adapter" / "STEP").write_text(f"{trainer.state.global_step}\n")
    record.update(steps_done=trainer.state.global_step, train_loss=_number(result.training_loss),
                  wall_s=time.monotonic() - started)
    (out / "summary.json").write_text(json.dumps(record, indent=2, default=str) + "\n")
    return record
