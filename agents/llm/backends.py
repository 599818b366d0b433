"""Backends of the LLM scheduler: one small interface, three implementations.

A :class:`Backend` turns a prompt (and the window's view, for the ids and the allowed windows) into the text of
an answer; :class:`dcops.agents.llm.scheduler.LLMScheduler` parses every answer strictly. No backend raises on
a bad model or server: a failed call returns an empty answer, which the parser reports and defaults.

- :class:`TransformersBackend`: greedy generation with a local transformers model; stops as soon as the
  answer's JSON object closes (or cannot be one) or every pending id has a complete entry
  (:func:`answer_finished`), with a budget of ``tokens_per_request`` new tokens per pending request.
- :class:`LoglikBackend` (constrained mode, for small base models): for each pending request, scores each
  allowed decision (ACCEPT, REJECT, DEFER to the next window when one exists) by the model's log-likelihood of
  the decision word after ``{"<id>": {"decision": "`` following the prompt, and picks the best; the answer is
  valid by construction. Cost per window: one forward pass over the prompt (its key/value cache is then
  reused, not recomputed; the rules-and-example head's cache is computed once for all windows, see
  :class:`PrefixCache`) plus one batched pass over the short continuations (``chunk`` sequences at a time).
  Each request is scored independently given the prompt (not given the other answers), which is what makes
  the batching possible.
- :class:`CompactLoglikBackend` (``sft`` and ``sft_grpo`` modes): the window's requests one by one in
  :func:`dcops.agents.llm.compact.decision_order`, each from its own short prompt
  (:class:`dcops.agents.llm.compact.CompactWindow`), scored like :class:`LoglikBackend` (the one-word answers
  after ``Decision:``); each answer updates the capacity the next prompt states, so a window costs one short
  forward pass per request. It builds its own prompts and ignores the window prompt it is given. It remembers
  the scores of the prompts it has answered and caches the key/values of each request's context (the prompt
  before the facts its earlier answers change; :class:`HeaderCache`), so a window decided again (an honest twin
  replaying the episode) costs only what changed; both give the bits running the model again gives.
- :class:`OpenAIBackend`: any OpenAI-compatible chat endpoint via the ``openai`` client (vLLM, llama.cpp
  server, hosted APIs). With ``json_schema=True`` it asks for output constrained to the answer's JSON schema
  (:func:`answer_schema`: exactly the pending ids, an enum of decisions and of allowed windows); a server that
  rejects ``response_format`` is asked again without it, and the backend remembers that.

torch, transformers, peft and openai are imported inside methods (``import dcops.agents.llm`` stays light).
"""

from __future__ import annotations

import copy
import json
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Protocol

from dcops.agents.llm.parser import scan_object
from dcops.agents.llm.prompt import format_answer, prompt_head


class Backend(Protocol):
    """Turns one window's prompt into the text of an answer (see :mod:`dcops.agents.llm.parser`)."""

    def answer(self, prompt: str, view: dict[str, Any]) -> str: ...


# ---------------------------------------------------------------------------------------------- generation
def json_object_closed(text: str) -> bool:
    """Whether ``text`` (a completion) already holds a complete top-level JSON object, or can never start one
    (its first non-blank character is not ``{`` or a code fence): either way, generating more is useless."""
    s = text.lstrip()
    if s.startswith("```"):
        newline = s.find("\n")
        if newline < 0:
            return False
        s = s[newline + 1:].lstrip()
    if not s:
        return False
    if s[0] != "{":
        return True
    depth, in_string, escaped = 0, False, False
    for ch in s:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth <= 0:
                return True
    return False


def answer_finished(text: str, pending_ids: list[str]) -> bool:
    """Whether generating more of ``text`` is useless: its JSON object is closed (or can never start,
    :func:`json_object_closed`), or every pending id already has a complete entry
    (:func:`dcops.agents.llm.parser.scan_object`), so anything after it could only be an unknown id or a
    duplicate. Base models given a list of ids tend to go on inventing further ids until the budget runs out."""
    if json_object_closed(text):
        return True
    answered = {key for key, _ in scan_object(text).entries}
    return bool(pending_ids) and answered.issuperset(pending_ids)


def _stopping_criteria(tokenizer: Any, n_prompt: int, pending_ids: list[str]) -> Any:
    from transformers import StoppingCriteria, StoppingCriteriaList

    class _AnswerFinished(StoppingCriteria):  # type: ignore[misc]
        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> bool:
            text = tokenizer.decode(input_ids[0, n_prompt:], skip_special_tokens=True)
            return answer_finished(text, pending_ids)

    return StoppingCriteriaList([_AnswerFinished()])


def _device(model: Any) -> Any:
    return next(model.parameters()).device


@dataclass
class PrefixCache:
    """Prompt encoding with key/value-cache reuse at two fixed cut points.

    A prompt is tokenised in three pieces: the window-independent head
    (:func:`dcops.agents.llm.prompt.prompt_head`, with the BOS token), the window's state up to the
    descriptions block (:data:`BODY_END`), and the rest (the untrusted descriptions and ``Answer:``). The head's
    cache is computed once per model; the body's cache is remembered for the last body seen, so deciding the same
    window again with other descriptions (the paired prompt-injection measurement) only runs the model over the
    descriptions. Caches are copied before use, never extended in place. They assume fixed weights: call
    :meth:`clear` after changing the model. Prompts that do not start with a known head are encoded whole.
    """

    model: Any
    tokenizer: Any
    _heads: dict[str, tuple[list[int], Any]] = field(default_factory=dict, repr=False)
    _body: tuple[tuple[str, str], list[int], Any] | None = field(default=None, repr=False)

    BODY_END = "\nDescriptions (untrusted"

    def clear(self) -> None:
        self._heads.clear()
        self._body = None

    def split(self, prompt: str) -> tuple[str, str, str]:
        """(head, body, tail); head and body are empty where the prompt does not have them."""
        for few_shot, mask in ((True, True), (True, False), (False, True)):  # the rules-only head last
            head = prompt_head(few_shot, mask)
            if prompt.startswith(head):
                rest = prompt[len(head):]
                cut = rest.find(self.BODY_END)
                return (head, rest[: cut + 1], rest[cut + 1:]) if cut >= 0 else (head, "", rest)
        return "", "", prompt

    def _run(self, ids: list[int], cache: Any) -> Any:
        import torch

        decoder = _split_model(self.model)[0]
        with torch.inference_mode():
            return decoder(input_ids=torch.tensor([ids], device=_device(self.model)), cache=cache,
                           use_cache=True).cache

    def encode(self, prompt: str) -> tuple[Any, Any, int]:
        """(all token ids as a 1 × n tensor, a fresh copy of the cache of their first k tokens or None, k)."""
        import torch

        head, body, tail = self.split(prompt)
        device = _device(self.model)
        tail_ids = list(self.tokenizer(tail, add_special_tokens=not head)["input_ids"])
        if not head:
            return torch.tensor([tail_ids], device=device), None, 0
        if head not in self._heads:
            head_ids = list(self.tokenizer(head)["input_ids"])
            self._heads[head] = (head_ids, self._run(head_ids, None))
        head_ids, cache = self._heads[head]
        prefix_ids = head_ids
        if body:
            if self._body is not None and self._body[0] == (head, body):
                body_ids, cache = self._body[1], self._body[2]
            else:
                body_ids = list(self.tokenizer(body, add_special_tokens=False)["input_ids"])
                cache = self._run(body_ids, copy.deepcopy(cache))
                self._body = ((head, body), body_ids, cache)
            prefix_ids = head_ids + body_ids
        ids = torch.tensor([prefix_ids + tail_ids], device=device)
        return ids, copy.deepcopy(cache), len(prefix_ids)


@dataclass
class TransformersBackend:
    """Greedy (or sampled) generation with a local transformers causal LM (module docstring)."""

    model: Any
    tokenizer: Any
    tokens_per_request: int = 24
    """New-token budget per pending request (one answer line is about 12–20 Gemma tokens)."""
    extra_tokens: int = 16
    do_sample: bool = False
    temperature: float = 1.0
    errors: list[str] = field(default_factory=list)
    _prefix: PrefixCache | None = field(default=None, repr=False)

    def answer(self, prompt: str, view: dict[str, Any]) -> str:
        import torch

        try:
            if self._prefix is None:
                self._prefix = PrefixCache(self.model, self.tokenizer)
            ids, cache, _ = self._prefix.encode(prompt)
            n_prompt = ids.shape[1]
            pending_ids = [r["request_id"] for r in view["pending"]]
            budget = self.extra_tokens + self.tokens_per_request * len(view["pending"])
            sampling = {"do_sample": True, "temperature": self.temperature} if self.do_sample else \
                {"do_sample": False, "temperature": None, "top_p": None, "top_k": None}
            extra = {"cache": cache} if cache is not None else {}
            with torch.inference_mode():
                out = self.model.generate(
                    input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=budget,
                    stopping_criteria=_stopping_criteria(self.tokenizer, n_prompt, pending_ids),
                    pad_token_id=self.tokenizer.pad_token_id, **sampling, **extra)
            return str(self.tokenizer.decode(out[0, n_prompt:], skip_special_tokens=True))
        except Exception as exc:  # noqa: BLE001 - recorded as an error (LLMScheduler counts it; dcops eval fails the cell)
            self.errors.append(f"{type(exc).__name__}: {exc}")
            return ""


def with_adapter(model: Any, adapter: str) -> Any:
    """``model`` with the LoRA adapter directory ``adapter`` (peft) applied, in eval mode."""
    from pathlib import Path

    from peft import PeftModel

    if not (Path(adapter) / "adapter_config.json").exists():
        raise FileNotFoundError(f"adapter: no adapter_config.json in {adapter!r} (a peft LoRA adapter directory)")
    wrapped = PeftModel.from_pretrained(model, adapter)
    wrapped.eval()
    return wrapped


# ---------------------------------------------------------------------------------------------- constrained
def decision_choices(view: dict[str, Any]) -> list[tuple[str, dict[str, Any] | None]]:
    """The choice set of every request this window: (word, extra fields); DEFER only to the next window and
    only when one exists."""
    choices: list[tuple[str, dict[str, Any] | None]] = [("ACCEPT", None), ("REJECT", None)]
    if view["window"] + 1 < view["n_windows"]:
        choices.append(("DEFER", {"defer_to_window": view["window"] + 1}))
    return choices


def entry_prefix(request_id: str) -> str:
    """The text before a decision word in the answer format (what the scored continuation follows)."""
    return '{\n' + json.dumps(request_id) + ': {"decision": "'


def _split_model(model: Any) -> tuple[Any, Any, float | None]:
    """The decoder, the output head and the final logit soft-cap of a causal LM (peft-wrapped or not)."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    softcap = getattr(base.config, "final_logit_softcapping", None)
    return base.get_decoder(), base.get_output_embeddings(), softcap


def output_logits(head: Any, states: Any, softcap: float | None) -> Any:
    """Float32 logits of the output ``head`` (a linear layer) at ``states`` (``n × d``), soft-capped as the
    model does.

    A plain linear head without a bias (not one wrapped by an adapter, whose own weights would be skipped) is
    applied as ``weight @ statesᵀ``, so the vocabulary (262,144 rows for Gemma) is the
    product's long side: for a few states ``F.linear`` packs the whole weight (671 MB in float32) first, which
    made it the slower of the two on this CPU. It differs from ``head(states)`` by rounding only.
    """
    import torch

    if type(head) is torch.nn.Linear and head.bias is None and states.dtype == head.weight.dtype:
        logits = torch.mm(head.weight, states.T).T.float()
    else:
        logits = head(states).float()
    return torch.tanh(logits / softcap) * softcap if softcap else logits


def continuation_logprobs(prefix: PrefixCache | HeaderCache, prompt: str, rows: list[tuple[list[int], int]],
                          chunk: int = 16) -> list[float]:
    """For each row (tokens following ``prompt``, index of the first scored token), the summed log-probability
    of the scored tokens given the prompt and the row's earlier tokens.

    One forward pass over the prompt (reusing :class:`PrefixCache`), then the rows in batches of ``chunk``: a
    row's token ``j`` is predicted by the hidden state of token ``j − 1`` (by the prompt's last one for
    ``j = 0``), so a row's last token is never run and a one-token row needs no pass of its own. The rows'
    other tokens run in one batched pass on a copy of the prompt's cache, right-padded (causal attention never
    lets a real token see a pad, so no mask is needed), and the output head runs once per batch, at the scored
    positions only (:func:`output_logits`).
    """
    import torch

    model, tok = prefix.model, prefix.tokenizer
    decoder, head, softcap = _split_model(model)
    device = _device(model)
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    ids, cache, n_cached = prefix.encode(prompt)
    values: list[float] = []
    with torch.inference_mode():
        out = decoder(input_ids=ids[:, n_cached:], cache=cache, use_cache=True)
        cache, last = out.cache, out.last_hidden_state[0, -1:]
        for i in range(0, len(rows), chunk):
            part = rows[i: i + chunk]
            # a row reads hidden states at positions max(start − 1, 0) … len − 2 of its own tokens
            fed = [b for b, (seq, start) in enumerate(part) if len(seq) - 1 > max(start - 1, 0)]
            hidden = None
            if fed:
                width = max(len(part[b][0]) - 1 for b in fed)
                batch = torch.full((len(fed), width), pad, dtype=torch.long, device=device)
                for k, b in enumerate(fed):
                    seq = part[b][0]
                    batch[k, : len(seq) - 1] = torch.tensor(seq[:-1], device=device)
                shared = copy.deepcopy(cache)
                shared.batch_repeat_interleave(len(fed))
                hidden = decoder(input_ids=batch, cache=shared, use_cache=True).last_hidden_state
                del shared
            row_of = {b: k for k, b in enumerate(fed)}
            states, targets, sizes = [], [], []
            for b, (seq, start) in enumerate(part):
                pieces = [last] if start == 0 and seq else []
                if b in row_of:
                    pieces.append(hidden[row_of[b], max(start - 1, 0): len(seq) - 1])
                states.extend(pieces)
                targets.extend(seq[start:])
                sizes.append(max(len(seq) - start, 0))
            if not targets:  # nothing scored in this batch
                values.extend(0.0 for _ in part)
                continue
            logp = torch.log_softmax(output_logits(head, torch.cat(states, dim=0), softcap), dim=-1)
            picked = logp.gather(1, torch.tensor(targets, device=device)[:, None])[:, 0]
            values.extend(float(piece.sum()) for piece in torch.split(picked, sizes))
    return values


@dataclass
class LoglikBackend:
    """Constrained decisions by log-likelihood scoring (module docstring)."""

    model: Any
    tokenizer: Any
    chunk: int = 16
    """Continuations scored per batched forward pass (memory: each carries a copy of the prompt's cache)."""
    last_scores: dict[str, dict[str, float]] = field(default_factory=dict)
    """Log-likelihood (nats) of each choice word per request id, last window."""
    _prefix: PrefixCache | None = field(default=None, repr=False)

    def score(self, prompt: str, view: dict[str, Any]) -> dict[str, dict[str, float]]:
        """Log-likelihood of each choice word (with its closing quote) per pending request."""
        tok = self.tokenizer
        words = {w: tok(w + '"', add_special_tokens=False)["input_ids"] for w, _ in decision_choices(view)}
        keys: list[tuple[str, str]] = []
        rows: list[tuple[list[int], int]] = []
        for r in view["pending"]:
            prefix = list(tok(entry_prefix(r["request_id"]), add_special_tokens=False)["input_ids"])
            for word, ids in words.items():
                keys.append((r["request_id"], word))
                rows.append((prefix + list(ids), len(prefix)))
        if self._prefix is None:
            self._prefix = PrefixCache(self.model, tok)
        values = continuation_logprobs(self._prefix, prompt, rows, self.chunk)
        scores: dict[str, dict[str, float]] = {r["request_id"]: {} for r in view["pending"]}
        for (rid, word), value in zip(keys, values, strict=True):
            scores[rid][word] = value
        return scores

    def decide(self, prompt: str, view: dict[str, Any]) -> list[dict[str, Any]]:
        """The highest-scoring allowed decision per pending request."""
        scores = self.score(prompt, view)
        self.last_scores = scores
        extra = dict(decision_choices(view))
        decisions = []
        for r in view["pending"]:
            rid = r["request_id"]
            word = max(scores[rid], key=lambda w: scores[rid][w])
            decisions.append({"request_id": rid, "decision": word, **(extra[word] or {})})
        return decisions

    def answer(self, prompt: str, view: dict[str, Any]) -> str:
        return format_answer(self.decide(prompt, view))


def cache_bytes(cache: Any) -> int:
    """Bytes held by a key/value cache's tensors (every layer's keys and values)."""
    import torch

    return sum(value.nbytes for layer in getattr(cache, "layers", ()) for value in
               (getattr(layer, "keys", None), getattr(layer, "values", None)) if isinstance(value, torch.Tensor))


@dataclass
class HeaderCache:
    """Key/value caches of the parts a compact prompt shares with others, so each prompt runs the model only
    over what is new to it. Same interface as :class:`PrefixCache` (:meth:`encode`).

    Two parts are kept. The window's **header** (the rules, the window and its carbon:
    :attr:`dcops.agents.llm.compact.CompactWindow.header`), the start of every prompt of a window. And each
    request's **context** (its prompt before the facts that depend on the window's earlier answers:
    :func:`dcops.agents.llm.compact.prompt_context`), which recurs when the same window is decided again with
    other answers before it: an honest twin replaying an episode (``dcops eval``'s gaming payoff) or another
    decision order. Contexts are kept least recently used first out, up to :attr:`max_context_bytes` of cache.

    A prompt is always run the same way (header, then the rest of its context, then its tail), whether its parts
    are cached or not, so caching changes no bit of a score. A prompt that does not start with the header (or
    the context) plus a newline, or whose tokens differ when split there, is run without that part. The caches
    assume fixed weights: call :meth:`clear` after changing the model.
    """

    model: Any
    tokenizer: Any
    header: str = ""
    context: str = ""
    """The current prompt's context (empty: none)."""
    max_context_bytes: int = 1 << 30
    """Most bytes of context caches kept (1 GiB: about 135 requests' contexts of Gemma 3 270M in float32, each
    about 8 MB: the header's and the context's keys and values, 36 kB a token)."""
    context_hits: int = 0
    """Prompts whose context came from the cache."""
    _cached: tuple[str, list[int], Any] | None = field(default=None, repr=False)
    _contexts: OrderedDict[tuple[str, str], tuple[list[int], Any, int]] = field(default_factory=OrderedDict,
                                                                               repr=False)
    _context_bytes: int = field(default=0, repr=False)

    def __post_init__(self) -> None:
        if self.max_context_bytes < 0:
            raise ValueError(f"max_context_bytes must be at least 0, got {self.max_context_bytes}")

    def clear(self) -> None:
        self._cached = None
        self._contexts.clear()
        self._context_bytes = 0

    def _run(self, ids: list[int], cache: Any = None) -> Any:
        import torch

        decoder = _split_model(self.model)[0]
        with torch.inference_mode():
            return decoder(input_ids=torch.tensor([ids], device=_device(self.model)), cache=cache,
                           use_cache=True).cache

    def _header(self, ids: list[int]) -> tuple[list[int], Any] | None:
        """The header's ids and cache, where ``ids`` start with them."""
        if self._cached is None or self._cached[0] != self.header:
            head_ids = list(self.tokenizer(self.header)["input_ids"])
            self._cached = (self.header, head_ids, self._run(head_ids))
        _, head_ids, cache = self._cached
        return (head_ids, cache) if ids[: len(head_ids)] == head_ids else None  # tokens merged across the cut

    def _kept_context(self, ids: list[int]) -> tuple[list[int], Any] | None:
        """The kept cache of this header's context, where ``ids`` start with its tokens (it was kept only where
        its tokens start with the header's, so a fresh run would take the same cut)."""
        key = (self.header, self.context)
        kept = self._contexts.get(key)
        if kept is None or ids[: len(kept[0])] != kept[0]:
            return None
        self._contexts.move_to_end(key)
        self.context_hits += 1
        return kept[0], kept[1]

    def _context(self, ids: list[int], head_ids: list[int], head_cache: Any) -> tuple[list[int], Any] | None:
        """The context's ids and cache, run from the header's and kept, where ``ids`` start with them."""
        context_ids = list(self.tokenizer(self.context)["input_ids"])
        if ids[: len(context_ids)] != context_ids or context_ids[: len(head_ids)] != head_ids:
            return None  # the tokens merge across a cut
        cache = self._run(context_ids[len(head_ids):], copy.deepcopy(head_cache))
        size = cache_bytes(cache)
        if 0 < size <= self.max_context_bytes:  # a cache whose size cannot be told (0) is not kept
            replaced = self._contexts.pop((self.header, self.context), None)
            self._context_bytes -= replaced[2] if replaced is not None else 0
            self._contexts[(self.header, self.context)] = (context_ids, cache, size)
            self._context_bytes += size
            while self._context_bytes > self.max_context_bytes:
                self._context_bytes -= self._contexts.popitem(last=False)[1][2]
        return context_ids, cache

    def encode(self, prompt: str) -> tuple[Any, Any, int]:
        """(all token ids as a 1 × n tensor, a fresh copy of the cache of their first k tokens or None, k)."""
        import torch

        device = _device(self.model)
        ids = list(self.tokenizer(prompt)["input_ids"])
        if not self.header or not prompt.startswith(self.header + "\n"):
            return torch.tensor([ids], device=device), None, 0
        with_context = bool(self.context) and self.context.startswith(self.header + "\n") and prompt.startswith(
            self.context + "\n")
        cached = self._kept_context(ids) if with_context else None
        if cached is None:
            header = self._header(ids)
            if header is None:
                return torch.tensor([ids], device=device), None, 0
            cached = (self._context(ids, *header) if with_context else None) or header
        prefix_ids, cache = cached
        return torch.tensor([ids], device=device), copy.deepcopy(cache), len(prefix_ids)


@dataclass
class CompactLoglikBackend:
    """Sequential constrained decisions from compact per-request prompts (module docstring).

    The scores of a prompt are remembered (up to :attr:`max_remembered` prompts, least recently used first out)
    and the shared parts of prompts are cached (:class:`HeaderCache`), so a window decided again, as by the
    honest twins ``dcops eval`` plays for the gaming payoff, costs the model only the prompts that changed, and
    those whose context is unchanged only their last two lines. Both give the same bits as running the model again; both
    assume fixed weights (:meth:`clear` after changing the model).
    """

    model: Any
    tokenizer: Any
    max_remembered: int = 16_384
    """Most prompts whose scores are remembered (each about 1.5 kB of text: the prompt and its context as the
    key), so about 25 MB at most; an adversarial cell of ``dcops eval`` plays about 1,200 prompts."""
    max_context_bytes: int = 1 << 30
    """Most bytes of cached request contexts (:attr:`HeaderCache.max_context_bytes`)."""
    remembered_hits: int = 0
    """Prompts answered from the remembered scores."""
    last_scores: dict[str, dict[str, float]] = field(default_factory=dict)
    """Log-likelihood (nats) of each allowed answer word per request id, last window."""
    last_prompts: dict[str, str] = field(default_factory=dict)
    """The prompt each request of the last window was decided from."""
    _prefix: HeaderCache | None = field(default=None, repr=False)
    _remembered: OrderedDict[tuple[str, str, str, tuple[str, ...]], dict[str, float]] = field(
        default_factory=OrderedDict, repr=False)

    def __post_init__(self) -> None:
        for name in ("max_remembered", "max_context_bytes"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be at least 0, got {getattr(self, name)}")

    def clear(self) -> None:
        """Forget remembered scores and cached prompt parts (after the model's weights change)."""
        self._remembered.clear()
        if self._prefix is not None:
            self._prefix.clear()

    def word_scores(self, prompt: str, words: tuple[str, ...], header: str = "", context: str = ""
                    ) -> dict[str, float]:
        """Log-likelihood of ``" " + word`` after ``prompt``, for each word. ``header`` and ``context``: starts
        of the prompt whose key/value caches are kept for other prompts that share them (:class:`HeaderCache`);
        they change how the model is run, never its scores for a given (prompt, header, context)."""
        key = (prompt, header, context, words)
        if key in self._remembered:
            self._remembered.move_to_end(key)
            self.remembered_hits += 1
            return dict(self._remembered[key])
        if self._prefix is None:
            self._prefix = HeaderCache(self.model, self.tokenizer, max_context_bytes=self.max_context_bytes)
        self._prefix.header, self._prefix.context = header, context
        rows = [(list(self.tokenizer(" " + w, add_special_tokens=False)["input_ids"]), 0) for w in words]
        scores = dict(zip(words, continuation_logprobs(self._prefix, prompt, rows), strict=True))
        self._remembered[key] = dict(scores)
        while len(self._remembered) > self.max_remembered:
            self._remembered.popitem(last=False)
        return scores

    def decide(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        """The highest-scoring allowed answer per pending request, decided in order."""
        from dcops.agents.llm.compact import (
            CompactWindow,
            allowed_words,
            decision_order,
            prompt_context,
            to_decision,
        )

        window, words = CompactWindow(view), allowed_words(view)
        self.last_scores, self.last_prompts = {}, {}
        decisions = []
        for request in decision_order(view):
            rid = request["request_id"]
            prompt = window.prompt(request)
            scores = self.word_scores(prompt, words, header=window.header, context=prompt_context(prompt))
            word = max(words, key=lambda w: scores[w])  # ties: the earlier word of ANSWER_WORDS
            self.last_scores[rid], self.last_prompts[rid] = scores, prompt
            decisions.append(to_decision(rid, word, view))
            window.record(request, word)
        return decisions

    def answer(self, prompt: str, view: dict[str, Any]) -> str:
        return format_answer(self.decide(view))


# ---------------------------------------------------------------------------------------------- HTTP
def answer_schema(view: dict[str, Any]) -> dict[str, Any]:
    """The JSON schema of a valid answer for this window: an object with exactly the pending ids as keys."""
    windows = list(range(view["window"] + 1, view["n_windows"]))
    decisions = ["ACCEPT", "REJECT"] + (["DEFER"] if windows else [])
    entry = {
        "type": "object",
        "properties": {
            "decision": {"type": "string", "enum": decisions},
            "defer_to_window": {"anyOf": [{"type": "integer", "enum": windows}, {"type": "null"}]}
            if windows else {"type": "null"},
            "reasoning": {"type": "string"},
        },
        "required": ["decision", "defer_to_window", "reasoning"],
        "additionalProperties": False,
    }
    ids = [r["request_id"] for r in view["pending"]]
    return {"type": "object", "properties": {rid: entry for rid in ids}, "required": ids,
            "additionalProperties": False}


@dataclass
class OpenAIBackend:
    """An OpenAI-compatible chat-completions server (module docstring)."""

    base_url: str
    model: str
    api_key: str = "EMPTY"
    json_schema: bool = True
    """Ask for JSON-schema constrained output (switched off for good if the server rejects it)."""
    temperature: float = 0.0
    max_tokens: int | None = None
    timeout_s: float = 120.0
    errors: list[str] = field(default_factory=list)
    """Calls that failed (the answer was empty): never model output."""
    notes: list[str] = field(default_factory=list)
    """What the backend adapted to (e.g. a server without ``response_format``)."""
    _client: Any = field(default=None, repr=False)

    def client(self) -> Any:
        if self._client is None:
            import openai

            self._client = openai.OpenAI(base_url=self.base_url, api_key=self.api_key, timeout=self.timeout_s,
                                         max_retries=1)
        return self._client

    def _request(self, prompt: str, view: dict[str, Any], constrained: bool) -> str:
        kwargs: dict[str, Any] = {"model": self.model, "temperature": self.temperature,
                                  "messages": [{"role": "user", "content": prompt}]}
        if self.max_tokens is not None:
            kwargs["max_tokens"] = self.max_tokens
        if constrained:
            kwargs["response_format"] = {"type": "json_schema", "json_schema": {
                "name": "scheduler_decisions", "strict": True, "schema": answer_schema(view)}}
        response = self.client().chat.completions.create(**kwargs)
        return str(response.choices[0].message.content or "")

    def answer(self, prompt: str, view: dict[str, Any]) -> str:
        import openai

        try:
            if self.json_schema:
                try:
                    return self._request(prompt, view, constrained=True)
                except openai.BadRequestError as exc:  # the server does not offer response_format
                    self.notes.append(f"response_format refused, retrying without it: {exc}")
                    self.json_schema = False
            return self._request(prompt, view, constrained=False)
        except Exception as exc:  # noqa: BLE001 - recorded as an error (LLMScheduler counts it; dcops eval fails the cell)
            self.errors.append(f"{type(exc).__name__}: {exc}")
            return ""
