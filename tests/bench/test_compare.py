"""``dcops bench --against REV``: a git revision of this checkout unpacked as a baseline package, then removed."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from dcops.bench.compare import archive_revision, compare_server, median_table, package_root

pytestmark = pytest.mark.skipif(
    shutil.which("git") is None
    or subprocess.run(["git", "-C", str(package_root()), "rev-parse", "HEAD"], capture_output=True).returncode != 0,
    reason="needs this package as a git checkout")


def test_a_revision_unpacks_as_an_importable_baseline_tree(tmp_path):
    folder = archive_revision("HEAD", tmp_path / "base")
    package = folder / "dcops"
    assert (package / "__init__.py").is_file() and (package / "bench" / "compare.py").is_file()
    committed = subprocess.run(["git", "-C", str(package_root()), "ls-tree", "-r", "--name-only", "HEAD"],
                               capture_output=True, text=True, check=True).stdout.split()
    unpacked = sorted(str(p.relative_to(package)) for p in package.rglob("*") if p.is_file())
    assert unpacked == sorted(committed)  # the committed tree, nothing of the working tree's untracked files


def test_an_unknown_revision_is_refused_naming_it(tmp_path):
    with pytest.raises(ValueError, match="no-such-revision-xyz"):
        archive_revision("no-such-revision-xyz", tmp_path)
    assert not (tmp_path / "dcops").exists()


def test_the_bench_command_reports_a_comparison_it_cannot_run_and_goes_on(monkeypatch, capsys):
    import argparse

    from dcops.bench import commands

    figures: dict = {}
    commands._compare_against(argparse.Namespace(against="no-such-revision-xyz", rounds=1), figures)
    assert "skipped" in capsys.readouterr().out
    assert figures["against"]["revision"] == "no-such-revision-xyz" and "no-such-revision-xyz" in figures["against"]["skipped"]


def test_the_server_comparison_reports_a_revision_it_cannot_take_and_goes_on(capsys):
    import argparse

    from dcops.bench import commands

    figures: dict = {}
    commands._compare_server_against(argparse.Namespace(against="no-such-revision-xyz", rounds=1), (0, 2), figures)
    assert "Server side by side against no-such-revision-xyz: skipped" in capsys.readouterr().out
    assert "no-such-revision-xyz" in figures["against"]["skipped"]


def test_the_server_comparison_refuses_a_folder_without_a_package(tmp_path):
    with pytest.raises(FileNotFoundError, match="dcops/__init__.py"):
        compare_server(str(tmp_path), workers=2, rounds=1)


def test_the_side_by_side_table_is_the_median_of_each_side_and_their_ratio():
    ours = [{"rate": 10.0, "ms": 2.0}, {"rate": 30.0, "ms": 1.0}, {"rate": 20.0, "ms": 4.0}]
    theirs = [{"rate": 8.0, "ms": 4.0}, {"rate": 10.0, "ms": 5.0}, {"rate": 100.0, "ms": 3.0}]
    table = median_table(ours, theirs)
    assert table == {"rate": {"this_tree": 20.0, "baseline": 10.0, "ratio": 2.0},
                     "ms": {"this_tree": 2.0, "baseline": 4.0, "ratio": 0.5}}
    newer = [{**row, "new": 1.0} for row in ours]  # a figure the baseline has no way to measure is left out
    assert median_table(newer, theirs) == table
