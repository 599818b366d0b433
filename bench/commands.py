"""Sub-commands for benchmarks (see ``dcops.cli``)."""

from __future__ import annotations

COMMANDS: list = []
