"""Whole-trajectory digests (``dcops.bench.trajectories``): the same episode gives the same digest, a different
episode a different one, a change to anything the environment returns changes it, and another tree is played by
its own code."""

from __future__ import annotations

from pathlib import Path

import pytest

import dcops
from dcops.agents.teams.base import TeamBase
from dcops.bench import trajectories
from dcops.bench.trajectories import CONFIGURATIONS, digests_of_tree, main, trajectory_digest


def test_the_same_trajectory_gives_the_same_digest_and_another_seed_another():
    first = trajectory_digest("classic-seed0")
    assert trajectory_digest("classic-seed0") == first  # the whole episode replays to the same bits
    assert trajectory_digest("classic-seed5") != first


def test_a_change_to_what_the_environment_returns_changes_the_digest(monkeypatch):
    before = trajectory_digest("classic-seed0")
    original = TeamBase.describe_request

    def reworded(self, draft, stated, request_id):  # one character more in every description (the view shows it)
        return original(self, draft, stated, request_id) + "."

    monkeypatch.setattr(TeamBase, "describe_request", reworded)
    assert trajectory_digest("classic-seed0") != before


def test_the_vector_env_digest_covers_its_infos(monkeypatch):
    before = trajectory_digest("vector-3-rule")
    monkeypatch.setitem(CONFIGURATIONS, "vector-3-rule", {**CONFIGURATIONS["vector-3-rule"], "steps": 21})
    assert trajectory_digest("vector-3-rule") != before


def test_another_tree_is_played_in_its_own_interpreter_and_compared(capsys, tmp_path):
    (tmp_path / "dcops").symlink_to(Path(dcops.__file__).resolve().parent)  # this checkout, as a baseline folder
    tree = str(tmp_path)
    names = ["classic-seed5", "vector-3-rule"]
    assert digests_of_tree(tree, names) == {name: trajectory_digest(name) for name in names}
    assert main(["--baseline", tree, "--only", ",".join(names)]) == 0
    assert "2 of 2 configurations the same" in capsys.readouterr().out


def test_a_difference_is_reported_and_fails(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(trajectories, "digests_of_tree", lambda tree, names: dict.fromkeys(names, "0" * 64))
    assert main(["--baseline", str(tmp_path), "--only", "classic-seed5"]) == 1
    assert "differ: ['classic-seed5']" in capsys.readouterr().out


def test_unknown_configurations_and_folders_are_refused(tmp_path):
    with pytest.raises(SystemExit):
        main(["--only", "no-such-configuration"])
    with pytest.raises(FileNotFoundError, match="dcops/__init__.py"):
        digests_of_tree(str(tmp_path))
