"""Fixtures of the training tests: a tiny model that answers in the scheduler's format, and a live dcops server.

**Answering tiny model.** The tiny random model (``--model tiny``) writes noise, so with the real parser every
completion fails alike, every completion of a group gets the same reward and GRPO has nothing to learn from.
:func:`answering_tiny_model` gives it constrained decoding instead of new weights: at each step it may only emit
tokens that continue one of a set of answers to the window in its context (read from the prompt's last
``Decide every pending request: ...`` line), so its own logits choose, for each pending request, between ACCEPT,
REJECT, DEFER to the next window and an invalid decision word. The completions are then real answers that the
real parser scores and the real environment rewards, and they differ. Training (log-probabilities, loss, LoRA
update) uses the model's unconstrained distribution, as TRL computes it.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_IDS = re.compile(r"Decide every pending request: ([^\n]*)\.\nAnswer:")
_WINDOW = re.compile(r"## Window (\d+) \(windows 0-(\d+)")
INVALID_WORD = "MAYBE"
"""A decision the parser rejects (``bad_decision``): the answer parses, the entry gets the default."""


def answer_texts(ids: list[str], window: int, last_window: int, tool_call: str | None = None,
                 max_combinations: int = 256) -> list[str]:
    """Every answer for ``ids`` with one of ACCEPT / REJECT / DEFER(next window) / an invalid word per request
    (the same word for all requests when that makes more than ``max_combinations``), in the prompt's format;
    wrapped as a ChatML tool call of ``tool_call`` when given."""
    words = ["ACCEPT", "REJECT", INVALID_WORD] + (["DEFER"] if window < last_window else [])
    combos = list(itertools.product(words, repeat=len(ids)))
    if len(combos) > max_combinations:
        combos = [(w,) * len(ids) for w in words]
    texts = []
    for combo in combos:
        rows = []
        for rid, word in zip(ids, combo, strict=True):
            value: dict[str, Any] = {"decision": word}
            if word == "DEFER":
                value["defer_to_window"] = window + 1
            rows.append(f"{json.dumps(rid)}: {json.dumps(value)}")
        answer = "{\n" + ",\n".join(rows) + "\n}"
        if tool_call:
            answer = "<tool_call>\n" + json.dumps({"name": tool_call, "arguments": {"answer": answer}}) + "\n</tool_call>"
        texts.append(answer)
    return texts


class AnswerGrammar:
    """``prefix_allowed_tokens_fn`` of ``generate``: only token sequences of :func:`answer_texts` for the window
    in the context, then end of sequence (module docstring)."""

    def __init__(self, tokenizer: Any, prompt_length: int, tool_call: str | None) -> None:
        self.tokenizer = tokenizer
        self.prompt_length = prompt_length
        self.tool_call = tool_call
        self.tries: dict[int, dict] = {}

    def _trie(self, batch_id: int, context: list[int]) -> dict:
        if batch_id not in self.tries:
            text = self.tokenizer.decode([t for t in context if t != self.tokenizer.pad_token_id])
            ids_match = list(_IDS.finditer(text))
            window_match = list(_WINDOW.finditer(text))
            trie: dict = {}
            over = text.rfind("The episode is over")
            if ids_match and window_match and over < ids_match[-1].end():
                ids = [s.strip() for s in ids_match[-1].group(1).split(",") if s.strip()]
                window, last = int(window_match[-1].group(1)), int(window_match[-1].group(2))
                for answer in answer_texts(ids, window, last, self.tool_call):
                    node = trie
                    for token in self.tokenizer(answer, add_special_tokens=False)["input_ids"]:
                        node = node.setdefault(token, {})
            self.tries[batch_id] = trie
        return self.tries[batch_id]

    def __call__(self, batch_id: int, input_ids: Any) -> list[int]:
        ids = input_ids.tolist()
        node = self._trie(batch_id, ids[: self.prompt_length])
        for token in ids[self.prompt_length:]:
            node = node.get(token)
            if node is None:
                break
        return list(node) if node else [self.tokenizer.eos_token_id]


def answering_tiny_model(seed: int = 0, tool_call: str | None = None) -> tuple[Any, Any]:
    """The tiny model (same seeded weights as ``tiny_model(seed)``) whose ``generate`` follows
    :class:`AnswerGrammar`; ``tool_call`` names the tool its answers are wrapped in (TRL's environment path)."""
    from transformers import Gemma3ForCausalLM

    from dcops.agents.llm.model import tiny_model

    class AnsweringGemma(Gemma3ForCausalLM):
        def generate(self, input_ids: Any = None, **kwargs: Any) -> Any:
            kwargs["prefix_allowed_tokens_fn"] = AnswerGrammar(tokenizer, input_ids.shape[1], tool_call)
            return super().generate(input_ids=input_ids, **kwargs)

    model, tokenizer = tiny_model(seed)
    answering = AnsweringGemma(model.config)
    answering.load_state_dict(model.state_dict())
    answering.generation_config = model.generation_config
    answering.eval()
    return answering, tokenizer


@pytest.fixture
def answering_tiny():
    """:func:`answering_tiny_model` (``answering_tiny(seed=0, tool_call=None)`` → model, tokenizer)."""
    return answering_tiny_model


# ------------------------------------------------------------------------------------------------ live server
@pytest.fixture
def dcops_server(tmp_path: Path, server_starter: Any) -> Iterator[str]:
    """A real dcops server process on a free loopback port (the root conftest's ``server_starter``: its episode
    store and log under the test's own folder, the tests' fixed operator secret, so the same public seed gives
    the same episode from run to run); yields its URL and stops it."""
    server = server_starter(tmp_path / "episodes.db", tmp_path / "server.log", ready_timeout_s=90.0)
    try:
        yield server.url
    finally:
        server.stop()
