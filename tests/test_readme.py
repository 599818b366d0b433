"""README's Python runs as written: every ```python block of README.md is executed, and what a block prints must
match the ``# ...`` lines under it (a run of comment lines at the start of a line that is followed by a blank
line or the block's end; comment lines followed by code explain that code and are not output).

A block that talks to ``localhost:8000`` runs against a real server on a free port started as README starts it
(``DCOPS_EPISODE_SECRET=readme``, so the episodes are the ones printed there); a block that starts Ray gets the
``ray_tmpdir`` fixture."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
README_SECRET = "readme"
"""The operator secret README's server examples are printed with."""
FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def python_blocks() -> list[tuple[int, str]]:
    """(line number of the block's first line, its code) for every ```python block of README.md."""
    text = README.read_text()
    return [(text.count("\n", 0, match.start(1)) + 1, match.group(1)) for match in FENCE.finditer(text)]


def expected_output(code: str) -> list[str]:
    """The output lines a block documents (module docstring)."""
    lines = code.splitlines()
    expected: list[str] = []
    run: list[str] = []
    for line in [*lines, ""]:
        if line.startswith("# "):
            run.append(line[2:])
            continue
        if run and not line.strip():
            expected += run
        run = []
    return expected


def test_the_output_rule_tells_output_from_explanation():
    code = "# explains the next line\nx = 1\nprint(x)\n# 1\n\nprint(2)\n# 2"
    assert expected_output(code) == ["1", "2"]


def test_readme_has_the_blocks_this_test_runs():
    blocks = python_blocks()
    assert len(blocks) >= 9 and all(code.strip() for _, code in blocks)
    assert any(expected_output(code) for _, code in blocks)


@pytest.mark.parametrize("line, code", python_blocks(), ids=lambda value: f"line{value}" if isinstance(value, int)
                         else None)
def test_a_readme_block_runs_and_prints_what_it_says(line, code, request, monkeypatch, tmp_path):
    if "localhost:8000" in code:  # README's server: `DCOPS_EPISODE_SECRET=readme make run`
        server = request.getfixturevalue("server_starter")(tmp_path / "episodes.db", tmp_path / "server.log",
                                                          env={"DCOPS_EPISODE_SECRET": README_SECRET})
        request.addfinalizer(server.stop)
        code = code.replace("http://localhost:8000", server.url).replace("ws://localhost:8000", server.ws_url)
    if "ray.init" in code:
        request.getfixturevalue("ray_tmpdir")
    monkeypatch.chdir(tmp_path)  # anything a block writes lands in the test's own folder,
    monkeypatch.setenv("SB3_LOGDIR", str(tmp_path / "sb3"))  # stable-baselines3's default logger folder too
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, f"{README}:{line}", "exec"), {"__name__": "__readme__"})  # noqa: S102
    expected = expected_output(code)
    if expected:
        assert printed.getvalue().splitlines() == expected
