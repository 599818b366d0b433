"""``dcops eval`` end to end on a tiny matrix (serial), and its input errors."""

from __future__ import annotations

import json

import pytest

from dcops.cli import main


def test_eval_command_writes_the_report_and_resumes(tmp_path, capsys):
    argv = [
        "eval",
        "--schedulers",
        "earliest_deadline,reject_all",
        "--mixes",
        "injecting",
        "--conditions",
        "dirty_grid",
        "--seeds",
        "1",
        "--n-windows",
        "2",
        "--out",
        str(tmp_path),
        "--name",
        "tiny",
        "--serial",
        "--no-progress",
        "--reference",
        "reject_all",
    ]
    assert main(argv) == 0
    out = tmp_path / "tiny"
    assert (out / "README.md").exists() and (out / "gaming_payoff.png").exists()
    meta = json.loads((out / "run.json").read_text())
    assert meta["seeds"] == [0] and meta["cells"] == 2 and meta["command"].startswith("dcops eval")
    first = (out / "cells.jsonl").read_text()
    assert main(argv) == 0  # resumes: every cell is already there
    assert (out / "cells.jsonl").read_text() == first
    runs = json.loads((out / "run.json").read_text())["invocations"]
    assert [r["cells_computed"] for r in runs] == [2, 0]
    assert "earliest_deadline" in capsys.readouterr().out
    report = (out / "README.md").read_text()
    payoff_rows = report.split("## Gaming payoff")[1].split("\n## ")[0]
    assert "| reject_all | +0; accepted 0.00 (twin 0.00) |" in payoff_rows


@pytest.mark.parametrize(
    ("flag", "value", "field"),
    [
        ("--mixes", "nope", "mix"),
        ("--conditions", "sunny", "condition"),
        ("--schedulers", "magic", "scheduler"),
        ("--seeds", "0", "--seeds"),
        ("--policy", "no_such_module_xyz:make", "cannot import"),
        ("--families", "crowded", "--families: unknown 'crowded'"),
    ],
)
def test_eval_command_names_the_bad_field(tmp_path, flag, value, field):
    with pytest.raises(SystemExit, match=field):
        main(["eval", flag, value, "--out", str(tmp_path), "--serial", "--no-progress"])


def test_eval_command_plays_a_family_with_its_own_rows(tmp_path):
    """``--families``: only the family's cells (no default mixes or conditions), its digests in run.json."""
    argv = ["eval", "--schedulers", "priority_threshold,searched,ppo", "--families", "adversarial", "--seeds", "1",
            "--n-windows", "2", "--out", str(tmp_path), "--name", "fam", "--serial", "--no-progress"]
    assert main(argv) == 0
    meta = json.loads((tmp_path / "fam" / "run.json").read_text())
    assert meta["families"] == ["adversarial"] and meta["cells"] == 3
    assert meta["mixes"] == meta["conditions"] == ["family:adversarial"]
    assert {"ppo (adversarial)", "searched (adversarial)"} <= set(meta["policy_digests"])
    rows = {r["scheduler"]: r for r in map(json.loads, (tmp_path / "fam" / "cells.jsonl").read_text().splitlines())}
    assert {r["condition"] for r in rows.values()} == {"family:adversarial"}
    assert all(r["n_twins"] == 5 and len(r["teams"]) == 7 for r in rows.values())  # every gaming kind has its twin
    # the cells are keyed by the family's own files, not the matrix's
    for name in ("ppo", "searched"):
        assert rows[name]["policy_digest"] == meta["policy_digests"][f"{name} (adversarial)"] != meta["policy_digests"][name]


@pytest.mark.parametrize("extra", [["--mixes", "honest"], ["--conditions", "normal"]])
def test_families_with_half_a_matrix_are_refused(tmp_path, extra):
    with pytest.raises(SystemExit, match="name both"):
        main(["eval", "--families", "classic", *extra, "--out", str(tmp_path), "--serial", "--no-progress"])


def test_a_network_that_cannot_read_a_family_is_refused_before_any_cell(tmp_path):
    """The matrix-trained network reads four teams: on the seven-team family it is refused up front."""
    from importlib import resources

    from dcops.agents.schedulers.learned import WEIGHTS_NPZ, WEIGHTS_PACKAGE

    weights = str(resources.files(WEIGHTS_PACKAGE).joinpath(WEIGHTS_NPZ))
    with pytest.raises(SystemExit, match="cannot read family 'adversarial'"):
        main(["eval", "--schedulers", f"ppo@{weights}", "--families", "adversarial", "--seeds", "1",
              "--out", str(tmp_path), "--serial", "--no-progress"])
    assert not (tmp_path / "default" / "cells.jsonl").exists()
