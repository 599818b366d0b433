"""Mutation testing covers its scope (issue #30): every module of ``physics/``, ``oversight/`` and ``server/``,
``cluster/reward.py``, ``cluster/ledger.py``, ``cluster/decisions.py``, ``agents/llm/parser.py`` and
``cooling_env.py`` has its group in ``.mutation/`` (a module added later gets one, or this test says which is
missing), every group is one ``make mutate`` runs, and every group's module exists."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import dcops

ROOT = Path(dcops.__file__).resolve().parent
SCOPE_DIRS = ("physics", "oversight", "server")
SCOPE_FILES = ("cluster/reward.py", "cluster/ledger.py", "cluster/decisions.py", "agents/llm/parser.py",
               "cooling_env.py")


def _groups() -> dict[str, str]:
    """Group name → the module path it mutates."""
    return {path.stem: re.search(r'^module-path = "([^"]+)"$', path.read_text(), re.MULTILINE).group(1)
            for path in sorted((ROOT / ".mutation").glob("*.toml")) if path.stem != "equivalent"}


def test_every_module_in_scope_has_a_mutation_group_that_make_mutate_runs():
    in_scope = {str(p.relative_to(ROOT)) for d in SCOPE_DIRS for p in (ROOT / d).rglob("*.py")
                if p.name != "__init__.py"} | set(SCOPE_FILES)
    groups = _groups()
    assert sorted(in_scope - set(groups.values())) == []
    assert all((ROOT / module).is_file() for module in groups.values())
    spec = importlib.util.spec_from_file_location("mutation_run", ROOT / ".mutation" / "run.py")
    run = importlib.util.module_from_spec(spec)
    sys.modules["mutation_run"] = run
    try:
        spec.loader.exec_module(run)
    finally:
        del sys.modules["mutation_run"]
    assert sorted(run.GROUPS) == sorted(groups)
