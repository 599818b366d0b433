"""``dcops eval-integrity`` writes the attack tables of every game version."""

from __future__ import annotations

from dcops.cli import main


def test_the_integrity_command_reports_both_attacks_in_every_version(tmp_path, capsys):
    out = tmp_path / "integrity.md"
    assert main(["eval-integrity", "--seeds", "2", "--description-seeds", "2", "--out", str(out)]) == 0
    text = out.read_text()
    assert text == capsys.readouterr().out.rstrip("\n") + "\n"
    rows = [line for line in text.splitlines() if line.startswith("| v")]
    assert sum(line.startswith("| v0 |") for line in rows) == 7 and sum(line.startswith("| v1 |") for line in rows) == 7
    assert "--seeds 2 --description-seeds 2" in text
