"""``dcops bench --against REV``: a git revision of this checkout unpacked as a baseline package, then removed."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from dcops.bench.compare import archive_revision, package_root

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
