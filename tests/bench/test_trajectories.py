"""Whole-trajectory digests (``dcops.bench.trajectories``): the same episode gives the same digest, a different
episode a different one, a change to anything the environment returns changes it, values that differ hash apart,
and another tree is played by its own code."""

from __future__ import annotations

import hashlib
from enum import IntEnum
from pathlib import Path

import numpy as np
import pytest

import dcops
from dcops import vector_env
from dcops.agents.teams.base import TeamBase
from dcops.bench import trajectories
from dcops.bench.trajectories import _feed, digests_of_tree, main, trajectory_digest


def _hash(value: object) -> str:
    digest = hashlib.sha256()
    _feed(digest, value)
    return digest.hexdigest()


class _Level(IntEnum):
    LOW = 0
    HIGH = 1


@pytest.mark.parametrize(("a", "b"), [
    ([1, 2], (1, 2)),  # a tuple where a list was
    ([{"a": 1}, {"b": 2}], [{"a": 1, "b": 2}]),  # dicts framed
    ([{}], []),
    ({"x": {"y": 1}}, {"xy": 1}),
    ({"a": 1, "b": 2}, {"b": 2, "a": 1}),  # a dict's order is what its callers see
    ({1: "a"}, {"1": "a"}),  # keys by type too
    (1, True), (1, 1.0), (0.0, -0.0), (float("nan"), -float("nan")),
    (np.float64(0.1), 0.1), (np.float32(0.5), 0.5), (np.int64(3), 3),
    (np.array([[1.0, 2.0]]), np.array([1.0, 2.0])),  # shape
    (np.array([1, 2], dtype=np.int32), np.array([1, 2], dtype=np.int64)),
    (np.array([None, None], dtype=object).reshape(2, 1), np.array([None, None], dtype=object)),
    (np.array(["a"], dtype=object), ["a"]),
    ({1}, {"1"}), ({"a"}, ["a"]), (_Level.HIGH, 1), ("1", 1), (None, "None"),
])
def test_values_that_differ_hash_apart(a, b):
    assert _hash(a) != _hash(b)
    assert _hash(a) == _hash(a)  # and a value hashes as itself


def test_a_type_it_cannot_hash_by_content_is_refused():
    class Opaque:
        pass

    with pytest.raises(TypeError, match="Opaque"):
        _hash({"x": [Opaque()]})


def test_the_same_trajectory_gives_the_same_digest_and_another_seed_another():
    first = trajectory_digest("classic-seed0")
    assert trajectory_digest("classic-seed0") == first  # the whole episode replays to the same bits
    assert trajectory_digest("classic-seed5") != first


def test_a_change_to_what_the_environment_returns_changes_the_digest(monkeypatch):
    before = trajectory_digest("classic-structured-actions")
    original = TeamBase.describe_request

    def reworded(self, draft, stated, request_id):  # one character more in every description (the view shows it)
        return original(self, draft, stated, request_id) + "."

    monkeypatch.setattr(TeamBase, "describe_request", reworded)
    assert trajectory_digest("classic-structured-actions") != before


def test_the_vector_env_digest_covers_its_infos(monkeypatch):
    before = trajectory_digest("vector-3-rule")
    merge = vector_env.merge_infos

    def with_one_more_key(env, items):  # a key only in the infos, nothing else changed
        return {**merge(env, items), "extra": np.zeros(env.num_envs)}

    monkeypatch.setattr(vector_env, "merge_infos", with_one_more_key)
    assert trajectory_digest("vector-3-rule") != before


def test_another_tree_is_played_in_its_own_interpreter_and_compared(capsys, tmp_path, monkeypatch):
    package = Path(dcops.__file__).resolve().parent
    (tmp_path / "tree" / "dcops").parent.mkdir()
    (tmp_path / "tree" / "dcops").symlink_to(package)  # this checkout, as a baseline folder
    names = ["classic-seed5", "vector-3-rule"]
    ours = {name: trajectory_digest(name) for name in names}
    assert digests_of_tree(str(tmp_path / "tree"), names) == ours
    monkeypatch.chdir(tmp_path)  # a relative folder is the tree's, though the other interpreter runs from /
    monkeypatch.setattr(trajectories, "digests", lambda only: ours)
    assert main(["--baseline", "tree", "--only", ",".join(names)]) == 0
    assert "2 of 2 configurations the same" in capsys.readouterr().out


def test_a_tree_whose_interpreter_plays_another_dcops_is_refused(tmp_path, monkeypatch):
    """Were the other interpreter to import a dcops other than the tree's (a path it did not resolve, an install
    ahead of it), the comparison would be of this tree with itself: refused."""
    (tmp_path / "dcops").mkdir()
    (tmp_path / "dcops" / "__init__.py").write_text("")
    played = '{"dcops": "/somewhere/else/dcops/__init__.py", "digests": {"classic-seed5": "0"}}'
    from dcops.bench import compare

    monkeypatch.setattr(compare.subprocess, "run",
                        lambda *args, **kwargs: compare.subprocess.CompletedProcess(args, 0, played + "\n"))
    with pytest.raises(RuntimeError, match="imported the dcops at /somewhere/else"):
        digests_of_tree(str(tmp_path), ["classic-seed5"])


def test_a_tree_that_cannot_be_played_is_an_error(tmp_path):
    (tmp_path / "dcops").mkdir()
    (tmp_path / "dcops" / "__init__.py").write_text("raise ImportError('a broken tree')\n")
    with pytest.raises(RuntimeError, match="failed"):
        digests_of_tree(str(tmp_path), ["classic-seed5"])


def test_a_difference_is_reported_and_fails_and_an_unplayable_tree_is_an_error(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(trajectories, "digests", lambda only: {"classic-seed5": "1" * 64})
    monkeypatch.setattr(trajectories, "digests_of_tree", lambda tree, names: dict.fromkeys(names, "0" * 64))
    assert main(["--baseline", str(tmp_path), "--only", "classic-seed5"]) == 1
    assert "differ: ['classic-seed5']" in capsys.readouterr().out
    monkeypatch.undo()
    monkeypatch.setattr(trajectories, "digests", lambda only: {"classic-seed5": "1" * 64})
    assert main(["--baseline", str(tmp_path), "--only", "classic-seed5"]) == 2  # no dcops/__init__.py there
    assert "expected a folder holding dcops/__init__.py" in capsys.readouterr().err


def test_unknown_configurations_are_refused():
    with pytest.raises(SystemExit):
        main(["--only", "no-such-configuration"])
