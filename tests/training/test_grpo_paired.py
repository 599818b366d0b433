"""The GRPO report's paired comparison: a run's completions against fixed rules on the same window states."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from dcops.agents.llm.prompt import format_answer
from dcops.agents.schedulers import BASELINES
from dcops.training.scheduler.paired import ALL_DEFAULT, REFERENCES, gap_key, paired_steps, read_completions
from dcops.training.scheduler.report import write_report
from dcops.training.scheduler.reward import SchedulerReward
from dcops.training.scheduler.states import build_window_states

ENV = {"max_requests_per_team": 2}
SEEDS, WINDOWS = [1000, 1001], [1, 2]


@pytest.fixture(scope="module")
def states():
    return build_window_states(ENV, SEEDS, windows=WINDOWS)


def _answer(rule: str, states, key: str) -> str:
    return format_answer(BASELINES[rule]().decide(states[key].view))


def _run(tmp_path, states, groups: list[tuple[int, str, list[str]]], prompts_per_step: int = 1):
    """A run folder whose completions were scored and logged by the training reward itself."""
    run = tmp_path / "run"
    run.mkdir()
    config = {"env_config": ENV, "windows": WINDOWS, "baseline": "priority_threshold", "horizon": 1,
              "max_steps": 10, "num_generations": len(groups[0][2]), "prompts_per_step": prompts_per_step}
    (run / "config.json").write_text(json.dumps({"config": config}))
    reward = SchedulerReward(states, completions_log=run / "completions.jsonl")
    for step, key, texts in groups:
        reward(prompts=["p"] * len(texts), completions=texts, state_key=[key] * len(texts),
               trainer_state=SimpleNamespace(global_step=step - 1))
    rows = [{"step": s, "reward": 0.0, "env_reward": 0.0, "loss": 0.0} for s in sorted({g[0] for g in groups})]
    (run / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return run


def test_a_completion_that_copies_a_rule_has_no_gap_to_it(tmp_path, states):
    keys = sorted(states.states)
    groups = [(1, keys[0], [_answer("priority_threshold", states, keys[0])] * 2),
              (2, keys[1], ["", "not json"]),
              (3, keys[2], [_answer("reject_all", states, keys[2]), _answer("accept_all", states, keys[2])])]
    paired = paired_steps(_run(tmp_path, states, groups))
    assert [p.step for p in paired] == [1, 2, 3]
    assert set(paired[0].reference) == {*REFERENCES, ALL_DEFAULT}
    assert paired[0].gap("priority_threshold") == pytest.approx(0.0, abs=1e-12)
    assert paired[1].gap(ALL_DEFAULT) == pytest.approx(0.0, abs=1e-12)  # unparsable text = the empty answer
    both = (paired[2].reference["reject_all"] + paired[2].reference["accept_all"]) / 2
    assert paired[2].env_mean == pytest.approx(both)
    assert paired[0].flat_groups == 1 and paired[1].flat_groups == 1 and paired[0].groups == 1
    reject, accept = paired[2].reference["reject_all"], paired[2].reference["accept_all"]
    assert paired[2].flat_groups == (1 if reject == accept else 0)
    # the same text twice is a collapsed group; two different unparsable texts are flat but not collapsed
    assert [p.identical_groups for p in paired] == [1, 0, 0]


def test_rules_are_scored_on_the_state_each_completion_saw(tmp_path, states):
    """Two prompts in one step: each completion is paired with its own state, not the step's first."""
    a, b = sorted(states.states)[:2]
    groups = [(1, a, [_answer("priority_threshold", states, a)]), (1, b, [_answer("priority_threshold", states, b)])]
    (p,) = paired_steps(_run(tmp_path, states, groups, prompts_per_step=2))
    assert p.groups == 2 and p.gap("priority_threshold") == pytest.approx(0.0, abs=1e-12)


def test_a_step_scored_again_after_a_resume_keeps_its_last_scoring(tmp_path, states):
    key = sorted(states.states)[0]
    run = _run(tmp_path, states, [(1, key, ["a", "b"]), (2, key, ["c", "d"]), (2, key, ["x", "y"])])
    by_step = read_completions(run, per_step=2)
    assert [len(by_step[s]) for s in (1, 2)] == [2, 2] and [r["text"] for r in by_step[2]] == ["x", "y"]
    assert [r["text"] for r in read_completions(run)[2]] == ["c", "d", "x", "y"]  # without the size: all


def test_the_report_shows_the_paired_gaps(tmp_path, states):
    keys = sorted(states.states)
    groups = [(s + 1, keys[s % len(keys)], [_answer("priority_threshold", states, keys[s % len(keys)]), ""])
              for s in range(6)]
    run = _run(tmp_path, states, groups)
    png, md = write_report(run, tmp_path / "rep", n=3)
    text = md.read_text()
    assert "| env reward − priority_threshold |" in text and "| all_default |" in text
    assert "Groups whose completions all got the same environment reward" in text
    assert "in 0 of them the completions are the same text" in text  # each group: the rule's answer and ""
    paired = paired_steps(run)
    gaps = [p.gap("priority_threshold") for p in paired]
    for p in paired:  # half the group copies the rule, half is the empty answer: the gap is half their difference
        assert p.gap("priority_threshold") == pytest.approx(
            (p.reference[ALL_DEFAULT] - p.reference["priority_threshold"]) / 2, abs=1e-12)
    assert f"| priority_threshold | {sum(gaps) / len(gaps):+.3f}" in text
    assert png.stat().st_size > 10_000 and gap_key("priority_threshold") == "env_minus_priority_threshold"


def test_a_run_without_its_config_is_not_paired(tmp_path, states):
    key = sorted(states.states)[0]
    run = _run(tmp_path, states, [(1, key, ["", ""])])
    (run / "config.json").unlink()
    assert paired_steps(run) == []


def test_a_run_without_completions_has_no_paired_section(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "log.jsonl").write_text("".join(json.dumps({"step": s, "reward": 0.1 * s}) + "\n" for s in range(1, 6)))
    (run / "config.json").write_text(json.dumps({"config": {"max_steps": 5}}))
    assert paired_steps(run) == []
    _, md = write_report(run, tmp_path / "rep")
    assert "Paired with fixed rules" not in md.read_text()


def test_a_resumed_run_reports_the_time_of_all_its_steps(tmp_path):
    """The second segment of a resumed run restarts ``wall_s``; the report adds up every step instead."""
    run = tmp_path / "run"
    run.mkdir()
    first = [{"step": s, "reward": 0.0, "step_s": 60.0, "wall_s": 60.0 * s} for s in (1, 2, 3)]
    second = [{"step": s, "reward": 0.0, "step_s": 90.0, "wall_s": 90.0 * (s - 3)} for s in (4, 5)]
    (run / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in first + second))
    (run / "config.json").write_text(json.dumps({"config": {"max_steps": 5}}))
    _, md = write_report(run, tmp_path / "rep", n=2)
    assert "training time 6.0 min" in md.read_text()  # 3 × 60 s + 2 × 90 s, not the last segment's 3.0 min
