"""The package's public surface: task list, manifest, CLI."""

from __future__ import annotations

from pathlib import Path

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
