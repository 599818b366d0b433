"""What the compact backend remembers and caches, and the batched scoring of continuations: none of it may change
a score beyond rounding, a cached or remembered score must be bit for bit what running the model again gives,
and the caches must stay inside their bounds."""

from __future__ import annotations

from typing import Any

import pytest

from dcops.agents.llm.compact import (
    ANSWER_WORDS,
    FACTS_START,
    PROMPT_END,
    CompactWindow,
    allowed_words,
    decision_order,
    prompt_context,
)

from .conftest import env_views


@pytest.fixture(scope="module")
def busy_view() -> dict[str, Any]:
    """The window with the most pending requests over two episodes."""
    return max((v for seed in (0, 1) for v in env_views(seed, 8)), key=lambda v: len(v["pending"]))


def _prompts(view: dict[str, Any], word: str) -> dict[str, str]:
    """Each request's prompt when every earlier request of the window was answered ``word``."""
    window, prompts = CompactWindow(view), {}
    for request in decision_order(view):
        prompts[request["request_id"]] = window.prompt(request)
        window.record(request, word)
    return prompts


@pytest.fixture
def forward_calls(tiny) -> Any:
    """A counter of the tiny model's decoder passes (a hook, removed after the test)."""
    from dcops.agents.llm.backends import _split_model

    calls = [0]
    handle = _split_model(tiny[0])[0].register_forward_hook(lambda *_: calls.__setitem__(0, calls[0] + 1))
    yield calls
    handle.remove()


def test_a_prompts_context_is_what_earlier_answers_cannot_change(busy_view):
    """With every earlier answer ACCEPT or every one REJECT, a request's prompt differs (the power left), its
    context does not, and the prompt is its context plus the facts line and the end."""
    accepted, rejected = _prompts(busy_view, "ACCEPT"), _prompts(busy_view, "REJECT")
    assert any(accepted[r] != rejected[r] for r in accepted)  # the answers do reach later prompts
    for rid, prompt in accepted.items():
        context = prompt_context(prompt)
        assert context and context == prompt_context(rejected[rid])
        assert context.startswith(CompactWindow(busy_view).header + "\n")
        rest = prompt[len(context) + 1:].split("\n")
        assert len(rest) == 2 and rest[0].startswith(FACTS_START) and rest[1] == PROMPT_END
    assert prompt_context("Window 1.\nDecision:") == ""  # no facts line
    assert prompt_context(f"{FACTS_START}10 kW.\n{PROMPT_END}") == ""  # nothing before it
    assert prompt_context("a\nb\nc") == ""


def test_remembered_and_cached_scores_are_bit_for_bit_a_fresh_run(busy_view, tiny, forward_calls):
    """Deciding a window again answers every prompt from memory without running the model; with the memory
    cleared, every request's context comes from the cache; a backend that keeps nothing computes the same bits;
    and the scores are the model's log-likelihoods of one whole forward pass, to rounding."""
    import torch

    from dcops.agents.llm.backends import CompactLoglikBackend

    model, tokenizer = tiny
    calls = forward_calls
    backend = CompactLoglikBackend(model, tokenizer)
    decisions = backend.decide(busy_view)
    first = backend.last_scores
    n = len(busy_view["pending"])
    assert n >= 5 and calls[0] >= n

    before = calls[0]
    assert backend.decide(busy_view) == decisions and backend.last_scores == first
    assert calls[0] == before and backend.remembered_hits == n

    backend._remembered.clear()
    assert backend.decide(busy_view) == decisions and backend.last_scores == first
    assert backend._prefix is not None and backend._prefix.context_hits == n

    keeps_nothing = CompactLoglikBackend(model, tokenizer, max_remembered=0, max_context_bytes=0)
    assert keeps_nothing.decide(busy_view) == decisions and keeps_nothing.last_scores == first
    assert keeps_nothing.remembered_hits == 0 and keeps_nothing._prefix._context_bytes == 0
    assert keeps_nothing.decide(busy_view) == decisions and keeps_nothing.last_scores == first

    for rid, prompt in list(backend.last_prompts.items())[:3]:
        n_prompt = len(tokenizer(prompt)["input_ids"])
        for word in allowed_words(busy_view):
            ids = tokenizer(prompt + " " + word, return_tensors="pt")["input_ids"]
            with torch.no_grad():
                logp = torch.log_softmax(model(input_ids=ids).logits[0].float(), dim=-1)
            expected = sum(float(logp[i - 1, ids[0, i]]) for i in range(n_prompt, ids.shape[1]))
            assert first[rid][word] == pytest.approx(expected, abs=1e-4)


def test_the_context_cache_keeps_the_most_recent_within_its_bytes(busy_view, tiny):
    """Bytes are counted as the tiny model's keys and values (2 layers × keys and values × 1 head × 32 × 4 bytes
    per token), the total never exceeds the bound, the most recent contexts are the ones kept, and clear()
    forgets everything."""
    from dcops.agents.llm.backends import CompactLoglikBackend, HeaderCache, cache_bytes

    model, tokenizer = tiny
    window = CompactWindow(busy_view)
    prompts = [window.prompt(r) for r in decision_order(busy_view)]
    contexts = [prompt_context(p) for p in prompts]
    sizes = [len(tokenizer(c)["input_ids"]) * 2 * 2 * 32 * 4 for c in contexts]

    probe = HeaderCache(model, tokenizer, header=window.header, context=contexts[0])
    _, cache, n = probe.encode(prompts[0])
    assert n == len(tokenizer(contexts[0])["input_ids"]) and cache_bytes(cache) == sizes[0]

    bound = sizes[-1] + sizes[-2] + min(sizes) // 2  # room for two contexts, not three
    backend = CompactLoglikBackend(model, tokenizer, max_context_bytes=bound)
    for prompt, context in zip(prompts, contexts, strict=True):
        backend.word_scores(prompt, ANSWER_WORDS, header=window.header, context=context)
        assert backend._prefix._context_bytes <= bound
    assert [context for _, context in backend._prefix._contexts] == contexts[-2:]
    assert backend._prefix._context_bytes == sizes[-1] + sizes[-2]

    # a hit makes its context the most recent: the next new one evicts the other
    backend._remembered.clear()
    backend.word_scores(prompts[-2], ANSWER_WORDS, header=window.header, context=contexts[-2])
    assert backend._prefix.context_hits == 1
    backend.word_scores(prompts[0], ANSWER_WORDS, header=window.header, context=contexts[0])
    assert [context for _, context in backend._prefix._contexts] == [contexts[-2], contexts[0]]

    backend.clear()
    assert not backend._prefix._contexts and backend._prefix._context_bytes == 0
    hits = backend.remembered_hits, backend._prefix.context_hits
    backend.word_scores(prompts[-1], ANSWER_WORDS, header=window.header, context=contexts[-1])
    assert (backend.remembered_hits, backend._prefix.context_hits) == hits
    with pytest.raises(ValueError, match="max_remembered"):
        CompactLoglikBackend(model, tokenizer, max_remembered=-1)
    with pytest.raises(ValueError, match="max_context_bytes"):
        HeaderCache(model, tokenizer, max_context_bytes=-1)


def test_a_context_is_kept_per_header(busy_view, tiny):
    """The same context under another header is another cut (header, then context), so it is not reused: a
    fresh run under that header takes that cut."""
    from dcops.agents.llm.backends import HeaderCache

    model, tokenizer = tiny
    window = CompactWindow(busy_view)
    prompt = window.prompt(decision_order(busy_view)[0])
    context = prompt_context(prompt)
    rules = window.header.split("\n")[0]  # a shorter header that also starts the prompt
    cache = HeaderCache(model, tokenizer, header=window.header, context=context)
    _, _, n_long = cache.encode(prompt)
    cache.header = rules
    _, _, n_short = cache.encode(prompt)
    assert n_long == n_short == len(tokenizer(context)["input_ids"])
    assert cache.context_hits == 0 and len(cache._contexts) == 2
    cache.encode(prompt)
    assert cache.context_hits == 1


def test_each_cell_starts_with_the_llm_caches_cleared(monkeypatch):
    """``dcops eval`` clears what its loaded language-model schedulers remember at each cell."""
    from dcops.evaluation import runner
    from dcops.evaluation.matrix import Cell

    cleared: list[int] = []

    class Backend:
        def clear(self) -> None:
            cleared.append(1)

    class Policy:
        backend = Backend()

    monkeypatch.setitem(runner._LLM_POLICIES, "llm:stand-in", Policy())
    runner.run_cell(Cell("priority_threshold", "one_strategic", "normal", 0, n_windows=2))
    runner.run_cell(Cell("priority_threshold", "one_strategic", "normal", 1, n_windows=2))
    assert cleared == [1, 1]


def test_a_context_that_does_not_start_the_prompt_is_not_used(busy_view, tiny):
    """A context that is not the prompt's start (or not under the header) falls back to the header's cache."""
    from dcops.agents.llm.backends import HeaderCache

    model, tokenizer = tiny
    window = CompactWindow(busy_view)
    first, second = (window.prompt(r) for r in decision_order(busy_view)[:2])
    n_header = len(tokenizer(window.header)["input_ids"])
    for context in (prompt_context(second), "not the header\nat all"):
        cache = HeaderCache(model, tokenizer, header=window.header, context=context)
        _, kept, n = cache.encode(first)
        assert kept is not None and n == n_header and not cache._contexts


def test_batched_continuations_match_plain_forward_passes(tiny):
    """Rows of one token (no pass of their own), of several, scored from a later token, and with nothing
    scored, in one chunk and split over chunks: each is the summed log-likelihood of a whole forward pass."""
    import torch

    from dcops.agents.llm.backends import PrefixCache, continuation_logprobs

    model, tokenizer = tiny
    prompt = "Rules of the game.\nThe answer is"
    a, b, c, d = (tokenizer(w, add_special_tokens=False)["input_ids"][0] for w in (" yes", " no", " later", " now"))
    rows = [([a], 0), ([b, c], 0), ([a, b, c, d], 1), ([c, d, a], 2), ([d], 1), ([b, a], 0)]
    prompt_ids = tokenizer(prompt)["input_ids"]
    expected = []
    for seq, start in rows:
        ids = torch.tensor([prompt_ids + seq])
        with torch.no_grad():
            logp = torch.log_softmax(model(input_ids=ids).logits[0].float(), dim=-1)
        n = len(prompt_ids)
        expected.append(sum(float(logp[n + j - 1, seq[j]]) for j in range(start, len(seq))))
    assert expected[4] == 0.0
    for chunk in (16, 2, 1):
        values = continuation_logprobs(PrefixCache(model, tokenizer), prompt, rows, chunk=chunk)
        assert values == pytest.approx(expected, abs=1e-4)


def test_output_logits_are_the_heads(tiny):
    """The head applied as weight @ statesᵀ gives the linear layer's logits (to rounding), soft-capped as the
    model does; a head with a bias goes through the layer itself."""
    import torch

    from dcops.agents.llm.backends import _split_model, output_logits

    model, _ = tiny
    _, head, _ = _split_model(model)
    states = torch.randn(5, head.weight.shape[1])
    with torch.no_grad():
        plain = head(states).float()
        assert torch.allclose(output_logits(head, states, None), plain, atol=1e-5)
        capped = output_logits(head, states, 0.5)
        assert torch.allclose(capped, torch.tanh(plain / 0.5) * 0.5, atol=1e-5)
        assert float(capped.abs().max()) <= 0.5
        biased = torch.nn.Linear(4, 3)
        x = torch.randn(2, 4)
        assert torch.equal(output_logits(biased, x, None), biased(x).float())
