"""``python -m dcops.bench.llm_scoring``: the prompts it scores, the comparison of two trees' scores, and another
tree measured in its own interpreter (the tiny model, so no download and seconds, not minutes)."""

from __future__ import annotations

import pytest

from dcops.bench.llm_scoring import collect_prompts, compare_scores, main, measure_tree


def test_the_prompts_are_distinct_compact_prompts_of_both_episodes():
    from dcops.agents.llm.compact import PROMPT_END

    prompts = collect_prompts(12)
    assert len(prompts) == 12 and len({p for _, p, _ in prompts}) == 12
    for header, prompt, words in prompts:
        assert prompt.startswith(header + "\n") and prompt.endswith(PROMPT_END)
        assert set(words) <= {"ACCEPT", "REJECT", "DEFER"} and "ACCEPT" in words
    assert len({h for h, _, _ in prompts}) > 1  # more than one window


def _result(*scores: dict[str, float]) -> dict:
    return {"scores": [{w: v.hex() for w, v in s.items()} for s in scores]}


def test_a_score_difference_and_a_changed_choice_are_reported():
    ours = _result({"ACCEPT": -1.0, "REJECT": -2.0}, {"ACCEPT": -3.0, "REJECT": -2.5})
    theirs = _result({"ACCEPT": -1.0, "REJECT": -2.0}, {"ACCEPT": -2.0, "REJECT": -2.5})
    same = compare_scores(ours, theirs)
    assert same == {"max_abs_difference": 1.0, "same_choice": 1, "prompts": 2, "smallest_margin": 0.5}
    assert compare_scores(theirs, theirs)["max_abs_difference"] == 0.0
    with pytest.raises(ValueError, match="different prompts"):
        compare_scores(ours, _result({"ACCEPT": -1.0, "REJECT": -2.0}))
    with pytest.raises(ValueError, match="different prompts"):
        compare_scores({**ours, "prompts_sha256": "a"}, {**theirs, "prompts_sha256": "b"})


@pytest.fixture
def torch_threads():
    """The command sets one torch thread; the test session gets its own number back."""
    import torch

    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def test_another_tree_is_measured_in_its_own_interpreter_and_agrees(tmp_path, capsys, torch_threads):
    from pathlib import Path

    import dcops

    package = Path(dcops.__file__).resolve().parent
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "dcops").symlink_to(package)  # this checkout, as a baseline folder
    theirs = measure_tree(str(tmp_path / "tree"), 3, "tiny", "sft_grpo")
    assert theirs["prompts"] == 3 and theirs["seconds_median"] > 0
    assert main(["--baseline", str(tmp_path / "tree"), "--model", "tiny", "--prompts", "3"]) == 0
    printed = capsys.readouterr().out
    assert "largest score difference 0 nats; the same best answer on 3 of 3 prompts" in printed
    assert "from the cache" in printed


def test_a_tree_that_cannot_be_measured_is_an_error(tmp_path, capsys, torch_threads):
    (tmp_path / "dcops").mkdir()
    (tmp_path / "dcops" / "__init__.py").write_text("raise ImportError('a broken tree')\n")
    assert main(["--baseline", str(tmp_path), "--model", "tiny", "--prompts", "2"]) == 2
    assert "failed" in capsys.readouterr().err
