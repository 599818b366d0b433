"""Supervised fine-tuning of the LLM scheduler on a teacher's decisions (``dcops train-scheduler-sft``).

The first half of the SFT → GRPO recipe: imitation before reinforcement. The data is ``dcops llm-sft-data``'s
(:mod:`dcops.training.scheduler.sft_data`): one compact prompt per pending request
(:mod:`dcops.agents.llm.compact`) and the teacher's one-word answer. Training is TRL's ``SFTTrainer`` on
prompt–completion pairs, so the loss is the answer's tokens only, with a peft LoRA adapter on the base model
(default the offline Gemma 3 270M; ``--model`` takes any model :func:`dcops.agents.llm.model.resolve_model`
finds without the network). On the CPU TRL's fused LM head is made to score only the answer tokens
(:func:`dcops.training.scheduler.grpo.score_only_completion_tokens`): a compact prompt is about 250 tokens and
the vocabulary 262k, so scoring every position would be most of a step.

**Outputs** (``--out``): ``adapter/`` (the latest LoRA adapter, rewritten at every checkpoint, with a ``STEP``
file), ``checkpoint-*/`` (``--resume`` continues from the newest), ``log.csv`` (one row per logging step: loss,
token accuracy, learning rate, seconds), ``config.json`` (the settings, the model source, data counts, prompt
token statistics, versions) and ``summary.json`` (steps, TRL's mean training loss over the run, validation accuracy of the adapter: the
fraction of held-out teacher answers the ``sft`` scheduler's own log-likelihood choice reproduces, per answer
word, beside the base model's where ``validate_base``).

Examples are shuffled once by ``seed`` and cycled; ``max_steps`` × ``batch_size`` × ``grad_accum`` examples
are seen. The validation examples are the first ``validation_examples`` of the teacher's validation split after
the same shuffle (seeds 2000 on, which training never reads).
"""

from __future__ import annotations

import csv
import json
import random
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from dcops.training.scheduler.callbacks import adapter_saver, wall_clock_budget
from dcops.training.scheduler.grpo import ATTENTION_MODULES, score_only_completion_tokens
from dcops.training.scheduler.sft_data import load_examples

TASKS = ("scheduler", "placement")
LOG_COLUMNS = ("step", "loss", "mean_token_accuracy", "learning_rate", "grad_norm", "epoch", "wall_s")


@dataclass
class SFTSchedulerConfig:
    """Everything an SFT run depends on (written to ``config.json``)."""

    task: str = "scheduler"
    """``scheduler`` (the cluster admission scheduler, :mod:`dcops.training.scheduler.sft_data`) or
    ``placement`` (the GPU placement policy, :mod:`dcops.training.placement.llm_sft`); decides how the
    held-out answers are scored."""
    data: str = "runs/llm_sft_data"
    out: str = "runs/llm_sft"
    teacher: str = "priority_threshold"
    model: str = "gemma"
    """``"gemma"``, ``"tiny"`` (tests), a model folder or a cached Hugging Face id (``resolve_model``)."""
    seed: int = 0
    max_steps: int = 150
    batch_size: int = 8
    grad_accum: int = 1
    learning_rate: float = 2e-4
    warmup_steps: int = 10
    lora_r: int = 8
    lora_alpha: int = 16
    lora_dropout: float = 0.0
    lora_target_modules: tuple[str, ...] = ATTENTION_MODULES
    save_steps: int = 10
    save_total_limit: int = 2
    logging_steps: int = 1
    validation_examples: int = 300
    validate_base: bool = False
    """Also score the base model (no adapter) on the validation examples."""
    max_minutes: float | None = None
    """Wall-clock budget; training stops cleanly (checkpoint and adapter saved) after the step that passes it."""
    bf16: bool | None = None
    """Mixed precision; default on with a CUDA GPU (as for GRPO, also worth trying on a CPU with bf16 units)."""
    progress: bool = True

    def __post_init__(self) -> None:
        checks = {"max_steps": self.max_steps >= 1, "batch_size": self.batch_size >= 1,
                  "grad_accum": self.grad_accum >= 1, "learning_rate": self.learning_rate > 0,
                  "warmup_steps": self.warmup_steps >= 0, "lora_r": self.lora_r >= 1,
                  "save_steps": self.save_steps >= 1, "logging_steps": self.logging_steps >= 1,
                  "validation_examples": self.validation_examples >= 0,
                  "lora_dropout": 0.0 <= self.lora_dropout < 1.0}
        checks["task"] = self.task in TASKS
        bad = [name for name, ok in checks.items() if not ok]
        if bad:
            raise ValueError(f"invalid SFT setting(s): {', '.join(f'{b}={getattr(self, b)!r}' for b in bad)}")
        if not isinstance(self.model, str) or not self.model.strip():
            raise ValueError(f"model: expected 'gemma', 'tiny', a model folder or a Hugging Face id, got {self.model!r}")
        self.lora_target_modules = tuple(self.lora_target_modules)


def _shuffled(rows: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    rows = list(rows)
    random.Random(seed).shuffle(rows)
    return rows


def answer_accuracy(model: Any, tokenizer: Any, examples: list[dict[str, Any]], task: str = "scheduler"
                    ) -> dict[str, Any]:
    """How often the trained policy's own choice is the example's answer; overall, per kind of answer, and the
    confusion counts. ``scheduler``: the ``sft`` scheduler's choice, the highest log-likelihood of the allowed
    answer words after the prompt (:class:`dcops.agents.llm.backends.CompactLoglikBackend`); ``placement``: the
    placement policy's, the highest mean log-likelihood per token of the valid actions' texts
    (:class:`dcops.agents.llm.placement.LLMPlacementPolicy`)."""
    from dcops.agents.llm.backends import CompactLoglikBackend, PrefixCache, continuation_logprobs
    from dcops.agents.llm.compact import ANSWER_WORDS

    backend = CompactLoglikBackend(model, tokenizer)
    prefix = PrefixCache(model, tokenizer)
    confusion: Counter[tuple[str, str]] = Counter()
    for example in examples:
        if task == "scheduler":
            words = tuple(example.get("allowed", ANSWER_WORDS))
            scores = backend.word_scores(example["prompt"], words)
            truth, chosen = example["completion"].strip(), max(words, key=lambda w: scores[w])
        else:
            choices = list(example["choices"])
            rows = [(list(tokenizer(c, add_special_tokens=False)["input_ids"]), 0) for c in choices]
            sums = continuation_logprobs(prefix, example["prompt"], rows)
            means = [value / max(len(ids), 1) for value, (ids, _) in zip(sums, rows, strict=True)]
            best = choices[max(range(len(choices)), key=means.__getitem__)]
            truth = "defer" if example["completion"].strip() == "defer" else "place"
            chosen = ("defer" if best.strip() == "defer" else "place" if best == example["completion"]
                      else "other place")
        confusion[(truth, chosen)] += 1
    n = sum(confusion.values())
    kinds = ANSWER_WORDS if task == "scheduler" else ("place", "defer")
    per_kind = {}
    for kind in kinds:
        total = sum(c for (t, _), c in confusion.items() if t == kind)
        if total:
            per_kind[kind] = {"examples": total, "accuracy": confusion[(kind, kind)] / total}
    return {"examples": n, "accuracy": sum(confusion[(k, k)] for k in kinds) / max(n, 1),
            "per_answer": per_kind, "confusion": {f"{t}->{c}": k for (t, c), k in sorted(confusion.items())}}


def _callbacks(config: SFTSchedulerConfig, out: Path) -> list[Any]:
    from transformers import TrainerCallback

    class StepLog(TrainerCallback):
        """One row per logging step in ``log.csv`` (appended and flushed, so a stopped run keeps its curve)."""

        def __init__(self) -> None:
            self.start = time.monotonic()
            self.csv = out / "log.csv"
            if not self.csv.exists():
                with self.csv.open("w", newline="") as f:
                    csv.writer(f).writerow(LOG_COLUMNS)

        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any) -> None:
            if not logs or "loss" not in logs:
                return
            row = {**logs, "step": state.global_step, "wall_s": round(time.monotonic() - self.start, 1)}
            with self.csv.open("a", newline="") as f:
                csv.writer(f).writerow(["" if row.get(c) is None else row.get(c) for c in LOG_COLUMNS])

    return [StepLog(), adapter_saver(out), wall_clock_budget(config.max_minutes)]


def train_sft_scheduler(config: SFTSchedulerConfig, resume: bool = False, model: Any = None,
                        tokenizer: Any = None) -> dict[str, Any]:
    """Run SFT; returns the summary also written to ``summary.json`` (module docstring lists the outputs).
    ``model``/``tokenizer`` default to the config's model; pass them to reuse a loaded one."""
    import torch
    from datasets import Dataset
    from peft import LoraConfig
    from trl import SFTConfig, SFTTrainer

    from dcops.agents.llm.model import load_model
    from dcops.evaluation.report import versions

    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    torch.manual_seed(config.seed)
    train = _shuffled(load_examples(config.data, config.teacher, "train"), config.seed)
    if not train:
        raise ValueError(f"data: the {config.teacher} training split in {config.data} has no examples")
    validation = (_shuffled(load_examples(config.data, config.teacher, "validation"),
                            config.seed)[: config.validation_examples] if config.validation_examples else [])
    if model is None or tokenizer is None:
        model, tokenizer, source = load_model(config.model, seed=config.seed)
        model_source = asdict(source)
    else:
        model_source = {"name": config.model, "kind": "given", "location": "passed to train_sft_scheduler",
                        "revision": None}
    lengths = sorted(len(tokenizer(e["prompt"])["input_ids"]) for e in train[:2000])
    cuda = bool(torch.cuda.is_available())
    bf16 = cuda if config.bf16 is None else config.bf16
    record: dict[str, Any] = {
        "config": asdict(config), "model_source": model_source,
        "train_examples": len(train), "validation_examples": len(validation),
        "train_answers": dict(Counter(e["completion"].strip() for e in train)),
        "prompt_tokens": {"min": lengths[0], "median": lengths[len(lengths) // 2], "max": lengths[-1]},
        "examples_seen": config.max_steps * config.batch_size * config.grad_accum,
        "bf16": bf16, "device": "cuda" if cuda else "cpu", "torch_threads": torch.get_num_threads(),
        "versions": versions("torch", "transformers", "trl", "peft"),
    }
    (out / "config.json").write_text(json.dumps(record, indent=2, default=str) + "\n")
    args: dict[str, Any] = {
        "output_dir": str(out), "seed": config.seed, "max_steps": config.max_steps,
        "per_device_train_batch_size": config.batch_size, "gradient_accumulation_steps": config.grad_accum,
        "learning_rate": config.learning_rate, "warmup_steps": config.warmup_steps,
        "lr_scheduler_type": "cosine", "logging_steps": config.logging_steps, "save_strategy": "steps",
        "save_steps": config.save_steps, "save_total_limit": config.save_total_limit, "report_to": "none",
        "bf16": bf16, "disable_tqdm": not config.progress, "dataloader_num_workers": 0,
        "completion_only_loss": True, "packing": False, "max_length": None,  # never cut an answer off
    }
    if bf16 and not cuda:
        args["use_cpu"] = True
    lora = LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, lora_dropout=config.lora_dropout,
                      target_modules=list(config.lora_target_modules), task_type="CAUSAL_LM")
    if not config.progress:
        from datasets.utils.logging import disable_progress_bar

        disable_progress_bar()
    seen = train[: record["examples_seen"]]  # only what the steps will read is tokenised (cycled if fewer)
    dataset = Dataset.from_list([{"prompt": e["prompt"], "completion": e["completion"]} for e in seen])
    base_accuracy = (answer_accuracy(model, tokenizer, validation, config.task)
                     if config.validate_base and validation else None)
    trainer = SFTTrainer(model=model, args=SFTConfig(**args), train_dataset=dataset, processing_class=tokenizer,
                         peft_config=lora, callbacks=_callbacks(config, out))
    with score_only_completion_tokens():
        result = trainer.train(resume_from_checkpoint=True if resume else None)
    trainer.model.save_pretrained(str(out / "adapter"))
    (out / "adapter" / "STEP").write_text(f"{trainer.state.global_step}\n")
    trained_s = time.monotonic() - started
    trainer.model.eval()
    accuracy = answer_accuracy(trainer.model, tokenizer, validation, config.task) if validation else None
    record.update(steps_done=trainer.state.global_step, train_loss=float(result.training_loss),
                  train_wall_s=round(trained_s, 1), wall_s=round(time.monotonic() - started, 1),
                  validation_accuracy=accuracy, base_validation_accuracy=base_accuracy)
    (out / "summary.json").write_text(json.dumps(record, indent=2, default=str) + "\n")
    return record
