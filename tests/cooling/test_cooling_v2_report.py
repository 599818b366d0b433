"""``dcops eval-cooling-v2``'s report: the PID and the case-tuned rule play the same episodes as the others and
appear in the CSV rows and the markdown's columns and summary (a tiny run: one seed, one task, one case)."""

from __future__ import annotations

import pytest

from dcops.agents.cooling.pid_v2 import PIDV2Controller
from dcops.agents.cooling.rule_v2 import RuleV2Controller
from dcops.cooling_env_v1 import CoolingEnvV1, evaluation_case_spec
from dcops.evaluation import cooling_v2_report as report

TASK = "cooling/single_zone_recovery_v1"
CASE = ("seattle", "july", "chiller_trip")


@pytest.fixture(scope="module")
def rows():
    return report.run(seeds=1, workers=1, tasks=[TASK], cases=[CASE])


def by(rows, case: str, controller: str) -> dict:
    (row,) = [r for r in rows if r["case"] == case and r["controller"] == controller]
    return row


def test_every_controller_plays_every_task_and_case(rows):
    assert "pid (task-tuned)" in report.CONTROLLERS and "rule (case-tuned)" in report.CONTROLLERS
    assert {(r["case"], r["controller"]) for r in rows} == {
        (case, c) for case in (TASK, "seattle/july/chiller_trip") for c in report.CONTROLLERS}


def test_the_case_tuned_rule_is_the_cases_own_and_on_a_task_the_task_tuned_rule(rows):
    env = CoolingEnvV1(evaluation_case_spec(*CASE), diagnostics=True)
    case_rule = report.play(env, RuleV2Controller.tuned("eval_family_v1/seattle/july/chiller_trip"), 0)
    assert by(rows, "seattle/july/chiller_trip", "rule (case-tuned)") == {
        "target": "eval_family_v1", "case": "seattle/july/chiller_trip", "seed": 0,
        "controller": "rule (case-tuned)", **case_rule}
    pid = report.play(env, PIDV2Controller.tuned("eval_family_v1"), 0)
    assert by(rows, "seattle/july/chiller_trip", "pid (task-tuned)")["objective_ratio"] == pid["objective_ratio"]
    task_rule, task_case_rule = by(rows, TASK, "rule (task-tuned)"), by(rows, TASK, "rule (case-tuned)")
    assert {**task_rule, "controller": "rule (case-tuned)"} == task_case_rule


def test_the_markdown_has_the_pid_and_case_tuned_columns_and_summary(rows):
    text = report.markdown(rows, 1, "test weights")
    header = next(line for line in text.splitlines() if line.startswith("| task |"))
    for column in ("PID score", "case-tuned rule score", "PID / case-tuned rule objective", "PPO score",
                   "family rule score", "bound score", "PPO saving vs rule", "gap to bound closed"):
        assert f" {column} |" in header
    task_row = next(line for line in text.splitlines() if line.startswith(f"| {TASK} |"))
    assert len(task_row.split("|")) == len(header.split("|"))
    pid, case_rule = by(rows, TASK, "pid (task-tuned)"), by(rows, TASK, "rule (case-tuned)")
    assert f"| {pid['score']:.3f} | {case_rule['score']:.3f} |" in task_row
    assert f"| {pid['objective_ratio']:.3f} / {case_rule['objective_ratio']:.3f} |" in task_row
    assert "| PID (task-tuned" in text and "| rule (case-tuned: a ceiling, not deployable) |" in text
    assert "Against the case-tuned rule (a ceiling: it knows its case) PPO saves" in text


def test_the_imitation_controller_takes_ppos_place_in_the_rows_and_the_markdown():
    """``--controller imitation_v2``: the imitation controller plays first, its rows are its own (the same episode
    as playing it by hand), and the markdown labels it, not PPO; the no-fault zone-time above 27 °C is the mean
    of the no-fault episodes' own."""
    from dcops.agents.cooling.imitation_v2 import ImitationControllerV2

    case = ("phoenix", "january", "normal")
    rows = report.run(seeds=1, workers=1, tasks=[], cases=[case], learned="imitation_v2")
    assert {r["controller"] for r in rows} == {"imitation_v2", *report.CONTROLLERS[1:]}
    env = CoolingEnvV1(evaluation_case_spec(*case), diagnostics=True)
    assert by(rows, "phoenix/january/normal", "imitation_v2") == {
        "target": "eval_family_v1", "case": "phoenix/january/normal", "seed": 0, "controller": "imitation_v2",
        **report.play(env, ImitationControllerV2(), 0)}
    rows = rows + [{**r, "target": TASK, "case": TASK} for r in rows]  # a task row, so both tables are made
    text = report.markdown(rows, 1, "test weights", learned="imitation_v2")
    assert "| imitation score |" in text and "PPO" not in text
    pct = by(rows, "phoenix/january/normal", "imitation_v2")["zone_time_above_27_pct"]
    assert f"; {pct:.2f} % of zone-time above 27 °C in the no-fault cases" in text
