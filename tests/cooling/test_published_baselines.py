"""README's reference-controller table (``dcops cooling-baselines``) is what the code computes at this commit.

Why a test: the table is published (README, ``reports/cooling/baselines.md``) and every number in it depends
on the tasks' definitions, the plant, the sensors, the reward and the score. Any change to those must bump the
task's version and regenerate the table by its command in the same change (the versioning rule); this test is
what notices when a change forgets to. It recomputes the whole table (2 controllers × 3 tasks × 10 seeds,
about a second) and compares it, row by row, with the committed report and with README's copy.
"""

from __future__ import annotations

from pathlib import Path

from dcops.evaluation.cooling_report import baseline_table

ROOT = Path(__file__).resolve().parents[2]


def test_the_published_cooling_baselines_are_reproduced_to_the_printed_digit():
    table, _ = baseline_table()
    committed = (ROOT / "reports" / "cooling" / "baselines.md").read_text().strip()
    assert table.splitlines() == committed.splitlines()
    readme = (ROOT / "README.md").read_text()
    for row in table.splitlines()[2:]:
        assert row in readme, row
