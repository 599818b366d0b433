"""The package's public surface: task list, manifest, CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

import dcops
from dcops.cli import build_parser

ROOT = Path(dcops.__file__).parent


def test_openenv_manifest_lists_every_registered_task():
    text = (ROOT / "openenv.yaml").read_text()
    listed = {line.strip()[2:] for line in text.splitlines() if line.strip().startswith("- ")}
    assert listed == set(dcops.tasks())
    assert "port: 8000" in text


def test_every_registered_task_builds_an_environment():
    for task_id in dcops.tasks():
        env = dcops.make_env(task_id)
        observation, _ = env.reset(seed=0)
        assert env.observation_space.contains(observation), task_id


def test_cli_exposes_the_documented_commands():
    parser = build_parser()
    commands = set(parser._subparsers._group_actions[0].choices)  # argparse keeps sub-commands here
    assert {"demo", "cooling-baselines", "annual-pue", "tune-rule", "bench"} <= commands


def test_every_package_folder_is_installed_by_pyproject():
    # A folder of modules missing from [tool.setuptools] packages works in an editable install and is absent
    # from a wheel; the layout moves (training/<what>/) make this easy to miss.
    tomllib = pytest.importorskip("tomllib")
    declared = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    skip = {"tests", "examples", "reports", "build", "runs", "bench_results"}
    folders = set()
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT).parts[:-1]
        if not (set(parts) & skip or any(p.startswith(".") for p in parts)):
            folders.add(".".join(("dcops", *parts)))
    assert folders == declared, f"undeclared: {sorted(folders - declared)}; stale: {sorted(declared - folders)}"
