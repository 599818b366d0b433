"""GRPO from the SFT adapter on compact per-request prompts, every answer in the group (``dcops
train-scheduler-grpo-compact``).

The second half of the SFT → GRPO recipe. The first GRPO run (:mod:`dcops.training.scheduler.grpo`: window
prompts, sampled JSON answers, the window's reward) collapsed onto one template; the SFT adapter
(:mod:`dcops.training.scheduler.sft`) answers one word per request and reproduces ``priority_threshold``. Sampling
from it would return the teacher's answer in nearly every draw (its probability is above 0.99 on most prompts),
so a sampled group would be identical and carry no advantage. The answer set is three words, so the group is
*enumerated* instead of sampled: each allowed answer once, valid by construction, never identical.

**Reward**: ``Q(request, answer)`` of :mod:`dcops.training.scheduler.counterfactual`, the episode's score when
that one answer is changed and the teacher plays on: an episode-level return credited to the decision, over
every window the change touches.

**Objective**, per prompt with allowed answers ``A`` (two or three words) and the policy
``π(a) = softmax_A(log p(" " + a | prompt))`` (the ``sft`` scheduler's own choice is ``argmax π``). GRPO
maximises the group-relative advantage under a KL leash to the reference policy::

    maximise  Σ_A π(a) Â(a) − kl_beta · KL(π ‖ π_ref),    Â(a) = (Q(a) − mean_A Q) / advantage_scale

``π_ref`` is the starting (SFT) adapter, kept frozen beside the trained one. With the group enumerated, this
objective's maximiser is known in closed form for each prompt, ``π*(a) ∝ π_ref(a) exp(Â(a) / kl_beta)``, and the
adapter is fitted to it by cross-entropy, ``loss = −Σ_A π*(a) log π(a)`` (the policy-mirror-descent form of the
same objective, as in MPO and AWR). Two things measured on the first run decided this form. The sampled or
π-weighted policy gradient ``Σ π(a) Â(a) ∇log π(a)`` vanishes under the saturated SFT policy (the other answers'
probabilities are below 1e-4); and weighting every answer equally instead (``Σ Â(a) log π(a) / |A|``) is
unbounded below: it pays for pushing the worse answers' log-probabilities to −∞, and in three steps made the
teacher's probability go from 0.99987 to 0.999996 instead of moving any answer towards a better one. The target
``π*`` is bounded, and moves an answer only where its advantage outweighs the reference's confidence: the
answer flips when ``Â(b) − Â(teacher) > kl_beta · log(π_ref(teacher) / π_ref(b))``.

GRPO divides each group's advantages by the group's standard deviation; here a request whose answers differ by
1e-5 of score would then pull as hard as one where they differ by 0.05, so the advantages are divided by one
scale for the whole run instead: the standard deviation of the centred ``Q`` over the training rows kept (Dr.
GRPO, Liu et al. 2025, drops the per-group division altogether; one constant keeps that, and makes ``kl_beta``
read in units of a typical advantage). Requests whose answers all score within ``min_spread`` are skipped
(nothing to learn); the held-out rows are not filtered, so a row where every answer ties counts as "chose the
best".

**Outputs** (``--out``): ``adapter/`` (the trained LoRA adapter, rewritten every ``save_steps`` with a ``STEP``
file; ``--resume`` continues from it and ``state.pt``, the optimiser and step), ``log.csv`` (per step: loss,
the share of the batch whose target ``π*`` prefers another answer than the teacher's, ``KL(π ‖ π_ref)``,
mean entropy of ``π``, mean probability of the teacher's answer, agreement of ``argmax π`` with ``argmax Q``,
the expected one-step gain ``Σ π Q − Q(teacher)`` on the batch, learning rate, the gradient norm before
clipping, seconds),
``config.json`` and ``summary.json`` (validation before and after on rows of seeds 2000 on: agreement with the
best answer, mean gain of the chosen answer over the teacher's, regret against the best).
"""

from __future__ import annotations

import csv
import json
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dcops.training.scheduler.counterfactual import load_rows

LOG_COLUMNS = ("step", "loss", "target_flips", "kl", "entropy", "teacher_probability", "best_agreement",
               "expected_gain", "learning_rate", "grad_norm", "wall_s")


@dataclass
class CompactGRPOConfig:
    """Everything a run depends on (written to ``config.json``)."""

    data: str = "runs/llm_counterfactual"
    out: str = "runs/llm_grpo_compact"
    init_adapter: str | None = None
    """The SFT adapter to start from (default: the shipped ``sft`` adapter)."""
    model: str = "gemma"
    seed: int = 0
    max_steps: int = 150
    batch_size: int = 8
    """Prompts per step (each with its two or three answers)."""
    micro_batch: int = 4
    """Prompts per forward and backward pass (gradients accumulate over the step): memory, not the maths
    (16 prompts in one pass, about 30 sequences of 260 tokens, took more than the 24 GiB of this machine)."""
    learning_rate: float = 5e-5
    warmup_steps: int = 5
    max_grad_norm: float = 1.0
    """Gradients are clipped to this global norm (as TRL's trainers do by default)."""
    kl_beta: float = 0.1
    """The KL leash (in advantage-scale units): the target is ``π_ref exp(Â / kl_beta)``, renormalised."""
    advantage_scale: float | None = None
    """Divides ``Q − mean Q``; default the standard deviation of the centred Q over the training rows."""
    min_spread: float = 1e-4
    """Rows whose answers' Q differ by less than this (score units) are skipped."""
    save_steps: int = 10
    validation_rows: int = 300
    bf16: bool | None = None
    """bf16 autocast (default: on CUDA only; ``True`` is about 2× faster on this CPU)."""
    max_minutes: float | None = None
    """Stop (saving) after this much wall-clock time; ``--resume`` continues."""

    def __post_init__(self) -> None:
        for name in ("max_steps", "batch_size", "micro_batch", "save_steps"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}: must be >= 1, got {getattr(self, name)}")
        if self.learning_rate <= 0:
            raise ValueError(f"learning_rate: must be > 0, got {self.learning_rate}")
        if self.max_grad_norm <= 0:
            raise ValueError(f"max_grad_norm: must be > 0, got {self.max_grad_norm}")
        if self.kl_beta <= 0:
            raise ValueError(f"kl_beta: must be > 0, got {self.kl_beta}")
        for name in ("min_spread", "validation_rows", "warmup_steps"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name}: must be >= 0, got {getattr(self, name)}")
        if self.max_minutes is not None and self.max_minutes <= 0:
            raise ValueError(f"max_minutes: must be > 0, got {self.max_minutes}")
        if self.advantage_scale is not None and self.advantage_scale <= 0:
            raise ValueError(f"advantage_scale: must be > 0, got {self.advantage_scale}")


def spread(row: dict[str, Any]) -> float:
    q = row["q"]
    return max(q[w] for w in row["allowed"]) - min(q[w] for w in row["allowed"])


def centred(row: dict[str, Any]) -> np.ndarray:
    """``Q(a) − mean Q`` over the row's allowed answers, in their order."""
    q = np.array([row["q"][w] for w in row["allowed"]], dtype=np.float64)
    return q - q.mean()


def mirror_target(reference_logp: Any, advantage: np.ndarray, kl_beta: float) -> Any:
    """``π*(a) ∝ π_ref(a) exp(Â(a) / kl_beta)``: the maximiser of ``Σ π Â − kl_beta KL(π ‖ π_ref)`` over the
    group (module docstring); ``reference_logp`` are ``log π_ref`` (a tensor), ``advantage`` ``Â``."""
    import torch

    shift = torch.as_tensor(advantage / kl_beta, dtype=reference_logp.dtype, device=reference_logp.device)
    return torch.softmax(reference_logp + shift, 0)


def default_advantage_scale(rows: list[dict[str, Any]]) -> float:
    values = np.concatenate([centred(r) for r in rows]) if rows else np.zeros(1)
    scale = float(values.std())
    return scale if scale > 0 else 1.0


def word_token_ids(tokenizer: Any, words: list[str]) -> dict[str, list[int]]:
    return {w: list(tokenizer(" " + w, add_special_tokens=False)["input_ids"]) for w in words}


def answer_logprobs(model: Any, tokenizer: Any, rows: list[dict[str, Any]], words: dict[str, list[int]]) -> list[Any]:
    """Per row, a tensor of ``log p(" " + a | prompt)`` for its allowed answers (differentiable).

    One right-padded batch: per row, one sequence ``prompt + answer`` for each answer longer than one token, or
    the prompt alone if every answer is one token; one-token answers are read at the prompt's last position of the
    row's first sequence. Causal attention never lets a real token see a pad, so no mask is needed."""
    import torch

    from dcops.agents.llm.backends import _split_model

    decoder, head, softcap = _split_model(model)
    device = next(model.parameters()).device
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    sequences: list[list[int]] = []
    plans = []  # per row: (prompt length, [(word, sequence index)])
    for row in rows:
        prompt_ids = list(tokenizer(row["prompt"])["input_ids"])
        long_words = [w for w in row["allowed"] if len(words[w]) > 1]
        first = len(sequences)
        for w in long_words:
            sequences.append(prompt_ids + words[w])
        if not long_words:
            sequences.append(prompt_ids)
        plan = [(w, first + long_words.index(w) if w in long_words else first) for w in row["allowed"]]
        plans.append((len(prompt_ids), plan))
    width = max(len(s) for s in sequences)
    batch = torch.full((len(sequences), width), pad, dtype=torch.long, device=device)
    for i, seq in enumerate(sequences):
        batch[i, : len(seq)] = torch.tensor(seq, device=device)
    hidden = decoder(input_ids=batch, use_cache=False).last_hidden_state
    out = []
    for n_prompt, plan in plans:
        values = []
        for w, index in plan:
            ids = words[w]
            states = hidden[index, n_prompt - 1: n_prompt - 1 + len(ids)]
            logits = head(states).float()
            if softcap:
                logits = torch.tanh(logits / softcap) * softcap
            logp = torch.log_softmax(logits, dim=-1)
            values.append(logp[torch.arange(len(ids), device=device), torch.tensor(ids, device=device)].sum())
        out.append(torch.stack(values))
    return out


def evaluate(model: Any, tokenizer: Any, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The scheduler's own choice (``argmax`` of the answers' log-likelihood) on each row: how often it is the
    best answer, its mean gain over the teacher's answer and its mean regret against the best (score units)."""
    from dcops.agents.llm.backends import CompactLoglikBackend

    backend = CompactLoglikBackend(model, tokenizer)
    agree, gains, regrets, teacher = 0, [], [], 0
    for row in rows:
        words = tuple(row["allowed"])
        scores = backend.word_scores(row["prompt"], words)
        chosen = max(words, key=lambda w: scores[w])
        q = row["q"]
        best = max(q[w] for w in words)
        agree += q[chosen] >= best - 1e-12
        teacher += chosen == row["teacher"]
        gains.append(q[chosen] - q[row["teacher"]])
        regrets.append(best - q[chosen])
    n = max(len(rows), 1)
    return {"rows": len(rows), "best_agreement": agree / n, "teacher_agreement": teacher / n,
            "mean_gain_over_teacher": float(np.mean(gains)) if gains else 0.0,
            "mean_regret": float(np.mean(regrets)) if regrets else 0.0,
            "mean_regret_of_teacher": float(np.mean([max(r["q"][w] for w in r["allowed"]) - r["q"][r["teacher"]]
                                                     for r in rows])) if rows else 0.0}


def _load(config: CompactGRPOConfig, resume_adapter: Path | None) -> tuple[Any, Any, dict[str, Any]]:
    from dcops.agents.llm.model import load_model

    base, tokenizer, source = load_model(config.model, seed=config.seed)
    model, _, loaded = _load_with(base, tokenizer, config, resume_adapter)
    return model, tokenizer, {"model_source": asdict(source), **loaded}


def _load_with(base: Any, tokenizer: Any, config: CompactGRPOConfig, resume_adapter: Path | None
               ) -> tuple[Any, Any, dict[str, Any]]:
    """The base model with the trained adapter (``default``: the start, or ``resume_adapter``) and the frozen
    start as ``reference``."""
    from peft import PeftModel

    from dcops.agents.llm.scheduler import SHIPPED_SFT_ADAPTER

    start = Path(config.init_adapter) if config.init_adapter else SHIPPED_SFT_ADAPTER
    if not (start / "adapter_config.json").exists():
        raise FileNotFoundError(f"init_adapter: {start} has no adapter_config.json")
    model = PeftModel.from_pretrained(base, str(resume_adapter or start), is_trainable=True)
    model.load_adapter(str(start), adapter_name="reference")
    model.set_adapter("default")
    return model, tokenizer, {"init_adapter": str(start)}


RESUME_FIELDS = ("data", "init_adapter", "model", "seed", "batch_size", "kl_beta", "advantage_scale", "min_spread")
"""Settings a resumed run must share with the run it continues (they decide the data order, the target and the
reference policy)."""


def check_run_folder(config: CompactGRPOConfig, resume: bool) -> None:
    """Refuse, before any work and naming the option, what would mix two runs or lose one: a fresh run into a
    folder that holds a run, a resume without a whole saved state or with other settings than the run's own, a
    missing start adapter or training split."""
    from dcops.agents.llm.scheduler import SHIPPED_SFT_ADAPTER

    out = Path(config.out)
    start = Path(config.init_adapter) if config.init_adapter else SHIPPED_SFT_ADAPTER
    if not (start / "adapter_config.json").exists():
        raise FileNotFoundError(f"init_adapter: {start} has no adapter_config.json")
    if not (Path(config.data) / "train.jsonl").exists():
        raise FileNotFoundError(f"data: {config.data} has no train.jsonl; run `dcops llm-counterfactual --out "
                                f"{config.data}` first")
    if not resume:
        if (out / "log.csv").exists() or (out / "state.pt").exists():
            raise ValueError(f"out: {out} already holds a run; pass --resume to continue it or choose another --out")
        return
    import torch

    if not (out / "state.pt").exists() or not (out / "adapter" / "STEP").exists():
        raise ValueError(f"resume: {out} has no saved state (adapter/STEP and state.pt)")
    saved = int((out / "adapter" / "STEP").read_text())
    state_step = int(torch.load(out / "state.pt", weights_only=False)["step"])
    if saved != state_step:
        raise ValueError(f"resume: {out}/adapter is at step {saved} but state.pt at step {state_step} (a save was "
                         "interrupted); start a new run")
    original = json.loads((out / "config.json").read_text())["config"]
    for name in RESUME_FIELDS:
        if original.get(name) != getattr(config, name):
            raise ValueError(f"{name}: the run in {out} was started with {original.get(name)!r}, not "
                             f"{getattr(config, name)!r}; a resumed run keeps its settings")


def train_compact_grpo(config: CompactGRPOConfig, resume: bool = False) -> dict[str, Any]:
    """Run the training (module docstring); returns the summary also written to ``summary.json``."""
    import contextlib

    import torch

    from dcops.evaluation.report import versions

    out = Path(config.out)
    check_run_folder(config, resume)
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    torch.manual_seed(config.seed)
    train_all = load_rows(config.data, "train")
    train = [r for r in train_all if spread(r) >= config.min_spread]
    if not train:
        raise ValueError(f"data: no training row of {config.data} has answers differing by min_spread "
                         f"{config.min_spread}")
    random.Random(config.seed).shuffle(train)
    validation = load_rows(config.data, "validation") if config.validation_rows else []
    random.Random(config.seed).shuffle(validation)
    validation = validation[: config.validation_rows]
    scale = config.advantage_scale or default_advantage_scale(train)
    state_path = out / "state.pt"
    resume_adapter = out / "adapter" if resume else None
    model, tokenizer, loaded = _load(config, resume_adapter)
    words = word_token_ids(tokenizer, ["ACCEPT", "REJECT", "DEFER"])
    cuda = bool(torch.cuda.is_available())
    bf16 = cuda if config.bf16 is None else config.bf16
    record: dict[str, Any] = {
        "config": asdict(config), **loaded, "advantage_scale": scale,
        "train_rows": len(train_all), "train_rows_with_signal": len(train), "validation_rows": len(validation),
        "bf16": bf16, "device": "cuda" if cuda else "cpu", "torch_threads": torch.get_num_threads(),
        "versions": versions("torch", "transformers", "peft"),
    }
    if not resume:  # a resumed run keeps the record of how it started (check_run_folder held it to it)
        (out / "config.json").write_text(json.dumps(record, indent=2, default=str) + "\n")
    params = [p for n, p in model.named_parameters() if p.requires_grad and ".default." in n]
    if not params:
        raise RuntimeError("no trainable LoRA parameter of the 'default' adapter")
    optimizer = torch.optim.AdamW(params, lr=config.learning_rate, weight_decay=0.0)
    step = 0
    before = None
    if resume:
        state = torch.load(state_path, weights_only=False)
        optimizer.load_state_dict(state["optimizer"])
        step, before = int(state["step"]), state.get("validation_before")
    model.eval()  # no dropout: π and π_ref are the same function at step 0
    if before is None and validation:
        with torch.no_grad():
            before = evaluate(model, tokenizer, validation)
    log_path = out / "log.csv"
    if not log_path.exists():
        with log_path.open("w", newline="") as f:
            csv.writer(f).writerow(LOG_COLUMNS)
    autocast = (lambda: torch.autocast("cuda" if cuda else "cpu", dtype=torch.bfloat16)) if bf16 else (
        contextlib.nullcontext)

    def save() -> None:
        # the optimiser state first, each file written whole then renamed: the adapter's STEP is written last,
        # and a resume refuses an adapter whose STEP differs from state.pt's step (a kill between the two)
        partial = state_path.with_suffix(".partial")
        torch.save({"optimizer": optimizer.state_dict(), "step": step, "validation_before": before}, partial)
        partial.replace(state_path)
        model.save_pretrained(str(out / "adapter"), selected_adapters=["default"])
        (out / "adapter" / "STEP.partial").write_text(f"{step}\n")
        (out / "adapter" / "STEP.partial").replace(out / "adapter" / "STEP")

    deadline = None if config.max_minutes is None else started + 60 * config.max_minutes
    stopped_by_clock = False
    while step < config.max_steps:
        if deadline is not None and time.monotonic() > deadline:
            stopped_by_clock = True
            break
        t0 = time.monotonic()
        batch = [train[(step * config.batch_size + i) % len(train)] for i in range(config.batch_size)]
        lr = config.learning_rate * min(1.0, (step + 1) / max(config.warmup_steps, 1))
        for group in optimizer.param_groups:
            group["lr"] = lr
        optimizer.zero_grad(set_to_none=True)
        total = 0.0
        flips, kls, entropies, teacher_p, agree, gains = [], [], [], [], [], []
        for start in range(0, len(batch), config.micro_batch):
            micro = batch[start: start + config.micro_batch]
            with torch.no_grad(), autocast():
                model.set_adapter("reference")
                reference = [torch.log_softmax(v.float(), 0) for v in answer_logprobs(model, tokenizer, micro, words)]
                model.set_adapter("default")
            for p in params:
                p.requires_grad_(True)
            with autocast():
                raw = answer_logprobs(model, tokenizer, micro, words)
            losses = []
            for row, values, ref in zip(micro, raw, reference, strict=True):
                logpi = torch.log_softmax(values.float(), 0)
                target = mirror_target(ref, centred(row) / scale, config.kl_beta)
                losses.append(-(target * logpi).sum())
                pi = logpi.detach().exp()
                teacher = row["allowed"].index(row["teacher"])
                flips.append(float(int(target.argmax()) != teacher))
                kls.append(float((pi * (logpi.detach() - ref)).sum()))
                entropies.append(float(-(pi * logpi.detach()).sum()))
                q = np.array([row["q"][w] for w in row["allowed"]])
                probs = pi.cpu().numpy()
                teacher_p.append(float(probs[teacher]))
                agree.append(float(q[int(probs.argmax())] >= q.max() - 1e-12))
                gains.append(float(probs @ q - row["q"][row["teacher"]]))
            part = torch.stack(losses).sum() / len(batch)  # the step's loss is the mean over the whole batch
            part.backward()
            total += float(part.detach())
        grad_norm = float(torch.nn.utils.clip_grad_norm_(params, config.max_grad_norm))
        optimizer.step()
        step += 1
        with log_path.open("a", newline="") as f:
            csv.writer(f).writerow([step, f"{total:.6g}", f"{np.mean(flips):.4g}", f"{np.mean(kls):.6g}",
                                    f"{np.mean(entropies):.6g}", f"{np.mean(teacher_p):.6g}",
                                    f"{np.mean(agree):.4g}", f"{np.mean(gains):.6g}", f"{lr:.3g}", f"{grad_norm:.4g}",
                                    round(time.monotonic() - t0, 2)])
        if step % config.save_steps == 0:
            save()
    save()
    after = None
    if validation:
        with torch.no_grad():
            after = evaluate(model, tokenizer, validation)
    record.update(steps_done=step, stopped_by_clock=stopped_by_clock, wall_s=round(time.monotonic() - started, 1),
                  validation_before=before, validation_after=after)
    (out / "summary.json").write_text(json.dumps(record, indent=2, default=str) + "\n")
    return record
