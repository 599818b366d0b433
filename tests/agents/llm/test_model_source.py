"""``--model``: the aliases, a local model folder, a Hugging Face id already in the local cache, and the error
for anything else; never the network."""

from __future__ import annotations

import pytest

from dcops.agents.llm.model import load_model, resolve_model

REVISION = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(scope="module")
def saved_tiny(tmp_path_factory):
    """The tiny model saved with ``save_pretrained`` (weights, config, tokenizer) in a folder of its own."""
    from dcops.agents.llm.model import tiny_model

    folder = tmp_path_factory.mktemp("tiny_saved")
    model, tokenizer = tiny_model(seed=3)
    model.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder


def _hub_cache(root, repo_id, saved):
    """A Hugging Face cache holding ``repo_id`` at :data:`REVISION`, laid out as ``huggingface_hub`` lays it."""
    import shutil

    repo = root / f"models--{repo_id.replace('/', '--')}"
    shutil.copytree(saved, repo / "snapshots" / REVISION)
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(REVISION)
    return root


def test_aliases_resolve_without_loading_anything():
    assert resolve_model("tiny").kind == "alias" and resolve_model("tiny").location == ""
    gemma = resolve_model("gemma")
    assert gemma.kind == "alias" and "gemma3-270m" in gemma.location


def test_a_local_folder_loads_and_is_recorded_as_a_path(saved_tiny):
    import torch

    model, tokenizer, source = load_model(str(saved_tiny), device="cpu")
    assert (source.kind, source.location, source.revision) == ("path", str(saved_tiny.resolve()), None)
    from dcops.agents.llm.model import tiny_model

    reference, _ = tiny_model(seed=3)
    ids = tokenizer("Answer:\n", return_tensors="pt")["input_ids"]
    with torch.no_grad():
        assert torch.allclose(model(ids).logits, reference(ids).logits, atol=1e-5)
    assert tokenizer.pad_token is not None


def test_a_hugging_face_id_resolves_from_the_local_cache(saved_tiny, tmp_path):
    cache = _hub_cache(tmp_path / "hub", "dcops-test/tiny-gemma", saved_tiny)
    source = resolve_model("dcops-test/tiny-gemma", cache_dir=cache)
    assert (source.kind, source.revision) == ("hf-cache", REVISION)
    assert source.location.endswith(f"snapshots/{REVISION}")
    model, _, loaded = load_model("dcops-test/tiny-gemma", device="cpu", cache_dir=cache)
    assert loaded == source and model.config.hidden_size == 64


@pytest.mark.parametrize("name, message", [
    ("nobody/not-a-cached-model", "not in the local Hugging Face cache"),
    ("./no/such/folder", "not a model folder"),
    ("", "expected a model name"),
])
def test_anything_else_is_an_error_naming_the_option(name, message, tmp_path):
    with pytest.raises(ValueError, match=f"--model: .*{message}"):
        resolve_model(name, cache_dir=tmp_path)


def test_a_folder_without_a_config_is_refused(tmp_path):
    with pytest.raises(ValueError, match="--model: .*without config.json"):
        resolve_model(str(tmp_path))
